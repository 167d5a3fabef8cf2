#!/usr/bin/env python3
"""docs-figures.py - keep the figures of README.md and docs/*.md tied to the commands that print them.

A figure in the docs is in one of three forms (docs/journal.md is history and exempt):

  (a) generated:  <!-- gen: CMD -->FIGURE<!-- /gen -->
      FIGURE is CMD's output (its trailing newlines dropped; a block that starts with a newline
      stays a block). `update` rewrites it, `check` fails when it differs.
  (b) floor:      <!-- floor: CMD -->N<!-- /floor -->   or   ...-->N of M<!-- /floor -->
      a headline count: the first "A of B" (or number A) CMD prints must reach it, A >= N and
      B == M, so that an improvement does not break the docs. Neither form rewrites a floor.
  (c) measured:   (measured on SHA: CMD)   (CMD may be in backticks, then ", a note" may follow)
      for a command too long for the test suite: the figures of that sentence were printed by
      CMD on commit SHA. `check` requires both and that SHA is a commit in HEAD's history;
      `report` lists each with the number of commits since SHA that touched the model.

In a table row the command writes | as \| (GFM would split the cell there).
CMD is a shell command as a user types it in the source tree; build/ is the build under test
(--build). In `CMD | scripts/docs-filter.py ...` CMD runs once for every block that names it
(the full `iommulab run` feeds several) and the filter cuts the figure out of its output.
Commands run in a scratch directory that links the source tree's files, so their default
outputs (results/) land there and not in the tree. Gen and floor commands must be quick
(the suite runs them); anything longer is form (c).

  scripts/docs-figures.py [check|update|report] [--src DIR] [--build DIR] [--cache DIR]
                          [--git DIR] [FILE...]

check   (default) every gen block equals its command's output, every floor is reached, every
        measured-on names a command and a commit of this history; exit 1 listing what is not
update  rewrite the gen blocks in place (a file is replaced whole), then check the rest
report  the measured-on figures, each with the commits since it that touched src/ profiles/
        scenarios/ tools/ (figures that may need re-measuring)
--cache DIR  keep each command's output in DIR and reuse it (tests run a check twice)
--git DIR    the checkout whose history measured-on commits must be in (default SRC; without
             git they are not checked, a failure when CI is set)
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

GEN = re.compile(r"<!-- gen: (.*?) -->(.*?)<!-- /gen -->", re.S)
FLOOR = re.compile(r"<!-- floor: (.*?) -->(.*?)<!-- /floor -->", re.S)
MEASURED = re.compile(r"\(measured\s+on\s+([0-9a-f]{7,40}):\s+(?:`([^`]+)`(?:,[^)]*)?|([^)`]+))\)")
# anything that looks like a measured-on figure: "(measured on ..." or "measured on <sha>"
MEASURED_LOOSE = re.compile(r"(?:\(measured\s+on\b|measured\s+on\s+[0-9a-f]{7,40}\b)[^)]*\)?")
OPEN_MARK = re.compile(r"<!-- (gen|floor):")
OF = re.compile(r"(\d+) of (\d+)")
NUM = re.compile(r"\d+")
# what a measured-on command may start with: a program of this tree or a tool run on it
COMMAND_START = re.compile(r"^(build[\w-]*/|scripts/|\./|make\b|ctest\b|python3\b|bash\b|iommulab\b)")
MODEL_PATHS = ["src", "profiles", "scenarios", "tools"]
FILTER = "scripts/docs-filter.py"  # 'CMD | scripts/docs-filter.py ...': CMD runs once for all


FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def in_code(text):
    """pos -> True for a marker shown as an example: inside a fenced block, or opening a code
    span (`<!-- gen: ...`). A marker that a stray backtick happens to enclose is still checked."""
    fences = [(m.start(), m.end()) for m in FENCE.finditer(text)]
    return lambda pos: (pos > 0 and text[pos - 1] == "`") or any(a <= pos < b for a, b in fences)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def doc_files(src, names):
    if names:  # relative to SRC
        return [os.path.relpath(os.path.join(src, n), src) for n in names]
    files = ["README.md"]
    docs = os.path.join(src, "docs")
    files += sorted("docs/" + f for f in os.listdir(docs)
                    if f.endswith(".md") and f != "journal.md")
    return files


class Runner:
    """Runs doc commands in a scratch directory against the build under test, once each."""

    def __init__(self, src, build, cache):
        self.src, self.build, self.cache = src, os.path.abspath(build), cache
        self.outputs = {}
        self.scratch = tempfile.mkdtemp(prefix="docs-figures.")
        for entry in os.listdir(src):
            if entry.startswith("build") or entry in ("results", ".git"):
                continue
            os.symlink(os.path.join(src, entry), os.path.join(self.scratch, entry))
        # build/ is the build under test: commands (and what they echo) read as in the tree
        os.symlink(self.build, os.path.join(self.scratch, "build"))

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def sh(self, cmd, stdin=None):
        p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=self.scratch, input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise RuntimeError(f"exit {p.returncode}: {err}")
        return p.stdout

    def cached(self, key, run):
        """run()'s output, remembered under KEY for this process and in --cache"""
        if key not in self.outputs:
            digest = hashlib.sha256((self.build + "\0" + key).encode()).hexdigest()[:16]
            path = os.path.join(self.cache, digest) if self.cache else None
            if path and os.path.exists(path):
                with open(path) as f:
                    self.outputs[key] = f.read()
            else:
                self.outputs[key] = run()
                if path:
                    with open(path, "w") as f:
                        f.write(self.outputs[key])
        return self.outputs[key]

    def output(self, cmd):
        """CMD's output; in 'PRODUCER | FILTER' the producer runs once for all its blocks."""
        producer, sep, filt = cmd.partition(" | " + FILTER)
        producer = producer.strip()

        def produce():
            print(f"docs-figures: running {producer}", file=sys.stderr, flush=True)
            return self.sh(producer)

        out = self.cached(producer, produce)
        if not sep:
            return out
        filt = FILTER + filt
        return self.cached(producer + "\0" + filt, lambda: self.sh(filt, stdin=out))


