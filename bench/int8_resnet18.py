"""The float and int8 dumps of a quantizable ResNet-18, for `mge compare --by-layer`.

Builds the model zoo's quantizable ResNet-18 (MegEngine/Models' quantization flow: a
QuantStub, conv-bn-relu and conv-bn modules that QAT turns into quantized convolutions, the
residual add with its ReLU as one `FUSE_ADD_RELU` elementwise module, average pooling,
flatten, a linear layer, a DequantStub), written here for this bench, with random weights and
random batch norm statistics frozen by eval mode (so only quantization differs). Dumps it as
float the way the zoo's dump.py does (`optimize_for_inference`,
`enable_fuse_conv_bias_nonlinearity`), then prepares it for QAT, lets the observers see
CALIBRATION random images, quantizes it and dumps it as int8. Writes into OUT:
float.mge, int8.mge, data.npy (the feed: one more random image) and megengine.json, the SQNR
(dB) of each stage's output of the int8 network against the float one, computed here from
MegEngine's Python (the modules run eagerly), and the seconds each step took.

    VENV/bin/python bench/int8_resnet18.py OUT [--calibration 8]
"""
import argparse
import copy
import json
import os
import sys
import time

import numpy as np

import megengine as mge
import megengine.functional as F
import megengine.module as M
import megengine.quantization as Q
from megengine.core.tensor.dtype import is_quantize
from megengine.jit import trace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "fixtures"))
from make_zoo_fixtures import ZOO_DUMP, randomise_bn  # noqa: E402

INPUT_SHAPE = (1, 3, 224, 224)


class BasicBlock(M.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv_bn_relu = M.ConvBnRelu2d(cin, cout, 3, stride, padding=1, bias=False)
        self.conv_bn = M.ConvBn2d(cout, cout, 3, 1, padding=1, bias=False)
        self.downsample = M.ConvBn2d(cin, cout, 1, stride, bias=False) \
            if stride != 1 or cin != cout else M.Identity()
        self.add_relu = M.Elemwise("FUSE_ADD_RELU")

    def forward(self, x):
        return self.add_relu(self.conv_bn(self.conv_bn_relu(x)), self.downsample(x))


class ResNet18(M.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.quant = M.QuantStub()
        self.conv1 = M.ConvBnRelu2d(3, 64, 7, 2, padding=3, bias=False)
        self.maxpool = M.MaxPool2d(3, 2, padding=1)
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = blocks
        self.avgpool = M.AvgPool2d(7)
        self.fc = M.Linear(512, classes)
        self.dequant = M.DequantStub()

    def stages(self, x):
        """Each stage's output in order (the stem, each block, the pooled features, the
        logits), the last the network's."""
        outs = {}
        x = self.maxpool(self.conv1(self.quant(x)))
        outs["conv1+maxpool"] = x
        for index, block in enumerate(self.blocks):
            x = block(x)
            outs[f"layer{index // 2 + 1}.{index % 2}"] = x
        x = F.flatten(self.avgpool(x), 1)
        outs["avgpool"] = x
        outs["fc"] = self.dequant(self.fc(x))
        return outs

    def forward(self, x):
        return self.stages(x)["fc"]


def dump(net, data, path, **options):
    @trace(symbolic=True, capture_as_const=True)
    def infer(x):
        return net(x)

    infer(mge.tensor(data))
    infer.dump(path, arg_names=["data"], output_names=["logits"], **options)


def calibrated_int8(net, images):
    qat = copy.deepcopy(net)
    Q.quantize_qat(qat, qconfig=Q.min_max_fakequant_qconfig)
    qat.eval()  # an Observer's eval() disables it: enabled again after
    Q.disable_fake_quant(qat)
    Q.enable_observer(qat)
    for image in images:
        qat(mge.tensor(image[None]))
    Q.disable_observer(qat)
    Q.enable_fake_quant(qat)
    int8 = Q.quantize(qat)
    int8.eval()
    return int8


def as_float(tensor):
    return tensor.astype("float32").numpy() if is_quantize(tensor.dtype) else tensor.numpy()


def sqnr_db(reference, value):
    reference = reference.astype(np.float64)
    return float(10 * np.log10(np.sum(reference ** 2) / np.sum((reference - value) ** 2)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder to write into")
    ap.add_argument("--calibration", type=int, default=8, help="random images the observers see")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    mge.random.seed(0)
    rng = np.random.RandomState(18)
    seconds = {}

    started = time.monotonic()
    net = ResNet18()
    randomise_bn(net, rng)
    net.eval()
    data = rng.uniform(0, 1, INPUT_SHAPE).astype("float32")
    np.save(os.path.join(args.out, "data.npy"), data)
    dump(net, data, os.path.join(args.out, "float.mge"), **ZOO_DUMP)
    seconds["build_and_dump_float"] = time.monotonic() - started

    started = time.monotonic()
    images = rng.uniform(0, 1, (args.calibration,) + INPUT_SHAPE[1:]).astype("float32")
    int8 = calibrated_int8(net, images)
    seconds["qat_calibrate_quantize"] = time.monotonic() - started

    started = time.monotonic()
    dump(int8, data, os.path.join(args.out, "int8.mge"), **ZOO_DUMP)
    seconds["dump_int8"] = time.monotonic() - started

    started = time.monotonic()
    reference = {name: as_float(value) for name, value in net.stages(mge.tensor(data)).items()}
    quantized = {name: as_float(value) for name, value in int8.stages(mge.tensor(data)).items()}
    sqnr = {name: sqnr_db(reference[name], quantized[name]) for name in reference}
    seconds["megengine_sqnr"] = time.monotonic() - started
    report = {"megengine_version": mge.__version__, "calibration_images": args.calibration,
              "dump_options": ZOO_DUMP, "sqnr_db_by_stage": sqnr,
              "seconds": {step: round(value, 1) for step, value in seconds.items()}}
    with open(os.path.join(args.out, "megengine.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
