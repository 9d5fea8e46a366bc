#!/bin/bash
# diag.sh: the diagnosis module (src/daemon/diag*.c) against the real kernel,
# driven through tests/diag-query.  Each finding is provoked on a real
# process (prlimit, setpriv, cgroups, a seccomp filter), and where the
# report makes a claim or names a fix, the kernel is asked whether the claim
# holds and whether the fix works.
#
# Adds a throw-away user in group audio (and the group if it is missing), a
# limits.d file with "@audio - rtprio 50", cgroups under the v1 cpu, cpuset
# and name=systemd hierarchies; removes exactly those on exit.  Needs root.
# Environment: top_builddir, top_srcdir (from make check), DIAG_QUERY.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to add a user, a limits.d file and cgroups"
for c in useradd userdel groupadd groupdel getent prlimit setpriv runuser chrt jq timeout; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
DQ=${DIAG_QUERY:-$top_builddir/tests/diag-query}
[ -x "$DQ" ] || { echo "ERROR: $DQ not built"; exit 99; }
DQN=$(basename "$DQ" | cut -c1-15)     # its comm, as messages name it
[ -d /etc/security/limits.d ] || skip "no /etc/security/limits.d"
grep -qs pam_limits /etc/pam.d/runuser || skip "runuser's PAM stack has no pam_limits"

T=20
P=rtsd-diag-$$
U=$P
LIMITS=/etc/security/limits.d/$P.conf
PIDS=""
CGDIRS=""          # newest first, so children go before parents
USER_ADDED=""
AUDIO_ADDED=""

# Undo exactly what this run did, whatever happened.
diag_cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	for p in $PIDS; do gone "$p"; done
	rm -f "$LIMITS"
	for d in $CGDIRS; do [ -d "$d" ] && timeout "$T" rmdir "$d"; done
	if [ -n "$USER_ADDED" ]; then
		timeout "$T" userdel "$U" >/dev/null 2>&1
		getent group "$U" >/dev/null && timeout "$T" groupdel "$U" >/dev/null 2>&1
	fi
	[ -n "$AUDIO_ADDED" ] && getent group audio >/dev/null && timeout "$T" groupdel audio
}
at_exit diag_cleanup
trap 'exit 98' INT TERM HUP

# gone PID: wait (bounded) until PID has exited. A zombie counts: the started
# processes are disowned, so bash may not reap them soon, and `tail --pid`
# waits on a zombie until its timeout.
gone() { wait_for sh -c "[ ! -e /proc/$1 ] || grep -q '^State:.Z' /proc/$1/status"; }
# q ARGS...: run diag-query; OUT, ERR, RC as run() sets them
q() { run "$DQ" "$@"; }
# as_user CMD...: run CMD as the test user without a PAM session
as_user() { run setpriv --reuid="$U" --regid="$U" --init-groups -- "$@"; }
# qj ARGS...: diag-query --json; the report also in J, which later runs keep
qj() { run "$DQ" --json "$@"; J=$OUT; }
# finding CODE FIELD: a field of the finding CODE in the JSON report in J
finding() { printf '%s' "$J" | jq -r --arg c "$1" ".findings[] | select(.code == \$c) | .$2"; }
# start_nopam CMD...: CMD as the test user, started without PAM and with
# RLIMIT_RTPRIO 0/0, in the background; its pid in SPID
start_nopam() {
	prlimit --rtprio=0:0 -- setpriv --reuid="$U" --regid="$U" --init-groups -- "$@" &
	SPID=$!
	disown "$SPID"          # no "Killed" lines from bash when the clean-up kills it
	PIDS="$PIDS $SPID"
	wait_for grep -q "^Uid:.$(id -u "$U")" "/proc/$SPID/status" || { echo "ERROR: $* did not start"; exit 99; }
}
# start_root CMD...: CMD as root in the background; its pid in SPID, once it
# runs as the program named $COMM (default: CMD's own name; a wrapper such as
# prlimit that execs another program must name the last one)
start_root() {
	"$@" &
	SPID=$!
	disown "$SPID"
	PIDS="$PIDS $SPID"
	wait_for sh -c "[ \"\$(cat /proc/$SPID/comm)\" = '${COMM:-$(basename "$1")}' ]" ||
		{ echo "ERROR: $* did not start"; exit 99; }
}
# cg_make DIR: a cgroup directory, removed on exit
cg_make() { mkdir "$1" && CGDIRS="$1 $CGDIRS"; }
# expect_json DESC: OUT must be one valid JSON report
expect_json() {
	if printf '%s' "$OUT" | jq -e '.findings and .counts' >/dev/null 2>&1; then pass "$1"; else fail "$1: not JSON: $OUT"; fi
}

