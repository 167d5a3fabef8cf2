#!/usr/bin/env python3
"""trace_check.py — checks an `iommulab --trace` file against the run's own JSON (docs/trace.md).

usage: trace_check.py TRACE RESULT [--limit-us N] [--no-commands] [--flows]
  RESULT: the `bench --json` or `run --json` output of the same run.

It checks, for every process (one simulator):
  - the file is JSON trace-event format: an object with a traceEvents list, each event a
    known phase with pid, ts a number (us), X with dur >= 0, C with numeric args, and a
    category by which viewers filter: cpu (a CPU's scopes), iommu (a unit's tracks),
    counter, run (the run's own marks), __metadata (names);
  - on every track (pid, tid), B and E pair up in order, properly nested, time never going
    back, no slice left open;
  - CPU tracks: for every call path of the breakdown (dma_map, dma_map/iommu_map, ...), the
    number of slices and the sum of their durations over all CPUs equal its calls and
    total_ns (durations within 1 %, counts exactly); the top-level slices per function, per
    CPU, add up to the same;
  - IOMMU tracks: the slices on "<unit> commands" (SMMUv3) or "<unit> descriptors" (VT-d),
    in number and by opcode, equal the unit's statistics (cmdq + ecmdqs commands and
    by_opcode; model.descriptors);
    (--no-commands: not this, for workloads that clear the unit's statistics after a
    warm-up, as seed 000's cmdsync does);
  - device rows (b/e async events, category device): every b has one e of its id, no earlier;
  - with --flows: every cmdq_sync_wait slice holds the end ('f', bound to it) of exactly one
    flow named CMD_SYNC whose start ('s') lies on a "<unit> commands" track at the start of
    a CMD_SYNC slice there: the command that released the wait; and no flow ends twice;
  - every flow ('s'/'f', any name: also "release <line>", a CPU's write that woke another's
    poll) starts once and ends at most once, never before its start;
  - with --limit-us N: no event but an E starts more than N us after the first B (the
    window opens when the CPU threads start, at or before their first slice).
Every mismatch is printed; the exit status is 1 if there was any.
"""
import json
import sys
from collections import defaultdict

# IHI 0070 §4.1.1: the command opcodes the statistics key by number
SMMU_OPS = {
    0x01: "CMD_PREFETCH_CONFIG", 0x02: "CMD_PREFETCH_ADDR", 0x03: "CMD_CFGI_STE",
    0x04: "CMD_CFGI_STE_RANGE", 0x05: "CMD_CFGI_CD", 0x06: "CMD_CFGI_CD_ALL",
    0x10: "CMD_TLBI_NH_ALL", 0x11: "CMD_TLBI_NH_ASID", 0x12: "CMD_TLBI_NH_VA",
    0x13: "CMD_TLBI_NH_VAA", 0x20: "CMD_TLBI_EL2_ALL", 0x21: "CMD_TLBI_EL2_ASID",
    0x22: "CMD_TLBI_EL2_VA", 0x23: "CMD_TLBI_EL2_VAA", 0x30: "CMD_TLBI_NSNH_ALL",
    0x40: "CMD_ATC_INV", 0x46: "CMD_SYNC",
}

errors = []


def bad(msg):
    errors.append(msg)
    print("FAIL: " + msg)


def load_events(path):
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        bad("%s: not an object with a traceEvents list" % path)
        return []
    for i, e in enumerate(doc["traceEvents"]):
        ph = e.get("ph")
        if ph not in ("B", "E", "X", "C", "M", "i", "s", "f", "b", "e"):
            bad("event %d: phase %r" % (i, ph))
        if not isinstance(e.get("pid"), int):
            bad("event %d: no pid" % i)
        if ph != "M" and not isinstance(e.get("ts"), (int, float)):
            bad("event %d: no numeric ts" % i)
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            bad("event %d: X without a dur >= 0" % i)
        if ph == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            bad("event %d: counter with a non-numeric value" % i)
        if ph in ("B", "E", "X") and not isinstance(e.get("tid"), int):
            bad("event %d: slice without a tid" % i)
        want = {"M": "__metadata", "C": "counter", "i": "run", "s": "flow",
                "f": "flow", "b": "device", "e": "device"}.get(ph, ("cpu", "iommu"))
        if e.get("cat") not in (want if isinstance(want, tuple) else (want,)):
            bad("event %d: %s with category %r" % (i, ph, e.get("cat")))
    return doc["traceEvents"]