def in_table_row(text, pos):
    """a marker in a Markdown table row writes its command's pipes as \\| (GFM splits cells at |)"""
    start = text.rfind("\n", 0, pos) + 1
    return text.startswith("|", start)


def command(text, m):
    cmd = m.group(1)
    return cmd.replace("\\|", "|") if in_table_row(text, m.start()) else cmd


def gen_body(old, out):
    out = out.rstrip("\n")
    return "\n" + out + "\n" if old.startswith("\n") else out.strip()


class Git:
    def __init__(self, src):
        self.src = src
        self.ok = subprocess.run(["git", "-C", src, "rev-parse", "--git-dir"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                                 ).returncode == 0 if shutil.which("git") else False

    def is_ancestor(self, sha):
        if subprocess.run(["git", "-C", self.src, "cat-file", "-e", sha + "^{commit}"],
                          stderr=subprocess.DEVNULL).returncode != 0:
            return "no such commit"
        if subprocess.run(["git", "-C", self.src, "merge-base", "--is-ancestor", sha, "HEAD"]
                          ).returncode != 0:
            return "not in HEAD's history"
        return None

    def model_commits_since(self, sha):
        out = subprocess.run(["git", "-C", self.src, "rev-list", "--count", sha + "..HEAD", "--"]
                             + MODEL_PATHS, stdout=subprocess.PIPE, text=True).stdout.strip()
        return int(out or 0)


def check_floor(body, out):
    want = OF.search(body) or NUM.search(body)
    if not want:
        return f"floor '{body}' holds no number"
    got = OF.search(out) if want.re is OF else NUM.search(out)
    if not got:
        return f"the command printed no {'N of M' if want.re is OF else 'number'}: {out.strip()[:80]!r}"
    if int(got.group(1) if got.re is OF else got.group(0)) < \
            int(want.group(1) if want.re is OF else want.group(0)):
        return f"{got.group(0)} is below the floor {want.group(0)}"
    if want.re is OF and got.group(2) != want.group(2):
        return f"{got.group(0)}: the docs say of {want.group(2)}"
    return None


def process(mode, src, files, runner, git):
    problems, measured, counts = [], [], {"gen": 0, "floor": 0}
    for rel in files:
        path = os.path.join(src, rel)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            problems.append(f"{rel}: {e.strerror}")
            continue
        code = in_code(text)
        # every opened marker must be a whole block
        opened = sum(not code(m.start()) for m in OPEN_MARK.finditer(text))
        whole = sum(not code(m.start()) for m in GEN.finditer(text)) + \
            sum(not code(m.start()) for m in FLOOR.finditer(text))
        if opened != whole:
            problems.append(f"{rel}: {opened - whole} gen/floor marker(s) without their closing tag")

        def regen(m):
            cmd, body = command(text, m), m.group(2)
            where = f"{rel}:{line_of(text, m.start())}"
            if code(m.start()):
                return m.group(0)
            counts["gen"] += 1
            try:
                out = runner.output(cmd)
                if not out.strip():  # an extraction that matched nothing
                    raise RuntimeError("printed nothing")
                new = gen_body(body, out)
            except Exception as e:  # a command that fails is a finding, not a crash
                problems.append(f"{where}: gen '{cmd}': {e}")
                return m.group(0)
            if new != body:
                if mode == "update":
                    print(f"docs-figures: {where}: rewritten ({cmd})")
                else:
                    problems.append(f"{where}: '{body.strip()[:60]}' is not what '{cmd}' prints: "
                                    f"'{new.strip()[:60]}' (scripts/update-docs.sh rewrites it)")
            return m.group(0)[:m.start(2) - m.start()] + new + "<!-- /gen -->"

        new_text = GEN.sub(regen, text)
        if mode == "update" and new_text != text:
            tmp = path + ".docs-figures.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(new_text)
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
            os.replace(tmp, path)
            text = new_text
            code = in_code(text)

        for m in FLOOR.finditer(text):
            if code(m.start()):
                continue
            counts["floor"] += 1
            cmd, body = command(text, m), m.group(2)
            where = f"{rel}:{line_of(text, m.start())}"
            try:
                err = check_floor(body, runner.output(cmd))
            except Exception as e:
                err = f"'{cmd}': {e}"
            if err:
                problems.append(f"{where}: floor ({cmd}): {err}")

        strict = {m.start() for m in MEASURED.finditer(text)}
        for m in MEASURED_LOOSE.finditer(text):
            if m.start() not in strict and not code(m.start()):
                problems.append(f"{rel}:{line_of(text, m.start())}: '{m.group(0)[:70]}' is not "
                                "'(measured on SHA: COMMAND)'")
        for m in MEASURED.finditer(text):
            if code(m.start()):
                continue
            sha, cmd = m.group(1), " ".join((m.group(2) or m.group(3)).split())
            where = f"{rel}:{line_of(text, m.start())}"
            if not COMMAND_START.match(cmd):
                problems.append(f"{where}: measured on {sha}: '{cmd}' is not a command of this tree")
            if git.ok:
                err = git.is_ancestor(sha)
                if err:
                    problems.append(f"{where}: measured on {sha}: {err}")
            measured.append((where, sha, cmd))
    return problems, measured, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", nargs="?", default="check", choices=["check", "update", "report"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--build", default=None, help="build directory (default SRC/build)")
    ap.add_argument("--cache", default=None)
    ap.add_argument("--git", default=None, help="the git checkout whose history the measured-on "
                    "commits must be in (default SRC)")
    a = ap.parse_intermixed_args()
    src = os.path.abspath(a.src)
    build = a.build or os.path.join(src, "build")
    files = doc_files(src, a.files)
    git = Git(os.path.abspath(a.git or src))
    runner = Runner(src, build, a.cache)
    try:
        if a.mode == "report":
            problems, measured, counts = process("report", src, files, NoRun(), git)
            problems = [p for p in problems if " gen " not in p and "floor" not in p]
        else:
            problems, measured, counts = process(a.mode, src, files, runner, git)
    finally:
        runner.close()
    if a.mode == "report":
        for where, sha, cmd in measured:
            n = git.model_commits_since(sha) if git.ok else "?"
            flag = "  <- code changed since" if n else ""
            print(f"{where}: {sha} ({n} commits to {' '.join(MODEL_PATHS)} since): {cmd}{flag}")
    if not git.ok:
        msg = "not a git checkout: measured-on commits not checked"
        if os.environ.get("CI", "") not in ("", "0", "false"):
            problems.append(msg + ", and CI is set")
        else:
            print("docs-figures: SKIP: " + msg, file=sys.stderr)
    for p in problems:
        print("docs-figures: " + p)
    if problems:
        return 1
    print(f"docs-figures: {len(files)} files: {counts['gen']} generated, {counts['floor']} floors, "
          f"{len(measured)} measured-on: ok")
    return 0


class NoRun:
    """report runs nothing: gen and floor blocks count as they are."""

    def output(self, cmd):
        raise RuntimeError("not run")


if __name__ == "__main__":
    sys.exit(main())
