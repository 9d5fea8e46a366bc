#!/bin/bash
# tests/rlimit.sh: grant-rlimit = yes (issue 26 item 3), on the real kernel.
# A program run as nobody with RLIMIT_RTPRIO 0:0 (as from an init script's
# start-stop-daemon --chuid) that makes its own sched_setscheduler(FIFO 10)
# once rtschedd has seen it (tests/run-helper: hold, then rlimit fifo:10):
#  (a) where rtschedd holds CAP_SYS_RESOURCE (the qemu guest of `make
#      check-kernels`, or a machine whose bounding set has it): a rule with
#      grant-rlimit = yes raises the process's RLIMIT_RTPRIO to 10:10 and
#      RLIMIT_RTTIME to grant-rttime-us, the program's call succeeds (FIFO
#      10, as the kernel reports it), the log says so once, and --check and
#      rtschedctl check say rlimit-grant; the same rule without the key, and
#      a rule above the user's [user] max-priority, leave the limit at 0:0
#      and the call is refused (EPERM);
#  (b) everywhere: rtschedd without CAP_SYS_RESOURCE (this VM's bounding
#      set lacks it; elsewhere it is taken out of the bounding set with
#      setpriv) says rlimit-grant-no-cap at start, in --check (exit 1) and
#      in rtschedctl check, leaves the limit at 0:0 and the call is refused.
# In the rule the process is made SCHED_RR 10 (reset-on-fork = no), so the
# program's FIFO call needs its RLIMIT_RTPRIO whichever comes first: the
# kernel refuses an unprivileged change of policy with RLIMIT_RTPRIO 0.
. "$(dirname "$0")/lib.sh"
need_root
for c in setpriv prlimit chrt; do
	command -v $c >/dev/null || { echo "FAIL - $c missing (apt-get install util-linux)"; exit 1; }
done
id nobody >/dev/null 2>&1 || skip "no user nobody"
RH="$top_builddir/tests/run-helper"
[ -x "$RH" ] || { echo "FAIL - tests/run-helper not built"; exit 1; }
test_deadline $((HANG_S * 4))
trap 'exit 143' TERM

# CAP_SYS_RESOURCE (24) in this shell's bounding set: rtschedd started from
# here can hold it
bnd=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
CAN=no
(((0x$bnd >> 24) & 1)) && CAN=yes
echo "# CAP_SYS_RESOURCE in the bounding set: $CAN (kernel $(uname -r))"
SOCK="$TMP/control"

# conf KEYLINES PRIORITY: the rule with these extra lines
conf() {
	cat >"$TMP/rl.conf" <<EOC
[daemon]
rate-limit = 0
watchdog = no
[user nobody]
max-priority = 20
policies = fifo,rr,other
[rule rl-helper]
process-name = run-helper
policy = rr
priority = $2
reset-on-fork = no
$1
EOC
}

# helper_go NAME: run-helper as nobody with RLIMIT_RTPRIO 0:0 and
# RLIMIT_RTTIME 100000:200000, holding until fd HFD closes; HP its pid
helper_go() {
	rm -f "$TMP/hold" && mkfifo "$TMP/hold" && chmod 666 "$TMP/hold"
	prlimit --rtprio=0:0 --rttime=100000:200000 -- setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$RH" hold rlimit fifo:10 <"$TMP/hold" >"$TMP/$1.out" 2>&1 &
	HP=$!
	exec {HFD}>"$TMP/hold"
	wait_for grep -q holding "$TMP/$1.out" || fail "$1: the helper did not start"
}
# helper_end NAME: let it make its call; OUT its lines
helper_end() {
	exec {HFD}>&-
	bounded_wait "$HP" "run-helper ($1)"
	OUT=$(cat "$TMP/$1.out")
}
limits_of() { awk '/^Max realtime priority/ { print $4 ":" $5 } /^Max realtime timeout/ { print $4 ":" $5 }' \
	/proc/"$1"/limits | paste -sd' '; }
# rule_applied PID: the positive event: rtschedd has seen the process and
# applied its rule (SCHED_RR 10)
rule_applied() { chrt -p "$1" | grep -q 'SCHED_RR' && chrt -p "$1" | grep -q 'priority: 10'; }
# refused NAME DESC: the limit stayed 0:0 and the program's own call failed
refused() {
	wait_for rule_applied "$HP" || fail "$1: rtschedd did not apply the rule: $(chrt -p "$HP")"
	[ "$(limits_of "$HP")" = "0:0 100000:200000" ] && pass "$2: RLIMIT_RTPRIO stays 0:0 after the rule applied" ||
		fail "$2: limits of the helper: $(limits_of "$HP")"
	helper_end "$1"
	expect_in "$OUT" "rlimit rtprio=0:0 rttime=100000:200000" "$2: the program reads 0:0"
	expect_in "$OUT" "fifo:10 rc=-1 errno=EPERM" "$2: its sched_setscheduler(FIFO 10) is refused"
}

