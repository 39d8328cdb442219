"""`mge info --ops` against MegEngine's own MAC count on full-size model-zoo graphs.

Builds, with random weights, ResNet-18 (torchvision-style, bench/resnet18.py) at 224x224,
ShuffleNet v2 1.0x at 224x224 and YOLOX-s at 640x640, dumps each as the zoo's dump.py
scripts do (`trace(capture_as_const=True)`, `optimize_for_inference=True`,
`enable_fuse_conv_bias_nonlinearity=True`, BatchNorm left in the module for the dump's
optimisation to fold), into a temporary folder, and prints per model MegEngine's MACs,
`mge info --ops --json`'s, their ratio and the operator types mge left uncounted.

MegEngine's count is fixtures/make_zoo_fixtures.py's: `module_stats.get_op_stats` over
the dumped graph loaded by `megengine.utils.network.Network` (what
`network_visualize.py --cal_flops` sums), plus transposed convolutions at the engine
profiler's count.

The ShuffleNet v2 and YOLOX-s here are written for this bench after the structure of
MegEngine/Models' shufflenet/model.py and Megvii-BaseDetection/YOLOX's MegEngine demo
(CSPDarknet with depth 0.33 and width 0.5, PAFPN with bilinear upsampling, the decoupled
head, SiLU as x * sigmoid(x), the head's outputs not decoded, as its dump.py sets it).

    /work/mgepy/bin/python bench/macs_zoo.py [--mge target/release/mge] [--models resnet18 ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import megengine as mge
import megengine.functional as F
import megengine.module as M
from megengine.jit import trace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from make_zoo_fixtures import ZOO_DUMP, megengine_macs, profiled, randomise_bn, total_macs  # noqa: E402
from resnet18 import ResNet18  # noqa: E402


def conv_bn(cin, cout, kernel, stride=1, groups=1, relu=True):
    layers = [M.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), M.BatchNorm2d(cout)]
    return layers + [M.ReLU()] if relu else layers


class ShuffleBlock(M.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.stride = stride
        branch_in = cin if stride == 2 else cin // 2
        mid = cout // 2
        self.main = M.Sequential(
            *conv_bn(branch_in, mid, 1),
            *conv_bn(mid, mid, 3, stride, groups=mid, relu=False),
            *conv_bn(mid, cout - branch_in if stride == 1 else cout - cin, 1),
        )
        self.proj = M.Sequential(*conv_bn(cin, cin, 3, 2, groups=cin, relu=False), *conv_bn(cin, cin, 1)) \
            if stride == 2 else None

    def forward(self, x):
        if self.stride == 2:
            return F.concat((self.proj(x), self.main(x)), 1)
        n, c, h, w = x.shape
        x = x.reshape(n * c // 2, 2, h * w).transpose(1, 0, 2).reshape(2, -1, c // 2, h, w)
        return F.concat((x[0], self.main(x[1])), 1)


class ShuffleNetV2(M.Module):
    """1.0x: stages of 4, 8, 4 blocks, 116, 232, 464 channels."""

    def __init__(self):
        super().__init__()
        self.stem = M.Sequential(*conv_bn(3, 24, 3, 2), M.MaxPool2d(3, 2, 1))
        blocks, cin = [], 24
        for repeat, cout in zip((4, 8, 4), (116, 232, 464)):
            blocks += [ShuffleBlock(cin, cout, 2)] + [ShuffleBlock(cout, cout, 1) for _ in range(repeat - 1)]
            cin = cout
        self.features = M.Sequential(*blocks)
        self.last = M.Sequential(*conv_bn(464, 1024, 1), M.AvgPool2d(7))
        self.classifier = M.Linear(1024, 1000, bias=False)

    def forward(self, x):
        return self.classifier(self.last(self.features(self.stem(x))).reshape(-1, 1024))


class SiLU(M.Module):
    def forward(self, x):
        return x * F.sigmoid(x)


def base_conv(cin, cout, kernel, stride=1):
    return M.Sequential(*conv_bn(cin, cout, kernel, stride, relu=False), SiLU())


class Bottleneck(M.Module):
    def __init__(self, channels, shortcut):
        super().__init__()
        self.conv = M.Sequential(base_conv(channels, channels, 1), base_conv(channels, channels, 3))
        self.shortcut = shortcut

    def forward(self, x):
        y = self.conv(x)
        return y + x if self.shortcut else y


class CSPLayer(M.Module):
    def __init__(self, cin, cout, n, shortcut=True):
        super().__init__()
        hidden = cout // 2
        self.conv1, self.conv2 = base_conv(cin, hidden, 1), base_conv(cin, hidden, 1)
        self.conv3 = base_conv(2 * hidden, cout, 1)
        self.m = M.Sequential(*[Bottleneck(hidden, shortcut) for _ in range(n)])

    def forward(self, x):
        return self.conv3(F.concat((self.m(self.conv1(x)), self.conv2(x)), 1))


class SPPBottleneck(M.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1, self.conv2 = base_conv(cin, cin // 2, 1), base_conv(cin // 2 * 4, cout, 1)
        self.pools = [M.MaxPool2d(k, 1, k // 2) for k in (5, 9, 13)]

    def forward(self, x):
        x = self.conv1(x)
        return self.conv2(F.concat([x] + [pool(x) for pool in self.pools], 1))


class YOLOXs(M.Module):
    """Depth 0.33 (1 or 3 bottlenecks a CSP layer), width 0.5, 80 classes."""

    def __init__(self, classes=80):
        super().__init__()
        self.stem = base_conv(12, 32, 3)  # after Focus
        self.dark2 = M.Sequential(base_conv(32, 64, 3, 2), CSPLayer(64, 64, 1))
        self.dark3 = M.Sequential(base_conv(64, 128, 3, 2), CSPLayer(128, 128, 3))
        self.dark4 = M.Sequential(base_conv(128, 256, 3, 2), CSPLayer(256, 256, 3))
        self.dark5 = M.Sequential(base_conv(256, 512, 3, 2), SPPBottleneck(512, 512), CSPLayer(512, 512, 1, False))
        self.lateral_conv0, self.C3_p4 = base_conv(512, 256, 1), CSPLayer(512, 256, 1, False)
        self.reduce_conv1, self.C3_p3 = base_conv(256, 128, 1), CSPLayer(256, 128, 1, False)
        self.bu_conv2, self.C3_n3 = base_conv(128, 128, 3, 2), CSPLayer(256, 256, 1, False)
        self.bu_conv1, self.C3_n4 = base_conv(256, 256, 3, 2), CSPLayer(512, 512, 1, False)
        self.stems = [base_conv(c, 128, 1) for c in (128, 256, 512)]
        self.cls_convs = [M.Sequential(base_conv(128, 128, 3), base_conv(128, 128, 3)) for _ in range(3)]
        self.reg_convs = [M.Sequential(base_conv(128, 128, 3), base_conv(128, 128, 3)) for _ in range(3)]
        self.cls_preds = [M.Conv2d(128, classes, 1) for _ in range(3)]
        self.reg_preds = [M.Conv2d(128, 4, 1) for _ in range(3)]
        self.obj_preds = [M.Conv2d(128, 1, 1) for _ in range(3)]

    def forward(self, x):
        x = F.concat((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]), 1)
        x2 = self.dark3(self.dark2(self.stem(x)))
        x1 = self.dark4(x2)
        x0 = self.dark5(x1)
        up = lambda t: F.vision.interpolate(t, scale_factor=2, mode="bilinear")  # noqa: E731
        fpn_out0 = self.lateral_conv0(x0)
        fpn_out1 = self.reduce_conv1(self.C3_p4(F.concat([up(fpn_out0), x1], 1)))
        pan_out2 = self.C3_p3(F.concat([up(fpn_out1), x2], 1))
        pan_out1 = self.C3_n3(F.concat([self.bu_conv2(pan_out2), fpn_out1], 1))
        pan_out0 = self.C3_n4(F.concat([self.bu_conv1(pan_out1), fpn_out0], 1))
        outputs = []
        for k, feature in enumerate((pan_out2, pan_out1, pan_out0)):
            feature = self.stems[k](feature)
            reg = self.reg_convs[k](feature)
            outputs.append(F.concat([self.reg_preds[k](reg), F.sigmoid(self.obj_preds[k](reg)),
                                     F.sigmoid(self.cls_preds[k](self.cls_convs[k](feature)))], 1))
        return F.concat([F.flatten(o, start_axis=2) for o in outputs], axis=2).transpose(0, 2, 1)


MODELS = {
    "resnet18": (ResNet18, (1, 3, 224, 224)),
    "shufflenet_v2": (ShuffleNetV2, (1, 3, 224, 224)),
    "yolox_s": (YOLOXs, (1, 3, 640, 640)),
}


def dump_zoo_style(net, shape, path, rng):
    """As the zoo's dump.py: a traced graph of constants, inference-optimised with
    conv, bias and activation fused."""
    net.eval()

    @trace(symbolic=True, capture_as_const=True)
    def pred(data):
        return net(data)

    data = rng.uniform(0, 1, shape).astype("float32")
    pred(mge.tensor(data))
    pred.dump(path, arg_names=["data"], **ZOO_DUMP)
    return data


def mge_ops(mge_bin, path):
    done = subprocess.run([mge_bin, "info", "--ops", "--json", path], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"macs_zoo: mge info failed on {path}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mge", default=os.path.join(ROOT, "target", "release", "mge"))
    ap.add_argument("--models", nargs="+", choices=sorted(MODELS), default=list(MODELS))
    ap.add_argument("--keep", help="a folder to keep the dumps in (default: a temporary one)")
    args = ap.parse_args()
    rng = np.random.RandomState(0)
    mge.random.seed(0)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or scratch
        os.makedirs(folder, exist_ok=True)
        for name in args.models:
            make, shape = MODELS[name]
            net = make()
            randomise_bn(net, rng)
            path = os.path.join(folder, name + ".mge")
            data = dump_zoo_style(net, shape, path, rng)
            reference = total_macs(megengine_macs(path), profiled(path, {"data": data}))
            ours = mge_ops(args.mge, path)["ops"]
            macs, uncounted = ours["macs"], ours["uncounted_types"]
            rows.append((name, "x".join(map(str, shape[2:])), reference, macs, uncounted))
            print(f"{name}: done", file=sys.stderr)
    print("| model | input | MegEngine MACs | mge MACs | mge / MegEngine | uncounted types |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for name, size, reference, macs, uncounted in rows:
        ratio = f"{macs / reference:.4f}" if reference else "-"
        types = ", ".join(f"{kind} x{count}" for kind, count in sorted(uncounted.items())) or "none"
        print(f"| {name} | {size} | {reference:,} ({reference / 1e9:.3f} G) | {macs:,} | {ratio} | {types} |")


if __name__ == "__main__":
    main()
