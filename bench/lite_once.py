"""One whole run with Python megenginelite: import, load, random input, the first forward+wait and
the warm-up runs. Prints one JSON line with the time of each step, as `mge run --json` reports
them under timing_ms: {"load": ms, "first_run": ms, "warmup": [ms, ...]} (the first warm-up is
the first run). The baseline of bench/bench.sh (part b: process start to finish) and of
bench/cold_start.sh.

    python bench/lite_once.py MODEL [--warmup N] [--threads T]
"""
import argparse
import json
import time

import numpy as np
from megenginelite import LiteConfig, LiteNetwork


def ms_since(start):
    return (time.perf_counter() - start) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    start = time.perf_counter()
    net = LiteNetwork(config=LiteConfig())
    if args.threads > 1:
        net.threads_number = args.threads  # must be set before load
    net.load(args.model)
    load = ms_since(start)
    for name in net.get_all_input_name():
        t = net.get_io_tensor(name)
        dt = np.dtype(t.layout.dtype)
        hi = 255 if dt.kind in "iu" else 1
        t.set_data_by_copy(np.random.RandomState(0).uniform(0, hi, t.layout.shapes).astype(dt))
    warmup = []
    for _ in range(max(args.warmup, 1)):
        start = time.perf_counter()
        net.forward()
        net.wait()
        warmup.append(ms_since(start))
    net.get_io_tensor(net.get_all_output_name()[0]).to_numpy()
    print(json.dumps({"load": load, "first_run": warmup[0], "warmup": warmup[: args.warmup]}))


if __name__ == "__main__":
    main()
