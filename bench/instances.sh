#!/usr/bin/env bash
# Throughput of `mge run --instances 2` on ResNet-18 against one instance, --threads 1 each:
# runs per second of both instances together (throughput_per_s) over the single instance's,
# the median of REPEAT alternating runs of each, and whether every instance's outputs equal the
# first instance's run alone. Variants add options to both sides (VARIANTS, one per line), such
# as --cpu-inplace (kernels on each instance's own thread) or --cpu-cores 0,1 (instance i's
# worker on core i).
#
#   bench/instances.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: REPEAT (3), ITER (20), WARMUP (2), INSTANCES (2), VARIANTS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
REPEAT=${REPEAT:-3}
ITER=${ITER:-20}
WARMUP=${WARMUP:-2}
INSTANCES=${INSTANCES:-2}
VARIANTS=${VARIANTS:-$'\n--cpu-inplace\n--cpu-cores 0,1'}

throughput() { # OPTIONS...: runs per second, and whether the instances' outputs were equal
    "$MGE_BIN" run "$RESNET" -q --json --threads 1 --warmup "$WARMUP" --iter "$ITER" "$@" 2>>"$LOG" \
        | field '"%f %s" % (d["throughput_per_s"], d.get("instances", {}).get("outputs_equal", "-"))'
}

printf '%-16s %12s %14s %7s  %s\n' options "1 inst/s" "$INSTANCES inst/s" ratio "outputs equal"
while IFS= read -r variant; do
    # shellcheck disable=SC2206 # the variant's words are options
    options=($variant)
    one=() many=() equal=()
    for ((r = 0; r < REPEAT; r++)); do
        read -r t _ < <(throughput "${options[@]}")
        one+=("$t")
        read -r t e < <(throughput --instances "$INSTANCES" "${options[@]}")
        many+=("$t") equal+=("$e")
    done
    o=$(median "${one[@]}") m=$(median "${many[@]}")
    printf '%-16s %12.2f %14.2f %7s  %s\n' "${variant:-(none)}" "$o" "$m" "$(ratio "$m" "$o")" "${equal[*]}"
done <<<"$VARIANTS"
echo "median of $REPEAT runs each, --threads 1, warm-up $WARMUP, $ITER timed runs per instance; model $RESNET"
