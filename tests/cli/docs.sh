#!/usr/bin/env bash
# docs.sh — the figures of README.md and docs/*.md match the commands that print them
# (scripts/docs-figures.py check: gen blocks, floors, measured-on commits), the check fails
# when a figure is edited (mutations of a copy), and `topo --help` names every built-in machine.
# Runs the full `iommulab run` once (its output feeds every block that quotes it).
#   bash docs.sh <iommulab> <srcdir>
set -u
BIN=$1
SRC=$2
. "$SRC/tests/support/cli_lib.sh" # fail, bad, have
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# `topo --help` names every built-in machine of src/topo/topo_preset.c, and each one loads
presets=$(grep -oE '^\s+\{ "[a-z0-9-]+", [0-9]+, [0-9]+,' "$SRC/src/topo/topo_preset.c" | cut -d'"' -f2)
[ "$(printf '%s\n' "$presets" | grep -c .)" -ge 4 ] || bad "found $(printf '%s\n' "$presets" | grep -c .) presets in topo_preset.c, want >= 4"
help=$("$BIN" topo --help) || bad "topo --help exited $?"
for p in $presets; do
	printf '%s\n' "$help" | grep -q -- "$p" || bad "topo --help does not name the built-in topology $p"
	"$BIN" topo --topology "$p" >/dev/null || bad "topo --topology $p exited $?"
done

have python3 "the docs' figures" || exit $fail
# measured-on commits are checked in a git checkout (docs-figures.py says SKIP elsewhere, and
# fails when CI is set); a tree copied without .git (scripts/check-fresh-debian.sh) has none
git_ok=0
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 && git_ok=1

figures() { python3 "$SRC/scripts/docs-figures.py" "$@"; }
build=$(cd "$(dirname "$BIN")" && pwd)
mkdir "$tmp/cache"
t0=$(date +%s)
figures check --src "$SRC" --build "$build" --cache "$tmp/cache" >"$tmp/check.log" 2>&1 ||
	{ cat "$tmp/check.log"; bad "docs-figures check failed (scripts/update-docs.sh rewrites gen blocks and lists the rest)"; }
echo "docs-figures check: $(tail -1 "$tmp/check.log") ($(( $(date +%s) - t0 )) s)"

# the check must see the README's figures: at least one of each form
for form in '<!-- gen: ' '<!-- floor: ' '(measured on '; do
	grep -qF -- "$form" "$SRC/README.md" || bad "README.md has no '$form' figure"
done

# Mutations of a copy (README.md, docs/, scripts/): each must fail the check, with the
# file named. The commands' outputs come from the cache; git history from the source tree.
copy() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	cp -r "$SRC/README.md" "$SRC/docs" "$SRC/scripts" "$tmp/tree/"
}
check_copy() {
	figures check --src "$tmp/tree" --git "$SRC" --build "$build" --cache "$tmp/cache" \
		README.md "$@" >"$tmp/mut.log" 2>&1
}
# mutate WHAT PYTHON_REGEX REPLACEMENT: replace the first match in the copy's README.md
mutate() {
	local what=$1
	copy
	python3 - "$tmp/tree/README.md" "$2" "$3" <<-'EOF' || { bad "$what: mutation did not apply"; return 1; }
		import re, sys
		path, pat, rep = sys.argv[1:]
		s = open(path).read()
		t = re.sub(pat, rep, s, count=1, flags=re.S)
		if t == s:
		    sys.exit(1)
		open(path, "w").write(t)
	EOF
	if check_copy; then
		bad "$what: the check passed"
	elif ! grep -q 'README.md:[0-9]' "$tmp/mut.log"; then
		bad "$what: the failure does not name README.md:LINE:"; cat "$tmp/mut.log"
	fi
}
copy
check_copy || { cat "$tmp/mut.log"; bad "the unedited copy fails"; }
# every marker of the README is checked (none taken for a code example)
want="$(grep -o '<!-- gen: ' "$SRC/README.md" | wc -l) generated, $(grep -o '<!-- floor: ' "$SRC/README.md" | wc -l) floors, $(grep -o '(measured on ' "$SRC/README.md" | wc -l) measured-on"
grep -qF "1 files: $want: ok" "$tmp/mut.log" || bad "README.md: not every marker checked: '$(tail -1 "$tmp/mut.log")', want '$want'"
mutate "a generated figure edited" '(<!-- gen: [^>]*-->\s*)(\d)' '\g<1>9\2'
mutate "a generated figure's command changed" '<!-- gen: ([^>]*) \| ' '<!-- gen: \1 | tail -1 | '
mutate "a floor raised above the run" '(<!-- floor: [^>]*-->)(\d+)' '\g<1>9\2'
mutate "a floor's total edited" '(<!-- floor: [^>]*-->\d+ of )(\d+)' '\g<1>1\2'
mutate "a gen block left open" '<!-- /gen -->' ''
[ $git_ok = 0 ] ||
	mutate "a measured-on commit that is not in git" '\(measured on [0-9a-f]+:' '(measured on 0123abc:'
mutate "a measured-on figure without its command" '\(measured on ([0-9a-f]+): [^)]*\)' '(measured on \1)'
mutate "a measured-on command that is not one" '\(measured on ([0-9a-f]+): `?' '(measured on \1: see `'

# update rewrites a stale gen block of the copy, after which the check passes
copy
python3 - "$tmp/tree/README.md" <<-'EOF'
	import re, sys
	s = open(sys.argv[1]).read()
	open(sys.argv[1], "w").write(re.sub(r"(<!-- gen: [^>]*-->)(\d)", r"\g<1>9\2", s, count=1))
EOF
figures update --src "$tmp/tree" --git "$SRC" --build "$build" --cache "$tmp/cache" README.md \
	>"$tmp/upd.log" 2>&1 || { cat "$tmp/upd.log"; bad "update of a stale block failed"; }
grep -q 'rewritten' "$tmp/upd.log" || bad "update did not say it rewrote the stale block"
cmp -s "$tmp/tree/README.md" "$SRC/README.md" || bad "update did not restore the README's figure"

exit $fail
