#!/usr/bin/env python3
"""docs-filter.py - cut one figure or table out of a command's output for a docs gen block.

Reads the output of `iommulab run` (its text tables) or a sweep result on stdin and prints
the piece the docs quote (scripts/docs-figures.py, `<!-- gen: CMD | FILTER -->`):

  table SCENARIO               the scenario's figures as a Markdown table
  count SCENARIOS VERDICT [METRIC]   "K of N": published figures whose verdict is VERDICT
                               (within|outside|calibration-within ...) of the N published
                               ones of SCENARIOS (a name or a glob: 'seed*'), of METRIC only
                               when given
  effects SCENARIOS same|other "K of N": published effects in the same direction, or
                               "K of the other M": those between identical runs
  summary figures|effects|cases|identical   from the run's last line: "80 of 113", "41 of 55",
                               "105", "5 of the other 14"
  effect SCENARIO LABEL METRIC [--abs]   iommulab's change of the effect whose description
                               starts with LABEL ("+8.7%"; --abs: "8.7")
  sweep METRIC                 a sweep result (JSON) with two axes: one line per value of the
                               first axis, METRIC at each value of the second, rounded (a
                               fenced Markdown block)
  rows SCENARIO                the scenario's figure table as run prints it
  cell SCENARIO CASE METRIC iommulab|ratio   one figure's value (no unit) or ratio
  grid SCENARIO METRIC KINDS NAMES A/B   cases t<N>-<kind> as a table by threads and kind
  ratio|diff SCENARIO METRIC CASE_A CASE_B DIGITS   iommulab's A / B or A - B, DIGITS decimals
  bench map|unmap|misses       from bench's text output: avg map / unmap ns, IOVA cache misses
  fair-lock TEST table|shared-longest|fair-p99.9|...   test_smmuv3_drv_cmdq_fair's figures
  indent N                     every line indented by N spaces (a Markdown code block)
  fence                        the input as a fenced Markdown code block
Exit 1 with a message when the piece is not there (the docs name something that is gone).
"""
import fnmatch
import json
import re
import sys


def die(msg):
    print("docs-filter: " + msg, file=sys.stderr)
    sys.exit(1)


def cols(line):
    return re.split(r"\s{2,}", line.strip())


def scenario_blocks(text, scenario):
    """(figure rows, effect rows) of SCENARIO in run's text output."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"scenario {scenario},"):
            break
    else:
        die(f"no scenario {scenario} in the output")
    figures, effects, part = [], [], None
    for line in lines[i + 1:]:
        if line.startswith("scenario ") or re.match(r"^\d+ scenarios,", line):
            break
        if line.startswith("case "):
            part = figures
        elif line.startswith("effect "):
            part = effects
        elif not line.strip():
            if part is effects:
                break
            part = None
        elif part is not None:
            part.append(cols(line))
    return figures, effects


def md_unit(s):
    return re.sub(r"(?<=\d) us\b", " µs", s)


def table(text, scenario):
    figures, _ = scenario_blocks(text, scenario)
    out = ["| case | metric | seed | iommulab | ratio | kind | verdict |",
           "|---|---|---|---|---|---|---|"]
    for c in figures:
        if len(c) != 7:
            die(f"{scenario}: a row of {len(c)} columns: {c}")
        verdict = c[6].split()[0].lower()
        verdict = f"**{verdict}**" if verdict == "outside" else verdict
        out.append("| " + " | ".join([c[0], c[1], md_unit(c[2]), md_unit(c[3]), c[4], c[5],
                                      verdict]) + " |")
    return "\n".join(out)


def scenarios(text, pattern):
    names = re.findall(r"^scenario ([^,]+),", text, re.M)
    hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
    if not hits:
        die(f"no scenario {pattern} in the output")
    return hits


def count(text, pattern, verdict, metric=None):
    kind = None
    if "-" in verdict:
        kind, verdict = verdict.split("-", 1)
    hits = pool = 0
    for name in scenarios(text, pattern):
        figures, _ = scenario_blocks(text, name)
        for c in figures:
            if len(c) != 7 or c[5] not in ("calibration", "prediction"):
                continue
            if metric is not None and c[1] != metric:
                continue
            if kind is None or c[5] == kind:
                pool += 1
                hits += c[6].lower().startswith(verdict.lower())
    return f"{hits} of {pool}"


def effects(text, pattern, what):
    same = identical = pool = 0
    for name in scenarios(text, pattern):
        _, rows = scenario_blocks(text, name)
        for c in rows:
            if len(c) != 5 or c[2].startswith("("):
                continue
            pool += 1
            same += c[4] == "same direction"
            identical += c[4].endswith("(identical runs)")
    if what == "same":
        return f"{same} of {pool}"
    if what == "other":
        return f"{identical} of the other {pool - same}"
    die(f"effects: '{what}' is not same|other")


def summary(text, what):
    last = [l for l in text.splitlines() if re.match(r"^\d+ scenarios,", l)]
    if not last:
        die("no summary line ('N scenarios, ...') in the output")
    line = last[-1]
    pats = {"figures": r"(\d+ of \d+) published figures",
            "effects": r"(\d+ of \d+) published effects",
            "cases": r"scenarios, (\d+) cases",
            "identical": r"\((\d+ of the other \d+) between"}
    m = re.search(pats.get(what, "$^"), line)
    if not m:
        die(f"no '{what}' in: {line}")
    return m.group(1)


def rows(text, scenario):
    """the scenario's figure table as run prints it (header and rows)"""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(f"scenario {scenario},")), None)
    if start is None:
        die(f"no scenario {scenario} in the output")
    out = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        out.append(line.rstrip())
    return "\n".join(out)


