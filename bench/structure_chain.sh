#!/usr/bin/env bash
# `mge compare A.mge B.mge --structure` on MegEngine's own dumps of long chains of elementwise
# operators (bench/chain.py: names the engine made up, so operators are matched by topology):
# 50,000 and 60,000 operators against themselves, and 50,000 against one with a weight changed and
# one with an operator inserted. The matching should take a few seconds at most. Prints each
# pair's median wall time of REPEAT runs and the verdict it printed.
#
#   bench/structure_chain.sh        # from the repository root; see bench/lib.sh for the environment
#
# The chains are dumped into bench/out/ on first use (about 3 to 10 minutes each: MegEngine's
# trace of 50,000 operators is slow). Environment: REPEAT (5).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
REPEAT=${REPEAT:-5}

# chain NAME OPERATORS [ARGS]: bench/out/NAME.mge, dumped unless there.
chain() {
    local model=bench/out/$1.mge
    if [[ ! -f $model ]]; then
        echo "bench: dumping $model" >&2
        "$PY" bench/chain.py "$2" "$model" "${@:3}" >>"$LOG" 2>&1
    fi
    echo "$model"
}

# measure A B: the median wall time of REPEAT compares of A with B, and the verdict.
measure() {
    local seconds=() start end verdict
    for ((r = 0; r < REPEAT; r++)); do
        start=$(date +%s.%N)
        verdict=$("$MGE_BIN" compare --structure "$1" "$2" 2>>"$LOG" | grep '^graph' || true)
        end=$(date +%s.%N)
        seconds+=("$("$PY" -c 'import sys; print("%.3f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$start" "$end")")
    done
    echo "$(basename "$1") against $(basename "$2"): median $(median "${seconds[@]}") s of $REPEAT (each: ${seconds[*]})"
    echo "  $verdict"
}

chain50k=$(chain chain50k 50000)
chain60k=$(chain chain60k 60000)
changed=$(chain chain50k_changed 50000 --change 25000)
inserted=$(chain chain50k_inserted 50000 --insert 25000)
measure "$chain50k" "$chain50k"
measure "$chain60k" "$chain60k"
measure "$chain50k" "$changed"
measure "$chain50k" "$inserted"
