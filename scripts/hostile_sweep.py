#!/usr/bin/env python3
"""The hostile and mutation sweep of issue 16 (run through hostile_sweep.sh).

Every case runs `mge` in a folder of its own: inputs in `in/`, outputs in
`out/`, a private TMPDIR in `tmp/`, under `timeout` and GNU time for the peak
RSS. A case fails on exit 101 or a "panicked"/backtrace on stderr (panic),
the timeout (hang), an exit above 128 (signal), any other exit but 0, 1 and 2,
a file of `in/` changed or gone (overwritten input), anything left in its
TMPDIR or a staging name (`.mge-*`, `.install-*`, `*.partial`, `*.tmp`)
anywhere in its folder (leftover), or a peak RSS over 200 MB where a read or a
number is unbounded (memory). "engine crashed" on stderr is counted apart: the
supervisor caught a signal in the engine.

Mutations come from one seeded generator, so every run makes the same cases.
"""

import argparse
import concurrent.futures
import hashlib
import io
import json
import os
import random
import re
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MGE = os.path.join(ROOT, "target", "release", "mge")
RUNTIME = os.path.expanduser("~/.cache/mge/runtime/1.13.0")
RSS_LIMIT_KB = 200 * 1024
SEED = 16
STAGING = re.compile(r"^(\.mge-|\.install-)|\.partial$|\.tmp$")


@dataclass
class Case:
    group: str
    name: str
    argv: list
    # (op, path relative to the case folder, argument): see `prepare`.
    setup: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    stdin: str = "/dev/null"
    # A shell prelude run in a mount namespace of its own (read-only or full
    # disks); the case's folder is $D there.
    namespace: str = ""
    rss_bound: bool = False
    # (signal, seconds after the start) sent to mge itself.
    signal: tuple = None
    timeout: int = 60
    # inputs the command updates by design (a fast-run cache under --fast-run)
    updated: tuple = ()


def fixture(rel):
    return ("copy", None, rel)


# ---------------------------------------------------------------- file makers


def npy(descr="<f4", shape=(1, 3, 16, 16), data=None, fortran=False, header=None, version=(1, 0)):
    if header is None:
        header = "{'descr': %r, 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, tuple(shape))
    head = header.encode("latin1")
    prefix_len = 10 if version[0] == 1 else 12
    pad = (64 - (prefix_len + len(head) + 1) % 64) % 64
    head = head + b" " * pad + b"\n"
    size = struct.pack("<H", len(head)) if version[0] == 1 else struct.pack("<I", len(head))
    if data is None:
        count = 1
        for d in shape:
            count *= max(d, 0)
        data = b"\0" * (4 * count if count < 1 << 20 else 0)
    return b"\x93NUMPY" + bytes(version) + size + head + data


