#!/usr/bin/env python3
"""check-expected-moves.py — no pinned figure moves, and no published anchor changes, unnamed.

For every commit after the base recorded in scripts/expected-guard-base (up to HEAD, or REV):
  * a commit that changes tests/data/expected/quick-figures.txt must carry in its message
        Moved: <scenario>/<label>, <scenario>/<label>, ...
    (one or more such lines) naming every case whose `case` or `figure` lines it changed,
    added or removed. A moved case left unnamed fails the check. A named case that did not
    move is a warning only: it hides no figure, and a commit already on main cannot be
    reworded, so failing on it would fail every later run for a harmless slip.
  * a commit that changes tests/data/anchors/published-figures.txt (the seeds' published
    figures and tolerances, edited only by hand) must carry a line `Anchors: <reason>`.
A merge commit is checked only where its file differs from every parent's (the branch's own
commits are checked one by one). Accepting history that fails (a commit on main that cannot
be reworded) is done by moving the base forward, in a reviewed commit.

  scripts/check-expected-moves.py [--repo DIR] [REV]
  scripts/check-expected-moves.py --moved-line OLD NEW   (the line two versions need)
Exit 0: every commit names its moves; 1: one does not (each named on one line); 2: the base
is not in this clone's history (a shallow clone: git fetch --unshallow) or bad usage.
"""
import subprocess
import sys

EXPECTED = "tests/data/expected/quick-figures.txt"
ANCHORS = "tests/data/anchors/published-figures.txt"
BASE_FILE = "scripts/expected-guard-base"


def git(repo, *args, check=True):
    p = subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout if check else (p.returncode, p.stdout)


def blob(repo, rev, path):
    rc, out = git(repo, "show", f"{rev}:{path}", check=False)
    return out if rc == 0 else ""


def cases(text):
    """{'scenario/label': [its case and figure lines]} of one version of the expected file."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] in ("case", "figure"):
            out.setdefault(f"{f[1]}/{f[2]}", []).append(line.strip())
    return out


def moved_cases(old, new):
    a, b = cases(old), cases(new)
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def named_moves(message):
    names = set()
    for line in message.splitlines():
        if line.startswith("Moved:"):
            names |= {n.strip() for n in line[len("Moved:"):].split(",") if n.strip()}
    return names


def anchors_reason(message):
    return any(l.startswith("Anchors:") and l[len("Anchors:"):].strip()
               for l in message.splitlines())


def check_commit(repo, sha, problems, warnings):
    parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
    message = git(repo, "log", "-1", "--format=%B", sha)
    short = sha[:12]
    for path in (EXPECTED, ANCHORS):
        new = blob(repo, sha, path)
        olds = [blob(repo, p, path) for p in parents] or [""]
        if any(new == o for o in olds):
            continue
        old = olds[0]
        if path == ANCHORS:
            if not anchors_reason(message):
                problems.append(f"{short}: changes {ANCHORS} without an 'Anchors: <reason>' line")
            continue
        moved = moved_cases(old, new)
        named = named_moves(message)
        missing, extra = sorted(moved - named), sorted(named - moved)
        if missing:
            problems.append(f"{short}: changes {EXPECTED} but its message does not name "
                            f"{len(missing)} moved case(s); add: Moved: {', '.join(missing)}")
        if extra:
            warnings.append(f"{short}: 'Moved:' names case(s) that did not move: {', '.join(extra)}")


def main(argv):
    repo, rev = ".", "HEAD"
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--repo" and args:
            repo = args.pop(0)
        elif a == "--moved-line" and len(args) == 2:
            with open(args[0]) as fa, open(args[1]) as fb:
                moved = sorted(moved_cases(fa.read(), fb.read()))
            if moved:
                print("Moved: " + ", ".join(moved))
            return 0
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif not a.startswith("-") and rev == "HEAD":
            rev = a
        else:
            print(f"check-expected-moves: bad argument '{a}' (see --help)", file=sys.stderr)
            return 2
    try:
        top = git(repo, "rev-parse", "--show-toplevel").strip()
        with open(f"{top}/{BASE_FILE}") as fh:
            base = next(l.split()[0] for l in fh if l.strip() and not l.startswith("#"))
    except (RuntimeError, OSError, StopIteration) as e:
        print(f"check-expected-moves: no repository or no base in {BASE_FILE}: {e}", file=sys.stderr)
        return 2
    rc, _ = git(top, "cat-file", "-e", f"{base}^{{commit}}", check=False)
    if rc != 0:
        shallow = git(top, "rev-parse", "--is-shallow-repository", check=False)[1].strip()
        why = "a shallow clone: run git fetch --unshallow" if shallow == "true" else \
            "not in this repository's history"
        print(f"check-expected-moves: base {base[:12]} ({BASE_FILE}) is missing: {why}",
              file=sys.stderr)
        return 2
    rc, _ = git(top, "merge-base", "--is-ancestor", base, rev, check=False)
    if rc != 0:
        print(f"check-expected-moves: base {base[:12]} is not an ancestor of {rev}", file=sys.stderr)
        return 2
    commits = git(top, "rev-list", "--reverse", f"{base}..{rev}").split()
    problems, warnings = [], []
    for sha in commits:
        check_commit(top, sha, problems, warnings)
    for w in warnings:
        print(f"check-expected-moves: warning: {w}")
    for p in problems:
        print(f"check-expected-moves: FAIL: {p}")
    print(f"check-expected-moves: {len(commits)} commit(s) after {base[:12]} checked, "
          f"{len(problems)} failing")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