# --- set-up: the user, in group audio, and the limits.d file --------------
if ! getent group audio >/dev/null; then
	timeout "$T" groupadd audio || { echo "ERROR: groupadd audio"; exit 99; }
	AUDIO_ADDED=1
fi
timeout "$T" useradd -M -d / -s /bin/sh -U -G audio "$U" || { echo "ERROR: useradd $U"; exit 99; }
USER_ADDED=1
printf '# rtschedd tests/diag.sh, removed when it ends\n@audio - rtprio 50\n' > "$LIMITS"
SRC="$LIMITS:2"

# --- the user's grant: soft 50, hard 50 and the file:line -----------------
q --user "$U"
[ "$RC" -lt 2 ] && pass "check --user runs (exit $RC)" || fail "check --user: exit $RC: $ERR"
expect_in "$OUT" "limits.conf rtprio for $U: soft 50 ($SRC), hard 50 ($SRC)" "--user: soft 50, hard 50 with file:line"
expect_in "$OUT" "limits-grant: limits.conf grants $U rtprio soft 50 ($SRC), hard 50 ($SRC)" "--user: limits-grant finding"
qj --user "$U"
expect_json "--user --json is JSON"
if printf '%s' "$J" | jq -e --arg s "$SRC" '.user != null and .limits.rtprio_soft == 50 and
	.limits.rtprio_hard == 50 and .limits.soft_source == $s and .limits.hard_source == $s' >/dev/null; then
	pass "--user --json: limits 50/50 and sources"
else
	fail "--user --json limits: $(printf '%s' "$J" | jq -c .limits)"
fi
# Can pam_limits raise the hard limit here at all?  Not without
# CAP_SYS_RESOURCE in pid 1's bounding set (containers, some VMs).
bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/1/status)
hard1=$(awk '/^Max realtime priority/ { print $5 }' /proc/1/limits)
BLOCKED=""
if [ $(( 0x$bnd >> 24 & 1 )) -eq 0 ] && [ "$hard1" != unlimited ] && [ "$hard1" -lt 50 ]; then
	BLOCKED=1
	echo "note: CAP_SYS_RESOURCE is not in pid 1's bounding set: no process here can raise RLIMIT_RTPRIO"
	expect_in "$(finding limits-grant-blocked message)" "pam_limits cannot raise the hard limit to it: CAP_SYS_RESOURCE is not in the bounding set of pid 1" \
		"limits-grant-blocked where pid 1 lacks CAP_SYS_RESOURCE"
	# its claim, checked with pam_limits itself: a session keeps the inherited 0
	run runuser -l "$U" -c 'grep "^Max realtime priority" /proc/self/limits'
	case "$OUT" in *"Max realtime priority"*" 0 "*" 0 "*) pass "a PAM session indeed keeps rtprio 0/0" ;;
		*) fail "PAM session: '$OUT' $ERR" ;; esac
else
	[ -z "$(finding limits-grant-blocked code)" ] && pass "no limits-grant-blocked" || fail "limits-grant-blocked: $J"
	# pam_limits agrees with the report: a login session gets 50/50
	run runuser -l "$U" -c 'grep "^Max realtime priority" /proc/self/limits'
	case "$OUT" in *"Max realtime priority"*" 50 "*"50"*) pass "a PAM session gets rtprio 50/50" ;;
		*) fail "PAM session: '$OUT' $ERR" ;; esac
	run runuser -l "$U" -c 'chrt -f 10 true'
	expect_rc 0 "a PAM session of the user can make itself SCHED_FIFO 10"
fi

# --- a process of the user started without PAM -----------------------------
start_nopam sleep 3600
NOPAM=$SPID
q --pid "$NOPAM"
expect_in "$OUT" "rtprio-zero-not-pam: pid $NOPAM (sleep) has RLIMIT_RTPRIO 0 (hard 0) although limits.conf grants $U rtprio 50 ($SRC)" \
	"no-PAM process: rtprio-zero-not-pam with the grant and file:line"
expect_in "$OUT" "not started through a PAM login session" "no-PAM process: the cause"
qj --pid "$NOPAM"
expect_json "--pid --json is JSON"
sev=$(finding rtprio-zero-not-pam severity)
[ "$sev" = warning ] && pass "rtprio-zero-not-pam is a warning while the checker has CAP_SYS_NICE" ||
	fail "severity '$sev'"
