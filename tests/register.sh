#!/bin/bash
# tests/register.sh: registration on the real kernel. A real rtschedd on a
# private socket, real threads (tests/task-helper), and every assertion on
# what sched_getscheduler/sched_getparam/sched_getaffinity report.
. "$(dirname "$0")/lib.sh"
need_root

CONF="$TMP/test.conf"
cat >"$CONF" <<EOC
[daemon]
policy = fifo
priority = 10
max-priority = 80
rate-limit = 0

[rule audio]
policy = fifo
priority = 50
cpus = $LASTCPU

[rule video]
policy = rr
priority = 40

[user *]
max-priority = 20
policies = fifo,other
max-threads = 2
EOC
daemon_start "$CONF" --scheduler-policy fifo --scheduler-priority 10
ctl status
expect_in "$OUT" "connector (idle" "with nothing that needs process events the connector is idle (no wake-ups per fork)"
sw() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$DPID/status"; }
before=$(sw); for i in $(seq 200); do /bin/true; done; after=$(sw)
[ "$after" = "$before" ] && pass "200 forks on the machine did not wake the idle daemon" ||
	fail "the idle daemon woke $((after - before)) times during 200 forks"
helper_start

# --- rtschedctl register/unregister, default policy from the command line ---
T1=$(spawn worker1)
chrt -b -p 0 "$T1"   # start from SCHED_BATCH so restoring is not just "back to other"
ORIG=$(q "$T1")
ctl register --tid "$T1"
expect_rc 0 "rtschedctl register --tid"
expect_in "$OUT" "policy               fifo" "reply states the policy"
expect_sched "$T1" "policy=fifo priority=10" "kernel reports SCHED_FIFO 10"
expect_sched "$T1" "rfork=1" "reset-on-fork is on by default"
expect_in "$(chrt -p "$T1")" "SCHED_FIFO|SCHED_RESET_ON_FORK" "chrt -p agrees"

ctl register --tid "$T1" --role audio
expect_rc 0 "register again with role audio"
expect_sched "$T1" "policy=fifo priority=50 cpus=$LASTCPU" "rule's priority and CPU list applied"
expect_in "$(taskset -p "$T1")" "mask: $(printf %x $((1 << LASTCPU)))" "taskset -p shows the rule's CPU"

ctl list
expect_in "$OUT" "worker1" "list shows the thread by name"
expect_in "$OUT" "audio" "list shows its rule"
ctl --json list
[ "$(echo "$OUT" | jq -r ".[] | select(.tid == $T1) | .priority")" = 50 ] && pass "list --json parses, priority 50" || fail "list --json: $OUT"

ctl unregister --tid "$T1"
expect_rc 0 "unregister"
[ "$(q "$T1")" = "$ORIG" ] && pass "unregister restores the original ($ORIG)" || fail "after unregister: $(q "$T1"), want $ORIG"
ctl unregister --tid "$T1"
expect_rc 1 "unregister of an unmanaged thread"
expect_in "$ERR" "not-registered" "error code not-registered"

# --- explicit settings in the request ---
ctl register --tid "$T1" --policy rr --priority 33 --cpus 0
expect_rc 0 "explicit policy, priority and cpus"
expect_sched "$T1" "policy=rr priority=33 cpus=0" "kernel reports rr 33 on CPU 0"
ctl register --tid "$T1" --priority 90
expect_rc 1 "priority above max-priority"
expect_in "$ERR" "above-max-priority" "error code above-max-priority"
expect_sched "$T1" "policy=rr priority=33" "a refused request changes nothing"
ctl register --tid "$T1" --role nosuch
expect_in "$ERR" "unknown-role" "unknown role refused"
ctl register --tid "$T1" --cpus 999
expect_in "$ERR" "cpu-denied" "a CPU that does not exist refused"

# --- librtsched: a thread registers itself ---
T2=$(spawn worker2)
h register worker2 video
expect_in "$HR" "ok rr 40" "librtsched rtsched_register with role video"
expect_sched "$T2" "policy=rr priority=40" "kernel reports SCHED_RR 40"
h unregister worker2
expect_sched "$T2" "policy=other priority=0" "rtsched_unregister_self restores"

# --- an exited thread leaves the registry ---
T3=$(spawn worker3)
ctl register --tid "$T3"
h exit worker3
wait_for sh -c "! '$RTSCHEDCTL' --socket '$SOCK' list | grep -qw '^$T3'" &&
	pass "exited thread left the registry" || fail "tid $T3 still listed after exit"

