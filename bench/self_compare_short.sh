#!/usr/bin/env bash
# `mge compare` of a model of a few microseconds against itself, COUNT times: how often the
# timing reads a false verdict (`faster` or `slower`) where no difference exists. Prints a line
# per compare (verdict, what it was measured on, B/A [95%], rounds, the load compare measured,
# seconds) and the count of false verdicts.
#
#   bench/self_compare_short.sh [MGE_BIN]     # from the repository root
#
# Environment: MODEL (fixtures/conv_float.mge, about 15 us a run), COUNT (20), ROUNDS (6: the
# rounds of the compare that read `slower`; empty: compare's own looks, 60 s budget), RT (empty;
# 1 runs each compare under `chrt -f 10`, ahead of every ordinary process: a quiet machine on a
# shared one whose other users cannot be stopped).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
MGE_BIN=${1:-target/release/mge}
MODEL=${MODEL:-fixtures/conv_float.mge}
COUNT=${COUNT:-20}
ROUNDS=${ROUNDS-6}
RT=${RT:-}
mkdir -p bench/out
[[ -x $MGE_BIN ]] || { echo "bench: $MGE_BIN not found (cargo build --release)" >&2; exit 2; }
prefix=()
[[ -n $RT ]] && prefix=(chrt -f 10)
rounds=()
[[ -n $ROUNDS ]] && rounds=(--rounds "$ROUNDS")
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$MODEL against itself, $COUNT compares, ${ROUNDS:-the looks of} rounds${RT:+, under chrt -f 10}"
for ((i = 1; i <= COUNT; i++)); do
    "${prefix[@]}" "$MGE_BIN" compare "$MODEL" "$MODEL" "${rounds[@]}" --json -q >bench/out/self_compare.json 2>>bench/out/self_compare.stderr
    python3 - "$i" bench/out/self_compare.json <<'PY'
import json, sys
t = json.load(open(sys.argv[2]))["timing"]
ci = t["ci95"] or [float("nan")] * 2
load = t["noise"].get("other_load_cores")
print(f"{sys.argv[1]:>3} {t['speed']:9} {t['measure']:4} b/a {t['ratio']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] "
      f"{t['rounds']:2} rounds  a {t['a_ms'] * 1e3:6.1f} us  b {t['b_ms'] * 1e3:6.1f} us  load "
      + ("n/a " if load is None else f"{load:.2f}") + f"  {t['seconds']:5.1f} s")
PY
done | tee bench/out/self_compare.txt
false=$(grep -cE ' (faster|slower) ' bench/out/self_compare.txt)
echo "false verdicts: $false of $COUNT; $(grep -c ' same ' bench/out/self_compare.txt) same, $(grep -c ' undecided ' bench/out/self_compare.txt) undecided"
