"""Per-iteration timing of forward+wait with Python megenginelite (the baseline of
bench/bench.sh, part a). Prints one JSON line: {"median_ms": ..., "min_ms": ..., ...}.

    python bench/lite_loop.py MODEL [--threads T] [--warmup W] [--iter N] [--seed S]

Random inputs like `#rand(0,1)` (floats) / `#rand(0,255)` (integers), set once.
"""
import argparse
import json
import statistics
import time

import numpy as np
from megenginelite import LiteConfig, LiteNetwork


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iter", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    net = LiteNetwork(config=LiteConfig())
    net.threads_number = args.threads  # must be set before load
    net.load(args.model)
    rng = np.random.RandomState(args.seed)
    for name in net.get_all_input_name():
        t = net.get_io_tensor(name)
        lay = t.layout
        dt = np.dtype(lay.dtype)
        hi = 255 if dt.kind in "iu" else 1
        t.set_data_by_copy(np.ascontiguousarray(rng.uniform(0, hi, lay.shapes).astype(dt)))

    for _ in range(args.warmup):
        net.forward()
        net.wait()
    times = []
    for _ in range(args.iter):
        t0 = time.perf_counter()
        net.forward()
        net.wait()
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "mean_ms": statistics.fmean(times),
        "max_ms": max(times),
        "iter": args.iter,
        "threads": args.threads,
    }))


if __name__ == "__main__":
    main()
