#!/usr/bin/env bash
# Fast-run paid once: `mge run --fast-run` on ResNet-18 twice on a fresh algorithm cache (a
# cache folder of its own), then with the cache file damaged. Prints each run's whole time,
# fast-run's profiling as the run reports it (`timing_ms.profiling`, absent when nothing was
# profiled), its median, and how its outputs compare with the first run's (bit for bit where it
# loaded the first's algorithms); then the second's time over the first's. Runs unattended.
#
#   bench/fast_run_cache.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: THREADS (2), ITER (10).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
THREADS=${THREADS:-2}
ITER=${ITER:-10}
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
# The runtime the cache folder would hold, named: the cache folder is this script's own.
LITE=$("$MGE_BIN" runtime info --json | field 'd["path"]')

declare -A took
run() { # NAME: one run, its line
    local name=$1 started report
    started=$(date +%s.%N)
    report=$(MGE_HOME=$HOME_DIR MGE_LITE_LIB=$LITE "$MGE_BIN" run "$RESNET" --threads "$THREADS" --fast-run \
        --iter "$ITER" --json --outputs "$HOME_DIR/$name" 2>>"$LOG")
    took[$name]=$("$PY" -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$started" "$(date +%s.%N)")
    # Bit for bit where the algorithms are the first run's; a run that profiled again may pick
    # others (the fastest as measured then), whose outputs agree within the engine's 1e-4.
    local same=equal
    if ! cmp -s "$HOME_DIR/first/logits.npy" "$HOME_DIR/$name/logits.npy"; then
        same="within 1e-4 (other algorithms)"
        "$MGE_BIN" compare -q "$HOME_DIR/first/logits.npy" "$HOME_DIR/$name/logits.npy" >/dev/null 2>>"$LOG" || same=DIFFER
    fi
    printf '%-8s %7ss  profiling %-12s median %s ms  outputs against the first: %s\n' "$name" "${took[$name]}" \
        "$(field '"%.0f ms" % d["timing_ms"]["profiling"] if "profiling" in d["timing_ms"] else "none"' <<<"$report")" \
        "$(field '"%.2f" % d["timing_ms"]["median"]' <<<"$report")" "$same"
}

run first
run second
cache=$(ls "$HOME_DIR"/algo-cache/*.algo)
"$PY" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-100] ^= 0xff; open(p, "wb").write(b)' "$cache"
run damaged
grep -h "algorithm cache" "$LOG" | tail -n 1
run after
echo "second/first: $("$PY" -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "${took[second]}" "${took[first]}") (whole runs, ResNet-18, --threads $THREADS, --iter $ITER; expected under 0.25, the second's outputs equal)"
