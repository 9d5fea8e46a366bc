#!/bin/bash
# tests/kernels/run.sh: `make check-kernels`. Runs the kernel-sensitive
# integration tests (tests/kernels/suite.sh) on the host's kernel and, at the
# same time, inside Debian 12's stock kernel booted under qemu (fetch.sh,
# initramfs.sh, boot.sh), then prints a PASS/FAIL table per kernel, the
# mechanism each kernel-dependent path used (mechanisms.sh) and the times.
#
# Environment: top_builddir, top_srcdir (set by make); KERNEL_VERSION (default:
# the newest linux-image-6.1.*-amd64 of bookworm, see fetch.sh; KERNEL_FLAVOUR=rt
# for its PREEMPT_RT build, where tests/timerlat.sh runs); KERNEL_TESTS
# (default "register rules restart authz irq-hotplug rlimit catcher isolate-systemd watchdog-kernel"); KERNEL_TIMEOUT (seconds for the
# whole guest run, default 5400; 900 with KERNEL_SET=ci); KERNEL_CACHE and
# KERNEL_SUITE (see fetch.sh: KERNEL_SUITE=bookworm-backports boots Debian 12's
# backported 6.12 kernel instead; results then go to out-bookworm-backports/);
# KERNEL_HOST=no to skip the host run; KERNEL_SET=ci for the reduced set. Results: tests/kernels/out/ in the
# build tree. Exit status 0 when no test failed in either kernel.
set -u
: "${top_builddir:?set top_builddir (make check-kernels does)}" "${top_srcdir:?set top_srcdir}"
export top_builddir top_srcdir
HERE="$top_srcdir/tests/kernels"
# KERNEL_SET=ci: the reduced set for CI's 90 minutes: authz up to and
# including the socket hand-off cases (AUTHZ_UNTIL=handoff), the USB
# hotplug case (irq-hotplug: about 10 s of the guest's time), and
# mechanisms.sh (a registration, thread_exit, new_threads, client
# identity, --check), grant-rlimit rules (rlimit: the guest's root
# holds CAP_SYS_RESOURCE, which the CI machine's tests may lack), and the
# catcher of refused calls (catcher: its BPF on 6.1's syscall tracepoints),
# and isolate = yes where systemd owns cgroup2 (isolate-systemd: a booted
# systemd in a container, which the CI machine cannot run, whose PID 1 holds
# the v1 cpuset hierarchy; 6.1 resets affinities on cpuset changes), and
# the watchdog's BPF task iterators (watchdog-kernel: 6.1's is the oldest
# one narrowed to a process).
if [ "${KERNEL_SET:-}" = ci ]; then
	: "${KERNEL_TESTS:=authz irq-hotplug rlimit catcher isolate-systemd watchdog-kernel}"
	# about 70 s under TCG: a guest that hangs fails in 15 minutes, not CI's 90
	: "${KERNEL_TIMEOUT:=900}"
	export AUTHZ_UNTIL=handoff
fi
TESTS=${KERNEL_TESTS:-register rules restart authz irq-hotplug rlimit catcher isolate-systemd watchdog-kernel}
OUT="$top_builddir/tests/kernels/out${KERNEL_SUITE:+-$KERNEL_SUITE}"
T0=$(date +%s)

[ "$(id -u)" -eq 0 ] || { echo "check-kernels: run as root (the tests need CAP_SYS_NICE; qemu does not)" >&2; exit 77; }
KDIR=$(bash "$HERE/fetch.sh") || exit 1
VERSION=$(basename "$KDIR")
INITRD="$top_builddir/tests/kernels/initrd-$VERSION.img"
if [ ! -s "$INITRD" ] || [ "$HERE/guest-init" -nt "$INITRD" ] || [ "$HERE/initramfs.sh" -nt "$INITRD" ]; then
	mkdir -p "$(dirname "$INITRD")"
	bash "$HERE/initramfs.sh" "$KDIR" "$INITRD" || exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT/host" "$OUT/guest"
# tests/irq-hotplug.sh: a guest booted with threadirqs and an xHCI
# controller, into which the host plugs a USB audio device through qemu's
# monitor when the test asks (qmp-host.py reads its commands from KERNEL_QMP)
BOOT_EXTRA=()
case " $TESTS " in
*" irq-hotplug "*)
	KERNEL_QMP="$OUT/guest/qmp" KERNEL_MODULES="$KDIR/root"
	mkdir -p "$KERNEL_QMP"
	export KERNEL_QMP KERNEL_MODULES
	BOOT_EXTRA=(-a threadirqs -d "-device qemu-xhci,id=xhci" -d "-audiodev none,id=none"
		-H "python3 '$HERE/qmp-host.py' '$OUT/guest/qmp.sock' '$KERNEL_QMP'")
	;;
