#!/bin/bash
# tests/all.sh: the whole test suite, as CI and the README run it. Three
# out-of-tree builds of the same source:
#   build/dev   warnings as errors: make check, the unit tests under
#               valgrind memcheck, make distcheck
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
step() { echo; echo "===== $* ====="; }

step "build/dev: --enable-werror, make check, make valgrind, make distcheck"
(cd build/dev && "$src/configure" --enable-werror >/dev/null && make -j2 >/dev/null &&
	make check && echo "--- tests/systemd-e2e.log: socket activation, reload, restart, stop" &&
	cat tests/systemd-e2e.log && make valgrind && make distcheck >distcheck.log 2>&1 && tail -4 distcheck.log)

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

# one closing line for the record: the dev build's test counts
awk -F': ' '/^# PASS:/ { p = $2 } /^# FAIL:/ { f = $2 } /^# SKIP:/ { s = $2 } /^# ERROR:/ { e = $2 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f + e, s }' build/dev/test-suite.log
