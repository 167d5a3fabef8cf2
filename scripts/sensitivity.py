#!/usr/bin/env python3
"""sensitivity.py - how much `iommulab run`'s figures depend on each machine-profile constant.

For every numeric constant of a profile, the scenarios that use that profile are run with the
constant scaled down and up (default: by 20 %), everything else unchanged and nothing
re-fitted. The simulation is deterministic, so every difference is the model's response to
that one constant, not noise. Prints a Markdown table per profile: figures within tolerance
and effects in the seed's direction at low / base / high, how many verdicts flip, and the
prediction whose value moves most (ignoring figures under twenty units of the published
tool's resolution, which move in whole steps). It prints figures; it is not a test.

  scripts/sensitivity.py [--cli PATH] [--factor F] [--profile NAME ...] [--only KEY ...]
                         [--quick] [--figures] [--list]

--cli      the iommulab binary (default: build-rel/iommulab, else build/iommulab)
--factor   relative change (default 0.2: x0.8 and x1.2; a change that rounds to nothing
           becomes -1 / +1)
--profile  only these profiles (default: every profile a built-in scenario uses)
--only     only these constants, as section.key (e.g. smmu.tlbi_ns); repeatable
--quick    the scenarios' reduced sizes (faster, and not the figures docs/ reports)
--figures  after each profile's table, every published figure that a constant moves (in its
           four significant digits or its verdict): its value and verdict at low / base /
           high, one table per constant
--list     print each profile's constants (section.key value kind) and run nothing
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = re.compile(r"^([a-z_]+):\s*(#.*)?$")
CONSTANT = re.compile(r"^(\s+)([a-z_]+):(\s*)(-?\d+)(\s*(#.*)?)$")


def profile_constants(path):
    """(line index, section, key, value, kind) for each integer constant; kind is what its
    comment says it is: "calibrated" (a free constant of the profile's free: section, fitted by
    `iommulab calibrate`, or CALIBRATED), "measured" (MEASURED) or "estimate"."""
    with open(path) as f:
        lines = f.read().split("\n")
    free, sub = set(), None
    for line in lines[next((i for i, l in enumerate(lines) if l.startswith("free:")), len(lines)):]:
        m = re.match(r"^  ([a-z_]+):\s*$", line)
        if m:
            sub = m.group(1)
        m = re.match(r"^    ([a-z_]+):\s*\{", line)
        if m and sub:
            free.add((sub, m.group(1)))
    out, section, comment = [], None, []
    for i, line in enumerate(lines):
        m = SECTION.match(line)
        if m:
            section, comment = m.group(1), []
            continue
        if line.strip().startswith("#"):
            comment.append(line)
            continue
        m = CONSTANT.match(line)
        if m and section:
            text = " ".join(comment) + (m.group(5) or "")
            kind = ("calibrated" if "CALIBRATED" in text or (section, m.group(2)) in free else
                    "measured" if "MEASURED" in text else "estimate")
            out.append((i, section, m.group(2), int(m.group(4)), kind))
        comment = []
    return lines, out


def scenarios_by_profile(scen_dir):
    found = {}
    for name in sorted(os.listdir(scen_dir)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(scen_dir, name)) as f:
            for line in f:
                m = re.match(r"^profile:\s*([A-Za-z0-9_.-]+)", line)
                if m:
                    found.setdefault(m.group(1), []).append(name[:-5])
                    break
    return found


def run(cli, datadir, scenarios, quick):
    """Figures, effects and counts of one `iommulab run --json`, or an error string."""
    cmd = [cli, "run", "--json", "--out", os.path.join(datadir, "results")]
    if quick:
        cmd.append("--quick")
    env = dict(os.environ, IOMMULAB_DATADIR=datadir)
    p = subprocess.run(cmd + scenarios, env=env, capture_output=True, text=True)
    try:
        results = json.loads(p.stdout)
    except ValueError:
        return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    if isinstance(results, dict):  # one scenario: one object, not a list
        results = [results]
    figs, effects = {}, {}
    for r in results:
        name = r["scenario"]["name"]
        for c in r["cases"]:
            for cmp in c.get("comparisons", []):
                figs[(name, c["label"], cmp["metric"])] = cmp
        for e in r.get("effects", []):
            effects[(name, e["label"], e["metric"])] = e["verdict"]
    return figs, effects


def counts(res):
    figs, effects = res
    within = sum(1 for c in figs.values() if c.get("verdict") == "within")
    same = sum(1 for v in effects.values() if v == "same")
    return within, len(figs), same, len(effects)


def biggest_move(base, other):
    """The prediction whose raw value moves most, relative to the base run."""
    best, where = 0.0, "-"
    for k, c in base[0].items():
        o = other[0].get(k)
        if not o or c.get("kind") != "prediction" or not c.get("ours_raw"):
            continue
        # below twenty units of the tool's resolution (dma_map_benchmark's 100 ns) a figure
        # moves in whole units of 5 % or more: one step is no measure of sensitivity
        if c.get("truncate") and c["ours_raw"] < 20 * c["truncate"]:
            continue
        rel = o["ours_raw"] / c["ours_raw"] - 1
        if abs(rel) > abs(best):
            best, where = rel, "%s %s" % (k[1], k[2].replace("_latency", ""))
    return best, where


def flips(base, other):
    n = sum(1 for k, c in base[0].items()
            if k in other[0] and other[0][k].get("verdict") != c.get("verdict"))
    return n + sum(1 for k, v in base[1].items() if other[1].get(k, v) != v)


def variants(cli, tmp, path, lines, const, factor, scen, quick):
    """[(value, result or error string) or None] for the low and the high variant."""
    idx, section, key, value, _ = const
    out = []
    for sign in (-1, 1):
        v = int(round(value * (1 + sign * factor)))
        if v == value:
            v = value + sign
        if v < 0:
            out.append(None)
            continue
        m = CONSTANT.match(lines[idx])
        changed = list(lines)
        changed[idx] = "%s%s:%s%d%s" % (m.group(1), key, m.group(3), v, m.group(5) or "")
        with open(path, "w") as f:
            f.write("\n".join(changed))
        res = run(cli, tmp, scen, quick)
        if isinstance(res, str):
            print("sensitivity: %s.%s = %d: %s" % (section, key, v, res), file=sys.stderr)
        out.append((v, res))
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return out


def row(const, base, cells):
    """One Markdown table row."""
    _, section, key, value, kind = const

    def each(fn):
        return " / ".join("-" if c is None else "rejected" if isinstance(c[1], str)
                          else fn(c[1]) for c in cells)

    def move(res):
        rel, where = biggest_move(base, res)
        if where == "-":
            return "none"
        return ("%+.1f%% %s" if abs(rel) < 0.1 else "%+.0f%% %s") % (100 * rel, where)

    return "| %s.%s | %d (%s) | %s | %s | %s | %s | %s |" % (
        section, key, value, "/".join(str(c[0]) if c else "-" for c in cells),
        kind,
        each(lambda r: str(counts(r)[0])), each(lambda r: str(counts(r)[2])),
        each(lambda r: str(flips(base, r))), each(move).replace(" / ", "; "))


def fmt(v):
    return "-" if v is None else "%.4g" % v


def moved_figures(const, base, cells):
    """Markdown lines: each figure whose value (to four digits) or verdict differs at low or
    high."""
    _, section, key, value, _ = const
    out = ["#### %s.%s = %d (%s)" % (section, key, value,
                                     " / ".join(str(c[0]) if c else "-" for c in cells)), ""]
    rows = []
    for k, c in sorted(base[0].items()):
        others = [None if cell is None or isinstance(cell[1], str) else cell[1][0].get(k)
                  for cell in cells]

        def show(o):
            return "-" if o is None else "%s %s" % (fmt(o.get("ours_raw")), o.get("verdict"))

        # moved: in its four significant digits or its verdict
        if all(o is None or show(o) == show(c) for o in others):
            continue
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            k[1], k[2], c.get("kind"), fmt(c.get("seed")), show(others[0]), show(c),
            show(others[1])))
    if not rows:
        return out + ["No figure moves.", ""]
    return out + ["| case | metric | kind | seed | low | base | high |",
                  "|---|---|---|---|---|---|---|"] + rows + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli")
    ap.add_argument("--factor", type=float, default=0.2)
    ap.add_argument("--profile", action="append")
    ap.add_argument("--only", action="append")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    cli = a.cli or next((p for p in (os.path.join(ROOT, "build-rel", "iommulab"),
                                     os.path.join(ROOT, "build", "iommulab"))
                         if os.access(p, os.X_OK)), None)
    if not a.list and (not cli or not os.access(cli, os.X_OK)):
        sys.exit("sensitivity: no iommulab binary (build it, or give --cli)")
    if not 0 < a.factor < 1:
        sys.exit("sensitivity: --factor must be in (0, 1)")

    tmp = tempfile.mkdtemp(prefix="ilab-sens-")
    try:
        for d in ("profiles", "scenarios"):
            shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
        by_prof = scenarios_by_profile(os.path.join(tmp, "scenarios"))
        for prof in a.profile or sorted(by_prof):
            scen = by_prof.get(prof)
            if not scen:
                sys.exit("sensitivity: no built-in scenario uses profile '%s'" % prof)
            path = os.path.join(tmp, "profiles", prof + ".yaml")
            lines, consts = profile_constants(path)
            if a.list:
                for _, section, key, value, kind in consts:
                    print("%s.%s %d %s" % (section, key, value, kind))
                continue
            if a.only:
                names = {"%s.%s" % (c[1], c[2]) for c in consts}
                unknown = [n for n in a.only if n not in names]
                if unknown:
                    sys.exit("sensitivity: %s: no constant %s" % (prof, ", ".join(unknown)))
                consts = [c for c in consts if "%s.%s" % (c[1], c[2]) in a.only]
            base = run(cli, tmp, scen, a.quick)
            if isinstance(base, str):
                sys.exit("sensitivity: %s: base run failed: %s" % (prof, base))
            # the premise: the same input gives the same figures, so a difference below is
            # the constant's doing and not noise
            if run(cli, tmp, scen, a.quick) != base:
                sys.exit("sensitivity: %s: two identical runs differ (not deterministic)" % prof)
            w, nf, s, ne = counts(base)
            print("### %s (%s; x%.2f / x%.2f)\n" % (prof, ", ".join(scen), 1 - a.factor,
                                                     1 + a.factor))
            print("Base: %d of %d figures within tolerance, %d of %d effects in the seed's "
                  "direction.\n" % (w, nf, s, ne))
            print("| constant | value | kind | within (low / high) | effects (low / high) "
                  "| verdicts flipped (low / high) | largest prediction move (low; high) |")
            print("|---|---|---|---|---|---|---|")
            details = []
            for const in consts:
                cells = variants(cli, tmp, path, lines, const, a.factor, scen, a.quick)
                print(row(const, base, cells))
                sys.stdout.flush()
                if a.figures:
                    details += moved_figures(const, base, cells)
            print()
            if details:
                print("\n".join(details))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