esac
T1=$(date +%s)

# the host's run in the background, the guest's meanwhile: each kernel is
# its own machine, nothing the tests change is shared between the two
if [ "${KERNEL_HOST:-yes}" != no ]; then
	env -u KERNEL_QMP bash "$HERE/suite.sh" "$OUT/host" $TESTS >"$OUT/host/suite.log" 2>&1 &
	HOSTJOB=$!
fi
PASS_ENV="top_builddir top_srcdir AUTHZ_UNTIL KERNEL_QMP KERNEL_MODULES" bash "$HERE/boot.sh" -k "$KDIR/vmlinux" \
	-i "$INITRD" -o "$OUT/guest" -s "$top_builddir" -s "$top_srcdir" -t "${KERNEL_TIMEOUT:-5400}" "${BOOT_EXTRA[@]}" -- \
	bash "$HERE/suite.sh" "$OUT/guest" $TESTS
GUESTRC=$?
TG=$(date +%s)
[ -z "${HOSTJOB:-}" ] || wait "$HOSTJOB"
T2=$(date +%s)

HOSTK=$(uname -r)
GUESTK=$(sed -n 's/^kernel: //p' "$OUT/guest/mechanisms" 2>/dev/null)
: "${GUESTK:=$VERSION}"
# verdict DIR TEST: PASS/FAIL/SKIP/TIMEOUT and the test's own tally
verdict() {
	local rc tally
	[ -f "$1/$2.rc" ] || { echo "NOT RUN"; return; }
	rc=$(cat "$1/$2.rc")
	tally=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1/$2.log" | tail -1)
	case "$rc" in
	0) echo "PASS ($tally, $(cat "$1/$2.secs") s)" ;;
	77) echo "SKIP ($(grep -m1 '^SKIP' "$1/$2.log"))" ;;
	124|137) echo "TIMEOUT (after $(cat "$1/$2.secs") s; $tally)" ;;
	*) echo "FAIL (exit $rc; ${tally:-no tally}, $(cat "$1/$2.secs") s)" ;;
	esac
}
failed=0
echo
echo "=== check-kernels: tests ==="
printf '%-10s | %-45s | %-45s\n' test "host $HOSTK" "guest $GUESTK"
for t in $TESTS; do
	h=$(verdict "$OUT/host" "$t") g=$(verdict "$OUT/guest" "$t")
	[ "${KERNEL_HOST:-yes}" != no ] || h="not run (KERNEL_HOST=no)"
	printf '%-10s | %-45s | %-45s\n' "$t" "$h" "$g"
	case "$h$g" in *FAIL*|*TIMEOUT*|*"NOT RUN"*) failed=1 ;; esac
done
# what failed, in this output: a CI run keeps it, not the logs
for d in host guest; do
	[ "$d" = host ] && [ "${KERNEL_HOST:-yes}" = no ] && continue
	for t in $TESTS; do
		[ -f "$OUT/$d/$t.log" ] && grep -q '^FAIL' "$OUT/$d/$t.log" || continue
		echo "--- $d: $t's failures (of $OUT/$d/$t.log)"
		grep '^FAIL' "$OUT/$d/$t.log" | head -10 | cut -c1-600
	done
done
echo
echo "=== check-kernels: mechanisms (from a daemon started in each kernel) ==="
m() { sed -n "s/^$2: //p" "$1/mechanisms" 2>/dev/null | head -1; }
for k in "thread_exit" "new_threads (idle)" "new_threads (one thread registered)" "client_identity"; do
	printf '%-36s | %-40s | %s\n' "$k" "$(m "$OUT/host" "$k")" "$(m "$OUT/guest" "$k")"
done
for d in host guest; do
	[ -f "$OUT/$d/mechanisms" ] || continue
	echo "--- $d: rtschedd --check on the kernel features, and whether the daemon agreed"
	grep -E '^(check|consistent|INCONSISTENT):' "$OUT/$d/mechanisms"
	grep -q '^INCONSISTENT:' "$OUT/$d/mechanisms" && failed=1
done
echo
if [ "$GUESTRC" -eq 124 ] || [ "$GUESTRC" -eq 125 ]; then
	echo "the guest did not finish (boot.sh exit $GUESTRC): $OUT/guest/console.log"
	failed=1
fi
echo "times: setup (fetch, initramfs) $((T1 - T0)) s, guest run $((TG - T1)) s, host and guest together $((T2 - T1)) s, total $((T2 - T0)) s"
echo "logs: $OUT/{host,guest}/TEST.log, guest console: $OUT/guest/console.log"
exit $failed
