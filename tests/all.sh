#!/bin/bash
# tests/all.sh: the whole test suite, as CI and the README run it. Three
# out-of-tree builds of the same source:
#   build/dev   warnings as errors: make check, the unit tests under
#               valgrind memcheck, make distcheck (with the unit tests: the
#               integration suite has just run on the same code; the
#               tarball's completeness is checked against git instead),
#               make deb and tests/package.sh, make check-kernels
#   build/asan  AddressSanitizer + UndefinedBehaviorSanitizer: make check
#   build/fuzz  clang + libFuzzer: every fuzz target for FUZZ_SECONDS (30)
# Needs root (real-time policies, test users, systemd-nspawn).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
# an in-tree configure (make demo) blocks out-of-tree builds
[ -f config.status ] && make distclean >/dev/null
autoreconf -fi
mkdir -p build/dev build/asan build/fuzz
T_ALL=$(date +%s) T_STEP=$T_ALL TIMES=""
# step TITLE: a stage begins; the one before it is timed
step() {
	now=$(date +%s)
	[ -z "${STEP:-}" ] || TIMES="$TIMES$(printf '%6d s  %s' $((now - T_STEP)) "$STEP")\n"
	STEP=$(printf %.70s "$1") T_STEP=$now
	echo; echo "===== $* ====="
}
UNIT_TESTS=$(cd "$src" && ls tests/unit/test-*.c | sed 's/\.c$//' | tr '\n' ' ')

step "build/dev: --enable-werror, make check"
(cd build/dev && "$src/configure" --enable-werror >/dev/null && make -j2 >/dev/null &&
	make check && echo "--- tests/systemd-e2e.log: socket activation, reload, restart, stop" &&
	cat tests/systemd-e2e.log)

step "build/dev: make valgrind, make distcheck (unit tests), the tarball holds every tracked file"
(cd build/dev && make valgrind && make distcheck TESTS="$UNIT_TESTS" >distcheck.log 2>&1 && tail -4 distcheck.log &&
	missing=$(cd "$src" && git ls-files | grep -Ev '^(\.ci/|\.gitignore$)' | sort |
		comm -23 - <(tar -tzf rtschedd-*.tar.gz | sed 's|^[^/]*/||' | sort)) &&
	{ [ -z "$missing" ] || { echo "not in the tarball (EXTRA_DIST?): $missing"; false; }; } &&
	echo "the tarball holds every file git tracks (but .ci/ and .gitignore)")

# --- Debian packages: make deb (lintian clean), then install, upgrade, remove
# and purge under a real systemd in a container (tests/package.sh) -----------
step "build/dev: make deb, lintian, tests/package.sh (apt install, upgrade, remove, purge in a container)"
(cd build/dev && rc=0 && { top_builddir=$PWD top_srcdir=$src bash "$src/tests/package.sh" 2>&1 | tee package.log || rc=$?; } &&
	[ $rc -eq 0 ] || [ $rc -eq 77 ])
# --- end of the Debian packages step ------------------------------------------
# --- check-kernels: Debian 12's stock 6.1 kernel under qemu, the reduced set -
step "build/dev: make check-kernels KERNEL_SET=ci (authorization and mechanisms on this kernel and on 6.1 under qemu)"
(cd build/dev && make check-kernels KERNEL_SET=ci)
# --- end of the check-kernels step ----------------------------------------------

step "build/asan: --enable-sanitizers, make check (check's test cases unforked, so LeakSanitizer sees them)"
(cd build/asan && "$src/configure" --enable-sanitizers --enable-werror >/dev/null && make -j2 >/dev/null &&
	CK_FORK=no make check)

step "build/fuzz: clang --enable-fuzzing, make fuzz (FUZZ_SECONDS=${FUZZ_SECONDS:=30} per target)"
(cd build/fuzz && "$src/configure" CC=clang --enable-fuzzing --enable-werror >/dev/null && make -j2 >/dev/null &&
	FUZZ_SECONDS=$FUZZ_SECONDS make fuzz)

step "done"
printf '\nstage times (total %d s):\n%b' $(($(date +%s) - T_ALL)) "$TIMES"

# one closing line for the record: the dev build's test counts
# (and tests/package.sh's: its last line counts its checks, or it skipped)
awk -F': ' '/^# PASS:/ { p = $2 } /^# FAIL:/ { f = $2 } /^# SKIP:/ { s = $2 } /^# ERROR:/ { e = $2 }
	FILENAME ~ /package.log$/ && /^[0-9]+ passed, [0-9]+ failed$/ { split($0, w, " "); p += w[1]; f += w[3] }
	FILENAME ~ /package.log$/ && /^SKIP: / { s++ }
	END { printf "%d passed, %d failed, %d skipped\n", p, f + e, s }' build/dev/test-suite.log build/dev/package.log