def by_process(events):
    procs = defaultdict(lambda: {"name": None, "threads": {}, "events": []})
    for e in events:
        p = procs[e["pid"]]
        if e["ph"] == "M" and e.get("name") == "process_name":
            p["name"] = e["args"]["name"]
        elif e["ph"] == "M" and e.get("name") == "thread_name":
            p["threads"][e["tid"]] = e["args"]["name"]
        elif e["ph"] != "M":
            p["events"].append(e)
    return procs


def cpu_slices(proc, where):
    """B/E pairing per track; returns {path: [count, total_us]} and per-CPU top-level sums."""
    stacks = defaultdict(list)
    last = {}
    paths = defaultdict(lambda: [0, 0.0])
    top = defaultdict(float)  # (tid, name) -> us
    for e in proc["events"]:
        if e["ph"] not in ("B", "E"):
            continue
        tid = e["tid"]
        if not proc["threads"].get(tid, "").startswith("cpu "):
            bad("%s: B/E on track %d, which is not a CPU's" % (where, tid))
        if e["ts"] < last.get(tid, 0):
            bad("%s: track %d goes back in time at %s" % (where, tid, e["ts"]))
        last[tid] = e["ts"]
        st = stacks[tid]
        if e["ph"] == "B":
            st.append((e["name"], e["ts"]))
            continue
        if not st:
            bad("%s: E without B on track %d at %s" % (where, tid, e["ts"]))
            continue
        name, t0 = st.pop()
        if "name" in e and e["name"] != name:
            bad("%s: E of %s closes %s on track %d" % (where, e["name"], name, tid))
        path = "/".join([n for n, _ in st] + [name])
        paths[path][0] += 1
        paths[path][1] += e["ts"] - t0
        if not st:
            top[(tid, name)] += e["ts"] - t0
    for tid, st in stacks.items():
        if st:
            bad("%s: track %d ends with %d open slices (%s)" % (where, tid, len(st), st[-1][0]))
    return paths, top


def breakdown_paths(fns, prefix=""):
    out = {}
    for name, node in fns.items():
        if name == "other" and not prefix:
            continue
        path = prefix + name
        out[path] = (node["calls"], node["total_ns"])
        out.update(breakdown_paths(node["children"], path + "/"))
    return out


def check_cpus(proc, bd, where):
    paths, top = cpu_slices(proc, where)
    want = breakdown_paths(bd["functions"])
    if bd.get("lost") or bd.get("unbalanced"):
        bad("%s: the breakdown lost scopes (lost %s, unbalanced %s)" %
            (where, bd.get("lost"), bd.get("unbalanced")))
    for path, (calls, total_ns) in sorted(want.items()):
        n, us = paths.get(path, (0, 0.0))
        if n != calls:
            bad("%s: %s: %d slices, the breakdown has %d calls" % (where, path, n, calls))
        if abs(us * 1000 - total_ns) > 0.01 * max(total_ns, 1):
            bad("%s: %s: slices sum to %.3f ns, the breakdown's total is %d ns" %
                (where, path, us * 1000, total_ns))
    for path in paths:
        if path not in want:
            bad("%s: slices of %s, which the breakdown does not have" % (where, path))
    # per CPU, the top-level slices of each function add up to the breakdown's figure
    per_fn = defaultdict(float)
    for (tid, name), us in top.items():
        per_fn[name] += us
    for name, node in bd["functions"].items():
        if name == "other":
            continue
        if abs(per_fn.get(name, 0.0) * 1000 - node["total_ns"]) > 0.01 * max(node["total_ns"], 1):
            bad("%s: top-level %s: the CPUs' slices sum to %.3f ns, the breakdown %d ns" %
                (where, name, per_fn.get(name, 0.0) * 1000, node["total_ns"]))
    return sum(n for n, _ in paths.values())


