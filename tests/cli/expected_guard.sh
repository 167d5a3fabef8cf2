#!/usr/bin/env bash
# expected_guard.sh — scripts/check-expected-moves.py on a scratch git repository: a commit that
# changes tests/data/expected/quick-figures.txt without a `Moved:` line naming every moved case
# fails (naming the missing case), with the line passes, a name that did not move only warns;
# a commit that changes the published anchors needs an `Anchors:` line; a base missing from
# the history is one line and exit 2; --moved-line prints the line to paste. Run as:
#   bash expected_guard.sh <iommulab> <srcdir>
set -u
SRC=$2
. "$2/tests/support/cli_lib.sh" # fail, bad, have
have git "the expected-figures guard" || exit $((fail ? 1 : 77))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
R=$TMP/repo
G="$SRC/scripts/check-expected-moves.py"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
g() { git -C "$R" -c commit.gpgsign=false "$@" >/dev/null 2>&1; }
E=tests/data/expected/quick-figures.txt
A=tests/data/anchors/published-figures.txt
mkdir -p "$R/scripts" "$R/tests/data/expected" "$R/tests/data/anchors"
g init -q || { bad "git init"; exit 1; }
cat >"$R/$E" <<'X'
case s0 a ok
figure s0 a lat 1 us
case s0 b ok
figure s0 b lat 2 us
case s1 a ok
figure s1 a lat 3 us
X
echo "anchor s0 a lat 1 us" >"$R/$A"
g add -A && g commit -q -m base
git -C "$R" rev-parse HEAD >"$R/scripts/expected-guard-base"
guard() { python3 "$G" --repo "$R" >"$TMP/out" 2>&1; }

# no commit after the base: passes
guard || bad "no commit after the base: exit $? ($(tail -1 "$TMP/out"))"

# s0/b's figure and s1/a's status move; the message names only s0/b
sed -i 's/^figure s0 b lat 2 us/figure s0 b lat 2.5 us/; s/^case s1 a ok/case s1 a failed/' "$R/$E"
g commit -q -a -m "$(printf 'sim: a change\n\nMoved: s0/b\n')"
guard; rc=$?
[ $rc = 1 ] || bad "a moved case left unnamed: exit $rc, want 1"
grep -q "FAIL: .*Moved: s1/a\$" "$TMP/out" || bad "the failure does not name s1/a: $(cat "$TMP/out")"
grep -q "s0/b" "$TMP/out" && bad "s0/b was named, yet reported: $(cat "$TMP/out")"

# the same commit naming both (and one that did not move: a warning, not a failure)
g commit -q --amend -m "$(printf 'sim: a change\n\nMoved: s0/b, s1/a\nMoved: s0/a\n')"
guard || bad "every moved case named: exit $? ($(cat "$TMP/out"))"
grep -q "warning: .*did not move: s0/a" "$TMP/out" || bad "no warning for s0/a: $(cat "$TMP/out")"

# a case added, one removed: both count as moved
printf 'case s2 new ok\n' >>"$R/$E"
sed -i '/ s0 a /d' "$R/$E"
g commit -q -a -m "$(printf 'cases\n\nMoved: s2/new\n')"
guard && bad "a removed case left unnamed passes"
grep -q "Moved: s0/a\$" "$TMP/out" || bad "the removed case s0/a is not named: $(cat "$TMP/out")"
g commit -q --amend -m "$(printf 'cases\n\nMoved: s2/new, s0/a\n')"
guard || bad "added and removed cases named: exit $? ($(cat "$TMP/out"))"

# --moved-line: the line update-expected.sh prints
git -C "$R" show HEAD~1:"$E" >"$TMP/old"
[ "$(python3 "$G" --moved-line "$TMP/old" "$R/$E")" = "Moved: s0/a, s2/new" ] ||
	bad "--moved-line: '$(python3 "$G" --moved-line "$TMP/old" "$R/$E")'"

# the anchors: a change needs an Anchors: line with a reason
echo "anchor s0 a lat 1.5 us" >"$R/$A"
g commit -q -a -m "anchors moved"
guard && bad "an anchor change without an Anchors: line passes"
grep -q "without an 'Anchors: <reason>' line" "$TMP/out" || bad "anchor failure: $(cat "$TMP/out")"
g commit -q --amend -m "$(printf 'anchors\n\nAnchors: the post was corrected by its author\n')"
guard || bad "an anchor change with its reason: exit $? ($(cat "$TMP/out"))"

# a base that is not in the history (as in a shallow clone): one line, exit 2
echo 0123456789abcdef0123456789abcdef01234567 >"$R/scripts/expected-guard-base"
guard; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/out")" = 1 ] || bad "missing base: exit $rc, output $(cat "$TMP/out")"
exit $fail
