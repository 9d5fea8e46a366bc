#!/bin/bash
# tests/all.sh: the whole test suite, as CI and the README run it. Three
# out-of-tree builds of the same source, in two streams that run at once on
# the machine's two cores (one stream alone leaves a core idle most of the
# time: the integration tests mostly wait on the kernel and on daemons):
#
# stream A, in the foreground (the tests that change the host's scheduling):
#   build/asan  AddressSanitizer + UndefinedBehaviorSanitizer, warnings as
#               errors, the BPF observer required (--enable-bpf=yes: the
#               default, auto, would quietly build without it where libbpf,
#               bpftool or clang is missing, and tests/bpf.sh would then test
#               only the without-BPF branch): make check, every unit and
#               integration test (check's test cases unforked, so
#               LeakSanitizer sees them)
#   build/pkg   (stream B's plain build, warnings as errors) the two
#               integration tests that judge the daemon's memory by its RSS
#               (abuse.sh, security.sh: not judged under ASan's quarantine);
#               that build's unit tests run in B, under valgrind and in
#               make deb
#   build/fuzz  clang + libFuzzer, --disable-bpf: every fuzz target for FUZZ_SECONDS (30)
#   build/asan  after stream B has ended, alone on the machine: make check of
#               the tests that change the whole machine (tests/lib.sh's
#               machine_wide: isolate.sh, isolate-systemd.sh), which the make
#               check above skips (MACHINE_WIDE=later)
#   build/pkg   then: BENCH_QUICK=1 make bench, alone on
#               the machine (fails if a section breaks, not on a missed target)
# stream B, in the background, logged to build/stream-b.log and printed
# at the end (its work is isolated: containers, a VM, tarballs):
#   build/pkg   built first (stream A waits for it); the unit tests under
#               valgrind memcheck; make dist, its tarball checked against git
#               ls-files; make deb (which builds that tarball, runs its unit
#               tests and installs it; lintian) and tests/package.sh (apt
#               install, upgrade, remove, purge under systemd in a
#               container); once stream A's make check is done (its real-time
#               tests starve qemu), make check-kernels KERNEL_SET=ci in
#               Debian 12's 6.1 kernel under qemu (KERNEL_HOST=no: the host's
#               kernel is stream A's), then tests/isolate-systemd.sh in the
#               6.12 of bookworm-backports (KERNEL_SUITE)
# Needs root (real-time policies, test users, systemd-nspawn).
#
# irqbalance (installed for tests/irq.sh, which runs an instance of its own)
# rewrites every IRQ's CPUs every 10 s: a running irqbalance service is
# stopped for the run and started again at its end, so no test sees IRQs
# move under it.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
# an in-tree configure (make demo) blocks out-of-tree builds
[ -f config.status ] && make distclean >/dev/null
autoreconf -fi
mkdir -p build/asan build/fuzz build/pkg
T_ALL=$(date +%s)
# step STREAM TITLE: a stage of STREAM begins; the one before it is timed
# (STREAM.times collects "SECONDS  TITLE" lines)
step() {
	local now t0 title
	now=$(date +%s)
	if [ -f "build/$1.current" ]; then
		read -r t0 title <"build/$1.current"
		printf '%6d s  %s: %s\n' $((now - t0)) "$1" "$title" >>"build/$1.times"
	fi
	[ "$2" = done ] && rm -f "build/$1.current" || echo "$now $(printf %.70s "$2")" >"build/$1.current"
	[ "$2" = done ] || { echo; echo "===== $1: $2 ====="; }
}
rm -f build/*.times build/*.current build/pkg.built build/asan.checked
# the tests that skip with MACHINE_WIDE=later (tests/lib.sh's machine_wide)
MACHINE_WIDE_TESTS="tests/isolate.sh tests/isolate-systemd.sh"

IRQBALANCE_WAS=
if command -v systemctl >/dev/null && systemctl is-active --quiet irqbalance.service 2>/dev/null; then
	systemctl stop irqbalance.service && IRQBALANCE_WAS=systemd
elif [ -x /etc/init.d/irqbalance ] && /etc/init.d/irqbalance status >/dev/null 2>&1; then
	/etc/init.d/irqbalance stop >/dev/null && IRQBALANCE_WAS=init.d
fi
[ -z "$IRQBALANCE_WAS" ] || echo "irqbalance ($IRQBALANCE_WAS) stopped for the run"
irqbalance_back() {
	case "$IRQBALANCE_WAS" in
	systemd) systemctl start irqbalance.service ;;
	# the init script's daemon keeps what it inherits: not this run's pipes
	# and locks (a caller's flock, the streams' logs), or they never close
	init.d) (for fd in /proc/$BASHPID/fd/*; do
		fd=${fd##*/}
		[ "$fd" -le 2 ] || eval "exec $fd>&-"
	done
	exec /etc/init.d/irqbalance start >/dev/null </dev/null) ;;
	esac
	IRQBALANCE_WAS=
}

