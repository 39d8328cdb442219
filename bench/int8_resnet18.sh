#!/usr/bin/env bash
# `mge compare --by-layer` on an int8 ResNet-18 against its float self: builds the zoo's
# quantizable ResNet-18 with random weights and frozen random batch norm statistics, dumps it as
# float and, after QAT calibration on random images and `quantize`, as int8 (bench/int8_resnet18.py,
# which also writes MegEngine's own SQNR of each stage into OUT/megengine.json), then prints
# MegEngine's SQNR per stage and mge's layer-by-layer table, with the seconds each step took.
# About a minute on 2 cores.
#
#   bench/int8_resnet18.sh
#
# Environment: MGE_BENCH_VENV, a venv with megengine 1.13.0 and numpy<2 (default bench/out/venv;
# bench/bench.sh makes one); MGE_BIN (target/release/mge); OUT (bench/out/int8_resnet18), where
# the models, the feed and megengine.json go; CALIBRATION (8), the random images QAT's observers see.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${MGE_BIN:-target/release/mge}
PY=${MGE_BENCH_VENV:-bench/out/venv}/bin/python
OUT=${OUT:-bench/out/int8_resnet18}
CALIBRATION=${CALIBRATION:-8}
[[ -x $MGE_BIN ]] || { echo "bench: $MGE_BIN not found (cargo build --release)" >&2; exit 2; }
"$PY" -c 'import megengine' 2>/dev/null \
    || { echo "bench: need MGE_BENCH_VENV, a venv with megengine 1.13.0 (bench/bench.sh makes one)" >&2; exit 2; }

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
"$PY" bench/int8_resnet18.py "$OUT" --calibration "$CALIBRATION" 2> >(grep -v '^\(info\|debug\):\|UserWarning\|setattr\|return self' >&2)
"$PY" - "$OUT/megengine.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print("MegEngine's SQNR of each stage, int8 against float (dB):")
for stage, db in report["sqnr_db_by_stage"].items():
    print(f"  {stage:14} {db:5.1f}")
print("seconds: " + ", ".join(f"{step} {value}" for step, value in report["seconds"].items()))
PY
started=$(date +%s.%N)
# compare exits 1 here: the int8 output differs from the float one, as it should.
"$MGE_BIN" compare "$OUT/float.mge" "$OUT/int8.mge" -i "data:$OUT/data.npy" --by-layer --no-timing 2>&1 \
    | sed -n '/^by layer/,/^SQNR falls most/p' || true
echo "mge compare --by-layer: $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