def value(text, scenario, case, metric):
    figures, _ = scenario_blocks(text, scenario)
    for c in figures:
        if c[0] == case and c[1] == metric:
            return float(c[3].split()[0])
    die(f"{scenario}: no figure {case} {metric}")


def cell(text, scenario, case, metric, column):
    """one cell of a figure row: 'iommulab' (the number, without its unit) or 'ratio'"""
    figures, _ = scenario_blocks(text, scenario)
    for c in figures:
        if c[0] == case and c[1] == metric:
            if column == "ratio":
                return c[4]
            if column == "iommulab":
                return c[3].split()[0]
            die(f"cell: column '{column}' is not iommulab|ratio")
    die(f"{scenario}: no figure {case} {metric}")


def grid(text, scenario, metric, kinds, names, ratio):
    """cases named t<threads>-<kind>: a Markdown table, a row per thread count, a column per
    kind (KINDS and their NAMES comma-separated), and the ratio A/B of two kinds"""
    figures, _ = scenario_blocks(text, scenario)
    kinds, names = kinds.split(","), names.split(",")
    a, b = ratio.split("/")
    cells = {}
    for c in figures:
        m = re.fullmatch(r"t(\d+)-(\w+)", c[0])
        if m and c[1] == metric:
            cells[(int(m.group(1)), m.group(2))] = float(c[3].split()[0])
    threads = sorted({t for t, _ in cells})
    if not threads or len(names) != len(kinds):
        die(f"grid: {scenario}: no t<N>-<kind> cases of {metric}, or names do not match kinds")
    out = ["| threads | " + " | ".join(names) + f" | {names[kinds.index(a)]} / {names[kinds.index(b)]} |",
           "|---" * (len(kinds) + 2) + "|"]
    for t in threads:
        try:
            row = [cells[(t, k)] for k in kinds]
        except KeyError as e:
            die(f"grid: {scenario}: no case t{t}-{e.args[0][1]}")
        out.append(f"| {t} | " + " | ".join(f"{v:g}" for v in row) +
                   f" | {cells[(t, a)] / cells[(t, b)]:.2f} |")
    return "\n".join(out)


def arith(text, op, scenario, metric, a, b, digits):
    x, y = value(text, scenario, a, metric), value(text, scenario, b, metric)
    return f"{(x / y if op == 'ratio' else x - y):.{int(digits)}f}"


def bench(text, what):
    """a figure of bench's text output: map|unmap (avg ns) or misses (IOVA cache misses)"""
    pats = {"map": r"^map latency\(ns\): avg ([0-9.]+)",
            "unmap": r"^unmap latency\(ns\): avg ([0-9.]+)",
            "misses": r"iova cache hits \d+ misses (\d+)"}
    if what not in pats:
        die(f"bench: '{what}' is not map|unmap|misses")
    m = re.search(pats[what], text, re.M)
    if not m:
        die(f"bench: no {what} figure in the output")
    return m.group(1)


