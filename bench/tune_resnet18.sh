#!/usr/bin/env bash
# `mge tune` on a random-weight ResNet-18 (1x3x224x224, built by bench/resnet18.py into
# bench/out/resnet18.mge on first use, ~46 MB, not committed), against the 2-thread baseline:
# prints the table, then re-runs the printed best command line and the baseline side by side
# to show that the speed-up it reports is reproduced.
#
#   bench/tune_resnet18.sh [MGE_BIN]        # from the repository root
#
# Environment: BUDGET (300 seconds), ITER (30, for the re-runs), MGE_BENCH_VENV as for bench.sh
# (a venv with megengine 1.13.0, only needed to build the model).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-target/release/mge}
BUDGET=${BUDGET:-300}
ITER=${ITER:-30}
OUT=bench/out
RESNET=$OUT/resnet18.mge
mkdir -p "$OUT"
if [[ ! -f $RESNET ]]; then
    PY=${MGE_BENCH_VENV:-$OUT/venv}/bin/python
    [[ -x $PY ]] || { echo "bench: need MGE_BENCH_VENV (a venv with megengine 1.13.0) to build $RESNET; bench/bench.sh makes one" >&2; exit 2; }
    echo "bench: building $RESNET" >&2
    "$PY" bench/resnet18.py "$RESNET" >"$OUT/resnet18.log" 2>&1
fi

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); avx512: $(grep -o 'avx512[a-z_]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"
"$MGE_BIN" tune "$RESNET" --threads 2 --budget "$BUDGET" --json > "$OUT/tune.json"
python3 - "$OUT/tune.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{'options':60} {'median ms':>10} {'speed-up':>9}  status")
for c in r["candidates"]:
    ms = "-" if c["median_ms"] is None else f"{c['median_ms']:.2f}"
    x = "-" if c["speedup"] is None else f"{c['speedup']:.2f}x"
    print(f"{c['options']:60} {ms:>10} {x:>9}  {c['status']}{': ' + c['reason'] if c['reason'] else ''}")
print(f"baseline {r['baseline']['median_ms']:.2f} ms; best {r['best']['options']} {r['best']['median_ms']:.2f} ms = {r['best']['speedup']:.2f}x")
print(r["best"]["command"])
PY

# The printed command, run again next to the baseline.
best=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["best"]["command"])' "$OUT/tune.json")
median() { python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["timing_ms"]["median"])'; }
base_ms=$("$MGE_BIN" run "$RESNET" --threads 2 --warmup 5 --iter "$ITER" --json -q | median)
# shellcheck disable=SC2086 # the command line is tune's, quoted for the shell
best_ms=$(eval "${best/#mge /$MGE_BIN } --warmup 5 --iter $ITER --json -q" | median)
python3 -c 'import sys; b, x = map(float, sys.argv[1:]); print(f"re-run: baseline {b:.2f} ms, best {x:.2f} ms, speed-up {b / x:.2f}x")' "$base_ms" "$best_ms"
