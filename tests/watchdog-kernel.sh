#!/bin/bash
# tests/watchdog-kernel.sh: the watchdog's BPF task iterators (rtschedd(8):
# it reads the tasks without a path lookup) on the running kernel. `make
# check-kernels` runs it on the host and in Debian 12's 6.1 kernel under
# qemu, whose task iterator is the oldest one narrowed to a process:
#   1. tests/unit/test-trip runs every case of the watchdog's blame and
#      demotion through /proc and through the iterators, on real threads;
#      its iterator cases must run here (not be skipped: the iterators
#      load) and pass, the identity check through the per-process iterator
#      included;
#   2. a daemon with the watchdog on says it reads the tasks through them
#      (rtschedctl status: watchdog_tasks bpf), and logs no fallback.
# make check runs test-trip itself; this script is for the kernels.
. "$(dirname "$0")/lib.sh"
need_root
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs (test-trip pins a real-time thread to the other one)"

run "$top_builddir/tests/unit/test-trip"
expect_rc 0 "1. test-trip, through /proc and through the iterators"
case "$OUT$ERR" in
*"bpf cases: the task iterators cannot load"*) fail "1. the iterators did not load on $(uname -r): $(printf '%s\n' "$OUT$ERR" | grep -A1 'cannot load' | tail -1)" ;;
*) pass "1. the iterator cases ran on $(uname -r): $(printf '%s\n' "$OUT" | grep -o 'Checks: [0-9]*, Failures: [0-9]*')" ;;
esac

cat >"$TMP/w.conf" <<EOC
[daemon]
watchdog = yes
EOC
daemon_start "$TMP/w.conf"
ctl status
expect_in "$(printf '%s\n' "$OUT" | grep watchdog_tasks)" "bpf" "2. the daemon's watchdog reads the tasks through BPF iterators"
daemon_stop
grep -q "reading tasks from /proc" "$DLOG" && fail "2. the daemon logged a fallback: $(grep 'reading tasks' "$DLOG")" ||
	pass "2. no fallback to /proc logged"
finish
