"""How the machine's own speed moves over seconds, in one process: Python megenginelite runs
the model back to back (1 thread, the engine's worker sleeping when idle, as `compare`'s
CPU-time rounds run it) for SECONDS, and prints each WINDOW's least CPU time and least wall
time of a run, then the spread of those least times across the windows.

    python bench/host_drift.py MODEL [--seconds 40] [--window 2] [--burners 0]

Within one process nothing of the process changes from window to window (its memory, its
algorithms, its threads), so what the windows' least times differ by is the machine's: the
host, the hypervisor, other tenants. A compare's rounds take each side in a fresh process a
few seconds long, one side after the other, so a drift at this scale lands between the two
sides of a round and is not cancelled by the ratio. `--burners N` runs N busy processes
beside it, as the loaded phase of `compare_resnet18.sh` does.
"""
import argparse
import statistics
import time

from lite_timing import burning, warmed_network


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--window", type=float, default=2)
    ap.add_argument("--burners", type=int, default=0)
    args = ap.parse_args()

    with burning(args.burners):
        windows = timed_windows(args.model, args.seconds, args.window)
    print("window  least CPU ms  least wall ms  runs")
    for at, (cpu, wall, runs) in enumerate(windows):
        print(f"{at:6}  {cpu:12.1f}  {wall:13.1f}  {runs:4}")
    cpus = [cpu for cpu, _, _ in windows]
    steps = [later / earlier for earlier, later in zip(cpus, cpus[1:])]
    print(
        f"least CPU of a window: least {min(cpus):.1f}, median {statistics.median(cpus):.1f}, "
        f"most {max(cpus):.1f} ms; next window / this one: sd {statistics.pstdev(steps):.3f}, "
        f"from {min(steps):.3f} to {max(steps):.3f}"
    )


def timed_windows(model, seconds, window):
    net = warmed_network(model)
    windows = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        closes = time.perf_counter() + window
        cpus, walls = [], []
        while time.perf_counter() < closes:
            cpu, wall = time.process_time_ns(), time.perf_counter_ns()
            net.forward()
            net.wait()
            walls.append((time.perf_counter_ns() - wall) / 1e6)
            cpus.append((time.process_time_ns() - cpu) / 1e6)
        windows.append((min(cpus), min(walls), len(cpus)))
    return windows


if __name__ == "__main__":
    main()
