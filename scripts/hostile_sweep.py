#!/usr/bin/env python3
"""The hostile and mutation sweep (run through hostile_sweep.sh).

Whatever a user or a hostile file gives mge: no panic, hang, crash or
overwritten input. Every case runs `mge` in a folder of its own: inputs in `in/`, outputs in
`out/`, a private TMPDIR in `tmp/`, under `timeout` and GNU time for the peak
RSS. A case fails on exit 101 or a "panicked"/backtrace on stderr (panic),
the timeout (hang), an exit above 128 (signal), any other exit but 0, 1 and 2,
a file of `in/` changed or gone (overwritten input), anything left in its
TMPDIR or a staging name (`.mge-*`, `.install-*`, `.staged-*`, `*.partial`, `*.tmp`)
anywhere in its folder (leftover), or a peak RSS over 200 MB where a read or a
number is unbounded (memory). "engine crashed" on stderr is counted apart: the
supervisor caught a signal in the engine.

Round four (nothing from the working folder, the environment or a model's
names takes mge over) adds the groups cwd, env, fds, limits, names,
odd-paths and more signals, and these checks: a `PLANTED-*` marker written by
code planted where mge must not look (Python packages and programs in the
current folder, libraries on a relative or world-writable LD_LIBRARY_PATH);
any process of the case still running after mge ended (its session, or its
SWEEP_CASE_TAG in the environment); raw ESC, BEL or other control
characters from a model's names on stderr or stdout, with or without -v (the
engine's lines passed on under -v are escaped too); exit 1 or 2 without a
line on stderr (silent exit). A signal of the case's own CPU limit (`ulimit
-t`) and the dynamic loader's exit 127 where `ulimit -n` leaves it no
descriptor happen before or beyond mge: they are no failure.

Round five (nothing a model, a wheel, a dump or a long name carries takes
mge over) adds a group per class: packed-options (a pack whose
extra_info names a library, a cache, cores or a key: refused by every
command that loads models, info showing it; the planted library's marker and
the files it names must not appear), long-names (names of 400 KB to 1.2 MB:
no hang, a bounded error), repro-secrets (no key or token in the reproducer
or on the streams), image-headers (headers that claim billions of pixels:
refused from the header, memory bounded), long-records (a reproducer is
written after the engine printed much), unsupervised-loads (runtime info and
install over a runtime that aborts, crashes, exits or deadlocks as it loads,
and the engine's numeric variables holding what it cannot read: the tests'
fault library, built by the sweep), version-spellings (one release however
PEP 440 spells it, no download), dump-indexes (an index that names files
outside its folder, one behind a FIFO that would hang a reader) and
non-utf8-folders (models, feeds and outputs in folders not named in UTF-8;
compare's rows stay apart). Checks added: files that must stay absent or
appear, secrets, stderr's size, rows shown once each.

Round six (nothing mge keeps in its cache folder takes it over) adds the
group kept-files: tune's record of its last search, made by mge itself and
then damaged (garbage, cut short, empty, over its 16 MiB bound, a link to
/dev/zero or to a record outside the folder, a FIFO, a folder, places and
figures no search writes, a reason holding control characters, another
model's key, a world-writable folder, another owner) and the algorithms
beside it, through tune and runtime info: exit 0, a note where the record is
refused and the record not used, nothing behind a link read or written. Checks
added: what the case's own mge made first (`made_first`, then damaged), text
its stdout must not hold and its stderr must, a stderr of one-line notes only.

The group wide-names (one long name widens no table) gives info, run, check,
compare, profile and run --sweep inputs and outputs named in 100 KB to 1 MB,
and swept inputs whose names hold control characters and line breaks. Checks
added: stdout's size, and the lines of a report that passed. The group
shared-tables gives every command that reads a graph ones whose operators
share one list of 100,000 inputs or outputs, one vtable of 32,765 fields or
one name of 1 MB, and 100,000 aliases of one output: each refused in one line
within the memory bound. The group wide-diffs: compare --structure of crafted graphs of 50,000
and 60,000 operators (chains named as the engine names them, with an operator
of another type inserted or every weight changed; operators all named alike,
all of one type on one input, listed last first, or of 50,000 types each),
each a diff in seconds where comparing every operator with every other took
minutes (the case's 60 s deadline: a hang).
The group reduce-cuts (nothing a graph or a flaky engine says takes
--reduce over): graphs whose operators read vars no operator before them
writes, or write vars the graph does not list, through `run --repro
--reduce` on the fault library (which runs them and fails) and the engine
(which refuses them): the failure in a line, exit 2, no reduced.mge; crashes
and hangs that come and go (the fault library's MGE_FAULT_PATTERN): said
flaky, no reduced.mge, where a steady pattern gives one; a crash that a
deadline hid; and reduced.mge's size, which is its part's (`at_most`).

The groups (mge's own work) adds the groups own-memory (under `ulimit -v`,
models whose graphs claim gigabytes, sparse encrypted models for `compare
--structure`, a sweep's image at shapes of gigabytes: one line, exit 2,
nothing left in TMPDIR, no crash blamed on the engine), repro-claims
(`--repro` at what can take no folder, refused before any work) and
sweep-repro (every shape of a sweep failing, its folders written). Check
added: text its stderr must not hold (`not_said`). The group
engine-error-repro: a model that fails inside the engine as it runs keeps its
`--repro` folder (cut with `--reduce`), a sweep's failing shape its own.

Mutations come from one seeded generator, so every run makes the same cases.
"""

import argparse
import concurrent.futures
import functools
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
import threading
import time
import zipfile
import zlib
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MGE = os.path.join(ROOT, "target", "release", "mge")
RUNTIME = os.path.expanduser("~/.cache/mge/runtime/1.13.0")
RSS_LIMIT_KB = 200 * 1024
SEED = 16
STAGING = re.compile(r"^(\.mge-|\.install-|\.staged-)|\.partial$|\.tmp$")


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
    # A bash script run in the case's folder that ends in `exec "$@" ...`
    # (see `shell`): limits, descriptors, a deleted or deep current folder.
    shell: str = ""
    # How mge's stderr is given: "file" (read for the checks), "pipe" (read
    # by the sweep into that file: a file size limit leaves a file unwritable)
    # or "closed-pipe" (a pipe whose reader is gone); a script's `2>&-` is seen.
    stderr: str = "file"
    # The one exit code the case must end with, where only one is right.
    expect_rc: int = None
    # Planted code the user chose by name (LD_LIBRARY_PATH, MGE_LITE_LIB):
    # markers of these labels are no failure.
    allowed_plants: tuple = ()
    # A model's names or a path hold ESC, BEL or line breaks: stdout and
    # stderr must show them escaped, and a passing run prints no error line.
    hostile_text: bool = False
    # Run after the case with its folder and environment (the next run
    # cleans what a killed one could not), before leftovers are looked for.
    followup: list = None
    # Added to the environment of the followup only.
    followup_env: dict = field(default_factory=dict)
    # Signals the case's own limits send mge (`ulimit -t`: SIGXCPU, then
    # SIGKILL): no process can say a word after those.
    limit_signals: tuple = ()
    # The dynamic loader may fail before mge's first instruction: `ulimit -n`
    # leaves it no descriptor for libgcc_s (its own line, exit 127); in a
    # 16 KiB stack it now and then overflows (SIGSEGV in ld-linux, as dmesg
    # shows, without a word).
    loader_may_fail: bool = False
    # Files (relative to the case's folder) that must not be there after it:
    # what a model named, and no command may write.
    absent: tuple = ()
    # Files that must be there after it (a reproducer the case must write).
    present: tuple = ()
    # (file, bytes): files that must be there, and no larger (a reduced model).
    at_most: tuple = ()
    # Strings that neither its streams nor any file under out/ may hold (keys, tokens).
    secrets: tuple = ()
    # The most bytes its stderr may hold.
    max_stderr: int = None
    # The most bytes its stdout may hold (a table padded to a long name's width).
    max_stdout: int = None
    # The lines its stdout must hold where it passes (a name's line break forges none).
    stdout_lines: int = None
    # Strings that must each appear on its stdout (rows that must stay apart).
    shown_apart: tuple = ()
    # Strings its stdout must not hold (a kept record that must not be used).
    not_shown: tuple = ()
    # Strings its stderr must hold (the note that says a kept file is refused).
    said: tuple = ()
    # Strings its stderr must not hold (the engine blamed for mge's own failure).
    not_said: tuple = ()
    # Its stderr holds one-line notes and nothing else (a refusal, not an error).
    only_notes: bool = False
    # mge command lines run in order in the case's folder, with its
    # environment, before its inputs are looked at: what the case damages is
    # then what mge itself keeps (a search's record, an algorithm cache).
    made_first: list = None
    # A function of the case's folder, run after `made_first`: the damage.
    then: object = None


def fixture(rel):
    return ("copy", None, rel)


def shell(prelude="", redirect=""):
    """A case's bash script: `prelude`, then mge with `redirect` applied."""
    return f'{prelude}\nexec "$@" {redirect}'


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
    "run --bmf": (["run", MODEL, "-q", "--iter", "1"], "--bmf", False),
    "run --markdown": (["run", MODEL, "-q", "--iter", "1"], "--markdown", False),
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
        "engine truncated to 64 MiB": [("head", f"home/mge/runtime/1.13.0/{LIB}", (os.path.join(RUNTIME, LIB), 64 << 20))],
        "engine truncated to 0": [("bytes", f"home/mge/runtime/1.13.0/{LIB}", b"")],
        "lite truncated": [("head", f"home/mge/runtime/1.13.0/{LITE}", (os.path.join(RUNTIME, LITE), 4096))],
        "lite one byte changed": [("flipped", f"home/mge/runtime/1.13.0/{LITE}", (os.path.join(RUNTIME, LITE), 400000))],
        "lite missing": [("remove", f"home/mge/runtime/1.13.0/{LITE}", None)],
        "lite a folder": [("remove", f"home/mge/runtime/1.13.0/{LITE}", None), ("dir", f"home/mge/runtime/1.13.0/{LITE}", None)],
        "lite a FIFO": [("remove", f"home/mge/runtime/1.13.0/{LITE}", None), ("fifo", f"home/mge/runtime/1.13.0/{LITE}", None)],
        "lite -> /dev/zero": [("remove", f"home/mge/runtime/1.13.0/{LITE}", None), ("symlink", f"home/mge/runtime/1.13.0/{LITE}", "/dev/zero")],
        "atomic truncated": [("bytes", "home/mge/runtime/1.13.0/megengine/core/lib/libatomic.so.1", b"\x7fELF")],
        "record garbage": [("bytes", "home/mge/runtime/1.13.0/files.json", b"\xff garbage {")],
        "record missing": [("remove", "home/mge/runtime/1.13.0/files.json", None)],
        "record -> /dev/zero": [("remove", "home/mge/runtime/1.13.0/files.json", None), ("symlink", "home/mge/runtime/1.13.0/files.json", "/dev/zero")],
        "record sizes lie": [("bytes", "home/mge/runtime/1.13.0/files.json", json.dumps({"version": "1.13.0", "files": [{"path": LITE, "size": 18446744073709551615, "sha256": "00"}]}).encode())],
        "record escapes": [("bytes", "home/mge/runtime/1.13.0/files.json", json.dumps({"version": "1.13.0", "files": [{"path": "../../../../../../dev/zero", "size": 1, "sha256": "00"}]}).encode())],
        "version folder a file": [("removetree", "home/mge/runtime/1.13.0", None), ("bytes", "home/mge/runtime/1.13.0", b"x")],
        "runtime folder a FIFO": [("removetree", "home/mge/runtime", None), ("fifo", "home/mge/runtime", None)],
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
    # Round four: SIGKILL too, later moments, every command that starts a
    # child. A killed mge cleans nothing: the next run removes its scratch.
    commands.update({
        "compare --b-naive": ["compare", "in/big.mge", "-q", "--b-naive", "--iter", "20"],
        "pack-testcases": ["pack-testcases", "in/big.mge", "-q", "-o", "out/tc.mge"],
        "dump --testcases": ["dump", "in/tc2.mge", "-q", "--testcases", "out/t"],
        "info": ["info", "in/big.mge"],
        "tune --save-model": ["tune", MODEL, "-q", "--budget", "4", "--save-model", "out/s.mge"],
    })
    next_run = ["run", MODEL, "-q", "--iter", "1"]
    for command, argv in commands.items():
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
            for delay in (0.03, 0.1, 0.4, 1.5):
                if sig != signal.SIGKILL and delay != 1.5 and not command in ("compare --b-naive", "pack-testcases", "dump --testcases",
                                                                                "info", "tune --save-model"):
                    continue  # above
                followup = next_run if sig == signal.SIGKILL else None
                cases.append(Case("signals", f"{command} {sig.name} after {delay}s", argv, setup, signal=(sig, delay),
                                  followup=followup))
    return cases + install_signal_cases()


# ---------------------------------------------------------------- round four
# Nothing from the working folder, the environment or a model's names takes
# mge over. Planted code (Python modules, programs, libraries)
# writes a marker `PLANTED-<label>` into the case's folder when it runs.

PLANTED_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Loaded, it writes PLANTED-<its file name> beside itself. */
__attribute__((constructor)) static void planted(void) {
    Dl_info info;
    if (!dladdr((void *)planted, &info) || !info.dli_fname) return;
    const char *slash = strrchr(info.dli_fname, '/');
    char marker[8192];
    if (slash)
        snprintf(marker, sizeof marker, "%.*s/PLANTED-%s", (int)(slash - info.dli_fname), info.dli_fname, slash + 1);
    else
        snprintf(marker, sizeof marker, "PLANTED-%s", info.dli_fname);
    int fd = open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}
