"""One whole run with Python megenginelite: import, load, random input, one
forward+wait (the baseline of bench/bench.sh, part b: process start to finish).

    python bench/lite_once.py MODEL
"""
import sys

import numpy as np
from megenginelite import LiteNetwork

net = LiteNetwork()
net.load(sys.argv[1])
for name in net.get_all_input_name():
    t = net.get_io_tensor(name)
    dt = np.dtype(t.layout.dtype)
    hi = 255 if dt.kind in "iu" else 1
    t.set_data_by_copy(np.random.RandomState(0).uniform(0, hi, t.layout.shapes).astype(dt))
net.forward()
net.wait()
out = net.get_io_tensor(net.get_all_output_name()[0]).to_numpy()
