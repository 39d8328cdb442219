# Shared by the measurement benches (cold_start.sh, instances.sh, profile_separate.sh); sourced
# from the repository root. Sets MGE_BIN, PY (a Python with megengine 1.13.0) and RESNET (a
# random-weight ResNet-18, 1x3x224x224, built by bench/resnet18.py on first use, ~46 MB, not
# committed) and LOG (where mge's notes and warnings go: bench/out/measure.stderr), and defines
# `median`, `ratio`, `field`, and `start_burners`/`stop_burning` for a loaded phase.
#
# Environment: MGE_BENCH_VENV, a venv with megengine 1.13.0 and numpy<2 (default bench/out/venv;
# bench/bench.sh makes one); RESNET, another ResNet-18 .mge to use.

MGE_BIN=${MGE_BIN:-target/release/mge}
PY=${MGE_BENCH_VENV:-bench/out/venv}/bin/python
RESNET=${RESNET:-bench/out/resnet18.mge}
LOG=bench/out/measure.stderr
mkdir -p bench/out

[[ -x $MGE_BIN ]] || { echo "bench: $MGE_BIN not found (cargo build --release)" >&2; exit 2; }
"$PY" -c 'import megenginelite' 2>/dev/null \
    || { echo "bench: need MGE_BENCH_VENV, a venv with megengine 1.13.0 (bench/bench.sh makes one)" >&2; exit 2; }
if [[ ! -f $RESNET ]]; then
    echo "bench: building $RESNET" >&2
    "$PY" bench/resnet18.py "$RESNET" >&2
fi

# median X...: the median of the numbers given.
median() { "$PY" -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "$@"; }

# ratio A B: A / B to two decimals.
ratio() { "$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); print("%.2f" % (a / b))' "$1" "$2"; }

# field EXPR < JSON: a Python expression over the document `d` read from stdin.
field() { "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# start_burners N: N busy processes, the load of a loaded phase; stop_burning ends them (on exit too).
burners=()
start_burners() {
    for ((b = 0; b < $1; b++)); do
        bash -c 'while :; do :; done' &
        burners+=($!)
    done
}
stop_burning() {
    for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null; done
    burners=()
}
trap stop_burning EXIT
