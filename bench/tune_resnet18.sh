#!/usr/bin/env bash
# `mge tune` on a random-weight ResNet-18 (1x3x224x224, built by bench/resnet18.py into
# bench/out/resnet18.mge on first use, ~46 MB, not committed), against the 2-thread baseline:
# first on a fresh algorithm cache (a cache folder of its own, so that fast-run's profiling is
# paid), then again on the cache the first kept (which takes its search from the first's
# record), and a third time with --search-again (the algorithm cache alone). Prints each
# tune's table, what it found, the budget it used and its whole time, and the second's and
# third's time over the first's. Then runs the
# baseline, the first tune's printed command line, the packed model it saved (--save-model:
# `mge run` with no flags) and a hand-found best side by side (interleaved rounds; tune's
# command on the fast-run cache tune saved, the hand-found best on the bench's algorithm cache,
# which holds every option set the tunes profiled, and profiles apart from the timed runs what
# it lacks), to show the speed-up is reproduced and how close the search came to an expert.
# Runs unattended.
#
#   bench/tune_resnet18.sh [MGE_BIN]        # from the repository root
#
# Environment: BUDGET (120 seconds), ITER (30 runs per re-run), ROUNDS (3), HAND (the
# hand-found best options, default "--fast-run --record-comp-seq 2": 1.90x by hand on an AMD
# EPYC with AVX-512), MGE_BENCH_VENV as for bench.sh (a venv with megengine 1.13.0, only needed
# to build the model).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-${MGE_BIN:-target/release/mge}}
BUDGET=${BUDGET:-120}
ITER=${ITER:-30}
ROUNDS=${ROUNDS:-3}
HAND=${HAND:---fast-run --record-comp-seq 2}
OUT=bench/out
RESNET=$OUT/resnet18.mge
mkdir -p "$OUT"
if [[ ! -f $RESNET ]]; then
    PY=${MGE_BENCH_VENV:-$OUT/venv}/bin/python
    [[ -x $PY ]] || { echo "bench: need MGE_BENCH_VENV (a venv with megengine 1.13.0) to build $RESNET; bench/bench.sh makes one" >&2; exit 2; }
    echo "bench: building $RESNET" >&2
    "$PY" bench/resnet18.py "$RESNET" >"$OUT/resnet18.log" 2>&1
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) ($(grep -m1 vendor_id /proc/cpuinfo | cut -d: -f2 | xargs)); avx512: $(grep -o 'avx512[a-z_]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# A cache folder of the bench's own, so that the first tune meets a fresh algorithm cache; the
# runtime is the one `mge` finds, named.
CACHE_HOME=$(mktemp -d)
trap 'rm -rf "$CACHE_HOME"' EXIT
LITE=$("$MGE_BIN" runtime info --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["path"])')
# Every run below, tunes and re-runs, on that cache folder: none writes into the user's.
export MGE_HOME=$CACHE_HOME MGE_LITE_LIB=$LITE
tune() { # NAME [OPTION...]: one tune, its table in $OUT/tune-NAME.txt, its whole time in seconds on stdout
    local name=$1 started
    shift
    rm -f "$OUT/tune.$name.json" "$OUT/tune.$name.json.cache" "$OUT/tune.$name.mge"
    started=$(date +%s.%N)
    "$MGE_BIN" tune "$RESNET" --threads 2 --budget "$BUDGET" "$@" \
        --save "$OUT/tune.$name.json" --save-model "$OUT/tune.$name.mge" >"$OUT/tune-$name.txt"
    python3 -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$started"
}
fresh_s=$(tune fresh)
echo "== tune on a fresh algorithm cache ($fresh_s s):"
cat "$OUT/tune-fresh.txt"
warm_s=$(tune warm)
echo "== tune again, on the cache the first kept, its search from the first's record ($warm_s s):"
cat "$OUT/tune-warm.txt"
again_s=$(tune again --search-again)
echo "== tune a third time, --search-again: the algorithm cache alone ($again_s s):"
cat "$OUT/tune-again.txt"
best=$(tail -n 1 "$OUT/tune-fresh.txt")

# A fast-run cache for every re-run: tune's, when fast-run won; else none is needed.
cache=()
[[ -f $OUT/tune.fresh.json.cache ]] && cache=(--fast-run-cache "$OUT/tune.fresh.json.cache")
median() { python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["timing_ms"]["median"])'; }
run() { "$MGE_BIN" run "$RESNET" --threads 2 "$@" --warmup 5 --iter "$ITER" --json -q | median; }
best_args=${best#mge run }
declare -a base_ms tuned_ms saved_ms hand_ms
for ((round = 0; round < ROUNDS; round++)); do
    base_ms+=("$(run)")
    # shellcheck disable=SC2086 # the command line is tune's, quoted for the shell
    # Its options before its own: the line ends with `-- MODEL`.
    tuned_ms+=("$(eval "\"$MGE_BIN\" run ${cache[*]:-} --warmup 5 --iter $ITER --json -q $best_args" | median)")
    saved_ms+=("$("$MGE_BIN" run "$OUT/tune.fresh.mge" --warmup 5 --iter "$ITER" --json -q | median)")
    # shellcheck disable=SC2086 # HAND is a list of options
    # Not on tune's saved cache: it holds the algorithms of the best's options only, which
    # may change the graph (--fuse-preprocess) and leave the hand-found one's unprofiled.
    hand_ms+=("$(run $HAND)")
done
python3 - "${base_ms[*]}" "${tuned_ms[*]}" "${saved_ms[*]}" "${hand_ms[*]}" "$HAND" "$OUT/tune-fresh.txt" "$OUT/tune-warm.txt" "$fresh_s" "$warm_s" "$OUT/tune-again.txt" "$again_s" <<'PY'
import statistics, sys
base, tuned, saved, hand = (list(map(float, arg.split())) for arg in sys.argv[1:5])
b, t, s, h = (statistics.median(x) for x in (base, tuned, saved, hand))
def lines(path, prefix):
    return [line for line in open(path).read().splitlines() if line.startswith(prefix)]
tunes = (("a fresh cache", sys.argv[6], sys.argv[8]), ("a warm cache, from the record", sys.argv[7], sys.argv[9]),
         ("a warm cache, --search-again", sys.argv[10], sys.argv[11]))
for name, path, took in tunes:
    found = lines(path, "best: ")[0]
    budget = lines(path, "budget: ")[0]
    print(f"tune on {name} ({float(took):.0f} s whole): {found[len('best: '):]}; {budget}")
first = float(sys.argv[8])
print(f"second tune / first: {float(sys.argv[9]) / first:.2f} (expected at most 0.5); "
      f"third (--search-again) / first: {float(sys.argv[11]) / first:.2f}")
print(f"re-run ({len(base)} interleaved rounds, medians of medians): baseline {b:.2f} ms, "
      f"tune's command {t:.2f} ms ({b / t:.2f}x), its --save-model model {s:.2f} ms ({b / s:.2f}x, "
      f"{100 * (s / t - 1):+.0f}% of the command's), hand-found best '{sys.argv[5]}' {h:.2f} ms ({b / h:.2f}x)")
PY