def check_async(events):
    open_ = {}
    for i, e in enumerate(events):
        if e.get("ph") == "b":
            if e.get("id") in open_:
                bad("event %d: async id %s begun twice" % (i, e.get("id")))
            open_[e.get("id")] = e
        elif e.get("ph") == "e":
            b = open_.pop(e.get("id"), None)
            if b is None:
                bad("event %d: async end %s without its begin" % (i, e.get("id")))
            elif e["ts"] < b["ts"] or e.get("name") != b.get("name"):
                bad("event %d: async %s ends before it begins or under another name" %
                    (i, e.get("id")))
    for k in open_:
        bad("async %s never ends" % k)


def check_all_flows(events):
    starts, ends = {}, {}
    for i, e in enumerate(events):
        if e.get("ph") == "s":
            if e["id"] in starts:
                bad("event %d: flow %s starts twice" % (i, e["id"]))
            starts[e["id"]] = e
        elif e.get("ph") == "f":
            if e["id"] in ends:
                bad("event %d: flow %s ends twice" % (i, e["id"]))
            ends[e["id"]] = e
    for fid, e in ends.items():
        s = starts.get(fid)
        if s is None:
            bad("flow %s ends without a start" % fid)
        elif e["ts"] < s["ts"] or e.get("name") != s.get("name"):
            bad("flow %s ends before its start or under another name" % fid)


def check_flows(proc, where):
    """Every cmdq_sync_wait slice: one flow in, from a CMD_SYNC's slice. Returns the count."""
    threads = proc["threads"]
    syncs = set()   # (tid, ts) of CMD_SYNC slices on command tracks
    starts = {}     # flow id -> (tid, ts)
    ends = defaultdict(list)  # tid -> [(ts, id)]
    for e in proc["events"]:
        if e["ph"] == "X" and e["name"] == "CMD_SYNC":
            syncs.add((e["tid"], e["ts"]))
        elif e["ph"] == "s" and e.get("name") == "CMD_SYNC":
            starts[e["id"]] = (e["tid"], e["ts"])
        elif e["ph"] == "f" and e.get("name") == "CMD_SYNC":
            if e.get("bp") != "e":
                bad("%s: flow %s ends without binding to its enclosing slice" % (where, e["id"]))
            ends[e["tid"]].append((e["ts"], e["id"]))
    seen = defaultdict(int)
    for lst in ends.values():
        for _, fid in lst:
            seen[fid] += 1
    for fid, n in seen.items():
        if n > 1:
            bad("%s: flow %s ends %d times" % (where, fid, n))
    waits, stacks = 0, defaultdict(list)
    for e in proc["events"]:
        if e["ph"] not in ("B", "E"):
            continue
        if e["ph"] == "B":
            stacks[e["tid"]].append(e)
            continue
        if not stacks[e["tid"]]:
            continue  # unbalanced: cpu_slices reports it
        b = stacks[e["tid"]].pop()
        if b["name"] != "cmdq_sync_wait":
            continue
        waits += 1
        inside = [fid for ts, fid in ends[e["tid"]] if b["ts"] <= ts <= e["ts"]]
        if len(inside) != 1:
            bad("%s: cmdq_sync_wait at %s us on %s: %d flows end in it, not 1" %
                (where, b["ts"], threads.get(e["tid"]), len(inside)))
            continue
        src = starts.get(inside[0])
        if src is None:
            bad("%s: flow %s into the wait at %s us has no start" % (where, inside[0], b["ts"]))
        elif not threads.get(src[0], "").endswith(" commands") or src not in syncs:
            bad("%s: flow %s starts at %s us on %s, not at a CMD_SYNC slice" %
                (where, inside[0], src[1], threads.get(src[0])))
        elif src[1] > e["ts"]:
            bad("%s: flow %s: its CMD_SYNC starts after the wait it released" % (where, inside[0]))
    if not waits:
        bad("%s: --flows: no cmdq_sync_wait slice to check" % where)
    return waits