# --- (a) with CAP_SYS_RESOURCE ---------------------------------------------------------
if [ "$CAN" = yes ]; then
	# the unit cases that raise a hard limit, skipped where make check runs
	# without CAP_SYS_RESOURCE
	run "$top_builddir/tests/unit/test-rlimit"
	expect_rc 0 "(a) tests/unit/test-rlimit with CAP_SYS_RESOURCE, every case run"
	conf $'grant-rlimit = yes\ngrant-rttime-us = 500000' 10
	run "$RTSCHEDD" --config "$TMP/rl.conf" --check
	expect_rc 0 "(a) rtschedd --check with CAP_SYS_RESOURCE: exit 0"
	expect_in "$OUT" "rlimit-grant" "(a) --check: rlimit-grant"
	daemon_start "$TMP/rl.conf"
	ctl check
	expect_in "$OUT" "rlimit-grant: " "(a) rtschedctl check: rlimit-grant"
	helper_go a
	wait_for sh -c "grep -q '^Max realtime priority *10 *10 ' /proc/$HP/limits" &&
		pass "(a) the rule raised RLIMIT_RTPRIO of the program to 10:10" ||
		fail "(a) limits of the helper: $(limits_of "$HP")"
	[ "$(limits_of "$HP")" = "10:10 500000:500000" ] && pass "(a) and RLIMIT_RTTIME to grant-rttime-us 500000:500000" ||
		fail "(a) limits of the helper: $(limits_of "$HP")"
	helper_end a
	expect_in "$OUT" "rlimit rtprio=10:10 rttime=500000:500000" "(a) the program reads its raised limits"
	expect_in "$OUT" "fifo:10 rc=0 errno=0 policy=fifo priority=10" "(a) its own sched_setscheduler(FIFO 10) succeeds: the kernel reports FIFO 10"
	n=$(grep -c "rule rl-helper raised the limits of pid $HP " "$DLOG")
	[ "$n" -eq 1 ] && pass "(a) logged once: $(grep "raised the limits of pid $HP " "$DLOG" | sed 's/.*rule/rule/')" ||
		fail "(a) $n log lines for pid $HP"
	daemon_stop

	# the same rule without the key: refused
	conf "" 10
	daemon_start "$TMP/rl.conf"
	helper_go a2
	refused a2 "(a) without grant-rlimit"
	daemon_stop

	# above nobody's [user] max-priority 20: the one decision refuses the
	# rule, and with it the limit
	conf "grant-rlimit = yes" 30
	daemon_start "$TMP/rl.conf"
	helper_go a3
	wait_for grep -q "rule rl-helper matched tid $HP .*could not apply" "$DLOG" ||
		fail "(a) rule above max-priority: no refusal logged"
	[ "$(limits_of "$HP")" = "0:0 100000:200000" ] && pass "(a) a rule above the user's max-priority raises nothing" ||
		fail "(a) over max-priority: limits $(limits_of "$HP")"
	helper_end a3
	expect_in "$OUT" "fifo:10 rc=-1 errno=EPERM" "(a) and the program's call is refused"
	daemon_stop
fi

# --- (b) without CAP_SYS_RESOURCE --------------------------------------------------------
NORES=()
[ "$CAN" = yes ] && NORES=(setpriv --bounding-set=-sys_resource --inh-caps=-sys_resource --)
conf "grant-rlimit = yes" 10
run "${NORES[@]}" "$RTSCHEDD" --config "$TMP/rl.conf" --check
expect_rc 1 "(b) rtschedd --check without CAP_SYS_RESOURCE: exit 1"
expect_in "$OUT" "rlimit-grant-no-cap" "(b) --check: rlimit-grant-no-cap"
expect_in "$OUT" "AmbientCapabilities=CAP_SYS_RESOURCE" "(b) --check: the fix names the unit's capability"
if [ "$CAN" = yes ]; then
	# daemon_start with the bounding set narrowed
	RTSCHEDD_REAL=$RTSCHEDD
	cat >"$TMP/nores" <<EOS
#!/bin/sh
exec setpriv --bounding-set=-sys_resource --inh-caps=-sys_resource -- "$RTSCHEDD_REAL" "\$@"
EOS
	chmod 755 "$TMP/nores"
	RTSCHEDD="$TMP/nores"
fi
daemon_start "$TMP/rl.conf"
[ "${RTSCHEDD_REAL:-}" ] && RTSCHEDD=$RTSCHEDD_REAL
expect_in "$(cat "$DLOG")" "[rule rl-helper]: grant-rlimit = yes, but rtschedd has no CAP_SYS_RESOURCE" \
	"(b) the start logs that no limit will be raised"
ctl check
expect_in "$OUT" "rlimit-grant-no-cap" "(b) rtschedctl check: rlimit-grant-no-cap"
helper_go b
refused b "(b) without CAP_SYS_RESOURCE"
# (the log holds the runs of (a) too: this helper's pid only)
case "$(cat "$DLOG")" in *"raised the limits of pid $HP "*) fail "(b) a limit was raised" ;; *) pass "(b) no raise logged" ;; esac
daemon_stop
finish
