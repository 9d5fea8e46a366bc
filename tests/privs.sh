#!/bin/bash
# tests/privs.sh: least privilege, read from the kernel (/proc/PID/status):
# only CAP_SYS_NICE left in every set, no ambient capabilities, no-new-privs;
# `user =` keeps it working as an unprivileged user; without CAP_SYS_NICE the
# daemon says what it can still do and the fix.
. "$(dirname "$0")/lib.sh"
need_root

field() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$DPID/status"; }
NICE=$(printf '%016x' $((1 << 23)))   # CAP_SYS_NICE is bit 23

CONF="$TMP/p.conf"
printf '[daemon]\nrate-limit = 0\n' >"$CONF"
daemon_start "$CONF"
[ "$(field CapEff)" = "$NICE" ] && pass "effective set is CAP_SYS_NICE only" || fail "CapEff $(field CapEff)"
[ "$(field CapPrm)" = "$NICE" ] && pass "permitted set is CAP_SYS_NICE only" || fail "CapPrm $(field CapPrm)"
[ "$(field CapBnd)" = "$NICE" ] && pass "bounding set is CAP_SYS_NICE only" || fail "CapBnd $(field CapBnd)"
[ "$(field CapAmb)" = 0000000000000000 ] && pass "no ambient capabilities" || fail "CapAmb $(field CapAmb)"
[ "$(field NoNewPrivs)" = 1 ] && pass "no-new-privs set" || fail "NoNewPrivs $(field NoNewPrivs)"
ctl status
expect_in "$OUT" "cap_sys_nice=ep" "status shows the capability set"
helper_start
T=$(spawn w)
ctl register --tid "$T"
expect_sched "$T" "policy=fifo priority=10" "registration works with only CAP_SYS_NICE"
helper_stop
daemon_stop

# user = nobody
printf '[daemon]\nrate-limit = 0\nuser = nobody\n' >"$CONF"
daemon_start "$CONF"
[ "$(awk '$1 == "Uid:" { print $2 }' "/proc/$DPID/status")" = "$(id -u nobody)" ] &&
	pass "runs as nobody" || fail "uid $(awk '$1 == "Uid:" { print $2 }' "/proc/$DPID/status")"
[ "$(field CapEff)" = "$NICE" ] && pass "as nobody it keeps CAP_SYS_NICE only" || fail "CapEff $(field CapEff)"
[ "$(field CapBnd)" = "$NICE" ] && pass "and its bounding set too (the means of switching dropped after the switch)" ||
	fail "CapBnd $(field CapBnd)"
helper_start
T=$(spawn w2)
ctl register --tid "$T" --policy rr --priority 15
expect_sched "$T" "policy=rr priority=15" "a root-owned thread made real-time by the nobody daemon"
ctl unregister --tid "$T"
expect_sched "$T" "policy=other" "and restored"
helper_stop
daemon_stop

# without CAP_SYS_NICE
printf '[daemon]\nrate-limit = 0\n' >"$CONF"
SOCK="$TMP/control"; DLOG="$TMP/nonice.log"
setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice "$RTSCHEDD" --config "$CONF" --socket "$SOCK" >"$DLOG" 2>&1 &
DPID=$!
wait_for "$RTSCHEDCTL" --socket "$SOCK" version
expect_in "$(cat "$DLOG")" "has no CAP_SYS_NICE" "warns that CAP_SYS_NICE is missing"
expect_in "$(cat "$DLOG")" "fix: run rtschedd as root, or add the line 'root - rtprio 10'" "prints the limits.conf line to add"
daemon_stop
finish
