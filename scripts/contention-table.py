#!/usr/bin/env python3
"""contention-table.py - the flat and home line models side by side, from 1 to 128 CPUs.

Runs `iommulab bench --engine sim -t N --iterations I --breakdown --json` for each CPU count
and each profile (default: kunpeng920, whose cache.contention is flat, and
kunpeng920-contention, its copy with the home model) in strict mode, and prints one Markdown
table per metric: unmap latency, aggregate map+unmap throughput, cmpxchg attempts per
command-queue claim, and each breakdown entry's self share of the CPUs' simulated time.
With --plot FILE it also draws the first three and the sync-wait share with gnuplot (one
panel each, log2 CPU axis). It prints figures; it is not a test.

  scripts/contention-table.py [--cli PATH] [--cpus 1,2,4,...] [--iterations I]
                              [--profile NAME ...] [--seed N] [--plot FILE.png]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def default_cli():
    for p in ("build-rel/iommulab", "build/iommulab"):
        if os.access(p, os.X_OK):
            return p
    return "iommulab"


def run(cli, profile, cpus, iterations, seed):
    cmd = [cli, "bench", "--engine", "sim", "--profile", profile, "-t", str(cpus),
           "--iterations", str(iterations), "--seed", str(seed), "--breakdown", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit("contention-table: %s failed (exit %d): %s" %
                 (" ".join(cmd), out.returncode, out.stderr.strip()))
    return json.loads(out.stdout)


def selfs(functions, acc):
    """Self time per function name, summed over every place it is called from."""
    for name, f in functions.items():
        acc[name] = acc.get(name, 0) + f["self_ns"]
        selfs(f["children"], acc)
    return acc


def figures(d):
    r, b = d["result"], d["sim"]["breakdown"]
    loops, elapsed = r["loops"], r["elapsed_ns"]
    share = {k: 100.0 * v / b["cpu_ns"] for k, v in selfs(b["functions"], {}).items()}
    return {
        "unmap_us": r["unmap_ns"] / 1000.0,
        "unmap_max_us": r["unmap_ns_max"] / 1000.0,
        "mops": loops / elapsed * 1000.0 if elapsed else 0.0,
        "attempts": b["claim_attempts"] / b["claims"] if b["claims"] else 0.0,
        "share": share,
    }


def claim_in_issue(share):
    """cmdq_claim's and issue_cmdlist's (every cmdq_* entry's) self shares, and the ratio."""
    claim = share.get("cmdq_claim", 0.0)
    issue = sum(v for k, v in share.items() if k.startswith("cmdq_"))
    return claim, issue, 100.0 * claim / issue if issue else 0.0


def table(title, cpus, profiles, res, fmt, get):
    print("\n%s\n" % title)
    print("| CPUs | " + " | ".join(profiles) + " |")
    print("|---|" + "---|" * len(profiles))
    for n in cpus:
        print("| %d | " % n + " | ".join(fmt % get(res[p][n]) for p in profiles) + " |")


def plot(path, cpus, profiles, res):
    gp = shutil.which("gnuplot")
    if not gp:
        print("contention-table: no gnuplot; --plot skipped", file=sys.stderr)
        return
    panels = [("unmap latency (us)", lambda f: f["unmap_us"], True),
              ("map+unmap throughput (M/s)", lambda f: f["mops"], False),
              ("cmpxchg attempts per claim", lambda f: f["attempts"], False),
              ("cmdq_sync_wait share (%)", lambda f: f["share"].get("cmdq_sync_wait", 0), False)]
    with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as s:
        s.write("set terminal pngcairo size 1200,800 font ',10' noenhanced\n"
                "set output '%s'\n" % path)
        s.write("set multiplot layout 2,2\nset logscale x 2\nset xlabel 'CPUs'\nset key left top\n")
        for title, get, logy in panels:
            s.write("set title '%s'\n%s\n" % (title, "set logscale y" if logy else "unset logscale y"))
            s.write("plot " + ", ".join("'-' with linespoints title '%s'" % p for p in profiles) + "\n")
            for p in profiles:
                for n in cpus:
                    s.write("%d %g\n" % (n, get(res[p][n])))
                s.write("e\n")
        s.write("unset multiplot\n")
    subprocess.run([gp, s.name], check=True)
    os.unlink(s.name)
    print("\ncontention-table: wrote %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=default_cli())
    ap.add_argument("--cpus", default="1,2,4,8,16,32,64,128")
    ap.add_argument("--iterations", type=int, default=1000,
                    help="map+unmap loops per thread (short runs miss the convoys that long "
                         "ones form)")
    ap.add_argument("--profile", action="append")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot")
    a = ap.parse_args()
    try:
        cpus = [int(x) for x in a.cpus.split(",")]
    except ValueError:
        sys.exit("contention-table: --cpus wants numbers separated by commas, not %r" % a.cpus)
    profiles = a.profile or ["kunpeng920", "kunpeng920-contention"]
    res = {p: {} for p in profiles}
    for p in profiles:
        for n in cpus:
            print("contention-table: %s, %d CPUs" % (p, n), file=sys.stderr)
            res[p][n] = figures(run(a.cli, p, n, a.iterations, a.seed))
    print("Strict mode, 4 KiB, `iommulab bench --engine sim --profile P -t N --iterations %d "
          "--seed %d --breakdown` (CPUs 0 ... N-1, node 0 first; the SMMU on node 2)."
          % (a.iterations, a.seed))
    table("Unmap latency, us", cpus, profiles, res, "%.2f", lambda f: f["unmap_us"])
    table("Longest unmap, us", cpus, profiles, res, "%.1f", lambda f: f["unmap_max_us"])
    table("Aggregate map+unmap, M/s", cpus, profiles, res, "%.3f", lambda f: f["mops"])
    table("cmpxchg attempts per command-queue claim", cpus, profiles, res, "%.3f",
          lambda f: f["attempts"])
    table("Command-queue claim within issue_cmdlist: cmdq_claim / issue_cmdlist (the cmdq_* "
          "entries: claim, write, owner wait, doorbell, sync wait), % of the CPUs' time; the "
          "claim's share of issue_cmdlist", cpus, profiles, res, "%s",
          lambda f: "%.1f / %.1f; %.1f %%" % claim_in_issue(f["share"]))
    names = sorted({k for p in profiles for n in cpus for k, v in res[p][n]["share"].items()
                    if v >= 1.0})
    print("\nBreakdown: self share of the CPUs' simulated time, %% (entries at 1 %% or more "
          "somewhere; each cell is %s)\n" % " / ".join(profiles))
    print("| function | " + " | ".join(str(n) for n in cpus) + " |")
    print("|---|" + "---|" * len(cpus))
    for k in names:
        print("| %s | " % k + " | ".join(
            " / ".join("%.1f" % res[p][n]["share"].get(k, 0.0) for p in profiles)
            for n in cpus) + " |")
    if a.plot:
        plot(a.plot, cpus, profiles, res)


if __name__ == "__main__":
    main()
