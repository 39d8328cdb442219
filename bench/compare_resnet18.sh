#!/usr/bin/env bash
# `mge compare`'s timing verdicts on ResNet-18: how often the model against itself gets a false
# verdict (`faster` or `slower`), quiet and with BURNERS processes burning the CPU, whether a
# model with one convolution more (`fixtures/whatchanged/cnn_extra_conv.mge` against `cnn.mge`)
# is found `slower` beside the same burners, and whether `--threads 2` against `--threads 1` is
# still found `slower`. Prints a line per compare (exit code, verdict, what it was measured on,
# B/A with its interval, rounds, seconds, the load compare measured, why it is undecided), then
# a summary per phase: the counts of same/undecided/faster/slower, the measures, the seconds
# (least, median, most), and the widest interval of a `same`. Runs unattended.
#
#   bench/compare_resnet18.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: SAME (20: runs of the model against itself in each of the quiet and loaded
# phases, and of the whatchanged pair), SLOWER (3: runs of threads 2 against 1, quiet), BURNERS
# (2: CPU-burning processes in the loaded phases), PHASES ("quiet loaded whatchanged threads":
# which to run), ARGS (more compare options,
# e.g. "--rounds 10" or "--timing-budget 120"; empty: compare's defaults). MGE_BIN may be an
# older mge: its verdicts are read from the same JSON (`timing.speed`).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
SAME=${SAME:-20}
SLOWER=${SLOWER:-3}
BURNERS=${BURNERS:-2}
PHASES=${PHASES:-quiet loaded whatchanged threads}
ARGS=${ARGS:-}
RESULTS=bench/out/compare_resnet18.tsv
: >"$RESULTS"

compare() { # PHASE A ARGS...: one compare of A, its line, and a row of $RESULTS
    local phase=$1 a=$2 started report code line
    shift 2
    started=$(date +%s.%N)
    # shellcheck disable=SC2086 # ARGS is a list of options
    report=$("$MGE_BIN" compare "$a" "$@" $ARGS -q --json 2>>"$LOG")
    code=$?
    local seconds
    seconds=$("$PY" -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$started" "$(date +%s.%N)")
    line=$("$PY" -c '
import json, sys
try:
    t = json.loads(sys.stdin.read())["timing"]
except (ValueError, KeyError, TypeError):
    sys.exit(0)
noise, ci = t.get("noise") or {}, t.get("ci95") or [float("nan")] * 2
load = noise.get("other_load_cores")
print("\t".join(map(str, [t["speed"], "%.3f" % t["ratio"], "%.3f" % ci[0], "%.3f" % ci[1], t["rounds"],
                          "nan" if load is None else "%.2f" % load, t.get("measure", "wall"), t.get("reason") or ""])))' <<<"$report")
    [[ -n $line ]] || line=$'error\tnan\tnan\tnan\t0\tnan\t-\t'
    printf '%s\t%s\t%s\t%s\n' "$phase" "$code" "$seconds" "$line" >>"$RESULTS"
    IFS=$'\t' read -r speed ratio low high rounds load measure reason <<<"$line"
    printf '%-11s exit %d  %-9s %-4s b/a %s [%s, %s]  %3s rounds  %6ss  load %s  %s\n' \
        "$phase" "$code" "$speed" "$measure" "$ratio" "$low" "$high" "$rounds" "$seconds" "$load" "$reason"
}

for phase in $PHASES; do
    case $phase in
        quiet)
            echo "quiet: the model against itself, $SAME times; load average $(cut -d' ' -f1-3 /proc/loadavg)"
            for ((r = 1; r <= SAME; r++)); do compare quiet "$RESNET" "$RESNET"; done
            ;;
        loaded)
            start_burners "$BURNERS"
            echo "loaded: the model against itself, $SAME times, $BURNERS processes burning the CPU"
            for ((r = 1; r <= SAME; r++)); do compare loaded "$RESNET" "$RESNET"; done
            stop_burning
            ;;
        whatchanged)
            start_burners "$BURNERS"
            echo "whatchanged: cnn_extra_conv.mge against cnn.mge (B slower), $SAME times, $BURNERS processes burning the CPU"
            for ((r = 1; r <= SAME; r++)); do
                compare whatchanged fixtures/whatchanged/cnn.mge fixtures/whatchanged/cnn_extra_conv.mge
            done
            stop_burning
            ;;
        threads)
            echo "threads: --threads 2 against --threads 1 (B slower), $SLOWER times; load average $(cut -d' ' -f1-3 /proc/loadavg)"
            for ((r = 1; r <= SLOWER; r++)); do
                compare threads "$RESNET" --a-options '--threads 2' --b-options '--threads 1' --max-slowdown 10
            done
            ;;
    esac
done

"$PY" - "$RESULTS" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
print("\nsummary (ResNet-18; verdicts of B/A; seconds a compare, outputs included):")
for phase in dict.fromkeys(row[0] for row in rows):
    mine = [row for row in rows if row[0] == phase]
    counts = {word: sum(row[3] == word for row in mine) for word in ("same", "undecided", "faster", "slower", "error")}
    seconds = sorted(float(row[2]) for row in mine)
    widest = max((max(abs(float(row[5]) - 1), abs(float(row[6]) - 1)) for row in mine if row[3] == "same"), default=None)
    loads = [float(row[8]) for row in mine if row[8] != "nan"]
    measures = {m: sum(row[9] == m for row in mine) for m in ("wall", "cpu") if any(row[9] == m for row in mine)}
    print(f"  {phase:11} {len(mine):2} runs: " + ", ".join(f"{n} {w}" for w, n in counts.items() if n or w != "error")
          + " (on " + ", ".join(f"{m} {n}" for m, n in measures.items()) + ")"
          + f"; {seconds[0]:.0f} / {statistics.median(seconds):.0f} / {seconds[-1]:.0f} s (least / median / most)"
          + (f"; a `same` interval reaches at most {100 * widest:.1f}% from 1" if widest is not None else "")
          + (f"; other processes used {min(loads):.2f} to {max(loads):.2f} cores" if loads else ""))
print("expected: the model against itself never faster or slower, `same` in 18 of 20 loaded, each within 120 s;"
      " whatchanged slower 20 of 20; threads slower (exit 1)")
PY
