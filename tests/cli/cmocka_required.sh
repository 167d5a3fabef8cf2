#!/usr/bin/env bash
# cmocka_required.sh — configuring without cmocka fails, with a message that names the Debian
# package, instead of leaving a build with no tests in which `make test` passes. pkg-config is
# given every module of this host but cmocka; only the configure step runs (a few seconds).
# Run as: bash cmocka_required.sh <iommulab> <srcdir>
set -u
SRC=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

mkdir "$TMP/pc"
IFS=: read -r -a dirs <<<"$(pkg-config --variable pc_path pkg-config)${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
for d in "${dirs[@]}"; do
	for pc in "$d"/*.pc; do
		[ -e "$pc" ] && [ ! -e "$TMP/pc/$(basename "$pc")" ] && ln -s "$pc" "$TMP/pc/"
	done
done
[ -e "$TMP/pc/cmocka.pc" ] && rm "$TMP/pc/cmocka.pc"
[ -e "$TMP/pc/jansson.pc" ] || bad "no jansson.pc found on this host: the check below proves nothing"

PKG_CONFIG_LIBDIR="$TMP/pc" PKG_CONFIG_PATH="" \
	cmake -S "$SRC" -B "$TMP/build" >"$TMP/out" 2>&1; rc=$?
[ $rc -ne 0 ] || bad "configure without cmocka succeeded"
grep -q 'cmocka not found' "$TMP/out" || bad "no 'cmocka not found' in: $(tail -5 "$TMP/out")"
grep -q 'libcmocka-dev' "$TMP/out" || bad "the message does not name libcmocka-dev"

# The same configure with cmocka visible succeeds: the failure above is cmocka's alone.
ln -s "$(pkg-config --variable pcfiledir cmocka)/cmocka.pc" "$TMP/pc/"
PKG_CONFIG_LIBDIR="$TMP/pc" PKG_CONFIG_PATH="" \
	cmake -S "$SRC" -B "$TMP/build" >"$TMP/out" 2>&1 || bad "configure with cmocka failed: $(tail -5 "$TMP/out")"

[ $fail -eq 0 ] && echo "cli/cmocka_required: all checks passed"
exit $fail
