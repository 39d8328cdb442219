#!/usr/bin/env bash
# `mge compare`'s timing on ResNet-18 (issue 26's checks): a regression it must find, and no
# false one. `--a-options '--threads 2' --b-options '--threads 1' --max-slowdown 10` should
# exit 1 with B slower and B/A's interval above 1; the model against itself with
# `--max-slowdown 5` should exit 0, every time. Prints each run's exit code, A's and B's
# medians, B/A with its 95% interval, the verdict, the seconds it took and the load average.
#
#   bench/compare_resnet18.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: SLOWER (3: runs of the threads check), SAME (10: runs of the model against
# itself), ROUNDS (10).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
SLOWER=${SLOWER:-3}
SAME=${SAME:-10}
ROUNDS=${ROUNDS:-10}

compare() { # NAME ARGS...: one compare, its line
    local name=$1 started report code
    shift
    started=$(date +%s)
    report=$("$MGE_BIN" compare "$RESNET" "$@" --rounds "$ROUNDS" -q --json 2>>"$LOG")
    code=$?
    printf '%-8s exit %d  %s  %3ds  load %s\n' "$name" "$code" \
        "$(field '"a %.1f ms  b %.1f ms  b/a %.3f [%.3f, %.3f]  %s" % (d["timing"]["a_ms"], d["timing"]["b_ms"], d["timing"]["ratio"], *d["timing"]["ci95"], d["timing"]["speed"])' <<<"$report")" \
        "$(($(date +%s) - started))" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

for ((r = 1; r <= SLOWER; r++)); do
    compare "threads" --a-options '--threads 2' --b-options '--threads 1' --max-slowdown 10
done
for ((r = 1; r <= SAME; r++)); do
    compare "same" "$RESNET" --max-slowdown 5
done
echo "exit 1 expected of threads (B, 1 thread, slower beyond 10%), 0 of same; $ROUNDS rounds each; model $RESNET"
