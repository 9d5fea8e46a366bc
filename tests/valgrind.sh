#!/bin/bash
# tests/valgrind.sh: every unit test binary (tests/unit/test-*) under
# valgrind memcheck: invalid reads and writes, uses of uninitialised values,
# bad frees and leaks all count as failures. Build first (`make check` builds
# them); run from anywhere:
#
#   tests/valgrind.sh [TEST...]        e.g. tests/valgrind.sh test-config
#
# check(3) runs each test case in a forked child, which memcheck would only
# follow with --trace-children; CK_FORK=no runs them in the test process.
# A libtool wrapper script (a test linked against a shared library of the
# tree) is run through `libtool --mode=execute`, so memcheck sees the real
# binary. Logs go to $top_builddir/tests/valgrind/<test>.log (or VALGRIND_LOGS).
# VALGRIND_ARGS adds options, e.g. "--gen-suppressions=all".
# --fair-sched=yes: valgrind runs one thread at a time, and its default lock
# lets a spinning thread (a busy-wait or noise probe) keep it: the thread that
# should stop it then never runs, and the test hangs at 100% CPU.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
LOGS=${VALGRIND_LOGS:-$top_builddir/tests/valgrind}

command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 77; }
mkdir -p "$LOGS"

if [ $# -gt 0 ]; then
	tests=""
	for t in "$@"; do tests="$tests $top_builddir/tests/unit/${t#tests/unit/}"; done
else
	tests=$(for f in "$top_builddir"/tests/unit/test-*; do
		case "$f" in *.c|*.o|*.log|*.trs) continue ;; esac
		[ -f "$f" ] && [ -x "$f" ] && echo "$f"
	done)
fi
if [ -z "$tests" ]; then
	echo "valgrind.sh: no unit tests in $top_builddir/tests/unit; run 'make check' first" >&2
	exit 1
fi

supp=""
[ -f "$top_srcdir/tests/valgrind.supp" ] && supp="--suppressions=$top_srcdir/tests/valgrind.supp"
export CK_FORK=no
failed=""
printf '%-16s %8s %7s %12s  %s\n' test seconds errors "definitely" result
for t in $tests; do
	name=$(basename "$t")
	log="$LOGS/$name.log"
	if [ ! -x "$t" ]; then
		printf '%-16s %8s %7s %12s  %s\n' "$name" - - - "not built"
		failed="$failed $name"
		continue
	fi
	run=()
	if head -c 4096 "$t" | grep -q 'libtool'; then
		run=("$top_builddir/libtool" --mode=execute)
		real="$(dirname "$t")/.libs/$name"
	else
		real=$t
	fi
	# memcheck and AddressSanitizer cannot share a process
	if grep -q '__asan_init' "$real" 2>/dev/null; then
		echo "valgrind.sh: $name is built with --enable-sanitizers; valgrind needs a build without" >&2
		exit 77
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086
	"${run[@]}" valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-origins=yes --num-callers=30 --fair-sched=yes $supp \
		${VALGRIND_ARGS:-} \
		--log-file="$log" "$t" >"$log.out" 2>&1
	rc=$?
	elapsed=$(( $(date +%s) - start ))
	errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -n 1)
	lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		result=clean
	elif [ "$rc" -eq 77 ]; then
		result="clean, some cases skipped ($(grep -c '^SKIP: ' "$log.out") left out)"
	else
		result="FAILED (exit $rc)"
		failed="$failed $name"
	fi
	printf '%-16s %8s %7s %12s  %s\n' "$name" "$elapsed" "${errors:--}" "${lost:-0} B" "$result"
done

if [ -n "$failed" ]; then
	for name in $failed; do
		[ -f "$LOGS/$name.log" ] || continue
		echo
		echo "=== $name: $LOGS/$name.log (test output: $LOGS/$name.log.out)"
		grep -v '^==[0-9]*== *$' "$LOGS/$name.log" | head -n 80
		tail -n 5 "$LOGS/$name.log.out"
	done
	echo
	echo "valgrind: FAILED:$failed"
	exit 1
fi
echo "valgrind: all unit tests clean"