# --- stream B ---------------------------------------------------------------
stream_b() {
	set -e
	step B "build/pkg: --enable-werror, make valgrind (the unit tests under memcheck)"
	(cd build/pkg && "$src/configure" --enable-werror >/dev/null && make -j2 >/dev/null &&
		make check TESTS= >/dev/null && touch ../pkg.built && make valgrind)
	# make deb builds the tarball, runs its unit tests and installs it (what
	# make distcheck would prove but for uninstall, which package.sh's apt
	# remove and purge prove for the package); what the tarball holds is
	# checked against git here
	step B "build/pkg: make dist, the tarball holds every tracked file"
	(cd build/pkg && make dist-gzip >/dev/null && tarball=$(ls "$PWD"/rtschedd-*.tar.gz) &&
		missing=$(cd "$src" && git ls-files | grep -Ev '^(\.ci/|\.gitignore$)' | sort |
			comm -23 - <(tar -tzf "$tarball" | sed 's|^[^/]*/||' | sort)) &&
		{ [ -z "$missing" ] || { echo "not in the tarball (EXTRA_DIST?): $missing"; false; }; } &&
		echo "the tarball holds every file git tracks (but .ci/ and .gitignore)")
	step B "build/pkg: make deb, lintian, tests/package.sh (apt install, upgrade, remove, purge in a container)"
	(cd build/pkg && rc=0 && { top_builddir=$PWD top_srcdir=$src bash "$src/tests/package.sh" >package.log 2>&1 || rc=$?; } &&
		cat package.log && [ $rc -eq 0 ])
	# the guest after stream A's make check: the host's real-time tests
	# starve qemu's vCPU threads, and once (2026-11-27) the guest's RCU
	# kthread then starved for good (qemu busy, no test ending); a guest
	# that hangs anyway is stopped by KERNEL_SET=ci's timeout
	step B "waiting for stream A's make check, before the guest starts"
	for _ in $(seq 240); do [ -f build/asan.checked ] && break; sleep 5; done
	step B "build/pkg: make check-kernels KERNEL_SET=ci KERNEL_HOST=no (Debian 12's 6.1 kernel under qemu)"
	(cd build/pkg && make check-kernels KERNEL_SET=ci KERNEL_HOST=no)
	# isolation under systemd again on a kernel >= 6.2, which keeps a
	# task's own affinity through cpuset changes (6.1 does not)
	step B "build/pkg: make check-kernels KERNEL_SUITE=bookworm-backports KERNEL_TESTS=isolate-systemd (Debian 12's backported 6.12)"
	(cd build/pkg && make check-kernels KERNEL_SET=ci KERNEL_HOST=no KERNEL_SUITE=bookworm-backports KERNEL_TESTS=isolate-systemd)
	step B done
}
stream_b >build/stream-b.log 2>&1 &
B_PID=$!
# stream B (and what it started: make, qemu, a container) is stopped if stream A fails
kill_tree() { local c; for c in $(pgrep -P "$1"); do kill_tree "$c"; done; kill "$1" 2>/dev/null; true; }
trap 'kill_tree $B_PID; irqbalance_back' EXIT

# --- stream A ---------------------------------------------------------------
step A "build/asan: --enable-sanitizers --enable-werror --enable-bpf=yes, make check (all tests)"
(cd build/asan && "$src/configure" --enable-sanitizers --enable-werror --enable-bpf=yes >/dev/null && make -j2 >/dev/null &&
	CK_FORK=no MACHINE_WIDE=later make check && cp test-suite.log test-suite-main.log &&
	echo "--- tests/systemd-e2e.log: socket activation, reload, restart, stop" && cat tests/systemd-e2e.log)
