#!/usr/bin/env bash
# `mge check -j 1` against `-j 2` on the same twenty models, alternating runs.
#
#   bench/check_jobs.sh [MGE_BIN] [MODEL...]     # from the repository root
#
# Without models it checks the fixture containers, cycled to twenty paths.
# Prints the median wall time of REPEAT (default 5) runs of each and the ratio
# -j 2 / -j 1 (below 1 means -j 2 is faster).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-target/release/mge}
shift || true
REPEAT=${REPEAT:-5}
if [[ $# -gt 0 ]]; then
    MODELS=("$@")
else
    FIXTURES=(fixtures/*_tc[0-9]*.mge)
    MODELS=()
    for i in $(seq 0 19); do
        MODELS+=("${FIXTURES[i % ${#FIXTURES[@]}]}")
    done
fi

wall() { # seconds of one `mge check -j $1`
    local start end
    start=$(date +%s.%N)
    "$MGE_BIN" -q check -j "$1" "${MODELS[@]}" >/dev/null 2>&1 || [[ $? -eq 1 ]]
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

one=() two=()
for _ in $(seq "$REPEAT"); do
    one+=("$(wall 1)")
    two+=("$(wall 2)")
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${two[@]}" | median)
printf '%d models, median of %d runs: -j 1 %.3f s, -j 2 %.3f s, ratio %.2f\n' \
    "${#MODELS[@]}" "$REPEAT" "$m1" "$m2" "$(echo "$m2 / $m1" | bc -l)"
