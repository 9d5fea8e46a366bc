# tests/lib.sh: helpers for the shell tests, which drive the built binaries.
# Sourced by each test; top_builddir and top_srcdir come from `make check`.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
RTSCHEDD="$top_builddir/rtschedd"
RTSCHEDCTL="$top_builddir/rtschedctl"
TMP=$(mktemp -d /tmp/rtschedd-test.XXXXXX)
# the bound of every wait: it ends a hang, never judges speed (sanitizer
# builds on a loaded 2-core machine are slow; nothing waits for it when all is well)
HANG_S=${HANG_S:-300}
FAILS=0
PASSES=0
trap 'cleanup' EXIT
cleanup_hooks=""
# Sanitizer builds (--enable-sanitizers): every instrumented process (the
# daemon, rtschedctl, helpers run as nobody) writes its report into a
# directory anyone can write to, and any report fails the test.
mkdir -m 1777 "$TMP/sanitizer"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$TMP/sanitizer/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$TMP/sanitizer/ubsan:print_stacktrace=1"
cleanup() {
	rc=$?
	local fails_before=$FAILS
	for h in $cleanup_hooks; do $h; done
	# a hook that failed (a daemon that would not stop) fails the test
	[ "$FAILS" -eq "$fails_before" ] || rc=1
	# every report fails the test, a LeakSanitizer that could not scan
	# ("fatal error") too: a process it cannot scan is one whose leaks go
	# unseen. It cannot scan a process under ptrace (strace): a test that
	# traces an instrumented program sets detect_leaks=0 for that run.
	# One line is not a finding: "Unable to get registers from thread N"
	# says LeakSanitizer skipped that thread's registers and stack as roots
	# (the thread had left its ptrace stop), which can only add leak
	# reports, never hide one; LLVM prints it only at verbosity 1 since
	# llvm-project#116555 as it "may rarely fail". A file with nothing else
	# is noted and removed; a leak or error report beside it still fails.
	for f in "$TMP"/sanitizer/*; do
		[ -f "$f" ] || continue
		grep -Evq '^==[0-9]+==Unable to get registers from thread [0-9]+\.$|^$' "$f" && continue
		echo "# note: ${f##*/}: LeakSanitizer could not read $(grep -c . "$f") thread(s)' registers; no leak reported"
		rm -f "$f"
	done
	if [ -n "$(ls -A "$TMP/sanitizer" 2>/dev/null)" ]; then
		echo "FAIL - sanitizer reports:"
		for f in "$TMP"/sanitizer/*; do
			# the file's name ends in the pid of the process that wrote it
			echo "== ${f##*/} ($(wc -c <"$f") bytes)"
			cat "$f"
		done
		rc=1
	fi
	# a failure shows what the daemon said about it
	if [ "$rc" -ne 0 ] && [ -s "${DLOG:-}" ]; then
		echo "# the daemon's log (last 60 lines):"
		tail -n 60 "$DLOG" | sed 's/^/# /'
	fi
	rm -rf "$TMP"
	exit $rc
}
at_exit() { cleanup_hooks="$1 $cleanup_hooks"; }

# test_deadline SECONDS: the whole test is bounded, whatever hangs: after
# SECONDS it fails and gets SIGTERM, so its EXIT hooks still put back what
# it changed (a test that traps TERM as 'exit 143', as bash needs to run the
# EXIT trap on a signal).
test_deadline() {
	(
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep "$1" & s=$!
		wait $s || exit 0
		echo "FAIL - the test ran out of its $1 s"
		kill -TERM $$
	) &
	DEADLINE=$!
	at_exit deadline_stop
}
deadline_stop() { kill "$DEADLINE" 2>/dev/null; }

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
	timeout "$HANG_S" "$@" >"$TMP/out" 2>"$TMP/err"
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

HELPER="$top_builddir/tests/task-helper"
NCPU=$(nproc)
LASTCPU=$((NCPU - 1))
# other users (nobody) must reach the socket and binaries under $TMP
chmod 755 "$TMP"

need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root (CAP_SYS_NICE) to apply real-time policies"; }
# machine_wide: this test changes the whole machine (every task's CPUs, where
# a cgroup controller lives), which would upset what runs beside it:
# tests/all.sh sets MACHINE_WIDE=later for the make check that runs beside
# its other stream, and runs these tests afterwards, alone.
machine_wide() {
	[ "${MACHINE_WIDE:-}" != later ] || skip "it changes the whole machine: tests/all.sh runs it later, alone"
}

