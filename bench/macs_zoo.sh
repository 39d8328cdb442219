#!/usr/bin/env bash
# `mge info --ops` against MegEngine's own MAC count on full-size model-zoo graphs: ResNet-18
# and ShuffleNet v2 1.0x at 224x224, YOLOX-s at 640x640, random weights, dumped as the zoo's
# dump.py scripts dump them (bench/macs_zoo.py) into a temporary folder. Prints a table: model,
# MegEngine's MACs, mge's, their ratio, the operator types mge left uncounted. A few minutes.
#
#   bench/macs_zoo.sh [--models resnet18 shufflenet_v2 yolox_s] [--keep DIR]
#
# Environment: MGE_BENCH_VENV, a venv with megengine 1.13.0 and numpy<2 (default bench/out/venv;
# bench/bench.sh makes one); MGE_BIN (target/release/mge).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${MGE_BIN:-target/release/mge}
PY=${MGE_BENCH_VENV:-bench/out/venv}/bin/python
[[ -x $MGE_BIN ]] || { echo "bench: $MGE_BIN not found (cargo build --release)" >&2; exit 2; }
"$PY" -c 'import megengine' 2>/dev/null \
    || { echo "bench: need MGE_BENCH_VENV, a venv with megengine 1.13.0 (bench/bench.sh makes one)" >&2; exit 2; }
"$PY" bench/macs_zoo.py --mge "$MGE_BIN" "$@" 2> >(grep -v '^\(info\|debug\):' >&2)
