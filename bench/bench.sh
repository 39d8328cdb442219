#!/usr/bin/env bash
# Benchmark `mge run` against Python megenginelite on the same models.
#
#   bench/bench.sh [MGE_BIN]            # from the repository root; MGE_BIN default target/release/mge
#
# For fixtures/conv_float.mge (tiny) and a random-weight ResNet-18 (1x3x224x224, built
# into bench/out/resnet18.mge on first use, ~46 MB, not committed) it measures:
#   a) per-iteration median of forward+wait:
#        mge run MODEL -i '#rand(0,1)' --warmup W --iter N --threads T --json   (timing_ms.median)
#      vs bench/lite_loop.py (same threads, warmup, iterations, random input, time.perf_counter)
#   b) process start to finish (median wall time of REPEAT runs):
#        mge run MODEL --iter 1 --warmup 0   vs   python bench/lite_once.py MODEL
# and prints a table with the ratios mge/python (below 1 means mge is faster).
#
# Environment:
#   MGE_BENCH_VENV  Python venv with megengine 1.13.0 (megenginelite) and numpy<2.
#                   Default: bench/out/venv, created with
#                   python3.10 (PATH or ~/.pyenv/versions/3.10*) -m venv and
#                   pip install megengine==1.13.0 "numpy<2" from PyPI (~1 GB download).
#   WARMUP (5)  ITER_TINY (2000)  ITER_RESNET (20)  REPEAT (5)
#   THREADS_TINY ("1")  THREADS_RESNET ("1 2")
# If MGE_BIN does not exist, only the Python half runs (mge columns show n/a).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-target/release/mge}
WARMUP=${WARMUP:-5}
ITER_TINY=${ITER_TINY:-2000}
ITER_RESNET=${ITER_RESNET:-20}
REPEAT=${REPEAT:-5}
THREADS_TINY=${THREADS_TINY:-1}
THREADS_RESNET=${THREADS_RESNET:-1 2}
OUT=bench/out
mkdir -p "$OUT"

# ---- venv ---------------------------------------------------------------
if [[ -z "${MGE_BENCH_VENV:-}" ]]; then
    MGE_BENCH_VENV=$OUT/venv
fi
PY=$MGE_BENCH_VENV/bin/python
if ! [[ -x $PY ]] || ! "$PY" -c 'import megenginelite' 2>/dev/null; then
    PY310=$(command -v python3.10 || ls -d ~/.pyenv/versions/3.10*/bin/python3 2>/dev/null | tail -n 1 || true)
    [[ -n "$PY310" ]] || { echo "bench: need python3.10 to create $MGE_BENCH_VENV (MegEngine 1.13 has no wheel for 3.11+)" >&2; exit 2; }
    echo "bench: creating venv $MGE_BENCH_VENV with $PY310 (pip install megengine==1.13.0, ~1 GB)" >&2
    "$PY310" -m venv "$MGE_BENCH_VENV"
    "$MGE_BENCH_VENV/bin/pip" install -q megengine==1.13.0 "numpy<2" >&2
fi

# ---- models -------------------------------------------------------------
TINY=fixtures/conv_float.mge
RESNET=$OUT/resnet18.mge
if [[ ! -f $RESNET ]]; then
    echo "bench: building $RESNET" >&2
    "$PY" bench/resnet18.py "$RESNET" >&2 2>"$OUT/resnet18.log"
fi

HAVE_MGE=0
if [[ -x $MGE_BIN ]]; then HAVE_MGE=1; else echo "bench: $MGE_BIN not found; running the Python half only" >&2; fi

now_ns() { date +%s%N; }
median() { "$PY" -c 'import sys,statistics; v=[float(x) for x in sys.argv[1:]]; print("%.4f" % statistics.median(v))' "$@"; }

# wall time (ms) of one command, its output discarded
wall_ms() {
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; return 1; }
    t1=$(now_ns)
    echo $(( (t1 - t0) / 1000 ))e-3
}

ROWS=()
row() { ROWS+=("$(printf '%-34s %12s %12s %8s' "$1" "$2" "$3" "$4")"); }
ratio() {
    if [[ $1 == n/a || $2 == n/a ]]; then echo n/a; else "$PY" -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; fi
}

# a) per-iteration median
loop_case() {  # label model threads iters
    local label=$1 model=$2 th=$3 n=$4 m=n/a p
    echo "bench: loop $label (threads $th, $n iterations)" >&2
    if (( HAVE_MGE )); then
        m=$("$MGE_BIN" run "$model" -i '#rand(0,1)' --warmup "$WARMUP" --iter "$n" --threads "$th" --json 2>>"$OUT/mge.stderr" \
            | "$PY" -c 'import sys,json; print("%.4f" % json.load(sys.stdin)["timing_ms"]["median"])') || m=n/a
    fi
    p=$("$PY" bench/lite_loop.py "$model" --threads "$th" --warmup "$WARMUP" --iter "$n" 2>/dev/null \
        | "$PY" -c 'import sys,json; print("%.4f" % json.load(sys.stdin)["median_ms"])')
    row "$label forward+wait, ${th}T (ms)" "$m" "$p" "$(ratio "$m" "$p")"
}

# b) process start to finish
once_case() {  # label model
    local label=$1 model=$2 i m=n/a p
    local mt=() pt=()
    echo "bench: process $label ($REPEAT runs each)" >&2
    for ((i = 0; i < REPEAT; i++)); do
        if (( HAVE_MGE )); then mt+=("$(wall_ms "$MGE_BIN" run "$model" --iter 1 --warmup 0)"); fi
        pt+=("$(wall_ms "$PY" bench/lite_once.py "$model")")
    done
    if (( HAVE_MGE )); then m=$(median "${mt[@]}"); fi
    p=$(median "${pt[@]}")
    row "$label process wall (ms)" "$m" "$p" "$(ratio "$m" "$p")"
}

for th in $THREADS_TINY; do loop_case conv_float "$TINY" "$th" "$ITER_TINY"; done
for th in $THREADS_RESNET; do loop_case resnet18 "$RESNET" "$th" "$ITER_RESNET"; done
once_case conv_float "$TINY"
once_case resnet18 "$RESNET"

echo
printf '%-34s %12s %12s %8s\n' "measure" "mge" "python" "mge/py"
printf '%s\n' "${ROWS[@]}"
echo
echo "warmup $WARMUP, iterations tiny $ITER_TINY / resnet $ITER_RESNET, process runs $REPEAT; venv $MGE_BENCH_VENV"
