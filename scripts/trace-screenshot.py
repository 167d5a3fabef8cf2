#!/usr/bin/env python3
"""trace-screenshot.py — a PNG of one process of an `iommulab --trace` file over a time window,
drawn by scripts/trace-view.html in headless Chromium (docs/trace.md). Not a trace viewer.

usage: trace-screenshot.py TRACE PROCESS-SUBSTRING T0_US T1_US OUT.png [WIDTH]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict


def view(trace, which, t0, t1, width):
    ev = json.load(open(trace))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    pids = [p for p, n in names.items() if which in n]
    if len(pids) != 1:
        sys.exit("%d processes match '%s'" % (len(pids), which))
    pid = pids[0]
    threads, order = {}, {}
    slices, stacks = defaultdict(list), defaultdict(list)
    counters, before = defaultdict(list), {}
    for e in ev:
        if e["pid"] != pid:
            continue
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                threads[e["tid"]] = e["args"]["name"]
            elif e["name"] == "thread_sort_index":
                order[e["tid"]] = e["args"]["sort_index"]
        elif e["ph"] == "B":
            stacks[e["tid"]].append(e)
        elif e["ph"] == "E":
            b = stacks[e["tid"]].pop()
            if e["ts"] >= t0 and b["ts"] <= t1:
                slices[e["tid"]].append([b["ts"], e["ts"] - b["ts"], len(stacks[e["tid"]]),
                                         b["name"]])
        elif e["ph"] == "X":
            if e["ts"] + e["dur"] >= t0 and e["ts"] <= t1:
                slices[e["tid"]].append([e["ts"], e["dur"], 0, e["name"]])
        elif e["ph"] == "C":
            (name, v), = [(e["name"] + " " + k, v) for k, v in e["args"].items()]
            if e["ts"] < t0:
                before[name] = v
            elif e["ts"] <= t1:
                counters[name].append([e["ts"], v])
    tracks = [{"name": threads[t], "kind": "slices", "slices": s,
               "depth": max(q[2] for q in s)} for t, s in
              sorted(slices.items(), key=lambda kv: order.get(kv[0], kv[0]))]
    for name in sorted(set(counters) | set(before)):
        counters[name].sort()
        tracks.append({"name": name, "kind": "counter", "points": counters[name],
                       "before": before.get(name, 0)})
    return {"title": "%s, %g-%g us (iommulab --trace, scripts/trace-view.html)" %
            (names[pid], t0, t1), "t0": t0, "t1": t1, "width": width, "tracks": tracks}


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    trace, which, t0, t1, out = sys.argv[1:6]
    width = int(sys.argv[6]) if len(sys.argv) == 7 else 1400
    v = view(trace, which, float(t0), float(t1), width)
    rows = sum((t["depth"] + 1) * 15 if t["kind"] == "slices" else 34 for t in v["tracks"])
    height = 44 + rows + 6 * len(v["tracks"])
    here = os.path.dirname(os.path.abspath(__file__))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("chromium not found (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(here, "trace-view.html"), d)
        with open(os.path.join(d, "trace-view-data.js"), "w") as f:
            f.write("window.TRACE_VIEW = " + json.dumps(v) + ";\n")
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=%d,%d" % (width, height),
                        "--screenshot=" + os.path.abspath(out),
                        "file://" + os.path.join(d, "trace-view.html")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("%s: %d tracks, %dx%d" % (out, len(v["tracks"]), width, height))


if __name__ == "__main__":
    main()
