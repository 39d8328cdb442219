#!/usr/bin/env bash
# Cold start on ResNet-18: `mge run --json`'s timing_ms.load, first_run and warm-up runs next to
# what Python megenginelite measures for the same steps (bench/lite_once.py: LiteNetwork() and
# load(path); the first forward+wait; the next ones), each the median of REPEAT fresh processes,
# the two alternating. Prints both side by side with the ratio mge/python (1.00: the same).
#
#   bench/cold_start.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: REPEAT (5), WARMUP (3), THREADS (1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
REPEAT=${REPEAT:-5}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-1}
threads=()
if ((THREADS > 1)); then threads=(--threads "$THREADS"); fi

runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
for ((r = 0; r < REPEAT; r++)); do
    "$MGE_BIN" run "$RESNET" -q --json --warmup "$WARMUP" --iter 1 "${threads[@]}" 2>>"$LOG" \
        | field 'json.dumps(d["timing_ms"])' >>"$runs/mge"
    "$PY" bench/lite_once.py "$RESNET" --warmup "$WARMUP" --threads "$THREADS" 2>>"$LOG" >>"$runs/python"
done

"$PY" - "$runs/mge" "$runs/python" <<'PY'
import json, statistics, sys
sides = [[json.loads(line) for line in open(path)] for path in sys.argv[1:]]
def steps(timing):
    return {"load": timing["load"], "first_run": timing["first_run"],
            **{f"warmup[{i}]": ms for i, ms in enumerate(timing["warmup"]) if i > 0}}
columns = [[steps(t) for t in side] for side in sides]
print(f"{'step (ms)':12} {'mge':>12} {'python':>12} {'mge/py':>8}")
for step in columns[0][0]:
    m, p = (statistics.median(run[step] for run in side) for side in columns)
    print(f"{step:12} {m:12.2f} {p:12.2f} {m / p:8.2f}")
PY
echo "median of $REPEAT processes each, warm-up $WARMUP, threads $THREADS; model $RESNET"