# the kernel agrees: such a process cannot make itself real-time
run prlimit --rtprio=0:0 -- setpriv --reuid="$U" --regid="$U" --init-groups -- chrt -f 10 true
[ "$RC" -ne 0 ] && pass "a no-PAM process of the user cannot make itself SCHED_FIFO (exit $RC)" ||
	fail "chrt -f 10 succeeded without PAM"
fix=$(finding rtprio-zero-not-pam fix)
if [ -n "$BLOCKED" ]; then
	expect_in "$fix" "no process here can raise the hard limit (see limits-grant-blocked): give pid 1 CAP_SYS_RESOURCE or RLIMIT_RTPRIO 50, then start it from a PAM login session (runuser -l $U" \
		"no-PAM process: the fix where the hard limit cannot be raised"
	run prlimit --pid "$NOPAM" --rtprio=50:50
	[ "$RC" -ne 0 ] && pass "indeed even root cannot raise it here (exit $RC)" || fail "prlimit raised it"
else
	expect_in "$fix" "raise it now: prlimit --pid $NOPAM --rtprio=50:50 (as root, which needs CAP_SYS_RESOURCE); for good, start it from a PAM login session (runuser -l $U" \
		"no-PAM process: the fix"
	# the fix, run as printed, works
	fix=$(printf '%s' "$fix" | sed -n 's/^raise it now: \(prlimit [^(]*\) (as root.*/\1/p')
	if [ -n "$fix" ] && eval "timeout $T $fix"; then pass "ran the fix: $fix"; else fail "fix '$fix' failed"; fi
	q --pid "$NOPAM"
	expect_in "$OUT" "rtprio: pid $NOPAM has RLIMIT_RTPRIO soft 50, hard 50" "after the fix: rtprio ok"
	case "$OUT" in *rtprio-zero-not-pam*) fail "after the fix: still rtprio-zero-not-pam" ;;
		*) pass "after the fix: rtprio-zero-not-pam gone" ;; esac
	prlimit --pid "$NOPAM" --rtprio=0:0
fi

# --- diag_explain on a real EPERM, as the unprivileged user ----------------
start_nopam sleep 3600
OWN=$SPID
as_user "$DQ" --pid "$OWN" --policy fifo --priority 10 --apply
expect_rc 1 "the user cannot make its own no-PAM process SCHED_FIFO"
expect_in "$OUT" "apply failed: Operation not permitted; $DQN has no CAP_SYS_NICE, so the kernel allows tid $OWN only priorities up to its RLIMIT_RTPRIO 0 (hard 0), below 10" \
	"explain: the RLIMIT_RTPRIO of the target"
expect_in "$OUT" "prlimit --pid $OWN --rtprio=10:10" "explain: the prlimit fix"
start_root sleep 3600
ROOTP=$SPID
as_user "$DQ" --pid "$ROOTP" --policy rr --priority 5 --apply
expect_in "$OUT" "tid $ROOTP belongs to uid 0, not to its uid $(id -u "$U")" "explain: another user's thread"
as_user "$DQ" --self
expect_rc 1 "an unprivileged checker reports an error"
expect_in "$OUT" "ERROR    no-cap-sys-nice: $DQN (pid" "no-cap-sys-nice for the checker itself"

