#!/usr/bin/env python3
"""mutate.py — mutation testing of the tree: does the test suite notice a one-line change?

Mutants are of two kinds:
  named   the mutations of scripts/mutations-named.json (each: a file, a code pattern that
          occurs exactly once, its replacement). The pattern is searched for, first in the
          named file, then in every source file, so a mutation survives files moving and
          lines shifting; a pattern found nowhere is reported "not found", one found twice
          "ambiguous" (neither is run).
  random  a seeded sample (--seed, --sample) of comparison (< <=, > >=, == !=), boundary
          (a constant +-1, "a - b" -> "a") and dropped-statement mutations in the function
          bodies of --dirs (default src/hw src/drivers src/iommu src/sim src/report).
          Preprocessor lines, comments, strings, declarations' array sizes, array designators
          ([4] = ...) and case labels are never mutated.

Each mutant is built and tested in a scratch copy of the tree (--scratch, default
build-mutate/: tree/ is the copy, build/ its own CMake build; both persist between runs so
that only the first run builds everything). The copy is synchronised file by file (an
unchanged file keeps its time stamp, so the build stays incremental), the mutated file is
restored after every mutant, also on Ctrl-C or SIGTERM, and the working tree is never touched.

For each mutant: build the likeliest killers (tests whose name or area matches the mutated
file's path) and run them with `ctest -j2 --stop-on-failure`; if they all pass, build
everything and run the rest. A failing test kills the mutant; a run past --timeout kills it
too but is counted apart ("timeout"); a mutant that does not compile is "didn't build" and
counts neither way. The kill rate is (killed + timeout) / (killed + timeout + survived).

  scripts/mutate.py [--seed N] [--sample K] [--named FILE,...] [--only NAME,...] [--list]
                    [--json OUT] [--report OUT] [--scratch DIR] [--jobs J] [--timeout S]
Exit: 0 run done (whatever the kill rate), 2 bad usage, 1 the baseline fails or cannot build.
"""
import argparse
import difflib
import fnmatch
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

DEFAULT_DIRS = ["src/hw", "src/drivers", "src/iommu", "src/sim", "src/report"]
SEARCH_EXT = (".c", ".h")


