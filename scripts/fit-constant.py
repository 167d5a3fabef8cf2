#!/usr/bin/env python3
"""fit-constant.py - fit one machine-profile constant to one published figure.

Runs one scenario on a copy of the profile with the constant set to integer values, bisecting
between --lo and --hi, and reports the value whose figure is nearest the target (the figure
must move monotonically with the constant over that range; the script checks the ends). Every
other constant stays as the profile has it: fit calibration points one at a time, in the order
their dependencies need (docs/simulation.md, "Calibrating a profile"). Prints each value tried
and its figure; with --write, sets the fitted value in the profile (its comment is yours).

  scripts/fit-constant.py --key smmu.sync_ns --scenario seed000 --case cma-pernuma \\
      --figure cmdsync_wait --target 240 --lo 0 --hi 200 [--profile profiles/kunpeng920.yaml]

--figure  a name from the case's "figures" in the result JSON (seed 002: map_ns / unmap_ns,
          the untruncated latencies in ns)
--cli     the iommulab binary (default: build/iommulab)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sensitivity import CONSTANT, profile_constants  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_line(path, key):
    """(line index, value) of section.key in the profile at path."""
    section, name = key.split(".", 1)
    lines, consts = profile_constants(path)
    for idx, sec, k, value, _ in consts:
        if sec == section and k == name:
            return lines, idx, value
    sys.exit("fit-constant: %s: no such integer constant in %s" % (key, path))


def with_value(lines, idx, key, value):
    m = CONSTANT.match(lines[idx])
    out = list(lines)
    out[idx] = "%s%s:%s%d%s" % (m.group(1), key.split(".", 1)[1], m.group(3), value,
                                m.group(5) or "")
    return out


def figure(args, lines, idx, value, tmp):
    path = os.path.join(tmp, "profile.yaml")
    with open(path, "w") as f:
        f.write("\n".join(with_value(lines, idx, args.key, value)))
    cmd = [args.cli, "run", "--json", "--out", tmp, "--profile", path, args.scenario]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("fit-constant: %s: %s" % (" ".join(cmd), p.stderr.strip()[-400:]))
    for c in json.loads(p.stdout)["cases"]:
        if c["label"] == args.case:
            if args.figure not in c["figures"]:
                sys.exit("fit-constant: case %s has no figure %s (it has: %s)" %
                         (args.case, args.figure, ", ".join(sorted(c["figures"]))))
            v = c["figures"][args.figure]["value"]
            print("  %s = %d: %s %s = %.6g" % (args.key, value, args.case, args.figure, v))
            return v
    sys.exit("fit-constant: no case %s in %s" % (args.case, args.scenario))


def fit(args, lines, idx, tmp):
    """Bisect for the integer whose figure is nearest the target."""
    lo, hi = args.lo, args.hi
    flo, fhi = figure(args, lines, idx, lo, tmp), figure(args, lines, idx, hi, tmp)
    rising = fhi >= flo
    if not (min(flo, fhi) <= args.target <= max(flo, fhi)):
        sys.exit("fit-constant: %g is not between %g (at %d) and %g (at %d)" %
                 (args.target, flo, lo, fhi, hi))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        fm = figure(args, lines, idx, mid, tmp)
        if (fm < args.target) == rising:
            lo, flo = mid, fm
        else:
            hi, fhi = mid, fm
    return (lo, flo) if abs(flo - args.target) <= abs(fhi - args.target) else (hi, fhi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default=os.path.join(ROOT, "profiles", "kunpeng920.yaml"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "iommulab"))
    ap.add_argument("--key", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--figure", required=True)
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--lo", type=int, required=True)
    ap.add_argument("--hi", type=int, required=True)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.lo >= args.hi:
        sys.exit("fit-constant: --lo must be below --hi")
    lines, idx, old = find_line(args.profile, args.key)
    with tempfile.TemporaryDirectory() as tmp:
        print("%s: %s (now %d) to %s %s %s = %g" % (os.path.basename(args.profile), args.key,
              old, args.scenario, args.case, args.figure, args.target))
        best, got = fit(args, lines, idx, tmp)
    print("fit: %s %d -> %d (%s = %.6g, target %g)" % (args.key, old, best, args.figure, got,
                                                        args.target))
    if args.write:
        with open(args.profile, "w") as f:
            f.write("\n".join(with_value(lines, idx, args.key, best)))


if __name__ == "__main__":
    main()