# --- a service, by its cgroup; RestrictRealtime= from its unit file --------
SYSD=/sys/fs/cgroup/systemd
SVC=$P-player.service
if [ -w "$SYSD/cgroup.procs" ] && cg_make "$SYSD/$P.slice" && cg_make "$SYSD/$P.slice/$SVC"; then
	start_nopam sleep 3600
	echo "$SPID" > "$SYSD/$P.slice/$SVC/cgroup.procs"
	qj --pid "$SPID"
	[ "$(printf '%s' "$J" | jq -r .unit)" = "$SVC" ] && pass "the unit is found from the cgroup" ||
		fail "unit: $(printf '%s' "$J" | jq -r .unit)"
	expect_in "$(finding rtprio-zero-not-pam message)" "services never get limits.conf" "service: the cause"
	expect_in "$(finding rtprio-zero-not-pam fix)" \
		"systemctl edit $SVC, add the lines [Service] and LimitRTPRIO=50, then systemctl restart $SVC" \
		"service: the LimitRTPRIO= fix"
	# the unit sets RestrictRealtime=yes, and the process carries its filter
	mkdir -p "$TMP/units"
	printf '[Service]\nExecStart=/bin/sleep 3600\nRestrictRealtime=yes\n' > "$TMP/units/$SVC"
	start_nopam "$DQ" --seccomp-deny-rt --sleep 3600
	FILT=$SPID
	echo "$FILT" > "$SYSD/$P.slice/$SVC/cgroup.procs"
	q --unit-path "$TMP/units" --pid "$FILT"
	expect_in "$OUT" "WARNING  restrict-realtime: pid $FILT runs in $SVC, which sets RestrictRealtime=yes ($TMP/units/$SVC:3)" \
		"restrict-realtime from the unit file"
	expect_in "$OUT" "fix: systemctl edit $SVC, add the lines [Service] and RestrictRealtime=no" "restrict-realtime: the fix"
	# its claim: the filter binds the process, not a helper with CAP_SYS_NICE
	q --pid "$FILT" --policy fifo --priority 10 --apply
	expect_rc 0 "a filtered process can still be made SCHED_FIFO from outside"
	run chrt -p "$FILT"
	expect_in "$OUT" "SCHED_FIFO" "the kernel reports SCHED_FIFO for the filtered process"
	echo "$FILT" > "$SYSD/cgroup.procs"
	q --pid "$FILT"
	expect_in "$OUT" "INFO     seccomp-filter: pid $FILT runs under a seccomp filter (Seccomp: 2)" \
		"seccomp-filter outside any unit"
	echo "$SPID" > "$SYSD/cgroup.procs" 2>/dev/null
	for p in $(cat "$SYSD/$P.slice/$SVC/cgroup.procs"); do echo "$p" > "$SYSD/cgroup.procs"; done
else
	echo "SKIP part: no writable name=systemd hierarchy at $SYSD: no service checks"
fi
# the filter's own calls fail, and diag_explain names the filter
q --seccomp-deny-rt --self --policy fifo --priority 10 --apply
expect_rc 1 "a filtered process cannot make itself SCHED_FIFO"
expect_in "$OUT" "apply failed: Operation not permitted; $DQN runs under a seccomp filter of unknown origin (Seccomp: 2 in /proc/" \
	"explain: the caller's seccomp filter"

# --- RT group scheduling: a cpu cgroup with no budget -----------------------
CPU=/sys/fs/cgroup/cpu
if [ -w "$CPU/cpu.rt_runtime_us" ] && cg_make "$CPU/$P" && cg_make "$CPU/$P/inner" &&
	[ "$(cat "$CPU/$P/inner/cpu.rt_runtime_us")" = 0 ]; then
	start_root sleep 3600
	B=$SPID
	echo "$B" > "$CPU/$P/inner/cgroup.procs"
	qj --pid "$B" --policy fifo --priority 10
	expect_in "$(finding rt-group-budget-zero message)" "pid $B is in cpu cgroup /$P/inner (cgroup v1 with RT group scheduling) whose cpu.rt_runtime_us is 0" \
		"rt-group-budget-zero"
	[ "$(finding rt-group-budget-zero severity)" = error ] && pass "rt-group-budget-zero is an error" || fail "severity"
	run chrt -f -p 10 "$B"
	[ "$RC" -ne 0 ] && pass "the kernel refuses SCHED_FIFO there, even to root" || fail "chrt succeeded"
	fix=$(finding rt-group-budget-zero fix | sed 's/ (.*//')
	q --pid "$B" --policy fifo --priority 10 --apply
	expect_rc 1 "apply fails in the zero-budget group"
	expect_in "$OUT" "apply failed: Operation not permitted; tid $B is in cpu cgroup /$P/inner whose cpu.rt_runtime_us is 0" \
		"explain: the cgroup budget"
	expect_in "$OUT" "fix: $fix" "explain: the same fix as the report"
	case "$fix" in "echo "*" > $CPU/$P/cpu.rt_runtime_us && echo "*" > $CPU/$P/inner/cpu.rt_runtime_us")
		if eval "$fix"; then pass "ran the fix: $fix"; else fail "fix failed: $fix"; fi ;;
		*) fail "unexpected fix: $fix" ;; esac
	q --pid "$B" --policy fifo --priority 10 --apply
	expect_rc 0 "after the fix the thread can be made SCHED_FIFO"
	run chrt -p "$B"
	expect_in "$OUT" "SCHED_FIFO" "the kernel reports SCHED_FIFO after the fix"
	q --pid "$B"
	expect_in "$OUT" "OK       rt-group-budget: pid $B is in cpu cgroup /$P/inner with an RT budget of" "rt-group-budget ok after the fix"
	kill -KILL "$B"; gone "$B"

	# rtschedd's own group (watchdog audit M4): its loop (loop-budget 10%)
	# and its watchdog's scans (5%) share the group's RT budget, 15% here
	echo 0 > "$CPU/$P/inner/cpu.rt_runtime_us"
	echo 200000 > "$CPU/$P/cpu.rt_runtime_us"
	echo 50000 > "$CPU/$P/inner/cpu.rt_runtime_us"
	in_inner() { run sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$CPU/$P/inner" "$@"; }
	in_inner "$RTSCHEDD" --config /dev/null --check --json
	J=$OUT
	expect_in "$(finding self-rt-group-budget-small message)" "is in cpu cgroup /$P/inner, whose RT budget of 50000 of every 1000000 µs is less than the 15% of a CPU its own real-time threads may take" \
		"self-rt-group-budget-small: rtschedd's own group holds less than its loop and watchdog may take"
	[ "$(finding self-rt-group-budget-small severity)" = warning ] && pass "self-rt-group-budget-small is a warning" ||
		fail "severity: $(finding self-rt-group-budget-small severity)"
	fix=$(finding self-rt-group-budget-small fix | sed 's/ (.*//')
	case "$fix" in "echo 150000 > $CPU/$P/inner/cpu.rt_runtime_us")
		if eval "$fix"; then pass "ran the fix: $fix"; else fail "fix failed: $fix"; fi ;;
		*) fail "unexpected fix: $fix" ;; esac
	in_inner "$RTSCHEDD" --config /dev/null --check
	expect_in "$OUT" "OK       self-rt-group-budget: rtschedd (pid " "self-rt-group-budget ok after the fix"
	expect_in "$OUT" "with an RT budget of 150000 of every 1000000 µs, at least the 15% its own real-time threads may take" \
		"self-rt-group-budget: the budget and the share"