"""
# What the engine and its loader look up by name (its own DT_NEEDED, what it
# dlopens: CUDA, MKL's kernels), and the Lite library's own names.
PLANTED_LIBS = ["libmegengine_shared.so", "libcuda.so.1", "libcuda.so", "libcudart.so", "libstdc++.so.6", "librt.so.1",
                "libdl.so.2", "libpthread.so.0", "libatomic.so.1", "libnvrtc.so.10.1", "libnvToolsExt.so.1",
                "libmkl_avx512.so", "libmkl_def.so", "libmkl_vml_avx512.so", "libibverbs.so.1", "libmemkind.so",
                "liblite_shared.so", "liblite_shared_whl.cpython-310-x86_64-linux-gnu.so"]
PLANTED_LIB = None  # built once by `build_planted_library`


def build_planted_library(work):
    global PLANTED_LIB
    source = os.path.join(work, "planted.c")
    with open(source, "w") as f:
        f.write(PLANTED_C)
    PLANTED_LIB = os.path.join(work, "libplanted.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", PLANTED_LIB, source, "-ldl"], check=True)


def plant(d, folder, kinds):
    """Plants in `folder` what writes a marker into `d` when run: `python`
    (megenginelite/, megengine/, pip/, sitecustomize, usercustomize, a .pth,
    a PYTHONSTARTUP file, a user site), `python3` and `mge` programs, `libs`
    (PLANTED_LIBS, and megenginelite/libs/ holding them)."""
    os.makedirs(folder, exist_ok=True)

    def code(label):
        return f"open({os.path.join(d, 'PLANTED-' + label)!r}, 'a').close()\n"

    def program(name, label, then="exit 0"):
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\n: > {shlex.quote(os.path.join(d, 'PLANTED-' + label))}\n{then}\n")
        os.chmod(path, 0o755)

    if "python" in kinds:
        for package in ("megenginelite", "megengine", "pip", "numpy"):
            os.makedirs(os.path.join(folder, package), exist_ok=True)
            for module in ("__init__.py", "__main__.py"):
                with open(os.path.join(folder, package, module), "w") as f:
                    f.write(code(f"{package}-{module}"))
        for module in ("sitecustomize.py", "usercustomize.py", "startup.py", "site.py", "encodings.py", "runpy.py"):
            with open(os.path.join(folder, module), "w") as f:
                f.write(code(module))
        with open(os.path.join(folder, "planted.pth"), "w") as f:
            f.write("import os; " + code("pth"))
        user_site = os.path.join(folder, "userbase", "lib", "python3.11", "site-packages")
        for site in (user_site, user_site.replace("3.11", "3.10")):
            os.makedirs(site, exist_ok=True)
            with open(os.path.join(site, "usercustomize.py"), "w") as f:
                f.write(code("user-site"))
            with open(os.path.join(site, "planted.pth"), "w") as f:
                f.write("import os; " + code("user-site-pth"))
        with open(os.path.join(folder, "pip.conf"), "w") as f:
            f.write("[global]\nno-index = true\n")
    if "python3" in kinds:
        for name in ("python3", "python", "python3.10", "python3.11", "pip3", "pyenv"):
            program(name, f"program-{name}")
    if "mge" in kinds:
        program("mge", "program-mge")
    if "libs" in kinds:
        lite_libs = os.path.join(folder, "megenginelite", "libs")
        os.makedirs(lite_libs, exist_ok=True)
        for name in PLANTED_LIBS:
            shutil.copyfile(PLANTED_LIB, os.path.join(folder, name))
            shutil.copyfile(PLANTED_LIB, os.path.join(lite_libs, name))


def secret_in(path, secrets):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return any(secret.encode() in data for secret in secrets)


def planted_markers(d):
    found = []
    for base, dirs, names in os.walk(d):
        found += [name[len("PLANTED-"):] for name in names if name.startswith("PLANTED-")]
    return sorted(found)


def case_processes(session, tag):
    """Processes still running from a case: in its session, or carrying its
    tag in their environment (should one have left the session)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
            comm = text[text.index("(") + 1:text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            if int(fields[3]) != session:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if tag not in f.read().split(b"\0"):
                        continue
            found.append((int(entry), comm))
        except (OSError, IndexError, ValueError):
            pass
    return sorted(found)



REF = "fixtures/ref/conv_float__conv_data/feat.npy"
R4_SETUP = BASE_SETUP + [("copy", "in/feat.npy", REF), ("bytes", "in/feeds.txt", b"data:in/x.npy\n")]


def child_commands(model="in/m.mge", container=CONTAINER):
    """Every command that starts a child, each as it is usually given, and
    those that run none (runtime info)."""
    return {
        "run": ["run", model, "--iter", "1"],
        "check -j2": ["check", "-j", "2", model, container],
        "info": ["info", model],
        "dump --io": ["dump", model, "--io", "out/io"],
        "profile": ["profile", model, "--iter", "1", "-o", "out/p.json"],
        "compare --b-naive": ["compare", model, "--b-naive"],
        "tune": ["tune", model, "--budget", "2"],
        "pack-testcases": ["pack-testcases", model, "-o", "out/tc.mge"],
        "runtime info": ["runtime", "info"],
    }


def cwd_cases():
    """The working folder holds Python packages, programs and libraries by
    the names mge or the engine look up, reached through PATH, LD_LIBRARY_PATH
    and a runtime look-up through python3; the folder is deleted, or deeper
    than PATH_MAX."""
    setup = R4_SETUP + [("plant", ".", ("python", "python3", "mge", "libs")), ("dir", "emptyhome", None),
                        ("dir", "nowheels", None), ("dir", "ww", None), ("chmod", "ww", 0o777),
                        ("plant", "ww", ("python3", "mge", "libs"))]
    path = os.environ.get("PATH", "/usr/bin:/bin")
    paths = {"PATH as is": path, "PATH .:": ".:" + path, "PATH empty entry first": ":" + path,
             "PATH empty entry last": path + ":", "PATH relative": "ww:" + path, "PATH world-writable first": "{D}/ww:" + path,
             "PATH empty": "", "PATH .": "."}
    cases = []
    for label, value in paths.items():
        for home in ("installed runtime", "empty MGE_HOME"):
            env = {"PATH": value}
            if home != "installed runtime":
                env["MGE_HOME"] = "{D}/emptyhome"
            for command in ("run", "check -j2", "info", "runtime info", "compare --b-naive"):
                cases.append(Case("cwd", f"{label}, {home}: {command}", child_commands()[command], setup, env=env))
        env = {"PATH": value, "MGE_HOME": "{D}/emptyhome", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "{D}/nowheels"}
        cases.append(Case("cwd", f"{label}: runtime install", ["runtime", "install"], setup, env=env, timeout=120))
    for label, value in {"LD_LIBRARY_PATH :": ":", "LD_LIBRARY_PATH .": ".", "LD_LIBRARY_PATH empty": "",
                         "LD_LIBRARY_PATH world-writable": "{D}/ww", "LD_LIBRARY_PATH relative": "ww"}.items():
        for command, argv in child_commands().items():
            cases.append(Case("cwd", f"{label}: {command}", argv, setup, env={"LD_LIBRARY_PATH": value}))
    # deleted: the engine cannot load (a hint says why); deep: paths relative to it
    deleted = shell('mkdir gone && cd gone && rmdir ../gone')
    deep_dirs = "/".join(["d" * 250] * 18)
    deep = shell(f'mkdir deep && cd deep && for i in $(seq 18); do mkdir {"d" * 250} && cd {"d" * 250} || exit 97; done; '
                 f'cp "$D/in/m.mge" m.mge && cp "$D/in/tc.mge" tc.mge && mkdir out')
    for command, argv in child_commands("{D}/in/m.mge", "{D}/in/tc.mge").items():
        argv = [a.replace("out/", "{D}/out/") for a in argv]
        cases.append(Case("cwd", f"deleted folder: {command}", argv, setup, shell=deleted))
    for command, argv in child_commands("m.mge", "tc.mge").items():
        cases.append(Case("cwd", f"folder deeper than PATH_MAX ({len(deep_dirs)} bytes): {command}", argv, setup, shell=deep))
    return cases


def bound_runtime(homes):
    """A namespace prelude that binds the installed runtime, read-only, as
    the runtime of each cache folder in `homes` (relative to the case's)."""
    steps = []
    for home in homes:
        target = f'"$D/{home}/runtime/1.13.0"'
        steps.append(f"mkdir -p {target} && mount --bind {shlex.quote(RUNTIME)} {target} && mount -o remount,ro,bind {target}")
    return " && ".join(steps)


def env_cases():
    """Variables that name where the runtime, temporary files and Python
    come from, how text is shown, and what the engine logs."""
    rt_home = [("runtime", "home", None)]
    variants = {
        "HOME unset": ({"HOME": None, "XDG_CACHE_HOME": None, "MGE_HOME": None}, []),
        "HOME relative": ({"HOME": "relhome", "XDG_CACHE_HOME": None}, [("runtime", "relhome/.cache/mge", None)]),
        "HOME world-writable": ({"HOME": "{D}/wwhome", "XDG_CACHE_HOME": None},
                                [("runtime", "wwhome/.cache/mge", None), ("chmod", "wwhome", 0o777)]),
        "HOME a symlink": ({"HOME": "{D}/homelink", "XDG_CACHE_HOME": None},
                           [("runtime", "realhome/.cache/mge", None), ("symlink", "homelink", "realhome")]),
        "XDG_CACHE_HOME unset, HOME the user's": ({"XDG_CACHE_HOME": None}, []),
        "XDG_CACHE_HOME relative": ({"XDG_CACHE_HOME": "relcache"}, [("runtime", "relcache/mge", None)]),
        "XDG_CACHE_HOME world-writable": ({"XDG_CACHE_HOME": "{D}/wwcache"},
                                          [("runtime", "wwcache/mge", None), ("chmod", "wwcache", 0o777)]),
        "XDG_CACHE_HOME a symlink": ({"XDG_CACHE_HOME": "{D}/cachelink"},
                                     [("runtime", "realcache/mge", None), ("symlink", "cachelink", "realcache")]),
        "MGE_HOME empty": ({"MGE_HOME": ""}, []),
        "MGE_HOME relative": ({"MGE_HOME": "home"}, rt_home),
        "MGE_HOME world-writable": ({"MGE_HOME": "{D}/home"}, rt_home + [("chmod", "home", 0o777)]),
        "MGE_HOME a symlink": ({"MGE_HOME": "{D}/homelink"}, rt_home + [("symlink", "homelink", "home")]),
        "MGE_HOME in a world-writable folder": ({"MGE_HOME": "{D}/ww/home"}, [("runtime", "ww/home", None), ("chmod", "ww", 0o777)]),
        "TMPDIR unset": ({"TMPDIR": None}, []),
        "TMPDIR relative": ({"TMPDIR": "tmp"}, []),
        "TMPDIR missing": ({"TMPDIR": "{D}/nope"}, []),
        "TMPDIR a file": ({"TMPDIR": "{D}/in/m.mge"}, []),
        "TMPDIR /proc": ({"TMPDIR": "/proc"}, []),
        "TMPDIR empty": ({"TMPDIR": ""}, []),
        "TMPDIR world-writable": ({"TMPDIR": "{D}/tmp/ww"}, [("dir", "tmp/ww", None), ("chmod", "tmp/ww", 0o1777)]),
        "PYTHON* planted": ({"PYTHONPATH": "{D}/plant", "PYTHONHOME": "{D}/plant", "PYTHONSTARTUP": "{D}/plant/startup.py",
                             "PYTHONUSERBASE": "{D}/plant/userbase", "PYTHONINSPECT": "1", "PYTHONNOUSERSITE": "",
                             "PYTHONSAFEPATH": "", "PYTHONEXECUTABLE": "{D}/plant/python3"},
                            [("plant", "plant", ("python", "python3"))]),
        "PIP_* set": ({"PIP_CONFIG_FILE": "{D}/plant/pip.conf", "PIP_TARGET": "{D}/in", "PIP_PREFIX": "{D}/in",
                       "PIP_LOG": "{D}/out/pip.log", "PIP_REQUIRE_VIRTUALENV": "1", "PIP_SRC": "{D}/in",
                       "PIP_DEST": "{D}/in", "PIP_CACHE_DIR": "{D}/in"}, [("plant", "plant", ("python",))]),
        "LD_LIBRARY_PATH planted (named by the user)": ({"LD_LIBRARY_PATH": "{D}/plant"}, [("plant", "plant", ("libs",))]),
        "RUNTIME_OVERRIDE_LOG_LEVEL=0": ({"RUNTIME_OVERRIDE_LOG_LEVEL": "0"}, []),
        "RUNTIME_OVERRIDE_LOG_LEVEL garbage": ({"RUNTIME_OVERRIDE_LOG_LEVEL": "-99999999999999"}, []),
        "MGE_LITE_LIB bare name": ({"MGE_LITE_LIB": "libmegengine_shared.so"}, [("plant", ".", ("libs",))]),
        "MGE_LITE_LIB bare name on LD_LIBRARY_PATH :": ({"MGE_LITE_LIB": "liblite_shared.so", "LD_LIBRARY_PATH": ":"},
                                                       [("plant", ".", ("libs",))]),
        "MGE_LITE_LIB ./lib (named by the user)": ({"MGE_LITE_LIB": "./liblite_shared.so"}, [("plant", ".", ("libs",))]),
        "MGE_LITE_LIB /": ({"MGE_LITE_LIB": "/"}, []),
        "MGE_LITE_LIB newline": ({"MGE_LITE_LIB": "a\nb.so"}, []),
        "MGE_LITE_LIB -": ({"MGE_LITE_LIB": "-"}, []),
        "MGE_LITE_LIB the model": ({"MGE_LITE_LIB": "in/m.mge"}, []),
        "MGE_LITE_LIB mge itself": ({"MGE_LITE_LIB": MGE}, []),
        "MGE_LITE_LIB /proc/self/exe": ({"MGE_LITE_LIB": "/proc/self/exe"}, []),
        "LANG, LC_ALL C": ({"LANG": "C", "LC_ALL": "C"}, []),
        "LC_ALL tr_TR": ({"LC_ALL": "tr_TR.UTF-8"}, []),
        "LC_ALL bogus": ({"LC_ALL": "xx_YY.BOGUS"}, []),
        "LANG non-UTF-8": ({"LANG": "\udcff\udcfe", "LC_ALL": None}, []),
        "COLUMNS huge": ({"COLUMNS": "99999999999999999999", "LINES": "99999999999"}, []),
        "COLUMNS 0": ({"COLUMNS": "0", "LINES": "0"}, []),
        "COLUMNS -1": ({"COLUMNS": "-1"}, []),
        "COLUMNS 1": ({"COLUMNS": "1"}, []),
        "TERM dumb": ({"TERM": "dumb"}, []),
        "TERM with ESC": ({"TERM": "\x1b]0;x\x07"}, []),
        "CLICOLOR_FORCE, FORCE_COLOR": ({"CLICOLOR_FORCE": "1", "FORCE_COLOR": "3", "TERM": "xterm-256color"}, []),
        "NO_COLOR": ({"NO_COLOR": "1"}, []),
        "RUST_BACKTRACE, RUST_LOG": ({"RUST_BACKTRACE": "full", "RUST_LOG": "trace", "RUST_MIN_STACK": "1"}, []),
        "MGE_SUPERVISED forged": ({"MGE_SUPERVISED": "1:.mge-x-:stdout-closed"}, []),
        "MGE_LOCATED_* forged": ({"MGE_LOCATED_LITE_LIB": "{D}/liblite_shared.so", "MGE_LOCATED_ORIGIN": "cache",
                                  "MGE_LOCATED_INSTALL": "{D}"}, [("plant", ".", ("libs",))]),
        "MGE_LOCATED_NONE forged": ({"MGE_LOCATED_NONE": "\x1b[31mforged\x07"}, []),
        "MGB_* engine switches": ({"MGB_USE_MEGDNN_DBG": "2", "MGB_DISABLE_OPR_CACHE": "1", "MGB_LOG_LEVEL": "0",
                                   "OMP_NUM_THREADS": "0", "MKL_NUM_THREADS": "-1"}, []),
    }
    allowed = {"LD_LIBRARY_PATH planted (named by the user)": ("libcuda.so.1",),
               "MGE_LITE_LIB ./lib (named by the user)": ("liblite_shared.so",),
               "MGE_LOCATED_* forged": ("liblite_shared.so",)}
    commands = {k: v for k, v in child_commands().items() if k in ("run", "check -j2", "info", "runtime info", "compare --b-naive", "profile")}
    cases = []
    for label, (env, extra) in variants.items():
        # a runtime where a variable points: the installed one, bound read-only there
        homes = [rel for op, rel, _ in extra if op == "runtime"]
        setup = R4_SETUP + [("dir", "nowheels", None)] + [step for step in extra if step[0] != "runtime"]
        namespace = bound_runtime(homes) if homes else ""
        for command, argv in commands.items():
            cases.append(Case("env", f"{label}: {command}", argv, setup, env=env, allowed_plants=allowed.get(label, ()),
                              hostile_text="ESC" in label or "forged" in label, namespace=namespace))
        if label.startswith(("PYTHON", "PIP", "HOME", "TMPDIR", "LANG", "LC_ALL")):
            install_env = {**env, "MGE_HOME": "{D}/emptyhome", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "{D}/nowheels"}
            cases.append(Case("env", f"{label}: runtime install", ["runtime", "install"], setup + [("dir", "emptyhome", None)],
                              env=install_env, timeout=120))
    return cases


def fd_cases():
    """Files given through descriptors (/dev/fd/N), outputs aliasing them,
    standard streams closed or odd, the channel's number taken."""
    cases = []
    runs = "run in/m.mge -q --iter 1"
    # inputs through /dev/fd/3 (and the same file as an output on /dev/fd/4)
    inputs = {
        "model": (["run", "/dev/fd/3", "--iter", "1"], "in/m.mge"),
        "model of check -j2": (["check", "-j", "2", "/dev/fd/3", "in/tc.mge"], "in/tc.mge"),
        "model of tune": (["tune", "/dev/fd/3", "--budget", "2"], "in/m.mge"),
        "model of compare": (["compare", "/dev/fd/3", "--b-naive"], "in/m.mge"),
        "model of info": (["info", "/dev/fd/3"], "in/m.mge"),
        "feed": (["run", "in/m.mge", "--iter", "1", "-i", "data:/dev/fd/3"], "in/x.npy"),
        "--expect file": (["run", "in/m.mge", "--iter", "1", "-i", "data:in/x.npy", "--expect", "feat:/dev/fd/3"], "in/feat.npy"),
        "@FILE list": (["run", "in/m.mge", "--iter", "1", "-i", "@/dev/fd/3"], "in/feeds.txt"),
    }
    for label, (argv, file) in inputs.items():
        cases.append(Case("fds", f"{label} as /dev/fd/3", argv, R4_SETUP, shell=shell(redirect=f"3<{file}")))
        cases.append(Case("fds", f"{label} through a pipe as /dev/fd/3", argv, R4_SETUP, shell=shell(redirect=f"3< <(cat {file})")))
        for output in ("--profile /dev/fd/3", "--profile /dev/fd/4", "--outputs /dev/fd/4", "--profile /proc/self/fd/4"):
            cases.append(Case("fds", f"{label} as /dev/fd/3, {output} opened on it", argv + output.split(), R4_SETUP,
                              shell=shell(redirect=f"3<{file} 4<>{file}")))
    for target in ("/dev/fd/4", "/proc/self/fd/4", "/dev/stdout"):
        for opened in ("4<>in/m.mge", "4>>in/x.npy", "4<>in/tc.mge", "1>>in/m.mge 4>&1"):
            for option, head in [("--profile", ["run", "in/m.mge", "-q", "--iter", "1"]), ("-o", ["profile", "in/m.mge", "-q", "--iter", "1"]),
                                 ("--junit", ["check", "in/tc.mge"]), ("--save", ["tune", "in/m.mge", "-q", "--budget", "2"]),
                                 ("--layout-transform-model", ["dump", "in/m.mge", "-q"])]:
                # a file the command does not read is the user's to have written
                aliased = re.search(r"in/(\S+)", opened).group(1)
                updated = () if "in/" + aliased in head else (aliased,)
                cases.append(Case("fds", f"{head[0]} {option} {target} with {opened}", head + [option, target], R4_SETUP,
                                  shell=shell(redirect=opened), updated=updated))
    # the standard streams closed, in every combination, and odd
    commands = {"run": runs.split(), "run --json": (runs + " --json").split(), "check -j2": ["check", "-j", "2", "in/tc.mge", "in/m.mge"],
                "info": ["info", "in/m.mge"], "compare": ["compare", "in/x.npy", "in/y.npy"], "compare --b-naive": ["compare", "in/m.mge", "--b-naive"],
                # a budget its baseline fits on a loaded machine: an exit code is expected
                "dump --io": ["dump", "in/m.mge", "--io", "out/io"], "tune": ["tune", "in/m.mge", "--budget", "5"],
                "profile": ["profile", "in/m.mge", "--iter", "1"], "runtime info": ["runtime", "info"],
                "pack-testcases": ["pack-testcases", "in/m.mge", "-o", "out/tc.mge"], "run -v": ["run", "in/m.mge", "--iter", "1", "-v"],
                "usage error": ["run", "--nope"], "version": ["--version"]}
    closings = ["<&-", ">&-", "2>&-", "<&- >&-", "<&- 2>&-", ">&- 2>&-", "<&- >&- 2>&-"]
    for command, argv in commands.items():
        for closing in closings:
            cases.append(Case("fds", f"{command} {closing}", argv, R4_SETUP, shell=shell(redirect=closing)))
        cases.append(Case("fds", f"{command} 1<>/dev/null", argv, R4_SETUP, shell=shell(redirect="1<>/dev/null"),
                          expect_rc={"usage error": 2}.get(command, 0)))
        cases.append(Case("fds", f"{command} 0<>/dev/null 2<>/dev/null", argv, R4_SETUP, shell=shell(redirect="0<>/dev/null 2<>/dev/null")))
        cases.append(Case("fds", f"{command} >/dev/full", argv, R4_SETUP, shell=shell(redirect=">/dev/full")))
        cases.append(Case("fds", f"{command} stdout a FIFO whose reader reads a byte and goes", argv, R4_SETUP,
                          shell=shell('mkfifo out/fifo && { head -c 1 out/fifo > /dev/null & }', "> out/fifo")))
        cases.append(Case("fds", f"{command} stdout a FIFO whose reader goes at once", argv, R4_SETUP,
                          shell=shell('mkfifo out/fifo && { (exec 3<out/fifo) & }', "> out/fifo")))
        cases.append(Case("fds", f"{command} stderr a closed pipe", argv, R4_SETUP, stderr="closed-pipe"))
        cases.append(Case("fds", f"{command} stdout and stderr a closed pipe", argv, R4_SETUP, stderr="closed-pipe",
                          shell=shell(redirect=">&2")))
        for opened in ("1023<>in/fd1023", "1023>>in/fd1023", "1023<in/m.mge", "1022<>in/fd1023 1023<>in/fd1023", "1023>&1", "1023>&2"):
            setup = R4_SETUP + [("bytes", "in/fd1023", b"the user's\n")]
            cases.append(Case("fds", f"{command} with fd {opened}", argv, setup, shell=shell(redirect=opened)))
        cases.append(Case("fds", f"{command} fds 3-1023 all open", argv, R4_SETUP + [("bytes", "in/fd", b"x")],
                          shell=shell('for fd in $(seq 3 1023); do eval "exec $fd<in/fd" || exit 97; done')))
    return cases


def limit_cases():
    """Limits the shell sets: file size, address space, descriptors, stack,
    CPU time, core files."""
    writers = {"run --outputs": ["run", "in/m.mge", "-q", "--iter", "1", "--outputs", "out/o"],
               "profile -o": ["profile", "in/m.mge", "-q", "--iter", "1", "-o", "out/p.json"],
               "dump --io": ["dump", "in/m.mge", "-q", "--io", "out/io"],
               "check -j2 --junit": ["check", "-j", "2", "in/tc.mge", "in/m.mge", "--junit", "out/j.xml"],
               "tune --save": ["tune", "in/m.mge", "-q", "--budget", "2", "--save", "out/s.json"],
               "pack-testcases": ["pack-testcases", "in/m.mge", "-q", "-o", "out/tc.mge"],
               "dump --testcases": ["dump", "in/tc.mge", "-q", "--testcases", "out/t"]}
    runners = {"run": ["run", "in/m.mge", "-q", "--iter", "1"], "run --threads 4": ["run", "in/m.mge", "-q", "--iter", "1", "--threads", "4"],
               "run --instances 3": ["run", "in/m.mge", "-q", "--iter", "2", "--instances", "3"],
               "check -j2": ["check", "-j", "2", "in/tc.mge", "in/m.mge"], "info": ["info", "in/m.mge"],
               "tune": ["tune", "in/m.mge", "-q", "--budget", "2"], "compare --b-naive": ["compare", "in/m.mge", "--b-naive"],
               "compare": ["compare", "in/x.npy", "in/y.npy"], "runtime info": ["runtime", "info"],
               "dump --io": ["dump", "in/m.mge", "-q", "--io", "out/io"]}
    cases = []
    for blocks in (0, 1, 4, 16, 64, 1024):
        for command, argv in writers.items():
            cases.append(Case("limits", f"ulimit -f {blocks}: {command}", argv, R4_SETUP, shell=shell(f"ulimit -f {blocks}"),
                              stderr="pipe"))
    for kib in (50000, 100000, 200000, 400000, 800000, 1600000, 3200000, 6400000):
        for command, argv in runners.items():
            cases.append(Case("limits", f"ulimit -v {kib}: {command}", argv, R4_SETUP, shell=shell(f"ulimit -v {kib}")))
    for files in (3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 64):
        for command, argv in runners.items():
            cases.append(Case("limits", f"ulimit -n {files}: {command}", argv, R4_SETUP, shell=shell(f"ulimit -n {files}"),
                              loader_may_fail=True))
    for kib in (16, 64, 256):
        for command, argv in runners.items():
            cases.append(Case("limits", f"ulimit -s {kib}: {command}", argv, R4_SETUP, shell=shell(f"ulimit -s {kib}"),
                              loader_may_fail=kib <= 16))
    for command, argv in {**runners, "tune --budget 5": ["tune", "in/m.mge", "-q", "--budget", "5"],
                          "run --duration 3": ["run", "in/m.mge", "-q", "--duration", "3"]}.items():
        cases.append(Case("limits", f"ulimit -t 1: {command}", argv, R4_SETUP, shell=shell("ulimit -t 1"),
                          limit_signals=(signal.SIGXCPU, signal.SIGKILL)))
        cases.append(Case("limits", f"ulimit -c unlimited: {command}", argv, R4_SETUP, shell=shell("ulimit -c unlimited")))
        cases.append(Case("limits", f"ulimit -c 0: {command}", argv, R4_SETUP, shell=shell("ulimit -c 0")))
        cases.append(Case("limits", f"ulimit -u 1: {command}", argv, R4_SETUP, shell=shell("ulimit -u 1")))
    return cases


def name_cases():
    """Every model with hostile names (fixtures/named/) through every command,
    with and without -v and the engine's debug log."""
    cases = []
    named = sorted(n for n in os.listdir(os.path.join(ROOT, "fixtures/named")) if n.endswith(".mge"))
    for name in named:
        setup = [("copy", "in/" + name, "fixtures/named/" + name), ("copy", "in/x.npy", "fixtures/named/feeds/x.npy")]
        model = "in/" + name
        feed = ["-i", "in/x.npy"]
        commands = {
            "run": ["run", model, "--iter", "1"] + feed,
            "run --outputs --profile": ["run", model, "--iter", "1", "--outputs", "out/o", "--profile", "out/p.json"] + feed,
            "check": ["check", model],
            "check -j2": ["check", "-j", "2", model, model],
            "info": ["info", model],
            "info --ops": ["info", model, "--ops"],
            "dump --io": ["dump", model, "--io", "out/io"] + feed,
            "dump --io txt": ["dump", model, "--io", "out/io", "--io-format", "txt"] + feed,
            "profile": ["profile", model, "--iter", "1", "-o", "out/p.json"] + feed,
            "compare --b-naive": ["compare", model, "--b-naive"] + feed,
            "tune": ["tune", model, "--budget", "5", "--save", "out/s.json"] + feed,
            "pack-testcases": ["pack-testcases", model, "-o", "out/tc.mge"] + feed,
        }
        for command, argv in commands.items():
            for verbose, log in ((False, False), (True, False), (False, True), (True, True)):
                env = {"RUNTIME_OVERRIDE_LOG_LEVEL": "0"} if log else {}
                label = f"{name} {command}" + (" -v" if verbose else "") + (" RUNTIME_OVERRIDE_LOG_LEVEL=0" if log else "")
                cases.append(Case("names", label, argv + (["-v"] if verbose else []), setup, env=env, hostile_text=True,
                                  timeout=90))
    return cases


def odd_path_cases():
    """Model paths a shell passes but a child's command line could misread:
    a leading `-`, a line break, ESC, bytes that are not UTF-8, 4096 bytes."""
    names = {"leading -": "-m.mge", "leading --": "--m.mge", "newline": "a\nb.mge", "ESC": "a\x1b[31mb\x07.mge",
             "not UTF-8": "\udcff\udcfe.mge", "= inside": "-i=#rand(0,1).mge", "spaces and quotes": " a '\"$(id)`.mge"}
    cases = []
    for label, name in names.items():
        setup = R4_SETUP + [("copy", name, "fixtures/conv_float.mge"), ("copy", "tc-" + name, "fixtures/conv_float_tc3.mge")]
        for command, argv in child_commands(name, "tc-" + name).items():
            if command == "runtime info":
                continue
            model_at = argv.index(name)
            dashed = argv[:model_at] + [a for a in argv[model_at + 1:] if a != "tc-" + name] + ["--", name] + \
                (["tc-" + name] if "tc-" + name in argv else [])
            cases.append(Case("odd-paths", f"{label}: {command} -- MODEL", dashed, setup, hostile_text=True))
            cases.append(Case("odd-paths", f"{label}: {command} ./MODEL", [("./" + a if a in (name, "tc-" + name) else a) for a in argv],
                              setup, hostile_text=True))
        feed_setup = R4_SETUP + [("copy", name + ".npy", "fixtures/feeds/conv_data.npy")]
        cases.append(Case("odd-paths", f"{label}: feed of check -j2", ["check", "-j", "2", "in/tc.mge", "in/m.mge", "-i", f"data:./{name}.npy"],
                          feed_setup, hostile_text=True))
        cases.append(Case("odd-paths", f"{label}: feed of tune", ["tune", "in/m.mge", "--budget", "2", "-i", f"data:./{name}.npy"],
                          feed_setup, hostile_text=True))
        cases.append(Case("odd-paths", f"{label}: output of dump --io", ["dump", "in/m.mge", "--io", "./" + name], R4_SETUP, hostile_text=True))
    # 4096 bytes and around: an absolute path of 4095 bytes (the most a
    # system call takes), one of 4096, and a relative one past it
    for label, length in {"4095-byte path": 4095, "4096-byte path": 4096, "5000-byte path": 5000}.items():
        for command, argv in child_commands("{LONG}").items():
            if command != "runtime info":
                cases.append(Case("odd-paths", f"{label}: {command}", argv, R4_SETUP + [("longpath", "{LONG}", length)]))
    return cases


def long_path(d, length):
    """A copy of the model at an absolute path of `length` bytes, made a
    folder at a time (a path past PATH_MAX is reached only that way)."""
    base = os.path.join(d, "in", "long")
    os.makedirs(base)
    remaining = length - len(base) - len("/m.mge")
    folder = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    while remaining > 0:
        width = min(200, remaining - 1)
        if remaining - 1 - width == 1:
            width -= 1
        os.mkdir("x" * width, dir_fd=folder)
        inner = os.open("x" * width, os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = inner
        base += "/" + "x" * width
        remaining -= 1 + width
    model = os.open("m.mge", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
    os.write(model, read_fixture("fixtures/conv_float.mge"))
    os.close(model)
    os.close(folder)
    path = base + "/m.mge"
    assert len(path.encode()) == length, (len(path), length)
    return path


def install_signal_cases():
    """runtime install (pip, its process group) stopped at three moments."""
    cases = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
        for delay in (0.3, 1.5, 5.0):
            # the next install removes a killed one's staging (and fails at once, offline)
            followup = ["runtime", "install"] if sig == signal.SIGKILL else None
            cases.append(Case("signals", f"runtime install {sig.name} after {delay}s", ["runtime", "install"],
                              [("dir", "emptyhome", None), ("dir", "nowheels", None)], env={"MGE_HOME": "{D}/emptyhome"},
                              signal=(sig, delay), timeout=180, followup=followup,
                              followup_env={"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "{D}/nowheels"}))
    return cases


# ------------------------------------------------- round five
# Nothing a model, a wheel, a dump or a long name carries takes mge over.

FAULT_LIB = None  # the tests' stand-in Lite library, built once by `build_fault_library`


def build_fault_library(work):
    global FAULT_LIB
    FAULT_LIB = os.path.join(work, "libfault_lite.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", FAULT_LIB, os.path.join(ROOT, "tests/faults/fault_lite.c"),
                    "-lpthread"], check=True)


PACK = "fixtures/deploy/conv_float_packed_options.pack"


def packed_with(options):
    """The fixture's pack with an info that carries `options` as mge's (in
    the fixture's info slot, padded with spaces, which Lite's JSON parser
    skips); None where they do not fit."""
    data = bytearray(read_fixture(PACK))
    start = data.find(b'{"name":"conv_float"')
    length = int.from_bytes(data[start - 4:start], "little")
    info = json.dumps({"name": "conv_float", "valid": True, "version": "1.13.0", "backend": "MGE",
                       "extra_info": {"mge": {"options": options}}}).encode()
    if len(info) > length:
        return None
    data[start:start + length] = info + b" " * (length - len(info))
    return bytes(data)


def packed_cases():
    """Packs whose extra_info carries options that name a file, a library,
    a cache, cores or a key, through every command that loads models: each
    is refused, and nothing it names is loaded (a planted library writes a
    marker) or written."""
    carried = {
        "c-opr-lib here": ["--c-opr-lib", "./libx.so"],
        "c-opr-lib in/": ["--c-opr-lib", "in/libx.so"],
        "c-opr-lib absolute": ["--c-opr-lib", "{D}/in/libx.so"],
        "c-opr-lib twice": ["--layout", "nchw44", "--c-opr-lib", "in/libx.so", "--c-opr-lib=./libx.so"],
        "fast-run-cache": ["--fast-run", "--fast-run-cache", "out/written.cache"],
        "fast-run-cache=": ["--fast-run-cache=out/written.cache"],
        "full-run fast-run-cache": ["--full-run", "--fast-run-cache", "{D}/out/written.cache"],
        "tensorrt-cache": ["--tensorrt", "--tensorrt-cache", "out/written.cache"],
        "cpu-cores": ["--cpu-cores", "0"],
        "model-key file": ["--model-key", "@/etc/passwd"],
        "model-key hex": ["--model-key", "00112233445566778899aabbccddeeff"],
        "model-decryption": ["--model-decryption", "RC4_default"],
        "options file": ["--options", "in/opts.txt"],
        "lite-lib": ["--lite-lib", "in/libx.so"],
        "an unknown flag": ["--not-an-option", "x"],
        "a non-string": [1, "--threads"],
        "control characters": ["--c-opr-lib", "in/\x1b[31mlib\x07.so"],
    }
    commands = {
        "run": ["run", "in/p.mge", "--iter", "1", "-q"],
        "run -v": ["run", "in/p.mge", "--iter", "1", "-v"],
        "profile": ["profile", "in/p.mge", "--iter", "1", "-o", "out/p.json"],
        "dump --outputs": ["dump", "in/p.mge", "--outputs", "out/o"],
        "dump --io": ["dump", "in/p.mge", "--io", "out/io"],
        "compare": ["compare", "in/p.mge", MODEL, "--no-timing"],
        "compare --b-naive": ["compare", "in/p.mge", "--b-naive", "--no-timing"],
        "tune": ["tune", "in/p.mge", "--budget", "5"],
        "check": ["check", "in/p.mge"],
        "pack-testcases": ["pack-testcases", "in/p.mge", "-o", "out/tc.mge"],
        "info": ["info", "in/p.mge"],
        "info --json": ["info", "in/p.mge", "--json"],
    }
    cases = []
    for label, options in carried.items():
        setup = BASE_SETUP + [("pack", "in/p.mge", options), ("planted", "in/libx.so", None), ("planted", "libx.so", None),
                              ("bytes", "in/opts.txt", b"--c-opr-lib ./libx.so\n")]
        for command, argv in commands.items():
            # A list that holds a non-string is no pack's options: info refuses it too.
            # check loads nothing of a pack: it holds no testcases, a plain model (exit 0).
            expect = 0 if command.startswith("info") or command == "check" else 2
            if label == "a non-string" and command.startswith("info"):
                expect = None
            cases.append(Case("packed-options", f"{label}: {command}", argv, setup, expect_rc=expect,
                              absent=("out/written.cache", "out/o", "out/io", "out/tc.mge"), timeout=90,
                              hostile_text="control" in label))
    return cases


def lengthened(data, needle, long):
    """`data` (a graph or a container) with every name of its model graph
    that holds `needle` holding `long` instead: each such flatbuffer string
    written anew at the graph's end, the offsets to it turned there."""
    data = bytearray(data)
    base = 12 if data[:8] == b"mgbtest0" else 0
    end = base + 4 + struct.unpack_from("<I", data, base)[0]
    graph = data[base + 4:end]
    strings, at = set(), 0
    while (at := graph.find(needle, at)) >= 0:
        for start in range(at - 4 - (at % 4), max(-1, at - 65536), -4):
            n = struct.unpack_from("<I", graph, start)[0]
            if start + 4 + n >= at + len(needle) and start + 4 + n < len(graph) and graph[start + 4 + n] == 0:
                strings.add((start, n))
                break
        at += len(needle)
    for start, n in sorted(strings):
        text = bytes(graph[start + 4:start + 4 + n]).replace(needle, long)
        graph += b"\0" * (-len(graph) % 4)
        moved = len(graph)
        graph += struct.pack("<I", len(text)) + text + b"\0"
        for field in range(0, start, 4):
            if field + struct.unpack_from("<I", graph, field)[0] == start:
                struct.pack_into("<I", graph, field, moved - field)
    graph += b"\0" * (-len(graph) % 8)
    return bytes(data[:base]) + struct.pack("<I", len(graph)) + bytes(graph) + bytes(data[end:])


def long_name_cases():
    """Names longer than a line of the channel (1 MiB) and just below it,
    of inputs and outputs, through every command that starts a child: none
    hangs, none hides its error, none prints more than a bounded error."""
    odd = read_fixture("fixtures/named/odd.mge")
    control = read_fixture("fixtures/named/control_tc1.mge")
    odd_input = "a\"b'c\\d%s/e".encode()
    models = {
        "input 1.2 MB": ("in/l.mge", lengthened(odd, odd_input, b"i" * 1_200_000)),
        "input 1 MiB - 40": ("in/l.mge", lengthened(odd, odd_input, b"i" * ((1 << 20) - 40))),
        "output 1.1 MB": ("in/l.mge", lengthened(odd, b"n" * 10000, b"o" * 1_100_000)),
        "escaped output 400 KB": ("in/l.mge", lengthened(odd, b"n" * 10000, b"\x01" * 400_000)),
        "container output 1.1 MB": ("in/l.mge", lengthened(control, b"line1\nline2", b"o" * 1_100_000)),
        "container output 400 KB of breaks": ("in/l.mge", lengthened(control, b"line1\nline2", b"\n" * 400_000)),
    }
    commands = dict(child_commands("in/l.mge"))
    del commands["runtime info"]
    commands.update({
        "run -i nope:1": ["run", "in/l.mge", "-i", "nope:1"],
        "run --output nope": ["run", "in/l.mge", "--output", "nope"],
        "check --timeout": ["check", "in/l.mge", "--timeout", "60"],
        "check --json": ["check", "in/l.mge", "--json"],
        "run --repro": ["run", "in/l.mge", "--iter", "1", "--repro", "out/r"],
    })
    cases = []
    for label, (rel, data) in models.items():
        setup = BASE_SETUP + [("bytes", rel, data)]
        for command, argv in commands.items():
            cases.append(Case("long-names", f"{label}: {command}", argv, setup, timeout=120, max_stderr=1 << 20,
                              hostile_text="escaped" in label))
    return cases


def repro_secret_cases():
    """--repro with a key given inline and variables that share the engine's
    prefixes: no file of the reproducer, and no line of mge's, holds them."""
    key = read_fixture("fixtures/deploy/user_rc4.key")
    hexkey = key.hex()
    wrong = npy("<f4", (1, 8), data=b"\0" * 32)
    secrets = {"MGE_API_TOKEN": "s3cret-token-1", "MGB_TOKEN": "s3cret-token-2", "MEGENGINE_PASSWORD": "s3cret-token-3",
               "MEGDNN_SECRET": "s3cret-token-4"}
    setup = BASE_SETUP + [("copy", "in/k.pack", "fixtures/deploy/conv_float_packed_rc4_userkey.pack"),
                          ("bytes", "in/wrong.npy", wrong), ("copy", "in/tc3w.mge", "fixtures/conv_float_tc3_wrong.mge")]
    commands = {
        "run --expect": ["run", "in/k.pack", "--model-key", hexkey, "--expect", "feat:in/wrong.npy", "--repro", "out/r"],
        "run --expect -v": ["run", "in/k.pack", "--model-key", hexkey.upper(), "--expect", "feat:in/wrong.npy", "-v",
                            "--repro", "out/r"],
        "run --model-key=": ["run", "in/k.pack", f"--model-key={hexkey}", "--expect", "feat:in/wrong.npy", "--repro", "out/r"],
        "run --options file": ["run", "in/k.pack", "--options", "in/opts.txt", "--expect", "feat:in/wrong.npy",
                               "--repro", "out/r"],
        "compare": ["compare", "in/k.pack", MODEL, "--model-key", hexkey, "--no-timing", "--repro", "out/r"],
        "compare --a-options": ["compare", "in/k.pack", MODEL, "--a-options", f"--model-key {hexkey}", "--no-timing",
                                "--repro", "out/r"],
        "check": ["check", "in/tc3w.mge", "--repro", "out/r"],
    }
    cases = []
    for command, argv in commands.items():
        for env_label, env in (("", {}), (" with tokens in the environment", secrets)):
            cases.append(Case("repro-secrets", command + env_label, argv,
                              setup + [("bytes", "in/opts.txt", f"--model-key {hexkey}\n".encode())], env=dict(env),
                              secrets=(hexkey, hexkey.upper()) + tuple(env.values()), timeout=120))
    return cases


def image_header_cases():
    """Images whose headers claim what their bytes do not hold: each is held
    to the feed's bound from its header, before any pixel is decoded, with and
    without --resize-input (peak memory bounded)."""
    jpeg = lambda w, h: (b"\xff\xd8\xff\xc0\x00\x11\x08" + struct.pack(">HH", h, w) + b"\x03\x01\x11\x00\x02\x11\x00\x03\x11\x00"
                         + b"\xff\xda\x00\x0c\x03\x01\x00\x02\x11\x03\x11\x00\x3f\x00\xff\xd9")
    images = {
        "png 6000x6000": ("png", 6000 * 6000, png(6000, 6000, zlib.compress(b"\0" * (1 << 20)))),
        "png 65535x65535": ("png", 65535 * 65535, png(65535, 65535)),
        "png 1x2147483647": ("png", 2147483647, png(1, 2147483647)),
        "png 100000x1 gray": ("png", 100000, png(100000, 1, color_type=0)),
        "jpeg 6000x6000": ("jpg", 6000 * 6000, jpeg(6000, 6000)),
        "jpeg 65535x65535": ("jpg", 65535 * 65535, jpeg(65535, 65535)),
        "bmp 30000x30000": ("bmp", 30000 * 30000, bmp(30000, 30000)),
        "bmp -30000 rows": ("bmp", 30000 * 30000, bmp(30000, -30000)),
        "ppm 9000x9000": ("ppm", 9000 * 9000, b"P6\n9000 9000\n255\n"),
        "pgm 99999x99999": ("pgm", 99999 * 99999, b"P5\n99999 99999\n255\n"),
        "ppm 16-bit 9000x9000": ("ppm", 9000 * 9000, b"P6\n9000 9000\n65535\n"),
    }
    cases = []
    for label, (ext, pixels, data) in images.items():
        setup = BASE_SETUP + [("bytes", f"in/i.{ext}", data), ("copy", "in/u8.mge", "fixtures/image_uint8.mge")]
        for model in (MODEL, "in/u8.mge"):
            for resize in ([], ["--resize-input"]):
                argv = ["run", model, "-i", f"in/i.{ext}", "--iter", "1"] + resize
                # What --resize-input resizes may have 64 megapixels, decoded: bounded, not by 200 MB.
                decoded = bool(resize) and pixels <= 64 << 20
                cases.append(Case("image-headers", f"{label}: {model} {' '.join(resize)}".strip(), argv, setup,
                                  rss_bound=not decoded, expect_rc=None if decoded else 2))
    return cases


def long_record_cases():
    """Runs that fail after the engine printed much, with --repro: the
    reproducer is written, its records bounded."""
    setup = BASE_SETUP + [("copy", "in/tc3w.mge", "fixtures/conv_float_tc3_wrong.mge")]
    commands = {
        "run -v": ["run", "in/tc3w.mge", "-v", "--repro", "out/r"],
        "run -v --iter 2000": ["run", "in/tc3w.mge", "-v", "--iter", "2000", "--repro", "out/r"],
        "check -v": ["check", "in/tc3w.mge", "-v", "--repro", "out/r"],
        "check -v -j2": ["check", "in/tc3w.mge", "in/tc3w.mge", "-j", "2", "-v", "--repro", "out/r"],
    }
    cases = []
    for command, argv in commands.items():
        for env_label, env in (("", {}), (" RUNTIME_OVERRIDE_LOG_LEVEL=0", {"RUNTIME_OVERRIDE_LOG_LEVEL": "0"})):
            cases.append(Case("long-records", command + env_label, argv, setup, env=env, expect_rc=1,
                              present=("out/r/tc3w/README.txt", "out/r/tc3w/engine.log"), timeout=180))
    return cases


def wheel_of(lite):
    """A MegEngine 1.13.0 wheel for CPython 3.10 whose Lite library is `lite`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        wheel.writestr("megenginelite/libs/liblite_shared_whl.cpython-310-x86_64-linux-gnu.so", lite)
        wheel.writestr(LIB, b"\x07" * 4096)
        wheel.writestr("megengine-1.13.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: MegEngine\nVersion: 1.13.0\n")
        wheel.writestr("megengine-1.13.0.dist-info/WHEEL",
                       "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp310-cp310-manylinux2014_x86_64\n")
        wheel.writestr("megengine-1.13.0.dist-info/RECORD", "")
    return buffer.getvalue()


def unsupervised_load_cases():
    """runtime info and runtime install, whose engine loads were not
    supervised: a runtime that aborts, crashes, exits or hangs as it loads or
    counts its devices, and variables the engine cannot read. One line, exit
    2, nothing left (runtime/.install-*)."""
    wheel = "in/MegEngine-1.13.0-cp310-cp310-manylinux2014_x86_64.whl"
    setup = BASE_SETUP + [("fault", "in/lite.so", None), ("faultwheel", wheel, None), ("dir", "home", None),
                          ("dir", "nowheels", None)]
    commands = {
        "runtime info": ["runtime", "info"],
        "runtime info --json": ["runtime", "info", "--json"],
        "runtime install --wheel": ["runtime", "install", "--wheel", wheel],
        "runtime install --wheel --force": ["runtime", "install", "--wheel", wheel, "--force"],
    }
    faults = [(fault, at) for fault in ("abort", "segv", "exit", "quit", "signal", "deadlock") for at in ("open", "count")]
    cases = []
    for fault, at in faults:
        env = {"MGE_FAULT": fault, "MGE_FAULT_AT": at, "MGE_HOME": "{D}/home", "PIP_NO_INDEX": "1",
               "PIP_FIND_LINKS": "{D}/nowheels"}
        for command, argv in commands.items():
            lite = [] if command.startswith("runtime install") else ["--lite-lib", "in/lite.so"]
            cases.append(Case("unsupervised-loads", f"{fault} at {at}: {command}", argv + lite, setup, env=env,
                              expect_rc=2, timeout=120))
    variables = {
        "RUNTIME_OVERRIDE_LOG_LEVEL": ["abc", "", "99999999999"],
        "MGB_CONV_PROFILING_TIMEOUT": ["abc", "", "1e999", "-"],
        "MGB_LOG_VAR_SIZE_MB": ["abc", "x1"],
        "MGB_WORKER_MAX_SPIN": ["abc", "4294967296"],
        "MGB_USE_MEGDNN_DBG": ["abc", "99999999999999999999"],
        "MGB_SUBLINEAR_MEMORY_WORKERS": ["abc"],
        "MGB_SUBLINEAR_MEMORY_THRESH_NR_TRY": ["abc"],
        "MGB_CUDA_RESERVE_MEMORY": ["b:", "b:x", "b:99999999999999999999999"],
    }
    for name, values in variables.items():
        for value in values:
            for command, argv in {"runtime info": ["runtime", "info"], "run": ["run", MODEL, "--iter", "1", "-q"],
                                  "info": ["info", MODEL], "check": ["check", CONTAINER]}.items():
                # check too: no testcase could run.
                cases.append(Case("unsupervised-loads", f"{name}={value!r}: {command}", argv, BASE_SETUP,
                                  env={name: value}, expect_rc=2, timeout=90))
    return cases


def version_spelling_cases():
    """Versions spelled as PEP 440 allows (one release) and as it does not:
    an installed release answers under any spelling, with no download;
    anything else is refused in one line."""
    same = ["1.13", "1.13.0", "01.13.0", "1.13.0.0", "1.013.00", "1.13.0.0.0.0"]
    refused = ["1.13.0+", "v1.13.0", "1.13.0rc1", "99", "1.14", " 1.13", "1.13\n", "../1.13.0", "1.13.0/..", "1" * 70,
               "1.13.0+cu/118", "18446744073709551616.13", "1.13.0+CU118", ""]
    commands = {
        "run --runtime-version": lambda v: ["run", MODEL, "--iter", "1", "-q", "--runtime-version", v],
        "MGE_RUNTIME_VERSION run": lambda v: ["run", MODEL, "--iter", "1", "-q"],
        "compare --a-runtime": lambda v: ["compare", MODEL, MODEL, "--no-timing", "--a-runtime", v],
        "runtime install --version": lambda v: ["runtime", "install", "--version", v],
        "runtime info --runtime-version": lambda v: ["runtime", "info", "--runtime-version", v],
    }
    cases = []
    for version in same + refused:
        for command, argv in commands.items():
            # The installed runtime, read only; an install into a stand-in of it, offline.
            env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "{D}/nowheels"}
            setup = BASE_SETUP + [("dir", "nowheels", None)]
            if command.startswith("runtime install"):
                env["MGE_HOME"] = "{D}/home"
                setup += [("standin", "home", None)]
            if command.startswith("MGE_RUNTIME_VERSION"):
                env["MGE_RUNTIME_VERSION"] = version
            expect = 0 if version in same else 2
            cases.append(Case("version-spellings", f"{version!r}: {command}", argv(version), setup, env=env,
                              expect_rc=expect, timeout=120))
    return cases


def stand_in_install(home):
    """An intact install of 1.13.0 in the folder `home` whose Lite library is
    the fault library, with its record, as `runtime install` leaves one."""
    files = {LITE: fault_library_bytes(), LIB: b"\x07" * 4096}
    record = {"version": "1.13.0", "lite_library": LITE,
              "files": [{"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                        for path, data in sorted(files.items())]}
    for path, data in list(files.items()) + [("files.json", json.dumps(record).encode())]:
        target = os.path.join(home, "mge", "runtime", "1.13.0", path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)


def fault_library_bytes():
    with open(FAULT_LIB, "rb") as f:
        return f.read()


def dump_index_cases():
    """io dumps whose index names files outside its folder (one behind a FIFO,
    which would hang the reader), absolute paths, devices, or nothing sane:
    refused in one line, before anything is read."""
    def index(file):
        var = {"name": "feat", "id": 1, "operator": "feat", "type": "Host2DeviceCopy", "inputs": [], "shape": [1, 8],
               "dtype": "float32", "file": file}
        return json.dumps({"model": "m.mge", "format": "bin", "vars": [var]}).encode()
    feat = read_fixture(REF)
    files = {
        "../secret.npy": "the FIFO beside the folder",
        "../../in/feat.npy": "an input two folders up",
        "/etc/passwd": "an absolute path",
        "/dev/zero": "a device",
        "sub/feat.npy": "a subfolder",
        "..": "the parent",
        ".": "the folder",
        "": "nothing",
        "feat.npy/": "a folder's name",
        "fifo.npy": "a FIFO in the folder",
    }
    cases = []
    for file, label in files.items():
        setup = BASE_SETUP + [("bytes", "in/a/index.json", index(file)), ("bytes", "in/b/index.json", index("feat.npy")),
                              ("bytes", "in/b/feat.npy", feat), ("bytes", "in/a/sub/feat.npy", feat),
                              ("fifo", "in/secret.npy", None), ("fifo", "in/a/fifo.npy", None),
                              ("copy", "in/feat.npy", REF)]
        for command, argv in {"compare": ["compare", "in/a", "in/b"], "compare reversed": ["compare", "in/b", "in/a"],
                              "compare --json": ["compare", "in/a", "in/b", "--json"],
                              "compare --topk 3": ["compare", "in/a", "in/b", "--topk", "3"]}.items():
            cases.append(Case("dump-indexes", f"{label} ({file!r}): {command}", argv, setup, expect_rc=2, timeout=30))
    return cases


def non_utf8_folder_cases():
    """Models, feeds, outputs and reports in folders whose names are not
    UTF-8: nothing panics, and models that differ only in such bytes stay
    apart in compare's and check's reports."""
    bad = lambda b: "in/" + os.fsdecode(b"d" + bytes([b]))
    setup = BASE_SETUP + [("copy", bad(0xfe) + "/m.mge", "fixtures/conv_float.mge"),
                          ("copy", bad(0xfe) + "/x.npy", "fixtures/feeds/conv_data.npy"),
                          ("copy", bad(0xfe) + "/tc.mge", "fixtures/conv_float_tc3_wrong.mge")]
    for side in ("a", "b"):
        for b in (0xff, 0xfe, 0xfd):
            setup.append(("copy", f"in/{side}/" + os.fsdecode(b"bad" + bytes([b]) + b".mge"), "fixtures/conv_float.mge"))
    out = "out/" + os.fsdecode(b"o\xfe")
    model, feed, tc = bad(0xfe) + "/m.mge", bad(0xfe) + "/x.npy", bad(0xfe) + "/tc.mge"
    commands = {
        "run --outputs": ["run", model, "-i", feed, "--iter", "1", "--outputs", out + "/o"],
        "run --profile": ["run", model, "--iter", "1", "--profile", out + "/p.json"],
        "run --repro": ["run", tc, "--repro", out + "/r"],
        "dump --io": ["dump", model, "--io", out + "/io"],
        "dump --testcases": ["dump", tc, "--testcases", out + "/t"],
        "profile": ["profile", model, "--iter", "1", "-o", out + "/p.json"],
        "check --junit": ["check", tc, "--junit", out + "/j.xml"],
        "check --repro": ["check", tc, "--repro", out + "/r"],
        "compare folders": ["compare", "in/a", "in/b", "--no-timing"],
        "compare folders --json": ["compare", "in/a", "in/b", "--no-timing", "--json"],
        "compare folders --junit": ["compare", "in/a", "in/b", "--no-timing", "--junit", out + "/j.xml"],
        "compare --keep": ["compare", model, model, "--no-timing", "--keep", out + "/k"],
        "pack-testcases": ["pack-testcases", model, "-o", out + "/tc.mge"],
        "tune --save": ["tune", model, "--budget", "3", "--save", out + "/s.json"],
    }
    cases = []
    for command, argv in commands.items():
        apart = ("bad\\xff.mge", "bad\\xfe.mge", "bad\\xfd.mge") if command.startswith("compare folders") else ()
        if "--json" in argv:
            apart = tuple(json.dumps(name)[1:-1] for name in apart)
        cases.append(Case("non-utf8-folders", command, argv, setup + [("dir", out, None)], shown_apart=apart,
                          timeout=120))
    return cases


def round_five_cases():
    return (packed_cases() + long_name_cases() + repro_secret_cases() + image_header_cases() + long_record_cases()
            + unsupervised_load_cases() + version_spelling_cases() + dump_index_cases() + non_utf8_folder_cases())


# ------------------------------------------------- round six: shared tables
# FlatBuffers lets many offsets point at one table, vector or string: a graph
# of a few hundred KB can stand for one whose reading never ends. Each is
# refused in one line before any reader expands it, in well under a second.


def shared_graph(sharing, operators=100_000, list_len=100_000, name_len=0):
    """An FBS v2 model whose `operators` entries all point at one operator
    table (type Elemwise) with a list of `list_len` var ids as its inputs
    (`sharing` "inputs", or "wide vtable": a vtable of 32,765 fields) or its
    outputs ("outputs"), and a name of `name_len` bytes; one middle tensor,
    no outputs."""
    fb = FlatBuilder()
    fields = {0: ("offset", fb.string("Elemwise")), 2: ("offset", fb.string("n" * name_len)),
              8 if sharing == "outputs" else 7: ("offset", fb.u32s([0] * list_len))}
    if sharing == "wide vtable":
        fields[32_764] = ("I", 0)
    oprs = fb.offsets([fb.table(fields)] * operators)
    tensors = fb.offsets([fb.table({0: ("offset", fb.string("x"))})])
    return fb.finish(fb.table({2: ("offset", oprs), 3: ("offset", tensors), 4: ("offset", fb.offsets([]))}), b"mgv2")


def aliased_graph(count=100_000):
    """An FBS v2 model of `count` output vars (one table, original id 0) and
    one more (id 1), and `count` output aliases all of var 1: each alias
    looked up among the outputs one by one is count^2 comparisons."""
    fb = FlatBuilder()
    outputs = fb.offsets([fb.table({1: ("I", 0)})] * count + [fb.table({1: ("I", 1)})])
    aliases = fb.offsets([fb.table({0: ("I", 1), 1: ("offset", fb.string("y"))})] * count)
    return fb.finish(fb.table({2: ("offset", fb.offsets([])), 4: ("offset", outputs), 5: ("offset", aliases)}), b"mgv2")


def shared_table_cases():
    """Graphs whose operators share one list of 100,000 inputs or outputs,
    one vtable of 32,765 fields, one name of 1 MB, and a graph of 100,000
    aliases of one output among 100,000: through every command that reads a
    graph, each refused in one line (exit 2) within the memory bound."""
    models = {
        "inputs": shared_graph("inputs"),
        "outputs": shared_graph("outputs"),
        "wide vtable": shared_graph("wide vtable", list_len=1),
        "one 1 MB name": shared_graph("inputs", operators=20_000, list_len=1, name_len=1_000_000),
        "aliases": aliased_graph(),
    }
    commands = {
        "info": ["info", "in/g.mge"],
        "info --ops": ["info", "in/g.mge", "--ops", "--json"],
        "compare --structure": ["compare", "in/g.mge", "in/g.mge", "--structure"],
        "compare": ["compare", "in/g.mge", "in/g.mge", "--no-timing"],
        "run": ["run", "in/g.mge", "--iter", "1"],
        "run --repro --reduce": ["run", "in/g.mge", "--iter", "1", "--repro", "out/r", "--reduce"],
        "check": ["check", "in/g.mge"],
        "dump --io": ["dump", "in/g.mge", "--io", "out/io"],
        "profile": ["profile", "in/g.mge", "--iter", "1", "-o", "out/p.json"],
        "pack-testcases": ["pack-testcases", "in/g.mge", "-o", "out/tc.mge"],
    }
    cases = []
    for label, data in models.items():
        for command, argv in commands.items():
            cases.append(Case("shared-tables", f"{label}: {command}", argv, [("bytes", "in/g.mge", data)],
                              rss_bound=True, timeout=30, expect_rc=None if label == "aliases" else 2,
                              max_stderr=4096))
    return cases


# ------------------------------------------------- round six: what mge keeps
# A kept file (tune's record of its search, fast-run's algorithms) that is
# damaged, foreign, oversized, not a regular file or not the user's alone is
# a note, and the work is done anew: never followed, trusted or written through.

# Options that clash with every candidate but fast-run: a search of a trial or
# two. A budget of 5 s, not less: under a load, the baseline's calibration
# alone can outlast 3 s (exit 2, the budget ran out).
KEPT_TUNE = ["tune", MODEL, "--budget", "5", "--threads", "1", "--record-comp-seq", "1", "--weight-preprocess",
             "--fuse-preprocess", "--layout", "nchw44", "--graph-opt-level", "2"]
# The same options but tune's, with fast-run: what keeps the algorithms a fast-run candidate finds.
KEPT_FAST_RUN = ["run", MODEL, "-q", "--iter", "1", "--fast-run"] + KEPT_TUNE[4:]
REFUSED_NOTE = "note: the record of tune's last search"
RECORD_USED = ('"source": "recorded"', "search (the record of the search")
OUTSIDE = "in/elsewhere.tune"


def kept(d, pattern):
    """The one file of the case's algorithm cache that ends in `pattern`."""
    folder = os.path.join(d, "home", "mge", "algo-cache")
    found = [os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(pattern)]
    if len(found) != 1:
        raise ValueError(f"the case's first run kept {len(found)} files ending in {pattern}, not one")
    return found[0]


def replaced(pattern, make):
    """A damage that puts what `make(d, path)` makes in place of the kept file."""
    def damage(d):
        path = kept(d, pattern)
        os.remove(path)
        make(d, path)
    return damage


def rewritten(pattern, change):
    """A damage that writes `change(bytes)` over the kept file."""
    def damage(d):
        path = kept(d, pattern)
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(change(data))
    return damage


def edited(change):
    """A damage that edits the record's JSON: `change(record)` on a record
    whose one row is fast-run's, measured as the baseline was (so that a
    record read whole is used where the baseline now takes what it took)."""
    def damage(d):
        path = kept(d, ".tune")
        with open(path) as f:
            record = json.load(f)
        row = json.loads(json.dumps(record["baseline"]))
        row["options"] = [0]
        record["rows"], record["untried"] = [row], []
        text = change(record)
        with open(path, "w") as f:
            f.write(text if isinstance(text, str) else json.dumps(record))
    return damage


def set_in(*steps):
    """An edit that sets each (path, value) of `steps` in the record; a path
    is keys and indexes, `value` raw JSON text where it is bytes (numbers no
    Python float writes)."""
    def change(record):
        raws = {}
        for number, (keys, value) in enumerate(steps):
            target = record
            for key in keys[:-1]:
                target = target[key]
            if isinstance(value, bytes):
                raws[f"@RAW{number}@"] = value.decode()
                value = f"@RAW{number}@"
            target[keys[-1]] = value
        text = json.dumps(record)
        for mark, raw in raws.items():
            text = text.replace(json.dumps(mark), raw)
        return text
    return change


def outside_copy(d, path):
    """The record's bytes in the case's in/ (compared after the run), and the record a link to them."""
    os.symlink(os.path.join(d, OUTSIDE), path)


# ------------------------------------------------- round seven: mge's own work
# Memory that runs out in what mge itself does (a model read, decrypted, a
# feed laid out at a shape) is one line, exit 2, nothing left, and never the
# engine's crash; a --repro folder is claimed before any work, as every
# output is; a sweep's reproducers reproduce, the model kept once.

# The engine crashes as it loads: a case that reaches it says so.
CRASH_AT_LOAD = {"MGE_LITE_LIB": "{D}/in/lite.so", "MGE_FAULT": "segv", "MGE_FAULT_AT": "open"}


def own_memory_cases():
    """Under `ulimit -v`, what a file or an argument sizes: `info` of sparse
    models whose graphs claim hundreds of MiB to GiBs, `compare --structure`
    of sparse encrypted ones (decrypted in place: the file's memory and no
    more), `run --sweep` laying an image out at shapes of gigabytes. Exit 2,
    one line, nothing left in TMPDIR, and no crash blamed on the engine (the
    fault library is the runtime: it would say where it was reached)."""
    v2 = lambda size: struct.pack("<I", size) + b"\0\0\0\0mgv2"
    # FBS v1: magic, feature bits, reserved, then the bytes of its tensor values.
    v1 = lambda size: struct.pack("<IQIQ", 0x4342474D, 0, 0, size)
    models = {
        "v2 claiming 512 MiB": (v2(512 << 20), (512 << 20) + 4),
        "v2 claiming 4 GiB - 1": (v2(2**32 - 1), 2**32 + 3),
        "v1 tensors of 3 GiB": (v1(3 << 30), (3 << 30) + 24),
        "container of a v2 claiming 1 GiB": (b"mgbtest0" + struct.pack("<I", 1) + v2(1 << 30), (1 << 30) + 16),
    }
    setup = BASE_SETUP + [("fault", "in/lite.so", None), ("copy", "in/cat.png", "fixtures/feeds/cat.png")]
    env = {"MGE_LITE_LIB": "{D}/in/lite.so"}
    blamed = ("engine crashed", "crashed (SIGABRT)")
    cases = []
    for kib in (200000, 600000, 1600000):
        limit = shell(f"ulimit -v {kib}")
        for label, (head, length) in models.items():
            for command in (["info", "in/big.mge"], ["info", "in/big.mge", "--json"]):
                cases.append(Case("own-memory", f"ulimit -v {kib}: {' '.join(command)}: {label}", command,
                                  setup + [("sparsehead", "in/big.mge", (head, length))], env=env, shell=limit,
                                  expect_rc=2, not_said=blamed, timeout=120))
        for method in ("RC4_default", "SIMPLE_FAST_RC4_default", "AES_default"):
            for mib in (256, 1024):
                argv = ["compare", "in/big.emod", MODEL, "--structure", "--model-decryption", method]
                cases.append(Case("own-memory", f"ulimit -v {kib}: compare --structure {method} of {mib} MiB", argv,
                                  setup + [("sparse", "in/big.emod", (mib << 20) + 24)], env=env, shell=limit,
                                  expect_rc=2, not_said=blamed, timeout=300))
        for shape in ("1x3x16000x16000", "1x3x4000x60000", "64x3x2000x2000"):
            argv = ["run", MODEL, "-q", "--sweep", f"data:{shape}", "-i", "data:in/cat.png"]
            cases.append(Case("own-memory", f"ulimit -v {kib}: run --sweep data:{shape} of an image", argv, setup,
                              env=env, shell=limit, expect_rc=2, said=("not enough memory for ",), not_said=blamed,
                              timeout=120))
    return cases


def repro_claim_cases():
    """--repro DIR at what can take no folder (a dangling link, a link loop,
    a file or a link to one, a folder holding the model, `-`, inside a folder
    that does not exist) is refused before any work, by run, run --sweep,
    check and compare alike: one line, exit 2, the engine never reached,
    nothing made where the link points. At a link to a folder the reproducer
    goes into that folder."""
    commands = {
        "run": ["run", MODEL, "-q", "--iter", "1"],
        "run --sweep": ["run", MODEL, "-q", "--sweep", "data:1x3x16x16,2x3x16x16"],
        "check": ["check", CONTAINER, "-q"],
        "compare": ["compare", MODEL, MODEL, "-q"],
    }
    places = {
        "a dangling link": ("out/r", [("symlink", "out/r", "nowhere")]),
        "a dangling absolute link": ("out/r", [("symlink", "out/r", "/nonexistent/mge-repro")]),
        "a link to a dangling link": ("out/r", [("symlink", "out/r", "r2"), ("symlink", "out/r2", "nowhere")]),
        "a link loop": ("out/r", [("symlink", "out/r", "r2"), ("symlink", "out/r2", "r")]),
        "a file": ("out/r", [("bytes", "out/r", b"a file\n")]),
        "a link to a file": ("out/r", [("bytes", "out/f", b"a file\n"), ("symlink", "out/r", "f")]),
        "the folder of the model": ("in", []),
        "a file's child": ("out/file/r", [("bytes", "out/file", b"a file\n")]),
        "-": ("-", []),
    }
    setup = BASE_SETUP + [("fault", "in/lite.so", None)]
    cases = []
    for command, argv in commands.items():
        for label, (place, made) in places.items():
            cases.append(Case("repro-claims", f"{command} --repro at {label}", argv + ["--repro", place],
                              setup + made, env=dict(CRASH_AT_LOAD), expect_rc=2, not_said=("engine crashed",),
                              absent=("out/nowhere", "out/no")))
    # A link to a folder takes the reproducer: the engine crashes in its run.
    crash = {"MGE_LITE_LIB": "{D}/in/lite.so", "MGE_FAULT": "segv"}
    for command, argv, folder in (("run", commands["run"], "m"), ("check", commands["check"], "tc"),
                                  ("run --sweep", commands["run --sweep"], "m-2x3x16x16")):
        cases.append(Case("repro-claims", f"{command} --repro at a link to a folder", argv + ["--repro", "out/r"],
                          setup + [("dir", "out/real", None), ("symlink", "out/r", "real")], env=dict(crash),
                          present=(f"out/real/{folder}/command.sh", f"out/real/{folder}/model.mge"), timeout=120))
    return cases


def sweep_repro_cases():
    """A sweep whose shapes fail (crash, abort, exit, hang at --timeout) each
    leaves its folder, the model kept once for all; into a DIR that holds an
    earlier sweep's folders too, which take other names."""
    shapes = "data:1x3x16x16,2x3x16x16,4x3x16x16"
    folders = [f"out/r/m-{batch}x3x16x16" for batch in (1, 2, 4)]
    setup = BASE_SETUP + [("fault", "in/lite.so", None)]
    cases = []
    for fault in ("segv", "abort", "exit", "hang"):
        env = {"MGE_LITE_LIB": "{D}/in/lite.so", "MGE_FAULT": fault}
        argv = ["run", MODEL, "-q", "--timeout", "3", "--sweep", shapes, "--repro", "out/r"]
        present = tuple(f"{folder}/{file}" for folder in folders for file in ("model.mge", "command.sh", "feeds"))
        cases.append(Case("sweep-repro", f"every shape fails ({fault})", argv, setup, env=env, expect_rc=1,
                          present=present, timeout=120))
        earlier = [("bytes", f"{folder}/README.txt", b"an earlier sweep's\n") for folder in folders]
        again = tuple(f"{folder}-2/model.mge" for folder in folders)
        cases.append(Case("sweep-repro", f"every shape fails ({fault}) into a DIR an earlier sweep wrote",
                          argv, setup + earlier, env=env, expect_rc=1, present=again, timeout=120))
    return cases


def engine_error_repro_cases():
    """A model that loads and then fails inside the engine as it runs (a
    reshape to a row count it computes, fed a batch of 2): run --repro keeps
    its folder (with --reduce, the part of the graph that fails too), and a
    sweep the folder of the shape that fails; the engine's error is the
    command's, exit 2 (a sweep's row: exit 1)."""
    setup = [("copy", "in/f.mge", "fixtures/fails_on_size.mge"),
             ("copy", "in/b2.npy", "fixtures/feeds/fails_on_size_data.npy")]
    run = ["run", "in/f.mge", "-q", "--iter", "1", "-i", "data:in/b2.npy", "--repro", "out/r"]
    kept = tuple(f"out/r/f/{file}" for file in ("command.sh", "model.mge", "feeds", "engine.log"))
    said = ("number of elements do not match in reshape",)
    return [
        Case("engine-error-repro", "run --repro of an engine error", run, setup, expect_rc=2,
             present=kept, said=said, timeout=120),
        Case("engine-error-repro", "run --repro --reduce of an engine error", run + ["--reduce"], setup,
             expect_rc=2, present=kept + ("out/r/f/reduced.mge", "out/r/f/full-command.sh"), said=said, timeout=300),
        Case("engine-error-repro", "run --sweep --repro of an engine error",
             ["run", "in/f.mge", "-q", "--iter", "1", "--sweep", "data:1x3x16x16,2x3x16x16", "--repro", "out/r"],
             setup, expect_rc=1, present=("out/r/f-2x3x16x16/command.sh",), absent=("out/r/f-1x3x16x16",),
             timeout=120),
    ]
def new_folder_cases():
    """A set of outputs (--outputs, dump --io, --repro) in folders not made
    yet: they are made, as `mkdir -p` does, once the set is written; a run
    that fails makes none; a file on the way (an input) is refused in one line
    and left as it was."""
    cases = []
    made = {
        "run --outputs": (["run", MODEL, "-q", "--iter", "1", "--outputs", "out/new/deeper/o"], {}, 0,
                          "out/new/deeper/o/feat.npy"),
        "dump --io": (["dump", MODEL, "-q", "--io", "out/new/deeper/io"], {}, 0, "out/new/deeper/io/index.json"),
        "run --repro of a crash": (["run", MODEL, "-q", "--iter", "1", "--repro", "out/new/deeper/r"],
                                   dict(CRASH_AT_LOAD), 2, "out/new/deeper/r/m/README.txt"),
    }
    setup = BASE_SETUP + [("fault", "in/lite.so", None)]
    for label, (argv, env, rc, written) in made.items():
        cases.append(Case("new-folders", f"{label} in new folders", argv, setup, env=env, expect_rc=rc,
                          present=(written,)))
    for label, argv in {
        "run --outputs": ["run", MODEL, "-q", "--iter", "1", "--outputs", "out/new/o"],
        "dump --io": ["dump", MODEL, "-q", "--io", "out/new/io"],
    }.items():
        cases.append(Case("new-folders", f"{label} in new folders, the engine crashing", argv, setup,
                          env=dict(CRASH_AT_LOAD), expect_rc=2, absent=("out/new",)))
        on_the_way = [word.replace("out/new", MODEL) for word in argv]
        cases.append(Case("new-folders", f"{label} below the model's file", on_the_way, setup, expect_rc=2,
                          said=("is not a folder",), absent=(MODEL + "/o", MODEL + "/io")))
    return cases


def engine_error_io_dump_cases():
    """dump --io of a run the engine refuses part way (the reshape of
    fails_on_size.mge fed a batch of 2) in both formats, the var the reshape
    reads named with ESC, BEL, a line break and 100,000 more characters (its
    name reaches index.json, io.txt and the files' names): the vars before
    the failure kept, the one error line escaped and bounded, exit 2."""
    model = lengthened(read_fixture("fixtures/fails_on_size.mge"), b"MUL[0]",
                       b"M\x1b[31mU\x07L\n" + b"x" * 100_000)
    setup = [("bytes", "in/f.mge", model), ("copy", "in/b2.npy", "fixtures/feeds/fails_on_size_data.npy")]
    return [Case("engine-error-io-dump", f"dump --io-format {form} of an engine error, hostile names",
                 ["dump", "in/f.mge", "-q", "-i", "data:in/b2.npy", "--io-format", form, "--io", "out/io"], setup,
                 expect_rc=2, present=("out/io/index.json",), said=("the run failed inside the engine at operator",),
                 hostile_text=True, timeout=120)
            for form in ("bin", "txt")]


def kept_file_cases():
    """tune over a record (and the algorithms beside it) that mge itself
    kept, then damaged: each is a one-line note and a search measured anew,
    exit 0; nothing behind a link is read or written, no FIFO hangs, no
    staged file is left, no control character reaches the terminal."""
    rng = random.Random(SEED)
    garbage = bytes(rng.randrange(256) for _ in range(4096)) + b"\x1b[31m\x07\r\n"
    max_secs = {"secs": 2**64 - 1, "nanos": 999_999_999}
    beyond_secs = b'{"secs": 18446744073709551616, "nanos": 0}'
    hostile = "\x1b[31mred\x07 bell\nsecond line\r\x01 end"

    def copy_outside(d):
        shutil.copyfile(kept(d, ".tune"), os.path.join(d, OUTSIDE))

    def then_all(*damages):
        def damage(d):
            for each in damages:
                each(d)
        return damage

    def chown_nobody(d):
        nobody = 65534
        os.chown(kept(d, ".tune"), nobody, nobody)

    def durations_at_max(record):
        record["took"] = max_secs
        for row in [record["baseline"]] + record["rows"]:
            row["took"] = max_secs
            for name in ("timing", "load", "window"):
                row["measured"][name] = max_secs
        return None

    def fast_run_won(record):
        """Fast-run's row twice as fast as the baseline: taken from the
        record, it runs again, on the algorithms kept beside it."""
        measured = record["rows"][0]["measured"]
        measured["median_ms"] /= 2
        measured["mean_ms"] /= 2
        measured["interval_ms"] = [measured["median_ms"] * 0.99, measured["median_ms"] * 1.01]
        return None

    # label: (damage, refused for sure: a note, and the record not used)
    damages = {
        "record garbage": (rewritten(".tune", lambda data: garbage), True),
        "record truncated to half": (rewritten(".tune", lambda data: data[:len(data) // 2]), True),
        "record empty": (rewritten(".tune", lambda data: b""), True),
        "record 17 MiB (over the 16 MiB bound)": (rewritten(".tune", lambda data: data + b" " * ((17 << 20) - len(data))),
                                                  True),
        "record -> /dev/zero": (replaced(".tune", lambda d, path: os.symlink("/dev/zero", path)), True),
        "record -> a record outside the folder": (then_all(copy_outside, replaced(".tune", outside_copy)), True),
        "record a hard link to a file outside the folder": (
            then_all(copy_outside, replaced(".tune", lambda d, path: os.link(os.path.join(d, OUTSIDE), path))), False),
        "record a FIFO": (replaced(".tune", lambda d, path: os.mkfifo(path)), True),
        "record a folder": (replaced(".tune", lambda d, path: os.mkdir(path)), True),
        "record place out of range": (edited(set_in((["rows", 0, "options"], [1]))), True),
        "record place negative": (edited(set_in((["rows", 0, "options"], [-1]))), True),
        "record place u64::MAX": (edited(set_in((["rows", 0, "options"], [2**64 - 1]))), True),
        "record place beyond u64": (edited(set_in((["rows", 0, "options"], b"[100000000000000000000]"))), True),
        "record place a fraction": (edited(set_in((["rows", 0, "options"], [0.5]))), True),
        "record untried place out of range": (edited(set_in((["untried"], [{"options": [7], "why": {
            "CannotBeatTheBest": {"estimate_ms": 1.0}}}]))), True),
        "record places repeated": (edited(set_in((["rows", 0, "options"], [0, 0]))), True),
        "record durations of u64::MAX seconds": (edited(durations_at_max), True),
        "record durations beyond u64 seconds": (edited(set_in((["took"], beyond_secs))), True),
        "record row median negative": (edited(set_in((["rows", 0, "measured", "median_ms"], -1.0))), True),
        "record row median zero": (edited(set_in((["rows", 0, "measured", "median_ms"], 0.0))), True),
        "record row median NaN (null)": (edited(set_in((["rows", 0, "measured", "median_ms"], None))), True),
        "record row median 1e308": (edited(set_in((["rows", 0, "measured", "median_ms"], 1e308))), True),
        "record row interval and spread at the limits": (edited(set_in(
            (["rows", 0, "measured", "interval_ms"], [-1e308, 1e308]), (["rows", 0, "measured", "spread_percent"], 1e308),
            (["rows", 0, "measured", "other_load_cores"], -1e308), (["rows", 0, "err"], 1e308))), True),
        "record baseline median negative": (edited(set_in((["baseline", "measured", "median_ms"], -1.0))), True),
        "record baseline median zero": (edited(set_in((["baseline", "measured", "median_ms"], 0.0))), True),
        "record baseline median 1e308": (edited(set_in((["baseline", "measured", "median_ms"], 1e308))), True),
        "record ended in the future": (edited(set_in((["ended_s"], 2**64 - 1))), False),
        "record ended at the epoch": (edited(set_in((["ended_s"], 0))), False),
        "record row reason with ESC, BEL and line breaks": (edited(set_in(
            (["rows", 0, "status"], "failed"), (["rows", 0, "measured"], None), (["rows", 0, "reason"], hostile))), False),
        "record key of another model": (edited(lambda record: set_in((["key"], re.sub(
            r"model=[0-9a-f]+", "model=" + "0" * 64, record["key"])))(record)), True),
        "record key with ESC, BEL and line breaks": (edited(lambda record: set_in((["key"], record["key"] + hostile)
                                                                                   )(record)), True),
        "algo-cache folder world-writable": (lambda d: os.chmod(os.path.join(d, "home", "mge", "algo-cache"), 0o777), True),
        "record owned by nobody": (chown_nobody, True),
        "algorithms garbage beside a good record": (then_all(edited(fast_run_won), rewritten(".algo", lambda data: garbage)),
                                                    False),
        "algorithms truncated to half beside a good record": (
            then_all(edited(fast_run_won), rewritten(".algo", lambda data: data[:len(data) // 2])), False),
    }
    # The damages `runtime info` (which sizes the algorithm cache) is given too.
    info_too = ("record -> /dev/zero", "record -> a record outside the folder", "record a FIFO", "record a folder",
                "record 17 MiB (over the 16 MiB bound)", "algo-cache folder world-writable", "record owned by nobody",
                "algorithms garbage beside a good record")
    env = {"MGE_HOME": "{D}/home", "MGE_LITE_LIB": os.path.join(RUNTIME, LITE)}
    cases = []
    for label, (damage, refused) in damages.items():
        made_first = [KEPT_TUNE] + ([KEPT_FAST_RUN] if "algorithms" in label else [])
        hostile_text = "ESC" in label
        unbounded = "/dev/zero" in label or "17 MiB" in label
        # The reason a record's row holds is shown, escaped, where the record is used: only where
        # the baseline takes within 1.2x of the recorded time, which a 35 µs model on a machine
        # whose speed moves over seconds does not always (bench/host_drift.py). Those cases run on
        # the tests' stand-in engine, every run a steady 2 ms sleep.
        row_reason = label.startswith("record row reason")
        setup, case_env = BASE_SETUP, env
        if row_reason:
            setup = BASE_SETUP + [("fault", "in/lite.so", None)]
            case_env = {**env, "MGE_LITE_LIB": "{D}/in/lite.so", "MGE_FAULT_SLOW_VAR": "data", "MGE_FAULT_MS": "2"}
        for command, argv in {"tune": KEPT_TUNE, "tune --json": KEPT_TUNE + ["--json"]}.items():
            shown = ()
            if row_reason:
                shown = (json.dumps(hostile)[1:-1] if "--json" in argv else hostile.encode("unicode_escape").decode(),)
            cases.append(Case("kept-files", f"{label}: {command}", argv, setup, env=case_env, made_first=made_first,
                              then=damage, expect_rc=0, hostile_text=hostile_text, rss_bound=unbounded,
                              shown_apart=shown,
                              said=(REFUSED_NOTE,) if refused else (), not_shown=RECORD_USED if refused else (),
                              only_notes=True, timeout=120))
        if label in info_too:
            cases.append(Case("kept-files", f"{label}: runtime info", ["runtime", "info"], BASE_SETUP, env=env,
                              made_first=made_first, then=damage, expect_rc=0, rss_bound=unbounded, timeout=60))
    return cases


def quantized_scale_cases():
    """fixtures/int8/int8.mge with one quantized dtype's scale made hostile (0,
    negative, NaN, infinite, subnormal, huge) where its bytes lie: the scale of
    the quantizing TypeCvt, of a weight, of a convolution's output and of the
    last TypeCvt (which the engine does not check), through `dump --io`,
    `compare --by-layer` against the float graph and `info --ops`: one line and
    exit 2, or a report; never a panic. (A zero point is a byte: no value is
    out of its range.)"""
    manifest = json.loads(read_fixture("fixtures/int8_manifest.json"))
    data = read_fixture("fixtures/int8/int8.mge")
    hostile = {"zero": 0.0, "negative": -0.5, "NaN": float("nan"), "infinite": float("inf"),
               "subnormal": 1e-45, "huge": 3e38}
    feed = ("copy", "in/data.npy", "fixtures/int8/data.npy")
    cases = []
    for var in ("quant.TypeCvt", "conv1.weight", "conv2.ConvBias", "fc.TypeCvt"):
        stored = struct.pack("<f", manifest["var_scales"]["int8"][var]["scale"])
        assert data.count(stored) == 1, var
        at = data.index(stored)
        for label, scale in hostile.items():
            mutated = data[:at] + struct.pack("<f", scale) + data[at + 4:]
            setup = [("bytes", "in/q.mge", mutated), ("copy", "in/float.mge", "fixtures/int8/float.mge"), feed]
            name = f"{var} scale {label}"
            cases.append(Case("quantized-scale", f"{name} dump --io",
                              ["dump", "--io", "out/io", "in/q.mge", "-i", "data:in/data.npy", "-q"], setup))
            cases.append(Case("quantized-scale", f"{name} compare --by-layer",
                              ["compare", "in/float.mge", "in/q.mge", "-i", "data:in/data.npy", "--by-layer",
                               "--no-timing", "-q"], setup))
            cases.append(Case("quantized-scale", f"{name} info --ops", ["info", "in/q.mge", "--ops", "-q"], setup))
    return cases


def wide_name_cases():
    """Names that would widen every row of a table: an input or an output
    named in 100 KB to 1 MB through the tables of info, run, check, compare,
    profile and run --sweep (a table cuts what it shows: stdout stays small),
    and swept inputs whose names hold ESC, BEL, \\x01 and line breaks (the
    sweep's header shows them escaped: no line of its own)."""
    odd = read_fixture("fixtures/named/odd.mge")
    odd_input = "a\"b'c\\d%s/e".encode()
    odd_output = b"n" * 10000
    feed = [("copy", "in/f.npy", "fixtures/named/feeds/x.npy")]
    models = {
        "output of 1,000,000 characters": lengthened(odd, odd_output, b"o" * 1_000_000),
        "output of 400,000 escaped characters": lengthened(odd, odd_output, b"\x01" * 400_000),
        "input of 1,000,000 characters": lengthened(odd, odd_input, b"i" * 1_000_000),
        # Short enough to name on a command line (one word holds at most 128 KiB).
        "input of 100,000 characters": lengthened(odd, odd_input, b"i" * 100_000),
    }
    extra_outputs = [word for var in ("Convolution", "RELU", "Reduce[0]", "Reduce[1]", "Reduce[2]")
                     for word in ("--extra-output", var)]
    commands = {
        "info": ["info", "in/l.mge"],
        "info --ops": ["info", "in/l.mge", "--ops"],
        "run": ["run", "in/l.mge", "--iter", "1", "-i", "in/f.npy"],
        "run --extra-output x5": ["run", "in/l.mge", "--iter", "1", "-i", "in/f.npy"] + extra_outputs,
        "check": ["check", "in/l.mge"],
        "compare --b-naive": ["compare", "in/l.mge", "--b-naive", "-i", "in/f.npy"],
        "compare with itself": ["compare", "in/l.mge", "in/l.mge", "--no-timing", "-i", "in/f.npy"],
        "profile": ["profile", "in/l.mge", "--iter", "1", "-i", "in/f.npy", "-o", "out/p.json"],
    }
    cases = []
    for label, data in models.items():
        setup = feed + [("bytes", "in/l.mge", data)]
        chosen = dict(commands)
        if label.startswith("input of 100,000"):
            chosen = {"run --sweep": ["run", "in/l.mge", "--iter", "1", "--sweep", "i" * 100_000 + ":1x3x4x4,2x3x4x4"]}
        for command, argv in chosen.items():
            cases.append(Case("wide-names", f"{label}: {command}", argv, setup, timeout=120, max_stdout=64 << 10,
                              max_stderr=1 << 20, hostile_text="escaped" in label))
    manifest = json.loads(read_fixture("fixtures/named_manifest.json"))["models"]
    for key in ("forged_staging", "control"):
        model, name = manifest[key]["model"], manifest[key]["input"]
        setup = [("copy", "in/n.mge", model)]
        sweep = ["run", "in/n.mge", "--iter", "1", "--sweep", name + ":1x3x4x4,2x3x4x4"]
        for command, argv, lines in (("run --sweep", sweep, 5), ("run --sweep --json", sweep + ["--json"], None),
                                     ("run --sweep -v", sweep + ["-v"], 5)):
            cases.append(Case("wide-names", f"{key} input: {command}", argv, setup, timeout=120, hostile_text=True,
                              stdout_lines=lines))
    return cases


class FlatBuilder:
    """Just enough of a FlatBuffers builder to write a graph, back to front
    as src/model/builder.rs writes one: tables of u8, u32 and offsets,
    vectors of u32 and of offsets, strings, bytes. An object is known by its
    distance from the buffer's end."""

    def __init__(self):
        self.reversed = bytearray()

    def align(self, length, align):
        self.reversed.extend(bytes((align - (len(self.reversed) + length) % align) % align))

    def place(self, data):
        self.reversed.extend(data[::-1])
        return len(self.reversed)

    def string(self, text):
        data = text.encode()
        self.align(4 + len(data) + 1, 4)
        return self.place(struct.pack("<I", len(data)) + data + b"\0")

    def bytes(self, data):
        self.align(len(data), 16)
        self.place(data)
        self.align(4, 4)
        return self.place(struct.pack("<I", len(data)))

    def u32s(self, values):
        self.align(4 + 4 * len(values), 4)
        return self.place(struct.pack(f"<I{len(values)}I", len(values), *values))

    def offsets(self, targets):
        length = 4 + 4 * len(targets)
        self.align(length, 4)
        start = len(self.reversed) + length
        return self.place(struct.pack("<I", len(targets)) + b"".join(
            struct.pack("<I", start - 4 - 4 * index - target) for index, target in enumerate(targets)))

    def table(self, fields):
        """`fields`: {index: ("B" | "I" | "offset", value)}; its vtable right before it."""
        layout, size = [], 4
        for index, (kind, value) in sorted(fields.items(), key=lambda field: field[1][0] == "B"):
            width = 1 if kind == "B" else 4
            size = (size + width - 1) // width * width
            layout.append((index, kind, value, size))
            size += width
        size = (size + 3) // 4 * 4
        self.align(size, 4)
        start = len(self.reversed) + size
        table = bytearray(size)
        for index, kind, value, at in layout:
            number = start - at - value if kind == "offset" else value
            struct.pack_into("<B" if kind == "B" else "<I", table, at, number)
        slots = max(fields, default=-1) + 1
        vtable = [4 + 2 * slots, size] + [0] * slots
        for index, _, _, at in layout:
            vtable[2 + index] = at
        struct.pack_into("<i", table, 0, 2 * len(vtable))
        position = self.place(bytes(table))
        self.place(struct.pack(f"<{len(vtable)}H", *vtable))
        return position

    def finish(self, root, identifier):
        """The size-prefixed buffer, as an FBS v2 graph is stored."""
        self.align(12, 16)
        self.place(identifier)
        self.place(struct.pack("<I", len(self.reversed) + 4 - root))
        self.place(struct.pack("<I", len(self.reversed)))
        return bytes(self.reversed[::-1])


@dataclass
class Opr:
    """An operator of a crafted graph: its type and name, the var ids it
    reads and writes, and the value it holds (a constant's)."""
    type: str
    name: str
    inputs: list
    outputs: list
    value: bytes = None


def fbs_v2_graph(operators, var_names, outputs):
    """An FBS v2 graph (schema_v2.fbs) of `operators`, the vars named
    `var_names` (shape (1, 8) each), with the vars `outputs` as its outputs."""
    fb = FlatBuilder()
    tables = []
    for opr in operators:
        fields = {0: ("offset", fb.string(opr.type)), 2: ("offset", fb.string(opr.name)),
                  8: ("offset", fb.u32s(opr.outputs))}
        if opr.inputs:
            fields[7] = ("offset", fb.u32s(opr.inputs))
        if opr.value is not None:
            value = {6: ("offset", fb.bytes(opr.value)), 1: ("offset", fb.u32s([len(opr.value) // 4])),
                     3: ("offset", fb.table({}))}
            fields[11] = ("offset", fb.offsets([fb.table(value)]))
        tables.append(fb.table(fields))
    shape = fb.u32s([1, 8])
    middle = [fb.table({0: ("offset", fb.string(name)), 1: ("offset", shape)}) for name in var_names]
    output_vars = [fb.table({0: ("I", id), 1: ("I", id)}) for id in outputs]
    root = fb.table({1: ("I", 2), 2: ("offset", fb.offsets(tables)), 3: ("offset", fb.offsets(middle)),
                     4: ("offset", fb.offsets(output_vars))})
    return fb.finish(root, b"mgv2")


def chain_graph(links, name=lambda at: f"RELU[{at}]", type_of=lambda at: "Elemwise", reversed_order=False,
                factor=lambda at: None):
    """A chain of `links` operators after the input `data`, each reading the
    one before it and, where `factor(at)` gives a value, a constant of its
    own; named `name(at)` (operator and var). The output is the last link's
    var. `reversed_order` lists the links last first: each reads an operator
    listed after it, which the file order does not run before it."""
    operators, names = [Opr("Host2DeviceCopy", "data", [], [0])], ["data"]
    previous = 0
    for at in range(links):
        inputs = [previous]
        value = factor(at)
        if value is not None:
            operators.append(Opr("ImmutableTensor", f"w{at}", [], [len(names)], struct.pack("<8f", *[value] * 8)))
            names.append(f"w{at}")
            inputs.append(len(names) - 1)
        operators.append(Opr(type_of(at), name(at), inputs, [len(names)]))
        previous = len(names)
        names.append(name(at))
    if reversed_order:
        operators = operators[:1] + operators[:0:-1]
    return fbs_v2_graph(operators, names, [previous])


def fan_graph(count, name, type_of):
    """`count` operators that each read the input `data`, every var an output."""
    operators = [Opr("Host2DeviceCopy", "data", [], [0])]
    operators += [Opr(type_of(at), name(at), [0], [1 + at]) for at in range(count)]
    return fbs_v2_graph(operators, ["data"] + [name(at) for at in range(count)], list(range(1, count + 1)))


def wide_diff_cases():
    """compare --structure of graphs of 50,000 and 60,000 operators: chains
    whose names the engine made up (matched by topology) against themselves,
    with an operator inserted and with every weight changed; operators that
    all hold one name, that are all of one type and read one input, listed
    in reverse order, of 50,000 types each. Each is a diff in seconds (a
    matching of every operator with every other took minutes): exit 0 or 1."""
    big = 50_000

    def inserted(at):
        return "Reduce" if at == big // 2 else "Elemwise"

    pairs = {
        "chain of 50000 against itself": (lambda: chain_graph(big),) * 2,
        "chain of 60000 against itself": (lambda: chain_graph(60_000),) * 2,
        "chain of 50000 against one with an operator of another type in its middle": (
            lambda: chain_graph(big), lambda: chain_graph(big, type_of=inserted)),
        "chain of 50000 with weights against one whose every weight differs": (
            lambda: chain_graph(big, factor=lambda at: 2.0), lambda: chain_graph(big, factor=lambda at: 3.0)),
        "chain of 50000 operators all named alike against itself": (lambda: chain_graph(big, name=lambda at: "x"),) * 2,
        "chain of 50000 listed last first against itself": (lambda: chain_graph(big, reversed_order=True),) * 2,
        "chain of 50000 listed last first against one in order": (
            lambda: chain_graph(big, reversed_order=True), lambda: chain_graph(big)),
        "50000 operators of one type on one input, every var an output named alike, against itself": (
            lambda: fan_graph(big, lambda at: "x", lambda at: "Elemwise"),) * 2,
        "50000 operators of one type on one input against 50000 named apart": (
            lambda: fan_graph(big, lambda at: "x", lambda at: "Elemwise"),
            lambda: fan_graph(big, lambda at: f"x{at}", lambda at: "Elemwise")),
        "50000 operators of 50000 types against 50000 of 50000 others": (
            lambda: fan_graph(big, lambda at: f"x{at}", lambda at: f"A{at}"),
            lambda: fan_graph(big, lambda at: f"x{at}", lambda at: f"B{at}")),
    }
    # Made once for the two cases of a pair (a graph of 50,000 operators takes Python seconds).
    @functools.lru_cache(maxsize=1)
    def graphs(label):
        make_a, make_b = pairs[label]
        a = make_a()
        return a, a if make_b is make_a else make_b()

    cases = []
    for label in pairs:
        def write(d, label=label):
            for path, graph in zip(("in/a.mge", "in/b.mge"), graphs(label)):
                with open(os.path.join(d, path), "wb") as f:
                    f.write(graph)
        for suffix in ([], ["--json"]):
            cases.append(Case("wide-diffs", f"{label}{' --json' if suffix else ''}",
                              ["compare", "--structure", "in/a.mge", "in/b.mge"] + suffix, then=write, timeout=60))
    return cases


# ------------------------------------------------- --reduce's cuts
# A graph --reduce cuts is the model's word: var ids that do not hold are
# refused in a line, never a panic; a failure that comes and goes is said
# flaky, and no part is claimed; a part is a model of its own, its size the part's.

REDUCE_MODEL = "fixtures/reduce_nan.mge"


def reading(model, var, field=7):
    """The plain FBS v2 `model` with the first id of field `field` (7: the
    inputs, 8: the outputs) of its first operator that reads a var set to `var`."""
    u32 = lambda at: struct.unpack_from("<I", model, at)[0]  # noqa: E731

    def target(table, index):
        vtable = table - struct.unpack_from("<i", model, table)[0]
        entry = 4 + 2 * index
        offset = struct.unpack_from("<H", model, vtable + entry)[0] if entry < struct.unpack_from("<H", model, vtable)[0] else 0
        return table + offset + u32(table + offset) if offset else None

    operators = target(4 + u32(4), 2)
    for slot in range(operators + 4, operators + 4 + 4 * u32(operators), 4):
        if target(slot + u32(slot), 7):
            ids = target(slot + u32(slot), field)
            return model[:ids + 4] + struct.pack("<I", var) + model[ids + 8:]
    raise ValueError("no operator of the model reads a var")


def reduce_cut_cases():
    """`--repro DIR --reduce` on crafted graphs whose operators read or
    write vars that do not hold (the stand-in runs them and fails, the real
    engine refuses them): the failure in a line, exit 2, the folder without a
    reduced.mge; on failures that come and go (the stand-in's
    MGE_FAULT_PATTERN, counted in the case's folder): said flaky, no
    reduced.mge, where a steady one has it; and reduced.mge's size: the part's."""
    model = read_fixture(REDUCE_MODEL)
    reduce = ["-q", "--iter", "1", "--repro", "out/r", "--reduce"]
    stand_in = ["--lite-lib", "in/lite.so"]
    setup = BASE_SETUP + [("fault", "in/lite.so", None)]
    folder = "out/r/m/"
    cases = []
    # The first computing operator writes var 4; the last operator var 16.
    for label, var in {"999": 999, "4294967295": 0xFFFFFFFF, "a var written later": 16, "its own output": 4}.items():
        crafted = setup + [("bytes", MODEL, reading(model, var))]
        for fault, extra in {"segv": [], "abort": [], "hang": ["--timeout", "1"]}.items():
            # The library by its absolute path here, by a relative one below: the tries run in the folder.
            env = {"MGE_FAULT": fault, "MGE_LITE_LIB": "{D}/in/lite.so"}
            cases.append(Case("reduce-cuts", f"an input reads {label}: {fault}", ["run", MODEL] + extra + reduce,
                              crafted, env=env, expect_rc=2, present=(folder + "README.txt",),
                              absent=(folder + "reduced.mge",), timeout=60))
        cases.append(Case("reduce-cuts", f"an input reads {label}: the engine", ["run", MODEL] + reduce, crafted,
                          expect_rc=2, absent=(folder + "reduced.mge",), timeout=60))
    for var in (999, 0xFFFFFFFF):
        crafted = setup + [("bytes", MODEL, reading(model, var, field=8))]
        for engine, extra in {"the stand-in": stand_in, "the engine": []}.items():
            cases.append(Case("reduce-cuts", f"an output writes {var}: {engine}", ["run", MODEL] + extra + reduce,
                              crafted, env={"MGE_FAULT": "segv"}, expect_rc=2, absent=("out/r",), timeout=60))
    steady = setup + [("copy", MODEL, REDUCE_MODEL)]
    # 1: the command's run, then the reproduction from the folder, then each part that holds LOG twice.
    patterns = {"10": True, "1101": True, "110": True, "1110": True, "1": False, "1111110": False}
    for pattern, flaky in patterns.items():
        env = {"MGE_FAULT_VAR": "LOG", "MGE_FAULT_PATTERN": pattern, "MGE_FAULT_COUNTER": "{D}/count"}
        for fault, extra in {"segv": [], "abort": [], "hang": ["--timeout", "1"]}.items():
            verdict = (folder + "reduced.mge",)
            cases.append(Case("reduce-cuts", f"{fault} now and then ({pattern})", ["run", MODEL] + stand_in + extra
                              + reduce, steady, env=dict(env, MGE_FAULT=fault), expect_rc=2,
                              present=(folder + "README.txt",) + (() if flaky else verdict),
                              absent=verdict if flaky else (), said=("is flaky",) if flaky else (), timeout=120))
    hidden = {"MGE_FAULT": "segv", "MGE_FAULT_VAR": "LOG", "MGE_FAULT_SLOW_VAR": "ADD", "MGE_FAULT_MS": "60000"}
    cases.append(Case("reduce-cuts", "a crash a deadline hid", ["run", MODEL] + stand_in + ["--timeout", "1"] + reduce,
                      steady, env=hidden, expect_rc=2, present=(folder + "reduced.mge",), timeout=120))
    # divergence_a cut at its first convolution: without the second's weights (1,752 bytes of its 5,112).
    part = setup + [("copy", MODEL, "fixtures/divergence_a.mge")]
    cases.append(Case("reduce-cuts", "a part's size", ["run", MODEL] + stand_in + reduce, part,
                      env={"MGE_FAULT": "segv", "MGE_FAULT_VAR": "RELU[0]"}, expect_rc=2,
                      at_most=((folder + "reduced.mge", 5112 - 1752),), timeout=60))
    nan = setup + [("copy", MODEL, REDUCE_MODEL), ("copy", "in/d.npy", "fixtures/feeds/reduce_data.npy")]
    cases.append(Case("reduce-cuts", "a part's size: the engine's NaN", ["run", MODEL, "-i", "data:in/d.npy",
                                                                          "--check-finite"] + reduce,
                      nan, expect_rc=1, at_most=((folder + "reduced.mge", len(model) - 1),), timeout=60))
    return cases

# ---------------------------------------------------------------- running


def prepare(d, setup, subs=None):
    """Makes the case's files; what argv and the environment name as
    `{NAME}` (a path known only once made) goes into `subs`."""
    for op, rel, arg in setup:
        if op == "longpath":
            subs[rel] = long_path(d, arg)
            continue
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
        elif op == "script":
            with open(path, "wb") as f:
                f.write(arg)
            os.chmod(path, 0o755)
        elif op == "dir":
            os.makedirs(path, exist_ok=True)
        elif op == "sparse":
            with open(path, "wb") as f:
                f.truncate(arg)
        elif op == "sparsehead":
            head, length = arg
            with open(path, "wb") as f:
                f.write(head)
                f.truncate(length)
        elif op == "remove":
            os.remove(path)
        elif op == "removetree":
            shutil.rmtree(path)
        elif op == "runtime":
            # every file a symlink to the installed runtime's, folders real
            for folder, _, names in os.walk(RUNTIME):
                target_folder = os.path.join(path, "mge", "runtime", "1.13.0", os.path.relpath(folder, RUNTIME))
                os.makedirs(target_folder, exist_ok=True)
                for name in names:
                    os.symlink(os.path.join(folder, name), os.path.join(target_folder, name))
            # a damage replaces a file: never write through a link into the real runtime
        elif op == "reader":
            pass  # started with the command
        elif op == "plant":
            plant(d, path, arg)
        elif op == "planted":
            shutil.copyfile(PLANTED_LIB, path)
        elif op == "fault":
            shutil.copyfile(FAULT_LIB, path)
        elif op == "faultwheel":
            with open(path, "wb") as f:
                f.write(wheel_of(fault_library_bytes()))
        elif op == "standin":
            stand_in_install(path)
        elif op == "pack":
            pack = packed_with([substitute(word, subs) if isinstance(word, str) else word for word in arg])
            if pack is None:
                raise ValueError(f"the options {arg!r} do not fit the pack's info")
            with open(path, "wb") as f:
                f.write(pack)
        elif op == "chmod":
            os.makedirs(path, exist_ok=True)
            os.chmod(path, arg)
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
            try:
                mode = os.lstat(path).st_mode
            except OSError:  # past PATH_MAX: the deep cases' own folders
                continue
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


def copy_out(fd, file):
    """Copies what the pipe `fd` carries into `file` until it closes."""
    with os.fdopen(fd, "rb") as pipe:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            file.write(chunk)


def substitute(text, subs):
    for key, value in subs.items():
        text = text.replace(key, value)
    return text


def wait_gone(session, tag, grace=3.0):
    """The case's processes still running after `grace` seconds, killed."""
    until = time.monotonic() + grace
    while True:
        left = case_processes(session, tag)
        if not left or time.monotonic() > until:
            break
        time.sleep(0.05)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def make_first(case, d, env, deadline, subs):
    """Runs the case's `made_first` command lines, then its `then`; what
    failed, for the case's failures (None where all went well)."""
    for number, argv in enumerate(case.made_first or []):
        with open(os.path.join(d, f"made-first-{number}"), "wb") as log:
            made = subprocess.run(deadline + [MGE] + [substitute(a, subs) for a in argv], cwd=d, env=env,
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        if made.returncode != 0:
            return f"the case's own preparation failed (mge {' '.join(argv[:1])} exited {made.returncode})"
    if case.then:
        case.then(d)
    return None


def run_case(index, case, work):
    d = os.path.join(work, f"case{index:05d}")
    os.makedirs(os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "out"))
    os.makedirs(os.path.join(d, "tmp"))
    subs = {"{D}": d}
    setup = []
    for op, rel, arg in case.setup:
        if rel and rel.startswith("home/") and op in ("bytes", "head", "dir", "fifo", "symlink", "flipped"):
            path = os.path.join(d, rel)
            if os.path.islink(path):
                os.remove(path)
        setup.append((op, rel, arg))
        prepare(d, [(op, rel, arg)], subs)
    tag = f"SWEEP_CASE_TAG={os.path.basename(work)}-{index}"
    env = dict(os.environ)
    env.pop("MGE_LITE_LIB", None)
    env.pop("RUST_BACKTRACE", None)
    env["TMPDIR"] = os.path.join(d, "tmp")
    env["SWEEP_CASE_TAG"] = tag.split("=", 1)[1]
    env["D"] = d
    for key, value in case.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = substitute(value, subs)
    argv = [MGE] + [substitute(a, subs) for a in case.argv]
    rss_file = os.path.join(d, "rss")
    timed = ["/usr/bin/time", "-f", "%M", "-o", rss_file]
    # by absolute path: the case's PATH may be empty or relative
    deadline = ["/usr/bin/timeout", "-k", "5", str(case.timeout)]
    made_first_failed = make_first(case, d, env, deadline, subs)
    inputs_before = snapshot(os.path.join(d, "in"))
    if case.namespace:
        script = f'{case.namespace} || exit 97; "$@"; rc=$?; ls -lAR "$D/out" "$D/tmp" > "$D/inner-listing" 2>&1; exit $rc'
        command = deadline + timed + ["/usr/bin/unshare", "-m", "/bin/sh", "-c", script, "sh"] + argv
    elif case.shell:
        command = deadline + timed + ["/bin/bash", "-c", case.shell, "bash"] + argv
    else:
        command = deadline + timed + argv
    readers = []
    for op, rel, _ in setup:
        if op == "reader":
            readers.append(subprocess.Popen(["sh", "-c", 'exec cat "$1" > /dev/null', "sh", os.path.join(d, rel)]))
    started = time.monotonic()
    with open(os.path.join(d, "stdout"), "wb") as out, open(os.path.join(d, "stderr"), "wb") as err, open(case.stdin, "rb") as stdin:
        stderr_target = err
        collector = None
        if case.stderr in ("closed-pipe", "pipe"):
            read_end, stderr_target = os.pipe()
            if case.stderr == "closed-pipe":
                os.close(read_end)
            else:
                collector = threading.Thread(target=copy_out, args=(read_end, err))
        proc = subprocess.Popen(command, cwd=d, env=env, stdin=stdin, stdout=out, stderr=stderr_target, start_new_session=True)
        if stderr_target is not err:
            os.close(stderr_target)
        if collector:
            collector.start()
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
        if collector:
            collector.join(timeout=10)
    elapsed = time.monotonic() - started
    # nothing the case started (children, pip, a watcher) outlives it
    left = wait_gone(proc.pid, tag.encode())
    followup_rc = None
    if case.followup:
        followup_env = {**env, **{k: substitute(v, subs) for k, v in case.followup_env.items()}}
        followup = subprocess.run(deadline + [MGE] + case.followup, cwd=d, env=followup_env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        followup_rc = followup.returncode
        left += wait_gone(-1, tag.encode())
    for reader in readers:
        reader.kill()
        reader.wait()
    with open(os.path.join(d, "stderr"), "rb") as f:
        stderr_bytes = f.read()
    stderr = stderr_bytes.decode("utf-8", "replace")
    with open(os.path.join(d, "stdout"), "rb") as f:
        stdout_bytes = f.read()
    stdout_len = len(stdout_bytes)
    rss = None
    try:
        with open(rss_file) as f:
            lines = [line for line in f.read().splitlines() if line.strip().isdigit()]
            rss = int(lines[-1]) if lines else None
    except OSError:
        pass
    failures = []
    sent_signal = case.signal[0] if case.signal and sent else None
    if rc == 124 or elapsed > case.timeout:
        failures.append("hang")
    elif rc == 101:
        failures.append("panic")
    elif sent_signal and rc == 128 + sent_signal and (sent_signal == signal.SIGKILL or "interrupted" in stderr):
        pass  # died of the signal it was sent, as a shell expects, after cleaning up
    elif case.limit_signals and rc - 128 in case.limit_signals:
        pass  # the case's own CPU limit ended mge, as `kill -9` would
    elif case.loader_may_fail and rc == 127 and "error while loading shared libraries" in stderr:
        pass  # the dynamic loader's, before mge runs
    elif case.loader_may_fail and rc == 128 + signal.SIGSEGV and not stderr and rss is not None and rss < 8 << 10:
        pass  # the dynamic loader's stack overflow, before mge runs (counted in the notes)
    elif rc == 97 and (case.shell or case.namespace):
        failures.append("the case's own script failed (exit 97)")
    elif rc > 128:
        failures.append(f"signal {rc - 128}")
    elif rc not in (0, 1, 2):
        failures.append(f"exit {rc}")
    if made_first_failed:
        failures.append(made_first_failed)
    if case.expect_rc is not None and rc != case.expect_rc and not failures:
        failures.append(f"exit {rc}, not {case.expect_rc}")
    if "panicked" in stderr or "stack backtrace" in stderr or "RUST_BACKTRACE" in stderr:
        failures.append("panic")
    stderr_seen = case.stderr in ("file", "pipe") and not re.search(r"2>&-|2<>", case.shell)
    if rc in (1, 2) and stderr_seen and not stderr.strip():
        failures.append("silent exit")
    if case.hostile_text:
        raw = sorted({repr(chr(c)) for c in b"\x1b\x07\x01\r" if bytes([c]) in stderr_bytes})
        if raw:
            failures.append("raw control characters on stderr: " + " ".join(raw))
        if not re.search(r"--io-format|/dev/stdout|--json", " ".join(case.argv)):
            raw = sorted({repr(chr(c)) for c in b"\x1b\x07\x01\r" if bytes([c]) in stdout_bytes})
            if raw:
                failures.append("raw control characters on stdout: " + " ".join(raw))
        if rc == 0 and any(line.startswith("mge: error") for line in stderr.splitlines()):
            failures.append("an error line in a run that passed")
    for rel in case.absent:
        if os.path.lexists(os.path.join(d, rel)):
            failures.append(f"written though it must not be: {rel}")
    for rel in case.present:
        if not os.path.exists(os.path.join(d, rel)):
            failures.append(f"not written: {rel}")
    for rel, most in case.at_most:
        path = os.path.join(d, rel)
        if not os.path.isfile(path):
            failures.append(f"not written: {rel}")
        elif os.path.getsize(path) > most:
            failures.append(f"{rel} holds {os.path.getsize(path)} bytes, more than {most}")
    if case.secrets:
        held = [os.path.relpath(os.path.join(base, name), d) for base, _, names in os.walk(os.path.join(d, "out"))
                for name in names if secret_in(os.path.join(base, name), case.secrets)]
        held += [stream for stream, data in (("stdout", stdout_bytes), ("stderr", stderr_bytes))
                 if any(secret.encode() in data for secret in case.secrets)]
        if held:
            failures.append("a secret written: " + ", ".join(held[:5]))
    if case.max_stderr is not None and len(stderr_bytes) > case.max_stderr:
        failures.append(f"stderr of {len(stderr_bytes)} bytes")
    if case.max_stdout is not None and stdout_len > case.max_stdout:
        failures.append(f"stdout of {stdout_len} bytes")
    stdout_lines = stdout_bytes.count(b"\n")
    if case.stdout_lines is not None and rc == 0 and stdout_lines != case.stdout_lines:
        failures.append(f"stdout of {stdout_lines} lines, not {case.stdout_lines}")
    used = [text for text in case.not_shown if text.encode() in stdout_bytes]
    if used:
        failures.append("shown though it must not be: " + ", ".join(used))
    unsaid = [text for text in case.said if text.encode() not in stderr_bytes]
    if unsaid:
        failures.append("not said on stderr: " + ", ".join(unsaid))
    missaid = [text for text in case.not_said if text.encode() in stderr_bytes]
    if missaid:
        failures.append("said on stderr though it must not be: " + ", ".join(missaid))
    stray = [line for line in stderr.splitlines() if not line.startswith("note: ")]
    if case.only_notes and stray:
        failures.append("more than one-line notes on stderr: " + stray[0][:80])
    merged = [name for name in case.shown_apart if stdout_bytes.count(name.encode()) != 1]
    if merged and rc in (0, 1):
        failures.append("not shown apart once each: " + ", ".join(merged))
    planted = [m for m in planted_markers(d) if m not in case.allowed_plants]
    if planted:
        failures.append("planted code ran: " + ", ".join(planted))
    inputs_after = snapshot(os.path.join(d, "in"))
    changed = sorted(k for k in inputs_before if inputs_after.get(k) != inputs_before[k] and k not in case.updated)
    if changed:
        failures.append("overwritten input: " + ", ".join(changed[:5]))
    leftovers = [os.path.join("tmp", name) for name in os.listdir(os.path.join(d, "tmp")) if name not in ("fill", "ww")]
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
    if left:
        failures.append("processes left running: " + ", ".join(f"{comm}({pid})" for pid, comm in left[:5]))
    if case.rss_bound and rss is not None and rss > RSS_LIMIT_KB:
        failures.append(f"memory {rss // 1024} MB")
    error_lines = [line for line in stderr.splitlines() if line.startswith("mge: error:") or line.startswith("error:")]
    notes = []
    if "engine crashed" in stderr:
        notes.append("engine crashed")
    if case.signal and sent is None:
        notes.append("finished before the signal")
    if case.loader_may_fail and rc in (127, 128 + signal.SIGSEGV):
        notes.append("the dynamic loader failed before mge ran")
    if any(name == "core" or name.startswith("core.") for name in os.listdir(d)):
        notes.append("core file")
    if followup_rc not in (None, 0):
        notes.append(f"the next run exited {followup_rc}")

    def shown(a):
        a = os.fsencode(a).decode("utf-8", "backslashreplace") if isinstance(a, str) else a
        return shlex.quote(a if len(a) < 200 else a[:60] + "...")

    result = {
        "index": index, "group": case.group, "name": case.name, "rc": rc, "rss_kb": rss, "seconds": round(elapsed, 2),
        "failures": failures, "notes": notes, "signal_sent": sent,
        "command": " ".join(shown(a) for a in ["mge"] + case.argv),
        "env": {k: shown(substitute(v, subs)) if v is not None else "(unset)" for k, v in case.env.items()},
        "shell": case.shell, "namespace": case.namespace, "stdout_bytes": stdout_len,
        "stderr_head": "\n".join(stderr.splitlines()[:3])[:400], "error_lines": len(error_lines),
        "folder": d,
    }
    return result


def zoo_graph_cases():
    """Graphs made as the model zoo's (fused ConvBias, int8, NMS with shapes known
    only at run time, bool masks), their bytes mutated, through `info --ops` and
    `compare --structure`; an io dump whose index names hostile outputs (not
    strings, a var's name with control characters, thousands of them), compared:
    one line and exit 2, or a report; never a panic or a control character shown."""
    rng = random.Random(SEED + 43)
    cases = []
    for key in ("detector", "int8", "resnet"):
        data = read_fixture(f"fixtures/zoo/{key}.mge")
        for label, mutated in rng.sample(mutants(data, rng, 256), 4):
            setup = [("bytes", "in/z.mge", mutated), ("copy", "in/ref.mge", f"fixtures/zoo/{key}.mge")]
            cases.append(Case("zoo", f"{key} {label} info --ops", ["info", "in/z.mge", "--ops", "-q"], setup))
            cases.append(Case("zoo", f"{key} {label} compare --structure",
                              ["compare", "--structure", "in/ref.mge", "in/z.mge"], setup))
    def var(name, id, inputs, file):
        return {"name": name, "id": id, "operator": f"op{id}", "type": "Elemwise" if inputs else "Host2DeviceCopy",
                "inputs": inputs, "shape": [2], "dtype": "float32", "file": file}

    index = {"model": "m.mge", "format": "bin",
             "vars": [var("x", 1, [], "0000_x.npy"), var("y", 2, ["x"], "0001_y.npy"), var("z", 3, ["x"], "0002_z.npy")]}
    hostile = "\x1b[31mred\x07 bell\nsecond line"
    for label, outputs in (("not strings", [1, None, {"a": 2}]), ("not a list", "y"),
                           ("hostile names", [hostile, "y"]), ("ten thousand", [f"out{i}" for i in range(10000)])):
        setup = []
        for side, z in (("a", b"\0\0\0\0\0\0\0\0"), ("b", b"\0\0\x80\x7f\0\0\0\0")):
            setup += [("bytes", f"in/{side}/index.json", json.dumps(dict(index, outputs=outputs)).encode()),
                      ("bytes", f"in/{side}/0000_x.npy", npy(shape=(2,), data=bytes(8))),
                      ("bytes", f"in/{side}/0001_y.npy", npy(shape=(2,), data=bytes(8))),
                      ("bytes", f"in/{side}/0002_z.npy", npy(shape=(2,), data=z))]
        cases.append(Case("zoo", f"iodump outputs {label} compare", ["compare", "in/a", "in/b"], setup,
                          hostile_text=label == "hostile names"))
    return cases


def from_python_cases():
    """runtime install --from-python PYTHON where PYTHON is no Python, or
    one whose answer lies (another version, a relative or root folder, a
    runtime file that is a link, a FIFO or a device), floods or hangs:
    one line, exit 2, nothing installed, nothing blocks."""
    here = b'#!/bin/sh\nhere=$(cd "$(dirname "$0")" && pwd)\n'

    def answering(version, lite):
        return here + b"printf 'mge-python-answer {\"megengine\": \"%s\", \"megenginelite\": \"%s\"}\\n' " + version + b" " + lite + b"\n"

    site = "in/site/megenginelite/libs"
    pythons = {
        "a FIFO": ("in/fifo", [("fifo", "in/fifo", None)]),
        "/dev/null": ("/dev/null", []),
        "a folder": ("in", []),
        "not executable": ("in/py", [("bytes", "in/py", b"#!/bin/sh\n")]),
        "no such file": ("in/none", []),
        "a shell script": ("in/py", [("script", "in/py", b"#!/bin/sh\necho Python 3.10.13\n")]),
        "answers with control characters": ("in/py", [("script", "in/py", b"#!/bin/sh\nprintf 'mge-python-answer \\033[31m\\a{}\\r\\n'\n")]),
        "floods": ("in/py", [("script", "in/py", b"#!/bin/sh\nexec yes mge-python-answer\n")]),
        "hangs": ("in/py", [("script", "in/py", b"#!/bin/sh\nexec sleep 1000\n")]),
        "hangs, its child holding stdout": ("in/py", [("script", "in/py", b"#!/bin/sh\nsleep 1000 &\nexit 0\n")]),
        "another version": ("in/py", [("script", "in/py", answering(b"1.12.0", b'"$here/site/megenginelite"'))]),
        "a version that is a path": ("in/py", [("script", "in/py", answering(b"../../x", b'"$here/site/megenginelite"'))]),
        "a relative megenginelite": ("in/py", [("script", "in/py", answering(b"1.13.0", b"site/megenginelite"))]),
        "megenginelite at /": ("in/py", [("script", "in/py", answering(b"1.13.0", b"/"))]),
        "no Lite library": ("in/py", [("dir", site, None), ("script", "in/py", answering(b"1.13.0", b'"$here/site/megenginelite"'))]),
        "Lite library -> /dev/zero": ("in/py", [("dir", site, None), ("symlink", f"in/site/{LITE}", "/dev/zero"),
                                               ("script", "in/py", answering(b"1.13.0", b'"$here/site/megenginelite"'))]),
        "Lite library a FIFO": ("in/py", [("dir", site, None), ("fifo", f"in/site/{LITE}", None),
                                         ("script", "in/py", answering(b"1.13.0", b'"$here/site/megenginelite"'))]),
        "libs -> elsewhere": ("in/py", [("dir", "in/elsewhere", None), ("fault", f"in/elsewhere/{os.path.basename(LITE)}", None),
                                       ("dir", "in/site/megenginelite", None), ("symlink", site, "../../elsewhere"),
                                       ("script", "in/py", answering(b"1.13.0", b'"$here/site/megenginelite"'))]),
    }
    cases = []
    for label, (python, setup) in pythons.items():
        python = python if python.startswith("/") else "{D}/" + python
        cases.append(Case("from-python", label, ["runtime", "install", "--from-python", python], BASE_SETUP + setup,
                          env={"MGE_HOME": "{D}/home", "PIP_NO_INDEX": "1", "VIRTUAL_ENV": None},
                          expect_rc=2, absent=("home/runtime/1.13.0",), timeout=60))
    return cases


def round_six_cases():
    """What mge keeps; graphs, names and failures made to make its work grow
    or mislead it; its own memory, the claim of --repro, a sweep's reproducers."""
    return (kept_file_cases()
            + engine_error_io_dump_cases()
            + new_folder_cases()
            + from_python_cases()
            + shared_table_cases()
            + wide_name_cases()
            + wide_diff_cases()
            + reduce_cut_cases()
            + own_memory_cases()
            + repro_claim_cases()
            + sweep_repro_cases()
            + zoo_graph_cases()
            + engine_error_repro_cases())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose group or name holds this")
    parser.add_argument("--groups", default="", help="run these groups only (comma-separated: paths,fds,...)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep every case's folder, not only the failed ones'")
    parser.add_argument("--work", help="the folder for the cases (default: a new one in /tmp)")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--mge", help="the binary to sweep (default: target/release/mge)")
    args = parser.parse_args()
    if args.mge:
        global MGE
        MGE = os.path.abspath(args.mge)
    if not os.access(MGE, os.X_OK):
        sys.exit(f"{MGE} is missing: cargo build --release first")
    cases = (path_cases() + mutation_cases() + feed_cases() + number_cases() + output_cases() + file_cases()
             + disk_cases() + runtime_cases() + signal_cases()
             + cwd_cases() + env_cases() + fd_cases() + limit_cases() + name_cases() + odd_path_cases()
             + round_five_cases() + round_six_cases() + quantized_scale_cases())
    cases = [c for c in cases if args.only in c.group or args.only in c.name]
    if args.groups:
        cases = [c for c in cases if c.group in args.groups.split(",")]
    if args.list:
        for c in cases:
            print(c.group, "|", c.name.encode("unicode_escape").decode())
        groups = {}
        for c in cases:
            groups[c.group] = groups.get(c.group, 0) + 1
        print(len(cases), "cases:", ", ".join(f"{g} {n}" for g, n in groups.items()))
        return
    work = args.work or tempfile.mkdtemp(prefix="hostile-sweep-")
    os.makedirs(work, exist_ok=True)
    build_planted_library(work)
    build_fault_library(work)
    home_cache = os.path.expanduser("~/.cache/mge")

    def home_entries():
        # algo-cache/ is where any --fast-run keeps what it profiled, a case's as a user's.
        entries = os.listdir(home_cache) if os.path.isdir(home_cache) else []
        return sorted(e for e in entries if e != "algo-cache")

    home_before = home_entries()
    runtime_before = snapshot_sizes(RUNTIME)
    tmp_before = set(os.listdir("/tmp"))
    print(f"{len(cases)} cases in {work}", file=sys.stderr)
    results = []
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, i, c, work): c for i, c in enumerate(cases)}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            try:
                result = future.result()
            except Exception as err:  # the sweep's own fault: said, and counted as a failure
                case = futures[future]
                result = {"index": -1, "group": case.group, "name": case.name, "rc": None, "rss_kb": None, "seconds": 0,
                          "failures": [f"the sweep could not run the case: {err!r}"], "notes": [], "signal_sent": None,
                          "command": "", "env": {}, "shell": "", "namespace": "", "stdout_bytes": 0, "stderr_head": "",
                          "error_lines": 0, "folder": ""}
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
    home_after = home_entries()
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
            rc = -1 if r["rc"] is None else r["rc"]
            codes[rc] = codes.get(rc, 0) + 1
        peak = max((r["rss_kb"] or 0 for r in rs), default=0)
        print(f"  {group:9} {len(rs):5}  " + "  ".join(f"exit {k}: {v}" for k, v in sorted(codes.items()))
              + f"  peak RSS {peak // 1024} MB")
    classes = {}
    for r in results:
        for failure in r["failures"] or ["ok"]:
            kind = failure.split(":")[0] if failure != "ok" else "ok"
            classes[kind] = classes.get(kind, 0) + 1
    print("\noutcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    print("failed cases by group: " + ", ".join(f"{g} {sum(1 for r in results if r['group'] == g and r['failures'])}" for g in groups))
    crashed = [r for r in results if "engine crashed" in r["notes"]]
    print(f"engine crashes caught by the supervisor (exit 2): {len(crashed)}")
    for r in crashed:
        print(f"  {r['group']}: {r['name']}: {r['command']}")
    loader = [r for r in results if "the dynamic loader failed before mge ran" in r["notes"]]
    print(f"the dynamic loader failed before mge ran (ulimit -n, -s): {len(loader)}")
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
        print(f"      {env + ' ' if env else ''}{r['command']}" + (f"   [in a namespace: {r['namespace']}]" if r["namespace"] else "")
              + (f"   [bash: {r['shell']!r}]" if r["shell"] else ""))
        print(f"      {r['folder']}; stderr: {r['stderr_head'][:200]!r}")
    for failure in global_failures:
        print(f"  [global] {failure}")


if __name__ == "__main__":
    main()
