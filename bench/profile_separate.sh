#!/usr/bin/env bash
# `mge run --profile` does its profiled runs apart from the timed ones: its median should equal
# that of a plain `mge run` within noise. Alternates REPEAT runs of each on ResNet-18 and prints
# both medians (the median of the runs' timing_ms.median) with the ratio profiled/plain.
#
#   bench/profile_separate.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: REPEAT (3), ITER (20), WARMUP (3), THREADS (1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
REPEAT=${REPEAT:-3}
ITER=${ITER:-20}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-1}
trace=$(mktemp --suffix .trace.json)
trap 'rm -f "$trace"' EXIT

median_of_run() { # OPTIONS...
    "$MGE_BIN" run "$RESNET" -q --json --threads "$THREADS" --warmup "$WARMUP" --iter "$ITER" "$@" 2>>"$LOG" \
        | field 'd["timing_ms"]["median"]'
}

plain=() profiled=()
for ((r = 0; r < REPEAT; r++)); do
    plain+=("$(median_of_run)")
    profiled+=("$(median_of_run --profile "$trace")")
done
p=$(median "${plain[@]}") q=$(median "${profiled[@]}")
printf '%-16s %10s   %s\n' "" "median ms" "each run's median"
printf '%-16s %10.2f   %s\n' "run" "$p" "$(printf '%.2f ' "${plain[@]}")"
printf '%-16s %10.2f   %s\n' "run --profile" "$q" "$(printf '%.2f ' "${profiled[@]}")"
echo "ratio profiled/plain: $(ratio "$q" "$p")  (median of $REPEAT runs each, $ITER timed runs, threads $THREADS; model $RESNET)"