def check_units(proc, units, where):
    tracks = {name: tid for tid, name in proc["threads"].items()}
    total = 0
    for unit, st in units.items():
        if unit is None:  # the only unit with a track
            named = [t.rsplit(" ", 1)[0] for t in tracks
                     if t.endswith(" commands") or t.endswith(" descriptors")]
            if len(named) != 1:
                bad("%s: %d IOMMU command tracks, expected 1" % (where, len(named)))
                continue
            unit = named[0]
        if st.get("arch") == "vtd":
            want = st["model"]["descriptors"]
            by_op = None
            track = unit + " descriptors"
        else:
            qs = [st["cmdq"]] + ([st["ecmdqs"]] if "ecmdqs" in st else [])
            want = sum(q["commands"] for q in qs)
            by_op = defaultdict(int)
            for q in qs:
                for k, v in q["by_opcode"].items():
                    by_op[SMMU_OPS.get(int(k, 16), "CMD_0x%02x" % int(k, 16))] += v
            track = unit + " commands"
        tid = tracks.get(track)
        got = defaultdict(int)
        for e in proc["events"]:
            if e["ph"] == "X" and e["tid"] == tid:
                got[e["name"]] += 1
        n = sum(got.values())
        if n != want:
            bad("%s: %s: %d command slices, the unit's statistics say %d" % (where, unit, n, want))
        if by_op is not None and dict(got) != {k: v for k, v in by_op.items() if v}:
            bad("%s: %s: slices by opcode %s, statistics %s" %
                (where, unit, dict(sorted(got.items())), dict(sorted(by_op.items()))))
        total += n
    return total


def cases(result):
    """(process-name prefix, breakdown, units) of each simulated run in the result JSON."""
    if "sim" in result:  # bench --json: the one unit it modelled, under "iommu"
        return [("bench ", result["sim"]["breakdown"], {None: result["iommu"]})]
    out = []
    for scn in (result if isinstance(result, list) else [result]):
        for c in scn["cases"]:
            if c.get("stats"):
                label = "%s %s seed " % (scn["scenario"]["name"], c["label"])
                out.append((label, c["stats"].get("breakdown"), c["stats"].get("iommus", {})))
    return out


def main():
    args = sys.argv[1:]
    limit = None
    if "--limit-us" in args:
        i = args.index("--limit-us")
        limit = float(args[i + 1])
        del args[i:i + 2]
    check_commands = "--no-commands" not in args
    if not check_commands:
        args.remove("--no-commands")
    flows = "--flows" in args
    if flows:
        args.remove("--flows")
    trace, result = args
    events = load_events(trace)
    check_async(events)
    check_all_flows(events)
    procs = by_process(events)
    if limit is not None:
        for pid, p in procs.items():
            cpu_slices(p, "pid %d" % pid)
            # the window opens when the CPU threads start: at the latest, the first B
            begins = [e["ts"] for e in p["events"] if e["ph"] == "B"]
            if not begins:
                bad("pid %d: no CPU slice in the window" % pid)
                continue
            end = min(begins) + limit
            for e in p["events"]:
                if e["ph"] not in ("E", "e") and e["ts"] > end:
                    bad("pid %d: %s event at %s us, past the window's end %s us" %
                        (pid, e["ph"], e["ts"], end))
        print("trace_check: %d events, %d processes, window %s us" %
              (len(events), len(procs), limit))
        return 1 if errors else 0
    res = json.load(open(result))
    want = cases(res)
    names = {p["name"]: pid for pid, p in procs.items()}
    if len(want) != len(procs):
        bad("%d processes in the trace, %d simulated runs in the result" % (len(procs), len(want)))
    for prefix, bd, units in want:
        pids = [pid for name, pid in names.items() if name.startswith(prefix)]
        if len(pids) != 1:
            bad("%d processes named '%s...'" % (len(pids), prefix))
            continue
        where = procs[pids[0]]["name"]
        if bd is not None:
            slices = check_cpus(procs[pids[0]], bd, where)
        else:  # a workload without a breakdown (allreduce): the structure only
            slices = sum(n for n, _ in cpu_slices(procs[pids[0]], where)[0].values())
        cmds = check_units(procs[pids[0]], units, where) if check_commands else 0
        waits = check_flows(procs[pids[0]], where) if flows else 0
        print("trace_check: %s: %d CPU slices, %d IOMMU commands, %d waits with their flow" %
              (where, slices, cmds, waits))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