touch build/asan.checked   # stream B's guest may start

# stream B's plain build, built and left alone by the time A gets here
step A "build/pkg: make check with abuse.sh and security.sh (memory judged by RSS)"
while [ ! -f build/pkg.built ] && kill -0 "$B_PID" 2>/dev/null; do sleep 5; done
[ -f build/pkg.built ] || { echo "stream B ended before its build was done:"; cat build/stream-b.log; exit 1; }
(cd build/pkg && make check TESTS="tests/abuse.sh tests/security.sh")

# also the one build without BPF (--disable-bpf): the fuzz targets do not
# need the observer, and the switch stays compiled under clang -Werror
step A "build/fuzz: clang --enable-fuzzing --disable-bpf, make fuzz (FUZZ_SECONDS=${FUZZ_SECONDS:=30} per target)"
(cd build/fuzz && "$src/configure" CC=clang --enable-fuzzing --enable-werror --disable-bpf >/dev/null &&
	make -j2 >/dev/null &&
	FUZZ_SECONDS=$FUZZ_SECONDS make fuzz)
step A done

echo; echo "===== stream B (build/stream-b.log), waiting for it ====="
rc_b=0
wait "$B_PID" || rc_b=$?
# irqbalance comes back once everything, make bench too, has run
trap 'irqbalance_back' EXIT
cat build/stream-b.log

# alone on the machine, once stream B has ended: the tests that change the
# whole machine (isolate = yes moves every task off a CPU; the systemd test
# moves the cpuset controller to cgroup2), which make check skipped above
rc_alone=0
if [ "$rc_b" -eq 0 ]; then
	step A "build/asan: make check of the machine-wide tests (isolate.sh, isolate-systemd.sh), alone"
	(cd build/asan && CK_FORK=no make check TESTS="$MACHINE_WIDE_TESTS" &&
		cat tests/isolate.log tests/isolate-systemd.log) || rc_alone=$?
	step A done
fi

# last, alone on the machine (it loads both CPUs and makes threads
# real-time): the benchmarks in their quick form on the plain build, so
# `make bench` cannot rot. BENCH_STRICT=1: a part skipped for a missing tool
# fails like a broken section; a missed performance target only prints
# its verdict (figures from a run beside nothing else: `make bench`).
rc_bench=0
if [ "$rc_b" -eq 0 ]; then
	step A "build/pkg: BENCH_QUICK=1 make bench (every section runs; verdicts print, do not fail)"
	(cd build/pkg && BENCH_QUICK=1 BENCH_STRICT=1 make bench) || rc_bench=$?
	step A done
fi
printf '\nstage times (total %d s; streams A and B ran at the same time):\n' $(($(date +%s) - T_ALL))
cat build/A.times build/B.times 2>/dev/null || true
[ "$rc_b" -eq 0 ] || { echo "stream B failed (exit $rc_b): see above"; exit 1; }
[ "$rc_alone" -eq 0 ] || { echo "the machine-wide tests failed (exit $rc_alone): see above"; exit 1; }
[ "$rc_bench" -eq 0 ] || { echo "make bench failed (exit $rc_bench): a section broke, see above"; exit 1; }

# one closing line for the record: the test counts of both make checks
# (and tests/package.sh's: its last line counts its checks, or it skipped)
awk -F': ' '/^# PASS:/ { p += $2 } /^# FAIL:/ { f += $2 } /^# SKIP:/ { s += $2 } /^# ERROR:/ { e += $2 }
	FILENAME ~ /package.log$/ && /^[0-9]+ passed, [0-9]+ failed$/ { split($0, w, " "); p += w[1]; f += w[3] }
	FILENAME ~ /package.log$/ && /^SKIP: / { s++ }
	END { printf "%d passed, %d failed, %d skipped\n", p, f + e, s }' \
	build/asan/test-suite-main.log build/asan/test-suite.log build/pkg/test-suite.log build/pkg/package.log