else
	echo "SKIP part: no writable cgroup-v1 cpu hierarchy with cpu.rt_runtime_us at $CPU (cgroup v2 or no CONFIG_RT_GROUP_SCHED): no RT budget checks"
fi

# --- RLIMIT_RTTIME ----------------------------------------------------------
COMM=sleep start_root prlimit --rttime=0:0 -- sleep 3600
q --pid "$SPID"
expect_in "$OUT" "ERROR    rttime-zero: pid $SPID has RLIMIT_RTTIME 0" "rttime-zero"
expect_in "$OUT" "prlimit --pid $SPID --rttime=unlimited:unlimited" "rttime-zero: the fix"
# its claim: such a process dies as soon as it spins real-time
run sh -c "prlimit --rttime=0:0 -- timeout 5 chrt -f 10 sh -c 'while :; do :; done'; echo \$?"
[ "$OUT" = 137 ] && pass "a real-time spinner with RLIMIT_RTTIME 0 is killed (SIGKILL)" ||
	fail "spinner with RLIMIT_RTTIME 0: exit '$OUT'"
q --pid "$NOPAM"
expect_in "$OUT" "INFO     rttime-unlimited: pid $NOPAM has no RLIMIT_RTTIME" "rttime-unlimited"

# --- timer slack --------------------------------------------------------------
expect_in "$OUT" "INFO     timer-slack: pid $NOPAM runs SCHED_OTHER with the default timer slack of 50000 ns" "timer-slack default"
echo 200000 > "/proc/$NOPAM/timerslack_ns"
q --pid "$NOPAM"
expect_in "$OUT" "WARNING  timer-slack: pid $NOPAM's timer slack is 200000 ns" "timer-slack raised"

