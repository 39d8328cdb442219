"""Write a chain of elementwise operators (input `data` float32 (1,8), output `out`) as a
MegEngine 1.13 .mge file: x*2, relu, x*2, relu, ..., each named by a counter the engine
makes up (`MUL[17]`, `RELU[16]`), so that `compare --structure` matches them by topology.

    VENV/bin/python bench/chain.py 50000 bench/out/chain50k.mge
    VENV/bin/python bench/chain.py 50000 bench/out/chain50k_inserted.mge --insert 25000
    VENV/bin/python bench/chain.py 50000 bench/out/chain50k_changed.mge --change 25000

`--insert K` adds one relu after operator K; `--change K` makes operator K's factor 3
(a weight that differs). Needs the venv described in bench/README.md (megengine 1.13.0).
"""
import argparse
import os

import numpy as np

import megengine as mge
import megengine.functional as F
from megengine.jit import trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("operators", type=int, help="how many operators the chain holds (before --insert)")
    ap.add_argument("output", help="path of the .mge file to write")
    ap.add_argument("--insert", type=int, help="add a relu after this operator")
    ap.add_argument("--change", type=int, help="give this operator (a multiplication) the factor 3")
    args = ap.parse_args()

    @trace(symbolic=True, capture_as_const=True)
    def fn(data):
        x = data
        for index in range(args.operators):
            if index % 2:
                x = F.relu(x)
            else:
                x = x * (3.0 if index == args.change else 2.0)
            if index == args.insert:
                x = F.relu(x)
        return x

    fn(mge.tensor(np.ones((1, 8), dtype="float32")))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    fn.dump(tmp, arg_names=["data"], output_names=["out"])
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
