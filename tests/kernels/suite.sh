#!/bin/bash
# tests/kernels/suite.sh: run the kernel-sensitive integration tests and
# tests/kernels/mechanisms.sh on whatever kernel this runs on (the host, or a
# guest booted by tests/kernels/boot.sh), one after the other. For each test
# T it writes OUTDIR/T.log, OUTDIR/T.rc (the test's exit status: 0 pass,
# 77 skip, 124 timed out, else fail) and OUTDIR/T.secs; the mechanisms go to
# OUTDIR/mechanisms. Exit status 0 if no test failed.
#
#   top_builddir=... top_srcdir=... tests/kernels/suite.sh OUTDIR [TEST...]
#
# TESTS defaults to register rules restart authz (tests/T.sh). Each test is
# bounded by SUITE_TEST_TIMEOUT seconds (default 1800).
set -u
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [TEST...]" >&2; exit 64; }
: "${top_builddir:?set top_builddir (make check-kernels does)}" "${top_srcdir:?set top_srcdir}"
export top_builddir top_srcdir
OUT=$1; shift
[ $# -gt 0 ] || set -- register rules restart authz
mkdir -p "$OUT"
failed=0
for t in "$@"; do
	start=$(date +%s)
	timeout -k 10 "${SUITE_TEST_TIMEOUT:-1800}" bash "$top_srcdir/tests/$t.sh" >"$OUT/$t.log" 2>&1
	rc=$?
	echo "$rc" >"$OUT/$t.rc"
	echo $(($(date +%s) - start)) >"$OUT/$t.secs"
	echo "$(uname -r): $t exit $rc after $(cat "$OUT/$t.secs") s"
	[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || failed=1
done
timeout -k 10 300 bash "$top_srcdir/tests/kernels/mechanisms.sh" >"$OUT/mechanisms" 2>&1 ||
	echo "mechanisms.sh failed (exit $?): see $OUT/mechanisms"
exit $failed
