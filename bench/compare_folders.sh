#!/usr/bin/env bash
# `mge compare` of two folders of models with timing: what each pair's rounds cost until its
# verdict is decided, quiet and beside BURNERS CPU-burning processes. Folder A holds the small
# models of `fixtures/` and `fixtures/whatchanged/cnn.mge`; folder B the same files, but for
# `cnn.mge`, which is `cnn_extra_conv.mge` there (one convolution more: `slower` to find).
# Prints a line per pair (outputs, verdict, what it was measured on, B/A [95%], rounds, the
# pair's timing seconds) and the whole compare's time, per phase.
#
#   bench/compare_folders.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: BURNERS (2), PHASES ("quiet loaded"), ARGS (more compare options).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
BURNERS=${BURNERS:-2}
PHASES=${PHASES:-quiet loaded}
ARGS=${ARGS:-}
MODELS=(conv_float deconv divergence_a divergence_b gray_uint8 image_uint8 nhwc_uint8 scale2 two_inputs)
ZOO=bench/out/zoo
rm -rf "$ZOO" && mkdir -p "$ZOO/a" "$ZOO/b"
for model in "${MODELS[@]}"; do
    cp "fixtures/$model.mge" "$ZOO/a/" && cp "fixtures/$model.mge" "$ZOO/b/"
done
cp fixtures/whatchanged/cnn.mge "$ZOO/a/cnn.mge" && cp fixtures/whatchanged/cnn_extra_conv.mge "$ZOO/b/cnn.mge"

for phase in $PHASES; do
    if [[ $phase == loaded ]]; then
        start_burners "$BURNERS"
    fi
    echo "$phase: $ZOO/a against $ZOO/b, $((${#MODELS[@]} + 1)) pairs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    started=$(date +%s.%N)
    # shellcheck disable=SC2086 # ARGS is a list of options
    "$MGE_BIN" compare "$ZOO/a" "$ZOO/b" $ARGS -q --json >"$ZOO/report.json" 2>>"$LOG"
    code=$?
    ended=$(date +%s.%N)
    "$PY" - "$phase" "$code" "$started" "$ended" "$ZOO/report.json" <<'PY'
import json, statistics, sys
phase, code, started, ended = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
try:
    pairs = json.load(open(sys.argv[5]))["pairs"]
except (ValueError, KeyError):
    sys.exit(print(f"{phase}: no report (exit {code})"))
seconds = []
for pair in pairs:
    t = pair.get("timing") or {}
    ci = t.get("ci95") or [float("nan")] * 2
    if t:
        seconds.append(t["seconds"])
    print(f"  {pair['model']:18} {pair['status']:8} {t.get('speed', '-'):9} {t.get('measure', '-'):4} "
          + (f"b/a {t['ratio']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}] {t['rounds']:3} rounds {t['seconds']:5.1f} s" if t else "")
          + (f"  load {t['noise']['other_load_cores']:.2f}" if t and t["noise"].get("other_load_cores") is not None else ""))
verdicts = [(pair.get("timing") or {}).get("speed", "-") for pair in pairs]
print(f"{phase}: exit {code}, {ended - started:.0f} s whole; timing seconds a pair {min(seconds):.0f} / "
      f"{statistics.median(seconds):.0f} / {max(seconds):.0f} (least / median / most); "
      + ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts)))
PY
    stop_burning
done
