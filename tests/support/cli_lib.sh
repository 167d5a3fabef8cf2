# cli_lib.sh — sourced by tests/cli/*.sh (not a test itself: tests/cli/*.sh are the tests).
# bad MSG: record a failure. have TOOL WHAT: true if TOOL is on PATH; otherwise WHAT is skipped
# with a message, or fails when CI is set (CI=true bash .ci/run must run every check).
fail=0
bad() { echo "FAIL: $*"; fail=1; }
have() {
	command -v "$1" >/dev/null && return 0
	case ${CI:-} in
	'' | 0 | false) echo "SKIP: $1 not found: $2 not checked" ;;
	*) bad "$1 not found, and CI is set: $2 must be checked" ;;
	esac
	return 1
}
