#!/usr/bin/env bash
# What compare's rounds may be held on: the wall time of ResNet-18's runs or the CPU time the
# process used in them (`timing_ms.cpu_median`), quiet and beside BURNERS CPU-burning processes,
# at each of THREADS. Each figure is a fresh `mge run` process's median, as a round of compare
# takes it; printed per phase and thread count: the median over PROCESSES processes and their
# spread (10th to 90th percentile, in percent of the median), which is what the rounds' ratios
# see, and the other processes' load as `run` measured it.
#
#   bench/cpu_or_wall.sh        # from the repository root; see bench/lib.sh for the environment
#
# Environment: PROCESSES (8), ITER (5: timed runs a process), THREADS ("1 2"), BURNERS (2),
# PHASES ("quiet loaded").
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/lib.sh
PROCESSES=${PROCESSES:-8}
ITER=${ITER:-5}
THREADS=${THREADS:-1 2}
BURNERS=${BURNERS:-2}
PHASES=${PHASES:-quiet loaded}

for phase in $PHASES; do
    if [[ $phase == loaded ]]; then
        start_burners "$BURNERS"
    fi
    for threads in $THREADS; do
        figures=()
        for ((p = 1; p <= PROCESSES; p++)); do
            figures+=("$("$MGE_BIN" run "$RESNET" --threads "$threads" --warmup 2 --iter "$ITER" --json -q 2>>"$LOG" |
                field '"%s,%s,%s" % (d["timing_ms"]["median"], d["timing_ms"].get("cpu_median"), d["noise"]["other_load_cores"])')")
        done
        "$PY" - "$phase" "$threads" "${figures[@]}" <<'PY'
import statistics, sys
phase, threads, rows = sys.argv[1], sys.argv[2], [row.split(",") for row in sys.argv[3:]]
def said(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, round(q * (len(values) - 1)))]
    middle = statistics.median(values)
    return f"{middle:8.1f} ms, spread {100 * (pick(0.9) - pick(0.1)) / middle:5.1f}%"
wall = [float(row[0]) for row in rows]
cpu = [float(row[1]) for row in rows if row[1] != "None"]
load = [float(row[2]) for row in rows if row[2] != "None"]
print(f"{phase:6} --threads {threads}: {len(rows)} processes; wall {said(wall)}; cpu {said(cpu) if cpu else 'none'}"
      + (f"; other processes used {min(load):.2f} to {max(load):.2f} cores" if load else ""))
PY
    done
    stop_burning
done
