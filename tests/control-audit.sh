#!/bin/bash
# tests/control-audit.sh: finding 8 of the control-socket audit, run
# against the real daemon and kernel by the user an attacker would be
# (nobody); doc/security-attacks.md records what it did to the code before
# the fix.
#
#   8  register pid= counted the process's threads for the quota, then
#      listed them again and granted every one: threads made in between went
#      past max-threads. The daemon is paused (RTSCHEDD_TEST_PAUSE,
#      "after-decide") between the decision and the grant while the process
#      makes 16 more threads: the window made wide, not raced.
. "$(dirname "$0")/lib.sh"
need_root
ABUSE="$top_builddir/tests/abuse-client"
[ -x "$ABUSE" ] || skip "$ABUSE is not built"
for c in setpriv jq; do command -v "$c" >/dev/null || skip "$c missing"; done
NOBODY=$(id -u nobody)
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
as_nobody() { $AS_NOBODY "$@"; }

BG=""
bg_stop() { for p in $BG; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; BG=; }
at_exit bg_stop
# rt_threads PID: how many of its threads the kernel runs SCHED_FIFO or SCHED_RR
# (stat's field 41, after the comm)
rt_threads() {
	local n=0 t pol
	for t in /proc/"$1"/task/*/stat; do
		pol=$(sed 's/.*) //' "$t" 2>/dev/null | awk '{ print $39 }')
		case "$pol" in 1|2) n=$((n + 1)) ;; esac
	done
	echo $n
}
ntasks() { ls /proc/"$1"/task | wc -l; }

# --- 8. threads made while register pid= is decided ----------------------------------
CONF="$TMP/quota.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
watchdog = no
[user *]
max-priority = 20
policies = fifo,other
max-threads = 4
EOC
mkfifo "$TMP/pause" "$TMP/sr.in"
exec {pfd}<>"$TMP/pause"   # read-write: the daemon's open of it never waits, its read does
RTSCHEDD_TEST_PAUSE="after-decide:$TMP/pause" daemon_start "$CONF"
as_nobody "$ABUSE" spawnreg "$SOCK" 16 "v=1 op=register pid=@PID@ policy=fifo priority=10" \
	<"$TMP/sr.in" >"$TMP/sr.out" 2>&1 &
BG="$BG $!"
exec {srfd}>"$TMP/sr.in"
wait_for grep -q '^spawnreg:' "$TMP/sr.out" || fail "8: the helper did not start: $(cat "$TMP/sr.out")"
SP=$(sed -n 's/^spawnreg: pid=\([0-9]*\).*/\1/p' "$TMP/sr.out")
paused() { ls -l "/proc/$DPID/fd" 2>/dev/null | grep -q "$TMP/pause"; }
wait_for paused || fail "8: the daemon never reached the hook (RTSCHEDD_TEST_PAUSE=after-decide)"
# decided for the process's 2 threads (main, spawner); now it makes 16 more
before=$(ntasks "$SP")
echo go >&$srfd
wait_for grep -q '^spawned 16' "$TMP/sr.out" || fail "8: the helper made no threads: $(cat "$TMP/sr.out")"
during=$(ntasks "$SP")
echo go >&$pfd
wait_for grep -q '^REPLY' "$TMP/sr.out" || fail "8: no reply to the register: $(cat "$TMP/sr.out")"
exec {pfd}>&-
echo "# 8: $before threads when decided, $during when granted; $(grep '^REPLY' "$TMP/sr.out")"
expect_in "$(grep '^REPLY' "$TMP/sr.out")" "REPLY OK" "8: nobody's register pid=$SP answered OK"
rt=$(rt_threads "$SP")
[ "$rt" -le 4 ] && pass "8: $rt of the process's $during threads real-time (kernel), max-threads = 4 holds" ||
	fail "8: $rt of the process's $during threads are real-time (kernel) past max-threads = 4"
[ "$rt" -eq 4 ] && pass "8: the threads made in the window were granted up to the quota (4)" ||
	fail "8: $rt threads real-time, want the quota's 4"
codes=$("$RTSCHEDCTL" --socket "$SOCK" --json list --all |
	jq -r ".[] | select(.pid == $SP and .state == \"refused\") | .state_code" | sort -u | tr '\n' ' ')
expect_in "$codes" "quota" "8: the threads past the quota listed as refused with the quota's code ($codes)"
expect_in "$(cat "$DLOG")" "of registered process $SP left alone" "8: the log says which threads were left alone"
bg_stop
daemon_stop

finish