# --- a whole process, including threads it creates later ---
HP=$(h pid; echo "${HR#pid }")
h pid; HP=${HR#pid }
ctl register --pid "$HP" --role video
expect_rc 0 "register --pid"
expect_sched "$T1" "policy=rr priority=40" "existing thread of the process got the rule"
T4=$(spawn later)
wait_for sh -c "'$HELPER' query $T4 | grep -q 'policy=rr priority=40'" &&
	pass "thread created after registration got the rule" || fail "new thread: $(q "$T4")"
ctl unregister --tid "$T4"
expect_in "$ERR" "managed as part of registered process $HP" "one thread of a registered process can't be unregistered alone"
ctl unregister --pid "$HP"
expect_sched "$T4" "policy=other priority=0" "unregister --pid restores the later thread"

# --- reload re-applies a changed rule ---
ctl register --tid "$T1" --role audio
sed -i 's/^priority = 50$/priority = 55/' "$CONF"
ctl reload
expect_rc 0 "rtschedctl reload"
expect_sched "$T1" "policy=fifo priority=55" "reload re-applied the changed rule"
sed -i 's/^priority = 55$/priority = 56/' "$CONF"
kill -HUP "$DPID"
wait_for sh -c "'$HELPER' query $T1 | grep -q 'priority=56'" && pass "SIGHUP re-applied" || fail "after SIGHUP: $(q "$T1")"
echo "max-priority = 500" >>"$CONF"
ctl reload
expect_rc 1 "reload with a broken config"
expect_in "$ERR" "config-invalid" "error code config-invalid"
expect_sched "$T1" "policy=fifo priority=56" "broken config kept the registration"
sed -i '$d' "$CONF"
# a rule removed on reload: the thread gets its original back
sed -i '/^\[rule audio\]/,/^cpus/d' "$CONF"
ctl reload
[ "$(q "$T1")" = "$ORIG" ] && pass "rule removed on reload: thread restored to $ORIG" || fail "rule removed on reload: $(q "$T1"), want $ORIG"

# --- malformed requests, the daemon keeps serving ---
for bad in "garbage" "v=1" "v=2 op=status" "v=1 op=fly" "v=1 op=register" "v=1 op=register tid=abc" \
	   "v=1 op=register tid=1 pid=1" "v=1 op=register tid=$T1 priority=%ZZ"; do
	out=$("$HELPER" raw "$SOCK" "$bad")
	case "$out" in ERR*) pass "malformed '$bad' -> ${out%% *} ${out#ERR }" ;; *) fail "'$bad' got: $out" ;; esac
done
out=$("$HELPER" raw "$SOCK" "v=2 op=status")
expect_in "$out" "ERR version" "version mismatch has its own code"
ctl status
expect_rc 0 "daemon still serving after malformed requests"

# --- non-root: own threads only, within [user *] ---
T5=$(spawn rooted)
helper_stop
kill -0 "$DPID" && pass "daemon alive" || fail "daemon died"
helper_start nobody
N1=$(spawn nb1)
h register nb1 -
expect_in "$HR" "ok fifo 10" "nobody registers its own thread (default fifo 10)"
expect_sched "$N1" "policy=fifo priority=10" "kernel reports it"
h register-tid 1 -
expect_in "$HR" "belongs to process 1, not to the caller" "nobody cannot register pid 1's thread (not-own-thread)"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$RTSCHEDCTL" --socket "$SOCK" register --tid "$N1" 2>&1)
expect_in "$out" "not-own-thread" "another process of the same user is refused too"
h register nb1 video
expect_in "$HR" "policy rr (video) is not allowed for user nobody by [user *]" "policy rr denied to nobody, naming the rule"
N2=$(spawn nb2); N3=$(spawn nb3)
h register nb2 -
h register nb3 -
expect_in "$HR" "holds 2 threads and may hold 2 (max-threads in [user *])" "third thread over max-threads 2 refused"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$RTSCHEDCTL" --socket "$SOCK" reload 2>&1)
expect_in "$out" "not-admin" "nobody may not reload"

# --- stopping the daemon restores every thread ---
daemon_stop
[ "$DRC" -eq 0 ] && pass "daemon stopped cleanly" || fail "daemon exit $DRC"
expect_sched "$N1" "policy=other priority=0" "stopping the daemon restored nobody's thread"
helper_stop

# --- the rate limit ---
cat >"$TMP/rate.conf" <<EOC
[daemon]
rate-limit = 1
rate-burst = 3
EOC
daemon_start "$TMP/rate.conf"
helper_start
R1=$(spawn r1)
# 100 requests pipelined on one connection: the bucket starts with the burst
# (3) and refills at 1 per second, so at most 3 + 1 + (elapsed seconds) can be
# granted; the bound follows the measured time, so a slow machine can't fail it
run "$top_builddir/tests/abuse-client" flood "$SOCK" 100 "v=1 op=register tid=$R1"
ok=$(echo "$OUT" | grep -o ' ok=[0-9]*' | cut -d= -f2); ok=${ok:-0}
limited=$(echo "$OUT" | grep -o ' rate-limited=[0-9]*' | cut -d= -f2); limited=${limited:-0}
ms=$(echo "$OUT" | grep -o 'elapsed_ms=[0-9]*' | cut -d= -f2)
bound=$((3 + 1 + ${ms:-0} / 1000))
[ $((ok + limited)) -eq 100 ] && pass "100 pipelined requests: $ok granted, $limited rate-limited in $ms ms" ||
	fail "flood replies: $OUT"
[ "$ok" -ge 3 ] && [ "$ok" -le "$bound" ] && { [ "$limited" -ge 1 ] || [ "$bound" -ge 100 ]; } &&
	pass "the burst is granted, then at most 1 per second ($ok <= $bound)" ||
	fail "rate-limit = 1, burst = 3: $ok granted in $ms ms (want 3..$bound with refusals)"
helper_stop
daemon_stop

finish