# --- CPUs ----------------------------------------------------------------------
q --pid "$NOPAM" --cpus "0,$((NCPU + 3))"
expect_in "$OUT" "WARNING  cpu-offline: requested CPUs $((NCPU + 3)) are not online" "cpu-offline"
CS=/sys/fs/cgroup/cpuset
if [ "$NCPU" -ge 2 ] && [ -w "$CS/cgroup.procs" ] && cg_make "$CS/$P"; then
	cat "$CS/cpuset.mems" > "$CS/$P/cpuset.mems"
	echo 0 > "$CS/$P/cpuset.cpus"
	start_root sleep 3600
	C=$SPID
	echo "$C" > "$CS/$P/cgroup.procs"
	if [ "$LASTCPU" -eq 1 ]; then wide=0-1; else wide="0,$LASTCPU"; fi
	q --pid "$C" --cpus "$LASTCPU"
	expect_in "$OUT" "ERROR    cpu-outside-cpuset: requested CPUs $LASTCPU are all outside pid $C's cpuset 0" "cpu-outside-cpuset"
	expect_in "$OUT" "echo $wide > $CS/$P/cpuset.cpus" "cpu-outside-cpuset: the fix"
	q --pid "$C" --cpus "$LASTCPU" --apply
	expect_in "$OUT" "apply failed: Invalid argument; CPUs $LASTCPU are all outside tid $C's cpuset 0" "explain: EINVAL of sched_setaffinity"
	# the explanation's fix is the finding's (cpuset.cpus, widened; not the
	# read-only effective list): run it as it is written
	expect_in "$OUT" "echo $wide > $CS/$P/cpuset.cpus" "explain: the fix widens cpuset.cpus"
	fix=$(printf '%s\n' "$OUT" | grep -o "echo [0-9,-]* > [^ ]*/cpuset.cpus" | head -1)
	if [ -n "$fix" ] && eval "$fix"; then pass "ran the explained fix: $fix"; else fail "explained fix '$fix' failed"; fi
	q --pid "$C" --cpus "$LASTCPU" --apply
	expect_rc 0 "after widening the cpuset the affinity is set"
	case "$(taskset -cp "$C" 2>&1)" in *": $LASTCPU") pass "the kernel reports affinity $LASTCPU" ;;
		*) fail "taskset: $(taskset -cp "$C" 2>&1)" ;; esac
	kill -KILL "$C"; gone "$C"
else
	echo "SKIP part: needs 2 CPUs and a writable cgroup-v1 cpuset hierarchy at $CS: no cpuset checks"
fi

# --- the machine ------------------------------------------------------------------
q --system
[ "$RC" -lt 2 ] && pass "--system runs (exit $RC)" || fail "--system: exit $RC: $ERR"
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
case "$rt" in -1) want="rt-throttling-disabled" ;; 0) want="rt-runtime-zero" ;; *) want="$rt of every" ;; esac
expect_in "$OUT" "$want" "RT throttling as the sysctl says ($rt)"
expect_in "$OUT" "preempt-model:" "the preemption model"
expect_in "$OUT" "cpu-isolated:" "isolcpus state"
expect_in "$OUT" "cpu-nohz-full:" "nohz_full state"
# the preemption model in force, told from the kernel's own configuration when
# debugfs does not tell it (this machine: PREEMPT_DYNAMIC booting in "none")
if grep -q PREEMPT_DYNAMIC /proc/sys/kernel/version && ! grep -q 'preempt=' /proc/cmdline &&
	! cat /sys/kernel/debug/sched/preempt >/dev/null 2>&1 && [ -r /proc/config.gz ] &&
	[ ! -e "/boot/config-$(uname -r)" ]; then
	mode=$(zcat /proc/config.gz | sed -n 's/^CONFIG_PREEMPT_\(NONE\|VOLUNTARY\)=y$/\1/p; s/^CONFIG_PREEMPT=y$/FULL/p' |
		tr 'A-Z' 'a-z')
	case "$mode" in
	none|voluntary) expect_in "$OUT" "WARNING  preempt-model: preemption model $mode (the default of this PREEMPT_DYNAMIC kernel, from /proc/config.gz" \
			"preempt-model: a warning naming mode $mode from /proc/config.gz"
		expect_in "$OUT" "fix: boot with preempt=full" "preempt-model: the fix is preempt=full" ;;
	*) expect_in "$OUT" "INFO     preempt-model: preemption model $mode" "preempt-model: $mode, from /proc/config.gz" ;;
	esac
else
	echo "# the preemption model is not told by /proc/config.gz alone here: its text not checked"
fi
if [ ! -e /sys/devices/system/cpu/nohz_full ] && [ -z "$(cat /sys/devices/system/cpu/isolated)" ]; then
	cpu_iso=$(printf '%s\n' "$OUT" | grep -A1 "cpu-isolated:")
	case "$cpu_iso" in *"nohz_full=N"*) fail "cpu-isolated suggests nohz_full= on a kernel without NO_HZ_FULL" ;;
		*) pass "cpu-isolated: no nohz_full= suggested on a kernel without NO_HZ_FULL" ;; esac
fi
qj --system
expect_json "--system --json is JSON"
sleep 0 & gone=$!; wait "$gone"
q --pid "$gone"
expect_rc 3 "a pid that is gone"
expect_in "$ERR" "No such process" "a pid that is gone: ESRCH"
q --user "no-such-user-$P"
expect_rc 3 "an unknown user"

finish
