"""A design `compare` does not have, measured: rounds whose two sides are timed interleaved.
Each round starts two Python megenginelite processes on MODEL (1 thread, the engine's worker
sleeping when idle), both alive at once, and times their runs A B B A A B ... (RUNS each);
the round's B/A is the ratio of their least CPU times. Rounds follow until BUDGET seconds are
spent, and the ratios' median gets the interval `compare` takes at its looks (98.75%, by
order statistics). Prints one JSON line: rounds, seconds, median, standard deviation, the
interval, and whether it lies within ±2% (`same`).

    python bench/interleaved_rounds.py MODEL [--runs 4] [--budget 110] [--burners 0]

`compare` times the two sides one after the other, each a fresh process; where the machine's
own speed moves over seconds (`host_drift.py`), the drift falls between them. Interleaved,
the two sides of a round are timed within a run of each other.
"""
import argparse
import json
import math
import statistics
import subprocess
import sys
import time

from lite_timing import burning, warmed_network

CONFIDENCE = 0.9875
MIN_EFFECT = 0.02


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--budget", type=float, default=110)
    ap.add_argument("--burners", type=int, default=0)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.model)
        return

    started = time.perf_counter()
    ratios = []
    with burning(args.burners):
        while time.perf_counter() - started < args.budget:
            ratios.append(round_ratio(args.model, args.runs))
    interval = median_interval(ratios, CONFIDENCE)
    print(json.dumps({
        "rounds": len(ratios),
        "seconds": round(time.perf_counter() - started, 1),
        "median": round(statistics.median(ratios), 4),
        "sd": round(statistics.pstdev(ratios), 4),
        "interval": interval and [round(bound, 4) for bound in interval],
        "same": bool(interval and 1 - MIN_EFFECT <= interval[0] and interval[1] <= 1 + MIN_EFFECT),
    }))


def round_ratio(model, runs):
    """B/A of one round: two processes, their runs interleaved, each side's least CPU time."""
    sides = [spawn(model), spawn(model)]
    for side in sides:
        if side.stdout.readline().strip() != "ready":
            sys.exit("a side did not load the model")
    least = [math.inf, math.inf]
    for run in range(runs):
        for at in (0, 1) if run % 2 == 0 else (1, 0):
            sides[at].stdin.write("run\n")
            sides[at].stdin.flush()
            least[at] = min(least[at], float(sides[at].stdout.readline()))
    for side in sides:
        side.stdin.close()
        side.wait()
    return least[1] / least[0]


def spawn(model):
    return subprocess.Popen(
        [sys.executable, __file__, model, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def serve(model):
    """A side: loads the model, says `ready`, then answers each line with one run's CPU ms."""
    net = warmed_network(model)
    print("ready", flush=True)
    for _ in sys.stdin:
        cpu = time.process_time_ns()
        net.forward()
        net.wait()
        print((time.process_time_ns() - cpu) / 1e6, flush=True)


def median_interval(ratios, confidence):
    """The order statistics around the median that hold it with `confidence`, as `compare`'s
    `median_interval_at` takes them (the rank j from each end); None if too few."""
    ordered = sorted(ratios)
    count = len(ordered)
    rank = None
    for j in range(1, count // 2 + 1):
        below = sum(math.comb(count, k) for k in range(j)) / 2**count
        if 2 * below <= 1 - confidence:
            rank = j
    return rank and (ordered[rank - 1], ordered[count - rank])


if __name__ == "__main__":
    main()
