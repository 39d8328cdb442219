"""Write a random-weight ResNet-18 (input `data` float32 (1,3,224,224), output `logits`
(1,1000)) as a MegEngine 1.13 .mge file (~46 MB, not committed).

    VENV/bin/python bench/resnet18.py bench/out/resnet18.mge   (VENV: a Python 3.10 venv with megengine 1.13.0)
    VENV/bin/python bench/resnet18.py --testcase bench/out/resnet18_tc1.mge   (with a testcase)

Needs the venv described in fixtures/make_fixtures.py (megengine 1.13.0, numpy<2).
"""
import argparse
import os

import numpy as np

import megengine as mge
import megengine.functional as F
import megengine.module as M
from megengine.jit import trace


class BasicBlock(M.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = M.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = M.BatchNorm2d(cout)
        self.conv2 = M.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = M.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = M.Sequential(
                M.Conv2d(cin, cout, 1, stride=stride, bias=False), M.BatchNorm2d(cout)
            )

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + idt)


class ResNet18(M.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = M.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = M.BatchNorm2d(64)
        self.pool = M.MaxPool2d(3, stride=2, padding=1)
        layers = []
        cin = 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = M.Sequential(*layers)
        self.fc = M.Linear(512, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        x = F.mean(x, axis=[2, 3])
        return self.fc(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", help="path of the .mge file to write")
    ap.add_argument("--testcase", action="store_true",
                    help="embed one #rand(0,1) testcase and its expected logits (a container for `mge check`)")
    args = ap.parse_args()

    mge.random.seed(0)
    np.random.seed(0)
    net = ResNet18()
    net.eval()

    @trace(symbolic=True, capture_as_const=True)
    def fn(data):
        return net(data)

    fn(mge.tensor(np.random.rand(1, 3, 224, 224).astype("float32")))
    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.output + ".tmp"
    testcase = {"input_data": ["#rand(0,1)"]} if args.testcase else {}
    fn.dump(tmp, arg_names=["data"], output_names=["logits"], **testcase)
    os.replace(tmp, args.output)
    print("wrote %s (%d bytes)" % (args.output, os.path.getsize(args.output)))


if __name__ == "__main__":
    main()