def fair_lock(text, test, what):
    """test_smmuv3_drv_cmdq_fair's figures of one test: its table, or one figure (us)"""
    block = re.search(rf"\[ RUN +\] {re.escape(test)}\n(.*?)\[ +OK +\]", text, re.S)
    if not block:
        die(f"fair-lock: no passing test {test} in the output")
    rows = {}
    for m in re.finditer(r"^ +(shared|fair) +exclusive +(\d+), shared waits +(\d+) \( *(\d+) ns, "
                         r"longest +(\d+) ns\); issue p50 +(\d+) p99\.9 +(\d+)", block.group(1), re.M):
        rows[m.group(1)] = [int(x) for x in m.groups()[1:]]
    if set(rows) != {"shared", "fair"}:
        die(f"fair-lock: {test}: not a shared and a fair line")
    if what != "table":
        lock, field = what.split("-")
        i = {"longest": 3, "p99.9": 5}[field]
        return f"{rows[lock][i] / 1000:.1f}"
    out = ["| lock | exclusive sections | shared waits | longest shared wait | issue p50 | issue p99.9 |",
           "|---|---|---|---|---|---|"]
    for lock, name in (("shared", "before 2026"), ("fair", "fair")):
        ex, waits, total, longest, p50, p999 = rows[lock]
        out.append(f"| {name} | {ex} | {waits} ({total / 1000:.1f} us in all) | {longest / 1000:.1f} us "
                   f"| {p50 / 1000:.1f} us | {p999 / 1000:.1f} us |")
    return "\n".join(out)


def effect(text, scenario, label, metric, absolute):
    _, effects = scenario_blocks(text, scenario)
    for c in effects:
        if c[0].startswith(label) and c[1] == metric:
            v = c[3]
            return v.lstrip("+-").rstrip("%") if absolute else v
    die(f"{scenario}: no effect '{label}...' of {metric}")


def sweep(text, metric):
    d = json.loads(text)
    if len(d["axes"]) != 2:
        die("sweep: a table needs two axes")
    a0, a1 = d["axes"]
    width = max(len(v) for v in a0["values"])
    rows = []
    for i, v0 in enumerate(a0["values"]):
        vals = []
        for j, _ in enumerate(a1["values"]):
            case = d["cases"][i * len(a1["values"]) + j]
            if case["status"] != "ok" or metric not in case["figures"]:
                die(f"sweep: case {case['case']} has no {metric}")
            vals.append(f"{case['figures'][metric]:.0f}")
        rows.append(f"{a0['path']}={v0:<{width}}  " + " | ".join(f"{x:>5}" for x in vals))
    head = f"{metric} by {a0['path']} (rows) x {a1['path']} = " + " | ".join(a1["values"])
    return "\n".join(["```", head] + rows + ["```"])


def main(argv):
    if not argv:
        die("usage: docs-filter.py table|count|summary|effect|sweep ARGS (see its header)")
    text = sys.stdin.read()
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "table" and len(args) == 1:
            print(table(text, *args))
        elif cmd == "count" and len(args) in (2, 3):
            print(count(text, *args))
        elif cmd == "effects" and len(args) == 2:
            print(effects(text, *args))
        elif cmd == "summary" and len(args) == 1:
            print(summary(text, *args))
        elif cmd == "effect" and len(args) in (3, 4):
            print(effect(text, args[0], args[1], args[2], args[3:] == ["--abs"]))
        elif cmd == "rows" and len(args) == 1:
            print(rows(text, *args))
        elif cmd == "grid" and len(args) == 5:
            print(grid(text, *args))
        elif cmd == "cell" and len(args) == 4:
            print(cell(text, *args))
        elif cmd in ("ratio", "diff") and len(args) == 5:
            print(arith(text, cmd, *args))
        elif cmd == "fair-lock" and len(args) == 2:
            print(fair_lock(text, *args))
        elif cmd == "bench" and len(args) == 1:
            print(bench(text, *args))
        elif cmd == "fence" and not args:
            print("```\n" + text.rstrip("\n") + "\n```")
        elif cmd == "indent" and len(args) == 1 and args[0].isdigit():
            print("\n".join(" " * int(args[0]) + l if l else l
                            for l in text.rstrip("\n").split("\n")))
        elif cmd == "sweep" and len(args) == 1:
            print(sweep(text, *args))
        else:
            die(f"bad arguments: {' '.join(argv)}")
    except (KeyError, ValueError, IndexError) as e:
        die(f"{cmd}: unexpected input ({e})")


if __name__ == "__main__":
    main(sys.argv[1:])
