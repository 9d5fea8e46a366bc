#!/bin/bash
# tests/restart.sh: registrations and rule matches survive a crash of the
# daemon (SIGKILL): the next rtschedd re-adopts them from the state journal,
# verified by start time, and still restores the original settings.
. "$(dirname "$0")/lib.sh"
need_root

CONF="$TMP/r.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
[rule video]
policy = rr
priority = 40
[rule matched]
thread-name = rt-keep-*
policy = fifo
priority = 25
EOC
daemon_start "$CONF"
helper_start
A=$(spawn worker-a); chrt -b -p 0 "$A"; ORIG_A=$(q "$A")
B=$(spawn worker-b)
M=$(spawn rt-keep-1)
ctl register --tid "$A" --role video
ctl register --tid "$B" --cpus 0
wait_for sh -c "'$HELPER' query $M | grep -q 'policy=fifo priority=25'"
[ -s "$TMP/state" ] && pass "state journal written beside the socket" || fail "no $TMP/state"

# a second rtschedd on the same socket stops before touching anything
run "$RTSCHEDD" --config "$CONF" --socket "$SOCK"
expect_rc 71 "a second rtschedd on the same socket refuses to start"
[ -s "$TMP/state" ] && pass "and leaves the running one's journal alone" || fail "the journal is gone"
expect_sched "$A" "policy=rr priority=40" "and its threads"

kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
expect_sched "$A" "policy=rr priority=40" "after a crash the thread keeps its settings"
h exit worker-b          # exits while no daemon runs
daemon_start "$CONF"
expect_in "$(cat "$DLOG")" "re-adopted 2 threads" "the new daemon re-adopted the two live threads"
ctl list
expect_in "$OUT" "worker-a" "list shows the re-adopted registration"
expect_in "$OUT" "rt-keep-1" "list shows the re-adopted rule match"
row=$(echo "$OUT" | grep -w "^$B")
[ -z "$row" ] && pass "the thread that exited meanwhile was not adopted" || fail "exited thread listed: $row"
ctl unregister --tid "$A"
[ "$(q "$A")" = "$ORIG_A" ] && pass "unregister restores the original recorded before the crash ($ORIG_A)" ||
	fail "after unregister: $(q "$A"), want $ORIG_A"
h rename rt-keep-1 plain
wait_for sh -c "'$HELPER' query $M | grep -q 'policy=other'" && pass "re-adopted rule match still restored on rename" ||
	fail "rename: $(q "$M")"

# a clean stop restores everything and forgets the journal
ctl register --tid "$A" --role video
daemon_stop
expect_sched "$A" "policy=batch" "clean stop restored"
[ ! -e "$TMP/state" ] && pass "clean stop removed the journal" || fail "journal left after a clean stop"
helper_stop
finish
