# tests/lib.sh: helpers for the shell tests, which drive the built binaries.
# Sourced by each test; top_builddir and top_srcdir come from `make check`.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
RTSCHEDD="$top_builddir/rtschedd"
RTSCHEDCTL="$top_builddir/rtschedctl"
TMP=$(mktemp -d /tmp/rtschedd-test.XXXXXX)
FAILS=0
PASSES=0
trap 'cleanup' EXIT
cleanup_hooks=""
cleanup() {
	for h in $cleanup_hooks; do $h; done
	rm -rf "$TMP"
}
at_exit() { cleanup_hooks="$1 $cleanup_hooks"; }

pass() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }
skip() { echo "SKIP: $*"; exit 77; }
# Exit with automake's codes and a summary line.
finish() {
	echo "$PASSES passed, $FAILS failed"
	[ "$FAILS" -eq 0 ]
}

# run CMD...: run with a time bound, capture stdout/stderr/rc in OUT, ERR, RC.
run() {
	timeout 20 "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# expect_rc WANT DESC: compare RC.
expect_rc() {
	if [ "$RC" -eq "$1" ]; then pass "$2 (exit $RC)"; else fail "$2: exit $RC, want $1; stderr: $ERR"; fi
}
# expect_in HAYSTACK NEEDLE DESC
expect_in() {
	case "$1" in *"$2"*) pass "$3" ;; *) fail "$3: '$2' not in: $1" ;; esac
}
# lines TEXT: number of lines
lines() { printf '%s\n' "$1" | grep -c .; }