def npz(members):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def npz_bomb(mib):
    """An archive whose one member inflates to MIB MiB: a header saying so,
    then zeros."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("data.npy", "w", force_zip64=True) as member:
            member.write(npy(shape=(mib * 1024 * 256,), data=b""))
            chunk = b"\0" * (1 << 20)
            for _ in range(mib):
                member.write(chunk)
    return buffer.getvalue()


def png(width, height, idat=b"", color_type=2):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def bmp(width, height):
    header = b"BM" + struct.pack("<IHHI", 54, 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 0, 0, 0, 0)
    return header + info


def read_fixture(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read()


# ---------------------------------------------------------------- the cases

MODEL = "in/m.mge"
CONTAINER = "in/tc.mge"
BASE_SETUP = [
    ("copy", MODEL, "fixtures/conv_float.mge"),
    ("copy", CONTAINER, "fixtures/conv_float_tc3.mge"),
    ("copy", "in/x.npy", "fixtures/feeds/conv_data.npy"),
    ("copy", "in/y.npy", "fixtures/feeds/conv_data.npy"),
]


def commands_on(model):
    """Every command that reads a model, each as it is usually given."""
    return {
        "run": ["run", model, "--iter", "1"],
        "run-json": ["run", model, "--iter", "1", "--json"],
        "profile": ["profile", model, "--iter", "1", "-o", "out/p.json"],
        "dump-outputs": ["dump", model, "--outputs", "out/o"],
        "dump-io": ["dump", model, "--io", "out/io"],
        "dump-testcases": ["dump", model, "--testcases", "out/t"],
        "info": ["info", model],
        "info-json": ["info", model, "--json"],
        "check": ["check", model],
        "check-j2": ["check", "-j", "2", model, CONTAINER],
        "check-junit": ["check", model, "--junit", "out/j.xml"],
        "compare": ["compare", model, "in/x.npy"],
        "tune": ["tune", model, "--budget", "2"],
    }


def path_cases():
    hostile = {
        "missing": ("in/nope.mge", []),
        "folder": ("in/adir", [("dir", "in/adir", None)]),
        "fifo": ("in/fifo.mge", [("fifo", "in/fifo.mge", None)]),
        "dev-zero": ("/dev/zero", []),
        "dev-null": ("/dev/null", []),
        "dev-stdin-zero": ("/dev/stdin", []),
        "proc-maps": ("/proc/self/maps", []),
        "proc-kcore": ("/proc/kcore", []),
        "empty": ("in/empty.mge", [("bytes", "in/empty.mge", b"")]),
        "sparse-1.5G": ("in/huge.mge", [("sparse", "in/huge.mge", 3 << 29)]),
        "sparse-20G": ("in/huge.mge", [("sparse", "in/huge.mge", 20 << 30)]),
        "symlink-loop": ("in/loop.mge", [("symlink", "in/loop.mge", "loop.mge")]),
        "dangling-link": ("in/gone.mge", [("symlink", "in/gone.mge", "nowhere.mge")]),
        "trailing-slash": (MODEL + "/", []),
        "not-a-model": ("in/bad.mge", [("copy", "in/bad.mge", "fixtures/not_a_model.mge")]),
        "truncated": ("in/cut.mge", [("copy", "in/cut.mge", "fixtures/conv_float_truncated.mge")]),
        "nul-name": ("in/a\x01b.mge", []),
    }
    cases = []
    for label, (path, setup) in hostile.items():
        for command, argv in commands_on(path).items():
            stdin = "/dev/zero" if label == "dev-stdin-zero" else "/dev/null"
            cases.append(Case("paths", f"{label} {command}", argv, BASE_SETUP + setup, stdin=stdin, rss_bound=True))
    return cases


def mutants(data, rng, header_len):
    """Truncations at header offsets and spread over the file, bytes flipped
    in the header and anywhere, u32 fields smashed to extremes."""
    out = []
    n = len(data)
    cuts = sorted({c for c in [0, 1, 2, 3, 4, 7, 8, 11, 12, 13, 16, 20, 24, 32, 48, 64, 100, 128] if c < n}
                  | {n * k // 16 for k in range(1, 16)} | {n - 1, n - 4})
    for cut in cuts:
        out.append((f"cut@{cut}", data[:cut]))
    for _ in range(14):
        pos = rng.randrange(min(header_len, n))
        mutated = bytearray(data)
        mutated[pos] ^= 1 << rng.randrange(8)
        out.append((f"bit@{pos}", bytes(mutated)))
    for _ in range(14):
        pos = rng.randrange(n)
        mutated = bytearray(data)
        mutated[pos] = rng.randrange(256)
        out.append((f"byte@{pos}", bytes(mutated)))
    for _ in range(10):
        pos = rng.randrange(0, n - 4) & ~3
        mutated = bytearray(data)
        mutated[pos:pos + 4] = struct.pack("<I", rng.choice([0, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, n, n + 1]))
        out.append((f"u32@{pos}", bytes(mutated)))
    burst = bytearray(data)
    for _ in range(max(1, n // 50)):
        burst[rng.randrange(n)] = rng.randrange(256)
    out.append(("burst", bytes(burst)))
    return out


def mutation_cases():
    rng = random.Random(SEED)
    key_args = {
        "fixtures/deploy/conv_float_aes.emod": ["--model-decryption", "AES_default"],
        "fixtures/deploy/conv_float_rc4.emod": ["--model-decryption", "RC4_default"],
        "fixtures/deploy/conv_float_packed_aes_userkey.pack": ["--model-key", "@in/key"],
    }
    models = {
        "fixtures/conv_float.mge": 64,
        "fixtures/conv_float_fbs1.mge": 64,
        "fixtures/conv_float_tc3.mge": 128,
        "fixtures/two_inputs_tc2.mge": 128,
        "fixtures/image_uint8_tc1.mge": 128,
        "fixtures/deploy/conv_float_packed.pack": 128,
        "fixtures/deploy/conv_float_packed_rc4_info.pack": 128,
        "fixtures/deploy/conv_float_tc1_packed.pack": 128,
        "fixtures/deploy/recorded/conv_float_packed_fastrun.pack": 128,
        "fixtures/deploy/conv_float_aes.emod": 64,
        "fixtures/deploy/conv_float_rc4.emod": 64,
        "fixtures/deploy/conv_float_packed_aes_userkey.pack": 128,
    }
    cases = []
    for rel, header_len in models.items():
        data = read_fixture(rel)
        extra = key_args.get(rel, [])
        setup_key = [("copy", "in/key", "fixtures/deploy/user_aes.key")]
        ext = os.path.splitext(rel)[1]
        for label, mutated in mutants(data, rng, header_len):
            target = "in/mut" + ext
            setup = [("bytes", target, mutated)] + setup_key
            base = os.path.basename(rel)
            cases.append(Case("mutation", f"{base} {label} info", ["info", target] + extra, setup))
            runner = ["check", target] if "_tc" in rel else ["run", target, "--iter", "1", "-q"]
            cases.append(Case("mutation", f"{base} {label} {runner[0]}", runner + extra, setup))
    # The engine's io dumps and .npy files that compare reads.
    dump_dir = os.path.join(ROOT, "fixtures/deploy/iodump/conv_float")
    names = sorted(os.listdir(dump_dir))
    for i in range(24):
        victim = rng.choice(names)
        data = read_fixture(f"fixtures/deploy/iodump/conv_float/{victim}")
        label, mutated = rng.choice(mutants(data, rng, 48))
        setup = [("copytree", "in/a", "fixtures/deploy/iodump/conv_float"),
                 ("copytree", "in/b", "fixtures/deploy/iodump/conv_float"),
                 ("bytes", f"in/b/{victim}", mutated)]
        cases.append(Case("mutation", f"iodump {victim} {label} compare", ["compare", "in/a", "in/b"], setup))
    data = read_fixture("fixtures/feeds/conv_data.npy")
    for label, mutated in mutants(data, rng, 128)[::2]:
        setup = BASE_SETUP + [("bytes", "in/mut.npy", mutated)]
        cases.append(Case("mutation", f"conv_data.npy {label} run -i", ["run", MODEL, "-q", "--iter", "1", "-i", "data:in/mut.npy"], setup, rss_bound=True))
        cases.append(Case("mutation", f"conv_data.npy {label} compare", ["compare", "in/x.npy", "in/mut.npy"], setup, rss_bound=True))
    return cases


def feed_cases():
    deep = "[" * 60000 + "]" * 60000
    files = {
        "garbage.npy": bytes(random.Random(SEED).randrange(256) for _ in range(4096)),
        "magic-only.npy": b"\x93NUMPY",
        "header-len-huge.npy": b"\x93NUMPY\x01\x00\xff\xff{'descr'",
        "v3-header-len-4G.npy": b"\x93NUMPY\x03\x00\xff\xff\xff\xff{",
        "shape-1e18.npy": npy(shape=(1000000, 1000000, 1000000)),
        "shape-u64max.npy": npy(shape=(18446744073709551615,)),
        "shape-overflow.npy": npy(shape=(4294967296, 4294967296, 4294967296)),
        "shape-negative.npy": npy(shape=(-1, 3, 16, 16)),
        "data-short.npy": npy(data=b"\0" * 100),
        "descr-object.npy": npy(descr="|O"),
        "descr-garbage.npy": npy(descr="<x9"),
        "descr-f16-odd.npy": npy(descr="<f16"),
        "descr-unicode.npy": npy(descr="<U100"),
        "fortran.npy": npy(fortran=True),
        "header-not-dict.npy": npy(header="[1, 2, 3]"),
        "header-deep.npy": npy(header="{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 5000 + ")" * 5000 + ", }"),
        "header-nul.npy": npy(header="{'descr': '<f4\0', 'fortran_order': False, 'shape': (1,3,16,16), }"),
        "garbage.npz": b"PK\x03\x04" + b"\xff" * 100,
        "empty.npz": npz([]),
        "member-garbage.npz": npz([("data.npy", b"garbage")]),
        "member-huge-shape.npz": npz([("data.npy", npy(shape=(1 << 40,), data=b""))]),
        "bomb-512M.npz": npz_bomb(512),
        "truncated.png": read_fixture("fixtures/feeds/cat.png")[:100],
        "bomb.png": png(100000, 100000, zlib.compress(b"\0" * 100000)),
        "zero-size.png": png(0, 0),
        "garbage.jpg": b"\xff\xd8\xff\xe0" + b"\x00" * 200,
        "huge.bmp": bmp(2000000000, 2000000000),
        "negative.bmp": bmp(-100, -2147483648),
        "huge.ppm": b"P6\n100000 100000\n255\n" + b"\0" * 10,
        "maxval.pgm": b"P5\n16 16\n70000\n" + b"\0" * 10,
    }
    specs = [f"data:in/{name}" for name in files]
    specs += [
        "@/dev/zero", "@in/fifo", "@in/nope", "@in/adir", "@in/huge", "@in/self", "@in/long-line", "@",
        "data:/dev/zero", "/dev/zero", "data:in/fifo.npy", "data:in/adir.npy", "data:/dev/stdin",
        "data:in/x.npz:nokey", "data:in/x.npz:", "in/x.npz::::", "data:/proc/self/maps",
        "#rand(", "#rand()", "#rand(1)", "#rand(5,1)", "#rand(0,1,99999999999)", "#rand(0,1,100000,100000)",
        "#rand(0,1," + ",".join(["1"] * 40) + ")", "#rand(nan,1)", "#rand(-1e40,1e40)", "#rand(0,1,...)",
        "#rand(0,1,-1)", "#rand(0,1,0)", "#rand(0,1,1,3,0,16)", "#rand(0,inf)", "#rand(a,b)", "#rand(0,1,1.5)",
        "#rand(0,1,...,...)", "#rand(0,1)extra", "#rand(0,1,18446744073709551615)", "#rand(0,1,4294967296,4294967296)",
        "#rand(0,1,1,3,16,16,...)", "#rand(0,1,...,16,16)", "#rand(1e-45,1e-45)", "#rand(" + "9" * 400 + ",1)",
        deep, "[1,2", "1e999", "[[1,2],[3]]", '"str"', "null", "[]", "{}", "NaN", "-", "",
        "nosuch:#rand(0,1)", ":#rand(0,1)", "data:", ";;;", "data:#rand(0,1);data:#rand(0,1)", "x" * 100000 + ":1",
    ]
    setup = BASE_SETUP + [("bytes", f"in/{name}", data) for name, data in files.items()] + [
        ("fifo", "in/fifo", None), ("fifo", "in/fifo.npy", None), ("dir", "in/adir", None), ("dir", "in/adir.npy", None),
        ("sparse", "in/huge", 3 << 30), ("bytes", "in/self", b"@in/self\n"),
        ("bytes", "in/long-line", b"data:" + b"[" * (8 << 20)),
        ("copy", "in/x.npz", "fixtures/feeds/two_inputs.npz"),
    ]
    cases = []
    for spec in specs:
        label = spec if len(spec) < 60 else spec[:40] + f"...({len(spec)} chars)"
        stdin = "/dev/zero" if "stdin" in spec else "/dev/null"
        cases.append(Case("feeds", f"run -i {label!r}", ["run", MODEL, "-q", "--iter", "1", "-i", spec], setup, stdin=stdin, rss_bound=True))
    for spec in ["@/dev/zero", "data:in/bomb-512M.npz", "#rand(0,1,100000,100000)", "data:in/shape-1e18.npy", "data:in/bomb.png", deep]:
        label = spec if len(spec) < 60 else "deep JSON"
        for command in (["profile", MODEL, "-q", "--iter", "1", "-o", "out/p.json"], ["dump", MODEL, "-q", "--io", "out/io"],
                        ["tune", MODEL, "-q", "--budget", "2"], ["run", MODEL, "-q", "--resize-input"]):
            cases.append(Case("feeds", f"{command[0]} -i {label!r}", command + ["-i", spec], setup, rss_bound=True))
    # dtypes the values cannot hold
    for model, spec in [("fixtures/image_uint8.mge", "#rand(0,1000)"), ("fixtures/image_uint8.mge", "#rand(-5,5)"),
                        ("fixtures/image_uint8.mge", "#rand(0,255.5)"), ("fixtures/image_uint8.mge", "image:[[[[300]]]]"),
                        ("fixtures/two_inputs.mge", "idx:#rand(0,1e10);x:#rand(0,1)"),
                        ("fixtures/two_inputs.mge", "idx:#rand(-3e9,0);x:#rand(-3.5e38,3.5e38)")]:
        cases.append(Case("feeds", f"{os.path.basename(model)} -i {spec!r}", ["run", "in/model.mge", "-q", "--iter", "1", "-i", spec],
                          [("copy", "in/model.mge", model)], rss_bound=True))
    return cases


NUMBERS = ["18446744073709551615", "18446744073709551616", "1000000000000", "4294967296", "2147483648", "-1", "0",
           "1e30", "-1e30", "1e308", "1e309", "nan", "inf", "-inf", "abc", "", "0x10", "1e-30", "99", "9" * 400, " 3"]
LONG_RUNNING = {"--duration", "--budget"}


def number_cases():
    options = [
        ("run", "--iter"), ("run", "--warmup"), ("run", "--threads"), ("run", "--duration"), ("run", "--max-duration"),
        ("run", "--timeout"), ("run", "--graph-opt-level"), ("run", "--async-level"), ("run", "--workspace-limit"),
        ("run", "--seed"), ("run", "--maxerr"), ("run", "--instances"), ("run", "--record-comp-seq"), ("run", "--jit"),
        ("run", "--fast-run-shared-batch-size"), ("run", "--cpu-cores"),
        ("profile", "--iter"), ("profile", "--top"), ("profile", "--warmup"),
        ("check", "-j"), ("check", "--timeout"), ("check", "--threads"), ("check", "--shard"),
        ("dump", "--timeout"), ("dump", "--graph-opt-level"),
        ("tune", "--budget"), ("tune", "--maxerr"), ("tune", "--threads"),
        ("compare", "--maxerr"), ("compare", "--atol"), ("compare", "--rtol"),
    ]
    heads = {
        "run": ["run", MODEL, "-q", "--iter", "1"],
        "profile": ["profile", MODEL, "-q", "--iter", "1", "-o", "out/p.json"],
        "check": ["check", CONTAINER],
        "dump": ["dump", MODEL, "-q", "--io", "out/io"],
        "tune": ["tune", MODEL, "-q", "--budget", "2"],
        "compare": ["compare", "in/x.npy", "in/y.npy"],
    }
    cases = []
    for command, option in options:
        for value in NUMBERS:
            if option in LONG_RUNNING and value == "99":
                value = "4"
            argv = heads[command] + [option, value]
            cases.append(Case("numbers", f"{command} {option} {value[:30]!r}", argv, BASE_SETUP, rss_bound=True))
    return cases


WRITERS = {
    # name: (argv before the target, the option, whether it writes a folder)
    "run --outputs": (["run", MODEL, "-q", "--iter", "1"], "--outputs", True),
    "run --profile": (["run", MODEL, "-q", "--iter", "1"], "--profile", False),
    "profile -o": (["profile", MODEL, "-q", "--iter", "1"], "-o", False),
    "dump --outputs": (["dump", MODEL, "-q"], "--outputs", True),
    "dump --io": (["dump", MODEL, "-q"], "--io", True),
    "dump --io txt": (["dump", MODEL, "-q", "--io-format", "txt"], "--io", True),
    "dump --testcases": (["dump", CONTAINER, "-q"], "--testcases", True),
    "dump --layout-transform-model": (["dump", MODEL, "-q"], "--layout-transform-model", False),
    "check --junit": (["check", CONTAINER], "--junit", False),
    "check -j2 --junit": (["check", "-j", "2", CONTAINER, MODEL], "--junit", False),
    "tune --save": (["tune", MODEL, "-q", "--budget", "2"], "--save", False),
    "tune --save-model": (["tune", MODEL, "-q", "--budget", "2"], "--save-model", False),
    "run --fast-run-cache": (["run", MODEL, "-q", "--iter", "1", "--fast-run"], "--fast-run-cache", False),
}


def writer_input(argv):
    return CONTAINER if CONTAINER in argv[:3] else MODEL


def output_cases():
    cases = []
    for writer, (head, option, is_set) in WRITERS.items():
        model = writer_input(head)
        base = os.path.basename(model)
        targets = {
            "fresh": ("out/target", []),
            "the input": (model, []),
            "symlink to the input": ("out/link", [("symlink", "out/link", f"../{model}")]),
            "hard link to the input": ("out/hard", [("hardlink", "out/hard", model)]),
            "input via ..": (f"in/../{model}", []),
            "input via /proc/self/cwd": (f"/proc/self/cwd/{model}", []),
            "the inputs' folder": ("in", []),
            "the case folder": (".", []),
            "a link to the inputs' folder": ("out/inlink", [("symlink", "out/inlink", "../in")]),
            "/dev/stdout": ("/dev/stdout", []),
            "/proc/self/fd/1": ("/proc/self/fd/1", []),
            "/dev/stderr": ("/dev/stderr", []),
            "/dev/null": ("/dev/null", []),
            "/dev/full": ("/dev/full", []),
            "fifo with a reader": ("out/fifo", [("fifo", "out/fifo", None), ("reader", "out/fifo", None)]),
            "existing folder": ("out/adir", [("dir", "out/adir", None), ("bytes", "out/adir/keep.txt", b"keep")]),
            "existing file": ("out/file", [("bytes", "out/file", b"old")]),
            "missing parent": ("out/no/such/f", []),
            "dash": ("-", []),
            "empty": ("", []),
            "name too long": ("out/" + "x" * 300, []),
            "dangling link": ("out/dangling", [("symlink", "out/dangling", "nowhere/f")]),
            "link loop": ("out/loop", [("symlink", "out/loop", "loop")]),
            "under a file": (f"{model}/sub", []),
        }
        for label, (target, setup) in targets.items():
            cases.append(Case("outputs", f"{writer} -> {label}", head + [option, target], BASE_SETUP + setup))
    return cases


def file_cases():
    rng = random.Random(SEED + 1)
    cache = read_fixture("fixtures/deploy/recorded/conv_float.fastrun.cache")
    contents = {
        "garbage": bytes(rng.randrange(256) for _ in range(4096)),
        "empty": b"",
        "text": b"hello\n",
        "deep-json": b"[" * (900 << 10),
        "deep-object": b'{"args":' + b"[" * 100000,
        "json-empty": b"{}",
        "json-array": b"[]",
        "args-wrong-types": b'{"args": [1, 2], "fast_run_cache": 3}',
        "args-injected": b'{"args": ["--outputs", "in"], "fast_run_cache": null}',
        "args-huge-iter": b'{"args": ["--iter", "18446744073709551615"]}',
        "args-options-again": b'{"args": ["--options", "in/f"]}',
        "cache-dev-zero": b'{"args": [], "fast_run_cache": "/dev/zero"}',
        "cache-is-model": b'{"args": ["--fast-run"], "fast_run_cache": "m.mge"}',
        "cache-escape": b'{"args": [], "fast_run_cache": "../../../../../../../dev/zero"}',
        "json-nul": b'{"args": ["\\u0000"]}',
        "json-1e999": b'{"args": [], "x": 1e999}',
        "json-huge-string": b'{"args": ["' + b"a" * (900 << 10) + b'"]}',
        "over-1MiB": b" " * ((1 << 20) + 1) + b"{}",
        "cache-cut-12": cache[:12],
        "cache-cut-half": cache[: len(cache) // 2],
        "cache-len-huge": cache[:8] + b"\xff\xff\xff\x7f" + cache[12:],
        "cache-bit-16": cache[:16] + bytes([cache[16] ^ 0x80]) + cache[17:],
        "cache-byte-mid": cache[: len(cache) // 2] + b"\xff" + cache[len(cache) // 2 + 1 :],
        "elf-garbage": b"\x7fELF\x02\x01\x01" + b"\0" * 57 + bytes(rng.randrange(256) for _ in range(1000)),
        "truncated-lite": ("lite-cut", None),
    }
    special = {"dev-zero": "/dev/zero", "fifo": "in/fifo", "folder": "in/adir", "missing": "in/nope",
               "sparse-3G": "in/sparse", "proc-maps": "/proc/self/maps", "dev-stdin": "/dev/stdin"}
    setup = BASE_SETUP + [("fifo", "in/fifo", None), ("dir", "in/adir", None), ("sparse", "in/sparse", 3 << 30)]
    for name, data in contents.items():
        if isinstance(data, tuple):
            setup.append(("head", "in/" + name, (os.path.join(RUNTIME, "megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so"), 300000)))
        else:
            setup.append(("bytes", "in/" + name, data))
    paths = {**{k: "in/" + k for k in contents}, **special}
    uses = {
        "--options": lambda p: ["run", MODEL, "-q", "--iter", "1", "--options", p],
        "check --options": lambda p: ["check", CONTAINER, "--options", p],
        "--fast-run-cache": lambda p: ["run", MODEL, "-q", "--iter", "1", "--fast-run-cache", p],
        "--fast-run --fast-run-cache": lambda p: ["run", MODEL, "-q", "--iter", "1", "--fast-run", "--fast-run-cache", p],
        "--tensorrt-cache": lambda p: ["run", MODEL, "-q", "--iter", "1", "--tensorrt", "--tensorrt-cache", p],
        "--model-key @": lambda p: ["run", "in/aes.emod", "-q", "--iter", "1", "--model-decryption", "AES_default", "--model-key", "@" + p],
        "--c-opr-lib": lambda p: ["run", MODEL, "-q", "--iter", "1", "--c-opr-lib", p],
        "--lite-lib": lambda p: ["run", MODEL, "-q", "--iter", "1", "--lite-lib", p],
        "runtime info --lite-lib": lambda p: ["runtime", "info", "--lite-lib", p],
    }
    setup.append(("copy", "in/aes.emod", "fixtures/deploy/conv_float_aes.emod"))
    cases = []
    for use, make in uses.items():
        for label, path in paths.items():
            stdin = "/dev/zero" if path == "/dev/stdin" else "/dev/null"
            updated = (path[3:],) if use == "--fast-run --fast-run-cache" else ()
            cases.append(Case("files", f"{use} {label}", make(path), setup, stdin=stdin, rss_bound=True, updated=updated))
    for label, path in paths.items():
        cases.append(Case("files", f"MGE_LITE_LIB={label}", ["run", MODEL, "-q", "--iter", "1"], setup,
                          env={"MGE_LITE_LIB": path}, rss_bound=True))
        cases.append(Case("files", f"compare {label}", ["compare", path, "in/x.npy"], setup, rss_bound=True))
    return cases


def disk_cases():
    """Read-only folders and full disks, in a mount namespace of our own
    (bind mounts as root; no loop devices needed)."""
    ro = 'mount --bind "$D/out" "$D/out" && mount -o remount,ro,bind "$D/out"'
    full = 'mount -t tmpfs -o size=64k,mode=755 full "$D/out" && (dd if=/dev/zero of="$D/out/fill" bs=4k 2>/dev/null; true)'
    small = 'mount -t tmpfs -o size=24k,mode=755 small "$D/out"'
    ro_in = 'mount --bind "$D/in" "$D/in" && mount -o remount,ro,bind "$D/in"'
    cases = []
    for writer, (head, option, is_set) in WRITERS.items():
        for label, prelude in [("read-only folder", ro), ("full disk", full), ("24k disk", small)]:
            cases.append(Case("disk", f"{writer} -> {label}", head + [option, "out/target"], BASE_SETUP, namespace=prelude))
        cases.append(Case("disk", f"{writer} -> read-only existing file", head + [option, "out/old"],
                          BASE_SETUP + [("bytes", "out/old", b"old")], namespace=ro))
    # A private TMPDIR that is full or read-only: the supervisor's and tune's staging
    for command in [["run", MODEL, "-q", "--iter", "1", "--timeout", "30"], ["check", "-j", "2", CONTAINER, MODEL],
                    ["dump", MODEL, "-q", "--io", "out/io"], ["tune", MODEL, "-q", "--budget", "2"],
                    ["profile", MODEL, "-q", "-o", "out/p.json"]]:
        cases.append(Case("disk", f"{command[0]} with a full TMPDIR", command, BASE_SETUP,
                          namespace=full.replace('"$D/out"', '"$D/tmp"').replace("/out/fill", "/tmp/fill")))
        cases.append(Case("disk", f"{command[0]} with a read-only TMPDIR", command, BASE_SETUP,
                          namespace=ro.replace('"$D/out"', '"$D/tmp"')))
        cases.append(Case("disk", f"{command[0]} with read-only inputs", command, BASE_SETUP, namespace=ro_in))
    return cases


LIB = "megengine/core/lib/libmegengine_shared.so"
LITE = "megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so"


def runtime_cases():
    """A copy of the runtime in the case's MGE_HOME, every file a symlink to
    the installed one but the one damaged."""
    damages = {
        "engine truncated to 64 MiB": [("head", f"home/runtime/1.13.0/{LIB}", (os.path.join(RUNTIME, LIB), 64 << 20))],
        "engine truncated to 0": [("bytes", f"home/runtime/1.13.0/{LIB}", b"")],
        "lite truncated": [("head", f"home/runtime/1.13.0/{LITE}", (os.path.join(RUNTIME, LITE), 4096))],
        "lite one byte changed": [("flipped", f"home/runtime/1.13.0/{LITE}", (os.path.join(RUNTIME, LITE), 400000))],
        "lite missing": [("remove", f"home/runtime/1.13.0/{LITE}", None)],
        "lite a folder": [("remove", f"home/runtime/1.13.0/{LITE}", None), ("dir", f"home/runtime/1.13.0/{LITE}", None)],
        "lite a FIFO": [("remove", f"home/runtime/1.13.0/{LITE}", None), ("fifo", f"home/runtime/1.13.0/{LITE}", None)],
        "lite -> /dev/zero": [("remove", f"home/runtime/1.13.0/{LITE}", None), ("symlink", f"home/runtime/1.13.0/{LITE}", "/dev/zero")],
        "atomic truncated": [("bytes", "home/runtime/1.13.0/megengine/core/lib/libatomic.so.1", b"\x7fELF")],
        "record garbage": [("bytes", "home/runtime/1.13.0/files.json", b"\xff garbage {")],
        "record missing": [("remove", "home/runtime/1.13.0/files.json", None)],
        "record -> /dev/zero": [("remove", "home/runtime/1.13.0/files.json", None), ("symlink", "home/runtime/1.13.0/files.json", "/dev/zero")],
        "record sizes lie": [("bytes", "home/runtime/1.13.0/files.json", json.dumps({"version": "1.13.0", "files": [{"path": LITE, "size": 18446744073709551615, "sha256": "00"}]}).encode())],
        "record escapes": [("bytes", "home/runtime/1.13.0/files.json", json.dumps({"version": "1.13.0", "files": [{"path": "../../../../../../dev/zero", "size": 1, "sha256": "00"}]}).encode())],
        "version folder a file": [("removetree", "home/runtime/1.13.0", None), ("bytes", "home/runtime/1.13.0", b"x")],
        "runtime folder a FIFO": [("removetree", "home/runtime", None), ("fifo", "home/runtime", None)],
        "install.lock a folder": [("dir", "home/install.lock", None)],
        "install.lock a FIFO": [("fifo", "home/install.lock", None)],
    }
    commands = {
        "runtime info": ["runtime", "info"],
        "runtime info --json": ["runtime", "info", "--json"],
        "run": ["run", MODEL, "-q", "--iter", "1"],
        "check -j2": ["check", "-j", "2", CONTAINER],
        "info": ["info", MODEL],
    }
    cases = []
    for label, damage in damages.items():
        for command, argv in commands.items():
            cases.append(Case("runtime", f"{label}: {command}", argv, BASE_SETUP + [("runtime", "home", None)] + damage,
                              env={"MGE_HOME": "{D}/home"}, timeout=120))
    # A read-only MGE_HOME holding a good runtime: install says so, run runs.
    for command in [["runtime", "install"], ["runtime", "info"], ["run", MODEL, "-q", "--iter", "1"], ["profile", MODEL, "-q", "-o", "out/p.json"]]:
        cases.append(Case("runtime", f"read-only MGE_HOME: {' '.join(command[:2])}", command, BASE_SETUP + [("runtime", "home", None)],
                          env={"MGE_HOME": "{D}/home"}, namespace='mount --bind "$D/home" "$D/home" && mount -o remount,ro,bind "$D/home"', timeout=120))
    for home in ["/dev/null", "{D}/in/m.mge", "{D}/in/fifo"]:
        cases.append(Case("runtime", f"MGE_HOME={home}: run", ["run", MODEL, "-q"], BASE_SETUP + [("fifo", "in/fifo", None)], env={"MGE_HOME": home}))
    return cases


def signal_cases():
    commands = {
        "dump --io": ["dump", "in/big.mge", "-q", "--io", "out/io"],
        "run --outputs": ["run", "in/big.mge", "-q", "--duration", "3", "--outputs", "out/o"],
        "run --timeout": ["run", "in/big.mge", "-q", "--duration", "3", "--timeout", "30", "--profile", "out/p.json"],
        "check -j2 --junit": ["check", "-j", "2", CONTAINER, "in/tc2.mge", "in/tc3.mge", "in/tc4.mge", "--junit", "out/j.xml"],
        "tune --save": ["tune", MODEL, "-q", "--budget", "4", "--save", "out/s.json"],
        "profile": ["profile", "in/big.mge", "-q", "--duration", "3", "-o", "out/p.json"],
    }
    setup = BASE_SETUP + [("copy", "in/big.mge", "fixtures/image_uint8.mge"), ("copy", "in/tc2.mge", "fixtures/image_uint8_tc1.mge"),
                          ("copy", "in/tc3.mge", "fixtures/two_inputs_tc2.mge"), ("copy", "in/tc4.mge", "fixtures/conv_float_tc1.mge")]
    cases = []
    for command, argv in commands.items():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            for delay in (0.03, 0.1, 0.4):
                cases.append(Case("signals", f"{command} {sig.name} after {delay}s", argv, setup, signal=(sig, delay)))
    return cases


# ---------------------------------------------------------------- running


def prepare(d, setup):
    for op, rel, arg in setup:
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if op == "copy":
            shutil.copyfile(os.path.join(ROOT, arg), path)
        elif op == "copytree":
            shutil.copytree(os.path.join(ROOT, arg), path)
        elif op == "bytes":
            with open(path, "wb") as f:
                f.write(arg)
        elif op == "head":
            source, length = arg
            with open(source, "rb") as src, open(path, "wb") as dst:
                remaining = length
                while remaining:
                    chunk = src.read(min(remaining, 1 << 20))
                    if not chunk:
                        break
                    dst.write(chunk)
                    remaining -= len(chunk)
        elif op == "flipped":
            source, pos = arg
            if os.path.lexists(path):
                os.remove(path)
            shutil.copyfile(source, path)
            with open(path, "r+b") as f:
                f.seek(pos)
                byte = f.read(1)
                f.seek(pos)
                f.write(bytes([byte[0] ^ 0xFF]))
        elif op == "symlink":
            os.symlink(arg, path)
        elif op == "hardlink":
            os.link(os.path.join(d, arg), path)
        elif op == "fifo":
            os.mkfifo(path)
        elif op == "dir":
            os.makedirs(path, exist_ok=True)
        elif op == "sparse":
            with open(path, "wb") as f:
                f.truncate(arg)
        elif op == "remove":
            os.remove(path)
        elif op == "removetree":
            shutil.rmtree(path)
        elif op == "runtime":
            # every file a symlink to the installed runtime's, folders real
            for folder, _, names in os.walk(RUNTIME):
                target_folder = os.path.join(path, "runtime", "1.13.0", os.path.relpath(folder, RUNTIME))
                os.makedirs(target_folder, exist_ok=True)
                for name in names:
                    os.symlink(os.path.join(folder, name), os.path.join(target_folder, name))
            # a damage replaces a file: never write through a link into the real runtime
        elif op == "reader":
            pass  # started with the command
        else:
            raise ValueError(op)


def snapshot(folder):
    """sha256 of every regular file under `folder` (links not followed), and
    the other entries by type."""
    state = {}
    for base, dirs, names in os.walk(folder):
        for name in names + dirs:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, folder)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode) and os.lstat(path).st_size > 64 << 20:
                # the sparse giants: their size, blocks and times tell a write
                st = os.lstat(path)
                state[rel] = f"big:{st.st_size}:{st.st_blocks}:{st.st_mtime_ns}"
            elif stat.S_ISREG(mode):
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                state[rel] = h.hexdigest()
            elif stat.S_ISLNK(mode):
                state[rel] = "link:" + os.readlink(path)
            else:
                state[rel] = stat.filemode(mode)[0]
    return state


def staging_names(d):
    found = []
    for base, dirs, names in os.walk(d):
        if base == os.path.join(d, "tmp"):
            continue
        for name in names + dirs:
            if STAGING.search(name) or (name.startswith("mge-") and base != d):
                found.append(os.path.relpath(os.path.join(base, name), d))
    return found


def mge_pids(session):
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == session and os.readlink(f"/proc/{entry}/exe") == MGE:
                pids.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return sorted(pids)


def run_case(index, case, work):
    d = os.path.join(work, f"case{index:05d}")
    os.makedirs(os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "out"))
    os.makedirs(os.path.join(d, "tmp"))
    setup = []
    for op, rel, arg in case.setup:
        if rel and rel.startswith("home/") and op in ("bytes", "head", "dir", "fifo", "symlink", "flipped"):
            path = os.path.join(d, rel)
            if os.path.islink(path):
                os.remove(path)
        setup.append((op, rel, arg))
        prepare(d, [(op, rel, arg)])
    inputs_before = snapshot(os.path.join(d, "in"))
    env = dict(os.environ)
    env.pop("MGE_LITE_LIB", None)
    env.pop("RUST_BACKTRACE", None)
    env["TMPDIR"] = os.path.join(d, "tmp")
    for key, value in case.env.items():
        env[key] = value.replace("{D}", d)
    argv = [MGE] + case.argv
    rss_file = os.path.join(d, "rss")
    timed = ["/usr/bin/time", "-f", "%M", "-o", rss_file]
    if case.namespace:
        script = f'{case.namespace} || exit 97; "$@"; rc=$?; ls -lAR "$D/out" "$D/tmp" > "$D/inner-listing" 2>&1; exit $rc'
        command = ["timeout", "-k", "5", str(case.timeout)] + timed + ["unshare", "-m", "sh", "-c", script, "sh"] + argv
        env["D"] = d
    else:
        command = ["timeout", "-k", "5", str(case.timeout)] + timed + argv
    readers = []
    for op, rel, _ in setup:
        if op == "reader":
            readers.append(subprocess.Popen(["sh", "-c", 'exec cat "$1" > /dev/null', "sh", os.path.join(d, rel)]))
    started = time.monotonic()
    with open(os.path.join(d, "stdout"), "wb") as out, open(os.path.join(d, "stderr"), "wb") as err, open(case.stdin, "rb") as stdin:
        proc = subprocess.Popen(command, cwd=d, env=env, stdin=stdin, stdout=out, stderr=err, start_new_session=True)
        sent = None
        if case.signal:
            sig, delay = case.signal
            time.sleep(delay)
            pids = mge_pids(proc.pid)
            if pids:
                os.kill(pids[0], sig)
                sent = sig.name
        try:
            rc = proc.wait(timeout=case.timeout + 30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
    elapsed = time.monotonic() - started
    # children the case started (check -j, tune) must be gone with it
    time.sleep(0.05)
    stray = mge_pids(proc.pid)
    for pid in stray:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for reader in readers:
        reader.kill()
        reader.wait()
    with open(os.path.join(d, "stderr"), "rb") as f:
        stderr = f.read().decode("utf-8", "replace")
    with open(os.path.join(d, "stdout"), "rb") as f:
        stdout_len = len(f.read())
    rss = None
    try:
        with open(rss_file) as f:
            lines = [line for line in f.read().splitlines() if line.strip().isdigit()]
            rss = int(lines[-1]) if lines else None
    except OSError:
        pass
    failures = []
    if rc == 124 or elapsed > case.timeout:
        failures.append("hang")
    elif rc == 101:
        failures.append("panic")
    elif case.signal and sent and rc == 128 + case.signal[0] and "interrupted" in stderr:
        pass  # died of the signal it was sent, as a shell expects, after cleaning up
    elif rc > 128:
        failures.append(f"signal {rc - 128}")
    elif rc not in (0, 1, 2):
        failures.append(f"exit {rc}")
    if "panicked" in stderr or "stack backtrace" in stderr or "RUST_BACKTRACE" in stderr:
        failures.append("panic")
    inputs_after = snapshot(os.path.join(d, "in"))
    changed = sorted(k for k in inputs_before if inputs_after.get(k) != inputs_before[k] and k not in case.updated)
    if changed:
        failures.append("overwritten input: " + ", ".join(changed[:5]))
    leftovers = [os.path.join("tmp", name) for name in os.listdir(os.path.join(d, "tmp")) if name != "fill"]
    leftovers += staging_names(d)
    inner = os.path.join(d, "inner-listing")
    if os.path.exists(inner):
        with open(inner) as f:
            for line in f:
                name = line.split()[-1] if line.split() else ""
                if STAGING.search(name) or name.startswith("mge-"):
                    leftovers.append("(namespace) " + name)
    if leftovers:
        failures.append("leftover: " + ", ".join(leftovers[:5]))
    if stray:
        failures.append(f"stray mge processes: {stray}")
    if case.rss_bound and rss is not None and rss > RSS_LIMIT_KB:
        failures.append(f"memory {rss // 1024} MB")
    error_lines = [line for line in stderr.splitlines() if line.startswith("mge: error:") or line.startswith("error:")]
    notes = []
    if "engine crashed" in stderr:
        notes.append("engine crashed")
    if case.signal and sent is None:
        notes.append("finished before the signal")
    result = {
        "index": index, "group": case.group, "name": case.name, "rc": rc, "rss_kb": rss, "seconds": round(elapsed, 2),
        "failures": failures, "notes": notes, "signal_sent": sent,
        "command": " ".join(shlex.quote(a if len(a) < 200 else a[:60] + "...") for a in ["mge"] + case.argv),
        "env": {k: v.replace("{D}", d) for k, v in case.env.items()},
        "namespace": case.namespace, "stdout_bytes": stdout_len,
        "stderr_head": "\n".join(stderr.splitlines()[:3])[:400], "error_lines": len(error_lines),
        "folder": d,
    }
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose group or name holds this")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep every case's folder, not only the failed ones'")
    parser.add_argument("--work", help="the folder for the cases (default: a new one in /tmp)")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    args = parser.parse_args()
    if not os.access(MGE, os.X_OK):
        sys.exit(f"{MGE} is missing: cargo build --release first")
    cases = (path_cases() + mutation_cases() + feed_cases() + number_cases() + output_cases() + file_cases()
             + disk_cases() + runtime_cases() + signal_cases())
    cases = [c for c in cases if args.only in c.group or args.only in c.name]
    if args.list:
        for c in cases:
            print(c.group, "|", c.name)
        print(len(cases), "cases")
        return
    work = args.work or tempfile.mkdtemp(prefix="hostile-sweep-")
    os.makedirs(work, exist_ok=True)
    home_cache = os.path.expanduser("~/.cache/mge")
    home_before = sorted(os.listdir(home_cache)) if os.path.isdir(home_cache) else []
    runtime_before = snapshot_sizes(RUNTIME)
    tmp_before = set(os.listdir("/tmp"))
    print(f"{len(cases)} cases in {work}", file=sys.stderr)
    results = []
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, i, c, work): c for i, c in enumerate(cases)}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            result = future.result()
            results.append(result)
            if result["failures"]:
                print(f"FAIL {result['group']}: {result['name']}: {'; '.join(result['failures'])}", file=sys.stderr)
            elif not args.keep:
                shutil.rmtree(result["folder"], ignore_errors=True)
            if done % 100 == 0:
                print(f"  {done}/{len(cases)} after {time.monotonic() - started:.0f} s", file=sys.stderr)
    results.sort(key=lambda r: r["index"])
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    global_failures = []
    home_after = sorted(os.listdir(home_cache)) if os.path.isdir(home_cache) else []
    if home_after != home_before:
        global_failures.append(f"~/.cache/mge changed: {home_before} -> {home_after}")
    if snapshot_sizes(RUNTIME) != runtime_before:
        global_failures.append("the installed runtime changed")
    # Every case has its own TMPDIR: what appears in /tmp is another user's
    # unless it stays.
    new_tmp = sorted(n for n in set(os.listdir("/tmp")) - tmp_before if n.startswith(("mge-", ".mge-")))
    summarize(results, global_failures, time.monotonic() - started, work)
    if new_tmp:
        print(f"note: new mge files in /tmp during the sweep, outside its TMPDIRs (another user's?): {new_tmp}")
    sys.exit(1 if global_failures or any(r["failures"] for r in results) else 0)


def snapshot_sizes(folder):
    return {os.path.relpath(os.path.join(b, n), folder): os.lstat(os.path.join(b, n)).st_size
            for b, _, names in os.walk(folder) for n in names}


def summarize(results, global_failures, seconds, work):
    print(f"hostile sweep: {len(results)} cases in {seconds:.0f} s (results in {work}/results.json)")
    print("\ncases by group and exit code:")
    groups = sorted({r["group"] for r in results})
    for group in groups:
        rs = [r for r in results if r["group"] == group]
        codes = {}
        for r in rs:
            codes[r["rc"]] = codes.get(r["rc"], 0) + 1
        peak = max((r["rss_kb"] or 0 for r in rs), default=0)
        print(f"  {group:9} {len(rs):5}  " + "  ".join(f"exit {k}: {v}" for k, v in sorted(codes.items()))
              + f"  peak RSS {peak // 1024} MB")
    classes = {}
    for r in results:
        for failure in r["failures"] or ["ok"]:
            kind = failure.split(":")[0].split(" ")[0] if failure != "ok" else "ok"
            classes[kind] = classes.get(kind, 0) + 1
    print("\noutcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    crashed = [r for r in results if "engine crashed" in r["notes"]]
    print(f"engine crashes caught by the supervisor (exit 2): {len(crashed)}")
    for r in crashed:
        print(f"  {r['group']}: {r['name']}: {r['command']}")
    verbose = [r for r in results if r["error_lines"] > 2]
    print(f"errors of more than two lines: {len(verbose)}")
    for r in verbose[:10]:
        print(f"  {r['group']}: {r['name']}")
    bounded = [r for r in results if r["rss_kb"]]
    top = sorted(bounded, key=lambda r: -r["rss_kb"])[:8]
    print("highest peak RSS:")
    for r in top:
        print(f"  {r['rss_kb'] // 1024:5} MB  {r['group']}: {r['name']}")
    for label, pattern in [("/dev/zero", "zero"), ("huge numbers", "18446744073709551615")]:
        rs = [r for r in results if pattern in r["name"] and r["rss_kb"]]
        if rs:
            print(f"peak RSS of the {len(rs)} {label} cases: max {max(r['rss_kb'] for r in rs) // 1024} MB")
    failed = [r for r in results if r["failures"]]
    print(f"\nFAILURES: {len(failed)}")
    for r in failed:
        env = " ".join(f"{k}={v}" for k, v in r["env"].items())
        print(f"  [{r['group']}] {r['name']}: {'; '.join(r['failures'])} (exit {r['rc']})")
        print(f"      {env + ' ' if env else ''}{r['command']}" + (f"   [in a namespace: {r['namespace']}]" if r["namespace"] else ""))
        print(f"      {r['folder']}; stderr: {r['stderr_head'][:200]!r}")
    for failure in global_failures:
        print(f"  [global] {failure}")


if __name__ == "__main__":
    main()