def die(msg, code=2):
    print(f"mutate: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- reading C: mask comments, strings and preprocessor lines -----------------------------

def mask_c(text):
    """Same length as text, with comments, string and character literals and preprocessor
    lines (with their continuations) blanked, newlines kept: what remains is code."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":  # preprocessor line, with backslash continuations
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                if text[i] != "\n":
                    out[i] = " "
                i += 1
            continue
        line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if text[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        i += 1
    return "".join(out)


def function_body_lines(masked):
    """Line numbers (1-based) inside function bodies: a top-level '{' whose preceding code
    ends with ')' opens one (a file-scope initialiser or struct does not)."""
    inside = set()
    depth, in_fn, line = 0, False, 1
    prev_code = ""
    for ch in masked:
        if ch == "\n":
            if in_fn:
                inside.add(line)
            line += 1
            continue
        if ch == "{":
            if depth == 0 and prev_code.rstrip().endswith(")"):
                in_fn = True
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
            if depth == 0:
                in_fn = False
        if not ch.isspace():
            prev_code = (prev_code + ch)[-8:]
    return inside


DECL_RE = re.compile(
    r"^\s*(?:(?:static|const|volatile|register|extern|unsigned|signed|struct|enum|union|"
    r"_Atomic|inline)\s+)*[A-Za-z_]\w*(?:\s+|\s*\*+\s*)\**[A-Za-z_]\w*\s*(?:=|;|\[|,)")
NOT_DECL_START = re.compile(r"^\s*(return|goto|case|else|do|if|while|for|switch|break|continue)\b")
DROP_RE = re.compile(r"^(\s*)([^;{}]*;)\s*$")
CMP_RE = re.compile(r"(?<![<>=!])(<=|>=|==|!=|<|>)(?![<>=])")
INT_RE = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)(?![\w.])")
MINUS_RE = re.compile(r"\s-\s([A-Za-z_]\w*(?:(?:->|\.)[A-Za-z_]\w*)*)(?![\w(\[]|->|\.)")
CMP_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}


def is_declaration(code_line):
    return bool(DECL_RE.match(code_line)) and not NOT_DECL_START.match(code_line)


def is_designator(code, m):
    """The constant is an array designator, `[4] = ...` of an initialiser: changing it moves
    an entry of a table, it does not change a computation (`v[4] = ...`, a subscript, is one)."""
    before = code[:m.start()].rstrip()
    if not before.endswith("[") or not re.match(r"\s*\]\s*=(?!=)", code[m.end():]):
        return False
    prev = before[:-1].rstrip()
    return prev == "" or prev[-1] in "{,"


def random_candidates(root, rel, text):
    """Every random-kind mutation of one file: (kind, line, col, old, new) tuples."""
    masked = mask_c(text)
    body = function_body_lines(masked)
    lines, mlines = text.split("\n"), masked.split("\n")
    out = []
    for no, (src, code) in enumerate(zip(lines, mlines), start=1):
        if no not in body or not code.strip():
            continue
        stripped = code.strip()
        if stripped in ("{", "}", "};") or stripped.endswith("\\"):
            continue
        decl = is_declaration(code)
        label = re.match(r"^\s*(case\b|default\b)", code)
        # comparison: only where '<'/'>' are operators (not ->, <<, >>, generics of a macro)
        for m in CMP_RE.finditer(code):
            op = m.group(1)
            if op == ">" and m.start() > 0 and code[m.start() - 1] == "-":
                continue
            out.append(("comparison", no, m.start(), op, CMP_SWAP[op]))
        # boundary: a constant +-1 (not an array size in a declaration, a designator, a case label)
        if not label and not (decl and "[" in code):
            for m in INT_RE.finditer(code):
                if is_designator(code, m):
                    continue
                num, suf = m.group(1), m.group(2)
                val = int(num, 16) if num[:2] in ("0x", "0X") else int(num, 8) if (
                    len(num) > 1 and num[0] == "0") else int(num)
                for d in (1, -1):
                    if val + d < 0:
                        continue
                    new = (hex(val + d) if num[:2] in ("0x", "0X") else str(val + d)) + suf
                    out.append(("boundary", no, m.start(), num + suf, new))
            for m in MINUS_RE.finditer(code):
                out.append(("boundary", no, m.start(), m.group(0), ""))
        # dropped statement: a whole one-line expression statement (no declaration, no
        # return/break/goto whose removal only breaks the control flow's compilation)
        dm = DROP_RE.match(code)
        if dm and not decl and not label and not NOT_DECL_START.match(code) \
                and code.count("(") == code.count(")") and not stripped.startswith(("(void)", ")")):
            start = len(dm.group(1))
            end = len(code.rstrip())
            out.append(("drop", no, start, src[start:end], ";"))
    return out


# ---- mutations -------------------------------------------------------------------------------

class Mutant:
    def __init__(self, mid, kind, op, rel, line, col, old, new, why=""):
        self.id, self.kind, self.op, self.file, self.line = mid, kind, op, rel, line
        self.col, self.old, self.new, self.why = col, old, new, why
        self.status, self.detail, self.killed_by, self.seconds = "pending", "", "", 0.0
        self.diff = ""

    def apply(self, text):
        """text with the mutation made (offsets are of the line/col in the original)."""
        lines = text.split("\n")
        prefix = sum(len(l) + 1 for l in lines[: self.line - 1])
        off = prefix + self.col
        assert text[off:off + len(self.old)] == self.old, (self.id, self.old)
        return text[:off] + self.new + text[off + len(self.old):]

    def to_json(self):
        return {k: getattr(self, k) for k in ("id", "kind", "op", "file", "line", "old", "new",
                                             "status", "killed_by", "detail", "seconds",
                                             "diff", "why")}


def source_files(root, dirs, exts=SEARCH_EXT):
    files = []
    for d in dirs:
        base = os.path.join(root, d)
        for dp, dn, fn in os.walk(base):
            dn.sort()
            for f in sorted(fn):
                if f.endswith(exts):
                    files.append(os.path.relpath(os.path.join(dp, f), root))
    return files


def locate_named(root, spec, search_dirs):
    """(Mutant or None, problem): the pattern's one occurrence, in spec['file'] first."""
    pat = spec["pattern"]
    tried = []
    hint = spec.get("file", "")
    if hint and os.path.isfile(os.path.join(root, hint)):
        tried.append(hint)
    tried += [f for f in source_files(root, search_dirs) if f != hint]
    hits = []
    for rel in tried:
        with open(os.path.join(root, rel), encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        count = text.count(pat)
        if count:
            hits += [(rel, text)] * count
            if rel == hint:
                break  # found where it was said to be: no need to look further
    if not hits:
        return None, "not found"
    if len(hits) > 1:
        where = sorted({h[0] for h in hits})
        return None, f"ambiguous ({len(hits)} occurrences: {', '.join(where)})"
    rel, text = hits[0]
    off = text.index(pat)
    line = text.count("\n", 0, off) + 1
    col = off - (text.rfind("\n", 0, off) + 1)
    moved = "" if rel == hint else f" (moved: was {hint})"
    return Mutant(spec["name"], "named", "named", rel, line, col, pat, spec["replacement"],
                  spec.get("why", "") + moved), ""


def make_diff(m, text):
    new = m.apply(text)
    d = difflib.unified_diff(text.split("\n"), new.split("\n"), f"a/{m.file}", f"b/{m.file}",
                             n=0, lineterm="")
    return "\n".join(list(d)[2:])


def sample_random(root, dirs, seed, k):
    by_kind = {"comparison": [], "boundary": [], "drop": []}
    for rel in source_files(root, dirs, (".c",)):
        with open(os.path.join(root, rel), encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        for c in random_candidates(root, rel, text):
            by_kind[c[0]].append((rel,) + c)
    rng = random.Random(seed)
    pools = {kind: rng.sample(v, len(v)) for kind, v in by_kind.items()}
    kinds = [kd for kd in ("comparison", "boundary", "drop") if pools[kd]]
    picked, i = [], 0
    while len(picked) < k and any(pools[kd] for kd in kinds):
        kd = kinds[i % len(kinds)]
        i += 1
        if pools[kd]:
            picked.append(pools[kd].pop())
    out = []
    for n, (rel, kind, line, col, old, new) in enumerate(picked, start=1):
        out.append(Mutant(f"r{n:03d}", "random", kind, rel, line, col, old, new))
    return out, {kd: len(v) for kd, v in by_kind.items()}


# ---- the scratch copy ------------------------------------------------------------------------

def tree_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z"],
                             capture_output=True, check=True).stdout.decode()
        return sorted(f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f)))
    except (subprocess.CalledProcessError, FileNotFoundError):
        files = []
        for dp, dn, fn in os.walk(root):
            dn[:] = sorted(d for d in dn if not d.startswith(("build", ".git")))
            files += [os.path.relpath(os.path.join(dp, f), root) for f in fn]
        return sorted(files)