# daemon_start CONF [ARGS...]: run rtschedd on a private socket, wait until it answers.
daemon_start() {
	SOCK="$TMP/control"
	DLOG="$TMP/daemon.log"
	conf=$1; shift
	"$RTSCHEDD" --config "$conf" --socket "$SOCK" "$@" >>"$DLOG" 2>&1 &
	DPID=$!
	for _ in $(seq $((HANG_S * 10))); do
		"$RTSCHEDCTL" --socket "$SOCK" version >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "daemon did not start:"; cat "$DLOG"
	exit 1
}
# stuck_report PID WHAT: where each thread of a process that did not end
# is waiting (kernel stack and wchan, and the user stack if gdb is here), so
# a hang fails with its cause instead of stalling the run
stuck_report() {
	local t
	echo "# $2 (pid $1) did not end within ${HANG_S} s; where its threads wait:"
	for t in /proc/"$1"/task/*; do
		[ -d "$t" ] || continue
		echo "#  tid ${t##*/} ($(cat "$t/comm" 2>/dev/null)) state $(awk '{ print $3 }' "$t/stat" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
		sed 's/^/#    /' "$t/stack" 2>/dev/null
	done
	command -v gdb >/dev/null && timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt' 2>/dev/null |
		grep -E '^(Thread|#)' | head -200 | sed 's/^/#  /'
}
# bounded_wait PID WHAT: wait for a child we signalled; after HANG_S, report
# where it is stuck, SIGKILL it and fail (RC of the wait in WRC)
# running PID: it exists and is not a zombie (a process this shell reaps
# between two looks has no stat: gone, not stuck)
running() {
	local st
	st=$(awk '{ print $3 }' /proc/"$1"/stat 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}
bounded_wait() {
	local end=$((SECONDS + HANG_S))
	while running "$1" && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.05
	done
	if running "$1"; then
		stuck_report "$1" "$2"
		kill -KILL "$1" 2>/dev/null
		fail "$2 (pid $1) did not end within ${HANG_S} s; killed"
	fi
	wait "$1" 2>/dev/null
	WRC=$?
}
daemon_stop() {
	[ -n "${DPID:-}" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	bounded_wait "$DPID" "rtschedd after SIGTERM"
	DRC=$WRC
	DPID=
}
at_exit daemon_stop
ctl() { run "$RTSCHEDCTL" --socket "$SOCK" "$@"; }

# helper_start NAME [AS_USER]: a task-helper process driven through FIFOs
# (fd 3 writes its commands, fd 4 reads its answers).
helper_start() {
	hin="$TMP/helper.in"; hout="$TMP/helper.out"
	rm -f "$hin" "$hout"; mkfifo "$hin" "$hout"; chmod 666 "$hin" "$hout"
	if [ -n "${1:-}" ]; then
		RTSCHED_SOCKET="$SOCK" setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups \
			"$HELPER" <"$hin" >"$hout" &
	else
		RTSCHED_SOCKET="$SOCK" "$HELPER" <"$hin" >"$hout" &
	fi
	HPID=$!
	exec 3>"$hin" 4<"$hout"
}
helper_stop() {
	[ -n "${HPID:-}" ] || return 0
	echo quit >&3 2>/dev/null
	exec 3>&- 4<&-
	bounded_wait "$HPID" "task-helper after quit"
	HPID=
}
at_exit helper_stop
# h CMD...: one command, its answer in HR
h() {
	echo "$*" >&3
	if ! read -r -t "$HANG_S" HR <&4; then HR="(no answer)"; fi
}
# spawn NAME: a thread; its tid in the variable named by NAME's value? -> echo
spawn() { h spawn "$1"; set -- $HR; echo "$3"; }
# q TID: the kernel's view of TID
q() { "$HELPER" query "$1"; }
# expect_sched TID "policy=fifo priority=10" DESC: substring of the kernel's view
expect_sched() {
	got=$(q "$1")
	case " $got " in *" $2 "*|*" $2"*) pass "$3 ($got)" ;; *) fail "$3: kernel reports '$got', want '$2'" ;; esac
}
# wait_for CMD...: retry a command until it succeeds (for asynchronous
# effects), giving up after HANG_S: it returns as soon as the effect is seen,
# so the bound only ends a hang and never decides a pass on a slow machine
wait_for() {
	local end=$((SECONDS + HANG_S))
	while [ "$SECONDS" -lt "$end" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
