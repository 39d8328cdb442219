#!/usr/bin/env bash
# The hostile and mutation sweep of issue 16: runs target/release/mge on some
# two thousand command lines made to break it (bad paths, devices, FIFOs,
# outputs over inputs, mutated models, garbage feeds and files, numbers out of
# all measure, read-only and full disks, a damaged runtime, signals) and fails
# on a panic, a signal, a hang, an overwritten input, a leftover or more than
# 200 MB of peak memory where reads and numbers are unbounded.
#
#   scripts/hostile_sweep.sh [--only SUBSTRING] [--jobs N] [--keep]
#
# Build first (cargo build --release). Needs python3, GNU time and unshare
# (as root, for the read-only and full-disk cases). The installed runtime is
# only read; runtime damage is made in a copy under the sweep's own folder.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec python3 "$here/hostile_sweep.py" "$@"
