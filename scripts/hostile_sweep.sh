#!/usr/bin/env bash
# The hostile and mutation sweep: runs target/release/mge on some six
# thousand four hundred command lines made to break it (bad paths, devices,
# FIFOs, outputs over inputs, mutated models, garbage feeds and files, numbers
# out of all measure, read-only and full disks, a damaged runtime, signals;
# planted code in the working folder, hostile environment variables,
# descriptors and limits, models with hostile names, odd model paths; packed
# models that carry options naming files, names longer than a line, secrets
# for --repro, image headers that lie, long engine records, engine loads
# outside supervision, version spellings, io dump indexes that point outside,
# folders not named in UTF-8; damaged, foreign and untrusted files in mge's
# cache folder: tune's records, the algorithm cache; graphs whose operators
# share one list or vtable, names that would widen every row of a table,
# structural diffs of graphs of 50,000 operators, --reduce on graphs whose var
# ids do not hold and on failures that come and go; memory that runs out in
# mge's own work, --repro folders that cannot be, a sweep's reproducers) and
# fails on a panic, a signal, a hang, a silent exit, an overwritten input, a
# leftover, a process left running, planted code run, raw control characters
# shown, a file a model named written, a secret written, a damaged kept file
# used, a report grown with a name's length or forged lines, the engine
# blamed for mge's own failure, or more than 200 MB of peak memory where
# reads and numbers are unbounded. About 30 minutes
# with --jobs 3 on two cores.
#
#   scripts/hostile_sweep.sh [--only SUBSTRING] [--groups G,...] [--jobs N] [--keep] [--list]
#
# Build first (cargo build --release). Needs python3, cc, GNU time and unshare
# (as root, for the read-only and full-disk cases). The installed runtime is
# only read; runtime damage is made in a copy under the sweep's own folder.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec python3 "$here/hostile_sweep.py" "$@"
