#!/usr/bin/env bash
# `mge tune` on a random-weight ResNet-18 (1x3x224x224, built by bench/resnet18.py into
# bench/out/resnet18.mge on first use, ~46 MB, not committed), against the 2-thread baseline.
# Prints tune's table, the speed-up it found and the budget it used; then runs the baseline,
# tune's printed command line, the packed model tune saved (--save-model: `mge run` with no
# flags) and a hand-found best side by side (interleaved rounds, on the fast-run cache tune
# saved, so none of them profiles), to show the speed-up is reproduced and how close the
# search came to an expert.
#
#   bench/tune_resnet18.sh [MGE_BIN]        # from the repository root
#
# Environment: BUDGET (300 seconds), ITER (30 runs per re-run), ROUNDS (3), HAND (the
# hand-found best options, default "--fast-run --record-comp-seq 2": 1.90x by hand on an AMD
# EPYC with AVX-512), MGE_BENCH_VENV as for bench.sh (a venv with megengine 1.13.0, only needed
# to build the model).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-target/release/mge}
BUDGET=${BUDGET:-300}
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
rm -f "$OUT/tune.saved.json" "$OUT/tune.saved.json.cache" "$OUT/tune.saved.mge"
"$MGE_BIN" tune "$RESNET" --threads 2 --budget "$BUDGET" --save "$OUT/tune.saved.json" \
    --save-model "$OUT/tune.saved.mge" > "$OUT/tune.txt"
cat "$OUT/tune.txt"
best=$(tail -n 1 "$OUT/tune.txt")

# A fast-run cache for every re-run: tune's, when fast-run won; else none is needed.
cache=()
[[ -f $OUT/tune.saved.json.cache ]] && cache=(--fast-run-cache "$OUT/tune.saved.json.cache")
median() { python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["timing_ms"]["median"])'; }
run() { "$MGE_BIN" run "$RESNET" --threads 2 "$@" --warmup 5 --iter "$ITER" --json -q | median; }
best_args=${best#mge run }
declare -a base_ms tuned_ms saved_ms hand_ms
for ((round = 0; round < ROUNDS; round++)); do
    base_ms+=("$(run)")
    # shellcheck disable=SC2086 # the command line is tune's, quoted for the shell
    tuned_ms+=("$(eval "\"$MGE_BIN\" run $best_args ${cache[*]:-} --warmup 5 --iter $ITER --json -q" | median)")
    saved_ms+=("$("$MGE_BIN" run "$OUT/tune.saved.mge" --warmup 5 --iter "$ITER" --json -q | median)")
    # shellcheck disable=SC2086 # HAND is a list of options
    hand_ms+=("$(run $HAND ${cache[*]:-})")
done
python3 - "${base_ms[*]}" "${tuned_ms[*]}" "${saved_ms[*]}" "${hand_ms[*]}" "$HAND" "$OUT/tune.txt" <<'PY'
import statistics, sys
base, tuned, saved, hand = (list(map(float, arg.split())) for arg in sys.argv[1:5])
b, t, s, h = (statistics.median(x) for x in (base, tuned, saved, hand))
text = open(sys.argv[6]).read()
found = [line for line in text.splitlines() if line.startswith("best: ")][0]
budget = [line for line in text.splitlines() if line.startswith("budget: ")][0]
print(f"tune found: {found[len('best: '):]}")
print(f"{budget}")
print(f"re-run ({len(base)} interleaved rounds, medians of medians): baseline {b:.2f} ms, "
      f"tune's command {t:.2f} ms ({b / t:.2f}x), its --save-model model {s:.2f} ms ({b / s:.2f}x, "
      f"{100 * (s / t - 1):+.0f}% of the command's), hand-found best '{sys.argv[5]}' {h:.2f} ms ({b / h:.2f}x)")
PY
