#!/usr/bin/env bash
# `mge compare A.mge B.mge --structure` reads both graphs from their files, runs no engine, and
# should answer under a second on ResNet-18 against itself (two 46 MB files). Prints each run's
# wall time, their median, and the verdict it printed.
#
#   bench/structure_resnet18.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: REPEAT (5).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
REPEAT=${REPEAT:-5}

seconds=()
for ((r = 0; r < REPEAT; r++)); do
    start=$(date +%s.%N)
    verdict=$("$MGE_BIN" compare --structure "$RESNET" "$RESNET" 2>>"$LOG" | grep '^graph')
    end=$(date +%s.%N)
    seconds+=("$("$PY" -c 'import sys; print("%.3f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$start" "$end")")
done
echo "compare --structure, ResNet-18 against itself ($(stat -c %s "$RESNET") bytes each): median $(median "${seconds[@]}") s of $REPEAT (each: ${seconds[*]})"
echo "$verdict"