def sync_tree(root, dst):
    """Make dst a copy of root's files, copying only what differs (time stamps of unchanged
    files are kept: the scratch build stays incremental). Returns the number copied."""
    want = set(tree_files(root))
    copied = 0
    for rel in want:
        s, d = os.path.join(root, rel), os.path.join(dst, rel)
        with open(s, "rb") as fh:
            data = fh.read()
        try:
            with open(d, "rb") as fh:
                same = fh.read() == data
        except FileNotFoundError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(d), exist_ok=True)
            with open(d, "wb") as fh:
                fh.write(data)
            shutil.copymode(s, d)
            copied += 1
    for dp, dn, fn in os.walk(dst):
        for f in fn:
            rel = os.path.relpath(os.path.join(dp, f), dst)
            if rel not in want:
                os.remove(os.path.join(dp, f))
    return copied


CHILD = {"proc": None}


def run(cmd, timeout=None, cwd=None):
    """(returncode or 'timeout', output). The child is its own process group: a timeout or a
    Ctrl-C ends all of it."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    CHILD["proc"] = p
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return "timeout", out.decode(errors="replace")
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        CHILD["proc"] = None


class Scratch:
    def __init__(self, root, scratch, jobs, cmake_args):
        self.root, self.jobs = root, jobs
        self.tree = os.path.join(scratch, "tree")
        self.build = os.path.join(scratch, "build")
        self.cmake_args = cmake_args
        self.targets = set()
        self.tests = []  # ctest names
        self.secs = {}   # test -> seconds in the baseline run

    def prepare(self, log):
        os.makedirs(self.tree, exist_ok=True)
        n = sync_tree(self.root, self.tree)
        log(f"scratch tree {self.tree}: {n} file(s) copied")
        if not os.path.isfile(os.path.join(self.build, "CMakeCache.txt")):
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            rc, out = run(["cmake", "-S", self.tree, "-B", self.build] + gen + self.cmake_args)
            if rc != 0:
                print(out[-3000:], file=sys.stderr)
                die("cmake configure of the scratch copy failed", 1)
        rc, out = self.build_targets(None)
        if rc != 0:
            print(out[-3000:], file=sys.stderr)
            die("the unmutated scratch copy does not build", 1)
        rc, out = run(["cmake", "--build", self.build, "--target", "help"])
        for l in out.splitlines():
            l = l.strip()
            if l.startswith("... "):
                self.targets.add(l[4:].split()[0])
            elif ": " in l:
                self.targets.add(l.split(":")[0])
        rc, out = run(["ctest", "--test-dir", self.build, "-N"])
        self.tests = re.findall(r"Test\s+#\d+: (\S+)", out)

    def build_targets(self, targets, timeout=None):
        cmd = ["cmake", "--build", self.build, "-j", str(self.jobs)]
        if targets:
            cmd += ["--target"] + sorted(targets)
        return run(cmd, timeout=timeout)

    def target_of(self, test):
        name = test.split("/")[-1]
        if name in self.targets:
            return name
        if test.startswith("cli/") and "iommulab-cli" in self.targets:
            return "iommulab-cli"  # tests/cli/*.sh run the CLI
        return None  # unknown: build everything

    def ctest(self, names, timeout):
        if not names:
            return 0, "", ""
        regex = "^(" + "|".join(re.escape(t) for t in names) + ")$"
        rc, out = run(["ctest", "--test-dir", self.build, "-j", str(self.jobs), "--stop-on-failure",
                       "-R", regex, "--output-on-failure"], timeout=timeout)
        failed = re.findall(r"\d+/\d+ Test\s+#\d+: (\S+) \.+\**\s*(?:\*\*\*)?(Failed|Timeout|"
                            r"Exception|Not Run|SEGFAULT|Subprocess aborted|Child aborted)", out)
        for name, secs in re.findall(r"Test\s+#\d+: (\S+) \.+\s+Passed\s+([\d.]+) sec", out):
            self.secs.setdefault(name, float(secs))
        first = failed[0][0] if failed else ""
        if rc != "timeout" and any(f[1] == "Timeout" for f in failed):
            rc = "timeout"
        return rc, out, first


def score(test, relpath):
    """How likely a test is to notice a change in relpath: its area is the file's top
    directory, and words of the file's path appear in the test's name."""
    parts = relpath.split("/")
    area, name = (test.split("/", 1) + [""])[:2] if "/" in test else ("", test)
    s = 0
    if len(parts) > 2 and parts[0] == "src" and area == parts[1]:
        s += 3
    words = set(re.split(r"[/_.\-]+", "/".join(parts[1:]).rsplit(".", 1)[0])) - {"", "c", "h", "src"}
    for w in words:
        if len(w) >= 3 and w in name:
            s += 2
    return s


def phase_timeout(sc, names, cap):
    """Three times what the tests took unmutated (as many run at once as --jobs), at least
    60 s, at most cap: a mutant that hangs costs little more than a passing run."""
    need = sum(sc.secs.get(t, cap / 4) for t in names) / sc.jobs
    return int(min(cap, max(60, 3 * need)))


def run_mutant(m, sc, baseline_bad, timeout, first_n, log):
    path = os.path.join(sc.tree, m.file)
    with open(path, "rb") as fh:
        orig = fh.read()
    text = orig.decode("utf-8", errors="surrogateescape")
    m.diff = make_diff(m, text)
    t0 = time.time()
    try:
        with open(path, "wb") as fh:
            fh.write(m.apply(text).encode("utf-8", errors="surrogateescape"))
        tests = [t for t in sc.tests if t not in baseline_bad]
        ranked = sorted(tests, key=lambda t: (-score(t, m.file), tests.index(t)))
        first = [t for t in ranked if score(t, m.file) > 0][:first_n]
        rest = [t for t in tests if t not in first]
        phases = []
        if first:
            tg = {sc.target_of(t) for t in first}
            phases.append((None if None in tg else tg | {t for t in ("iommulab-cli",) if t in sc.targets},
                           first))
        phases.append((None, rest))
        for targets, names in phases:
            rc, out = sc.build_targets(targets)  # a build does not hang: no time limit
            if rc != 0:
                m.status = "didn't build"
                errs = [l for l in out.splitlines() if "error" in l]
                m.detail = (errs[0] if errs else out.strip().splitlines()[-1:] or [""])[0][:300]
                return
            rc, out, failed = sc.ctest(names, phase_timeout(sc, names, timeout))
            if rc == "timeout":
                m.status, m.killed_by = "timeout", failed or "(the whole run)"
                m.detail = f"past {phase_timeout(sc, names, timeout)} s"
                return
            if rc != 0:
                m.status, m.killed_by = "killed", failed or "?"
                return
        m.status = "survived"
    finally:
        with open(path, "wb") as fh:
            fh.write(orig)
        m.seconds = round(time.time() - t0, 1)


# ---- report -------------------------------------------------------------------------------------

def rate(ms):
    k = sum(m.status in ("killed", "timeout") for m in ms)
    s = sum(m.status == "survived" for m in ms)
    return k, s, (100.0 * k / (k + s) if k + s else None)


def summary(ms):
    c = {st: sum(m.status == st for m in ms) for st in
         ("killed", "timeout", "survived", "didn't build", "not found", "ambiguous", "pending")}
    k, s, r = rate(ms)
    return c, (f"{r:.1f} %" if r is not None else "n/a")


def text_report(named, randoms, meta):
    out = [f"mutation run: {meta['command']}",
           f"commit {meta['commit']}, seed {meta['seed']}, sample {meta['sample']}, "
           f"{meta['seconds']:.0f} s host time"
           + ("" if meta["state"] == "finished" else f" ({meta['state']}: the pending mutants not run yet)")]
    for title, ms in (("named", named), ("random", randoms)):
        if not ms:
            continue
        c, r = summary(ms)
        out.append(f"{title}: {len(ms)} mutants: " + ", ".join(f"{v} {k}" for k, v in c.items() if v)
                   + f"; kill rate {r}")
        for m in ms:
            who = f" by {m.killed_by}" if m.killed_by else ""
            det = f" ({m.detail})" if m.detail and m.status != "killed" else ""
            out.append(f"  {m.id:<28} {m.status:<12} {m.file}:{m.line} [{m.op}]{who}{det}")
            if m.status == "survived":
                out += ["      " + l for l in m.diff.splitlines()]
    return "\n".join(out) + "\n"


def write_whole(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(data)
    os.replace(tmp, path)


def run_meta(a, t_start, commit, state):
    return {"command": " ".join(["scripts/mutate.py"] + sys.argv[1:]), "seed": a.seed,
            "sample": a.sample, "seconds": time.time() - t_start, "state": state,
            "interrupted": state == "interrupted", "commit": commit}


def save_reports(a, named, randoms, meta):
    if a.report:
        write_whole(a.report, text_report(named, randoms, meta))
    if a.json:
        doc = dict(meta)
        for title, ms in (("named", named), ("random", randoms)):
            c, r = summary(ms)
            doc[title] = {"counts": c, "kill_rate": r, "mutants": [m.to_json() for m in ms]}
        write_whole(a.json, json.dumps(doc, indent=1) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(here), help="the tree (default: this repo)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sample", type=int, default=50, help="random mutants (default 50)")
    ap.add_argument("--named", default=None,
                    help="named mutations, JSON files, comma-separated (default "
                         "scripts/mutations-named.json; '' none)")
    ap.add_argument("--only", default="", help="only these mutant ids (comma-separated globs)")
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS), help="where random mutants go")
    ap.add_argument("--search", default="src,tools", help="where named patterns are searched")
    ap.add_argument("--scratch", default=None, help="scratch dir (default ROOT/build-mutate)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=0,
                    help="per build or test phase, s (default: 4x the baseline suite, >= 120)")
    ap.add_argument("--first", type=int, default=12, help="likeliest killers run first (12)")
    ap.add_argument("--cmake-arg", action="append", default=None,
                    help="scratch configure arguments (default: RelWithDebInfo, ILAB_WERROR=OFF)")
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("--json", help="write the JSON report here")
    ap.add_argument("--report", help="write the text report here (also printed)")
    a = ap.parse_args()
    if a.sample < 0 or a.jobs < 1:
        die("--sample must be >= 0 and --jobs >= 1")
    root = os.path.abspath(a.root)
    named_file = a.named if a.named is not None else os.path.join(root, "scripts", "mutations-named.json")
    t_start = time.time()

    specs = []
    for one in filter(None, named_file.split(",")):  # several lists share one baseline run
        try:
            with open(one) as fh:
                these = json.load(fh)
            for s in these:
                if not all(isinstance(s.get(k), str) for k in ("name", "pattern", "replacement")):
                    raise ValueError(f"entry {s!r} needs name, pattern and replacement strings")
        except (OSError, ValueError, AttributeError) as e:
            die(f"{one}: {e}")
        specs += these
    if len({s["name"] for s in specs}) != len(specs):
        die(f"{named_file}: a mutation name given twice")
    named = []
    for s in specs:
        m, problem = locate_named(root, s, a.search.split(","))
        if m is None:
            m = Mutant(s["name"], "named", "named", s.get("file", "?"), 0, 0, s["pattern"],
                       s["replacement"], s.get("why", ""))
            m.status, m.detail = problem.split(" (")[0], problem
        named.append(m)
    randoms, pool = sample_random(root, a.dirs.split(","), a.seed, a.sample) if a.sample else ([], {})
    if a.only:
        globs = a.only.split(",")
        keep = lambda m: any(fnmatch.fnmatch(m.id, g) for g in globs)
        named, randoms = [m for m in named if keep(m)], [m for m in randoms if keep(m)]

    def log(msg):
        print(f"mutate: {msg}", file=sys.stderr, flush=True)

    for m in named + randoms:
        if m.status == "pending":
            with open(os.path.join(root, m.file), encoding="utf-8", errors="surrogateescape") as fh:
                m.diff = make_diff(m, fh.read())
    if pool:
        log("random candidates: " + ", ".join(f"{v} {k}" for k, v in pool.items()))
    if a.list:
        for m in named + randoms:
            print(f"{m.id:<28} {m.status:<10} {m.file}:{m.line} [{m.op}] {m.old!r} -> {m.new!r}")
        return 0

    # the commit measured: the tree as copied now (later commits do not change the copy)
    commit = "?"
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "?"
        if subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD"]).returncode:
            commit += "+dirty"
    except FileNotFoundError:
        pass
    scratch = os.path.abspath(a.scratch or os.path.join(root, "build-mutate"))
    cmake_args = a.cmake_arg if a.cmake_arg is not None else [
        "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DILAB_WERROR=OFF"]
    sc = Scratch(root, scratch, a.jobs, cmake_args)

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    todo = [m for m in named + randoms if m.status == "pending"]
    interrupted = False
    try:
        sc.prepare(log)
        t0 = time.time()
        rc, out, failed = sc.ctest(sc.tests, None)
        base_s = time.time() - t0
        baseline_bad = set()
        if rc != 0:
            baseline_bad = set(re.findall(r"\d+/\d+ Test\s+#\d+: (\S+) \.+\**\s*(?:\*\*\*)?"
                                          r"(?:Failed|Timeout|Exception|SEGFAULT)", out))
            # --stop-on-failure: run the rest to know every failing test
            rc2, out2 = run(["ctest", "--test-dir", sc.build, "-j", str(a.jobs)])
            baseline_bad |= set(re.findall(r"\d+ - (\S+) \(", out2))
            log("the unmutated tree fails " + ", ".join(sorted(baseline_bad))
                + ": left out of every mutant's run")
            if set(sc.tests) <= baseline_bad:
                die("every test fails on the unmutated tree", 1)
        timeout = a.timeout or max(120, int(4 * base_s))
        log(f"baseline: {len(sc.tests)} tests pass in {base_s:.0f} s; per-phase timeout {timeout} s;"
            f" {len(todo)} mutants")
        for i, m in enumerate(todo, start=1):
            run_mutant(m, sc, baseline_bad, timeout, a.first, log)
            log(f"[{i}/{len(todo)}] {m.id} {m.file}:{m.line} {m.op}: {m.status}"
                + (f" by {m.killed_by}" if m.killed_by else "") + f" ({m.seconds:.0f} s)")
            # a long run's reports, whole after every mutant: a run stopped by a crash or
            # a deadline still leaves what it measured ("pending" marks the rest)
            save_reports(a, named, randoms, run_meta(a, t_start, commit, "running"))
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: the scratch tree is restored; the report covers the mutants run")
    meta = run_meta(a, t_start, commit, "interrupted" if interrupted else "finished")
    print(text_report(named, randoms, meta), end="")
    save_reports(a, named, randoms, meta)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
