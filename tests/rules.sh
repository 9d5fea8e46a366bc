#!/bin/bash
# tests/rules.sh: rules that find threads by name, on the real kernel: the
# start-up scan, threads created and renamed later (process events
# connector), precedence, restoration, reload, and the rescan fallback.
. "$(dirname "$0")/lib.sh"
need_root

write_conf() {
	cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
rescan-interval = 200

[rule demo]
thread-name = rt-demo-*
policy = fifo
priority = 20
cpus = $LASTCPU

[rule helper-rr]
# two match keys: more specific than [rule loose] for the same threads
process-name = task-helper
thread-name = byproc-*
policy = rr
priority = 30

[rule loose]
thread-name = byproc-*
policy = fifo
priority = 5
EOC
}
CONF="$TMP/rules.conf"
write_conf

# a thread that exists before the daemon starts
SOCK="$TMP/control"
helper_start
PRE=$(spawn rt-demo-pre)
daemon_start "$CONF"
wait_for sh -c "'$HELPER' query $PRE | grep -q 'policy=fifo priority=20'" &&
	pass "start-up scan applied rule demo to an existing thread" || fail "pre-existing: $(q "$PRE")"
helper_stop

# the issue's case: a process started after the daemon
helper_start
OUT_T=$(spawn rt-demo-out)
OTHER_T=$(spawn other)
wait_for sh -c "chrt -p $OUT_T | grep -q SCHED_FIFO" &&
	pass "rt-demo-out created after start: chrt -p shows SCHED_FIFO within the wait" || fail "rt-demo-out: $(chrt -p "$OUT_T")"
expect_sched "$OUT_T" "policy=fifo priority=20 cpus=$LASTCPU" "rule's priority and CPU list"
expect_in "$(chrt -p "$OTHER_T")" "SCHED_OTHER" "sibling named 'other' keeps SCHED_OTHER"

ctl list
expect_in "$OUT" "rt-demo-out" "list shows the matched thread"
row=$(echo "$OUT" | grep -w "^$OUT_T")
expect_in "$row" "demo" "list names the rule that won"
expect_in "$row" "match" "list says it was matched"

# rename away: restored; rename back: applied again
h rename rt-demo-out plain
wait_for sh -c "'$HELPER' query $OUT_T | grep -q 'policy=other'" &&
	pass "renamed so no rule matches: restored" || fail "after rename: $(q "$OUT_T")"
expect_sched "$OUT_T" "cpus=$(seq -s, 0 $LASTCPU)" "affinity restored too"
h rename plain rt-demo-2
wait_for sh -c "'$HELPER' query $OUT_T | grep -q 'policy=fifo priority=20'" &&
	pass "renamed to match again: applied" || fail "after rename back: $(q "$OUT_T")"

# precedence: two keys beat one, whatever the file order
BP=$(spawn byproc-1)
wait_for sh -c "'$HELPER' query $BP | grep -q 'policy=rr priority=30'" &&
	pass "more specific rule (process-name + thread-name) wins" || fail "byproc: $(q "$BP")"

# an explicit registration is not touched by rules
EX=$(spawn rt-demo-x)
wait_for sh -c "'$HELPER' query $EX | grep -q 'policy=fifo'"
ctl register --tid "$EX" --policy rr --priority 44
h rename rt-demo-x nomatch
sleep 0.3
expect_sched "$EX" "policy=rr priority=44" "explicit registration survives a rename"

# a matched thread that exits leaves the registry
h exit byproc-1
wait_for sh -c "! '$RTSCHEDCTL' --socket '$SOCK' list | grep -qw '^$BP'" &&
	pass "exited matched thread left the registry" || fail "tid $BP still listed"

# reload: a rule removed gives the threads back
sed -i '/^\[rule demo\]/,/^cpus/d' "$CONF"
ctl reload
expect_rc 0 "reload without rule demo"
expect_sched "$OUT_T" "policy=other priority=0" "rule removed on reload: matched thread restored"
write_conf
ctl reload
expect_sched "$OUT_T" "policy=fifo priority=20" "rule back on reload: applied again"

# stopping restores matched threads
daemon_stop
expect_sched "$OUT_T" "policy=other priority=0" "daemon stop restored the matched thread"
helper_stop

# without the connector (process-events = no, as in a sandbox without
# AF_NETLINK): rescans of /proc, and status says so
sed -i 's/^rescan-interval = 200$/rescan-interval = 200\nprocess-events = no/' "$CONF"
daemon_start "$CONF"
ctl status
expect_in "$OUT" "rescan every 200 ms" "status reports the rescan fallback"
helper_start
FB=$(spawn rt-demo-fb)
wait_for sh -c "'$HELPER' query $FB | grep -q 'policy=fifo priority=20'" &&
	pass "fallback rescan applied the rule" || fail "fallback: $(q "$FB")"
h rename rt-demo-fb gone
wait_for sh -c "'$HELPER' query $FB | grep -q 'policy=other'" &&
	pass "fallback rescan restored a renamed thread" || fail "fallback rename: $(q "$FB")"
helper_stop
daemon_stop

finish
