#!/bin/bash
# tests/control-audit.sh: findings 8 and 6 of the control-socket audit, each
# run against the real daemon and kernel by the user an attacker would be
# (nobody); doc/security-attacks.md records what they did to the code before
# the fix.
#
#   8  register pid= counted the process's threads for the quota, then
#      listed them again and granted every one: threads made in between went
#      past max-threads. The daemon is paused (RTSCHEDD_TEST_PAUSE,
#      "after-decide") between the decision and the grant while the process
#      makes 16 more threads: the window made wide, not raced.
#   6  list (and jitter, metrics, why) cost the loop a row's work per managed
#      thread for one token, and their replies passed the per-connection
#      backpressure: one user with many connections held a big reply on each.
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

# --- 6. big replies nobody reads, and what they cost ------------------------------------
# 600 managed threads of root (policy other: nothing real-time), so that a
# list's reply is more than its socket's buffer holds and the daemon keeps
# the rest; no free-rate-limit, so only the memory bound is at work
CONF="$TMP/replies.conf"
printf '[daemon]\nrate-limit = 0\nfree-rate-limit = 0\nwatchdog = no\n' >"$CONF"
daemon_start "$CONF"
mkfifo "$TMP/bulk.in" "$TMP/bulk.out"
"$ABUSE" threads 600 <"$TMP/bulk.in" >"$TMP/bulk.out" 2>&1 &
BG="$BG $!"
BP=$!
exec {bulkfd}>"$TMP/bulk.in"
read -r -t "$HANG_S" _ <"$TMP/bulk.out"
ctl register --pid "$BP" --policy other
expect_rc 0 "6: root registers a process of 601 threads (policy other)"
mkfifo "$TMP/un.in"
N=64
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status"; }
rss0=$(rss)
as_nobody "$ABUSE" unread "$SOCK" $N "v=1 op=list all=1" <"$TMP/un.in" >"$TMP/un.out" 2>&1 &
UNP=$!
exec {unfd}>"$TMP/un.in"
# the daemon either pauses nobody (the fix: it logs so) or answers them all
settled() { grep -q "^answered $N of $N" "$TMP/un.out" || grep -q "uid $NOBODY leaves .* KiB of replies unread" "$DLOG"; }
wait_for settled || fail "6: neither paused nor all answered: $(tail -n 3 "$TMP/un.out")"
answered=$(sed -n 's/^answered \([0-9]*\) of.*/\1/p' "$TMP/un.out" | tail -n 1)
echo "# 6: $answered of $N answered; the daemon's VmRSS $rss0 kB before, $(rss) kB now (not judged: a sanitizer build)"
logged=$(grep -o "uid $NOBODY leaves [0-9]* KiB of replies unread.*" "$DLOG" | head -n 1)
# root is served meanwhile (the same list: 601 rows)
ctl --json list
expect_rc 0 "6: root's list answered while nobody's replies are unread"
rows=$(jq length <<<"$OUT" 2>/dev/null)
[ "${rows:-0}" -ge 601 ] && pass "6: root's list has every row ($rows)" || fail "6: root's list: '$rows' rows, want 601"
[ "$answered" -lt "$N" ] && pass "6: nobody's $N list requests, replies unread: $answered answered, the rest not read (paused)" ||
	fail "6: nobody's $N list requests, none of the replies read, were all answered: the daemon holds the rest of each"
expect_in "$logged" "at most 1024 KiB per user" "6: the pause logged ($logged)"
# the reply nobody's client measures, once it reads: the daemon held at most
# the cap and one reply when it paused
echo read >&$unfd
wait_for grep -q '^unread:' "$TMP/un.out" || fail "6: the client could not read its replies: $(tail -n 2 "$TMP/un.out")"
summary=$(grep '^unread:' "$TMP/un.out")
echo "# 6: $summary"
bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<<"$summary")
held=$(sed -n 's/.*leaves \([0-9]*\) KiB.*/\1/p' <<<"$logged")
[ -n "$held" ] && [ "$held" -le $((1024 + bytes / 1024 + 1)) ] &&
	pass "6: nobody held $held KiB when paused, at most 1024 KiB and one reply ($((bytes / 1024)) KiB)" ||
	fail "6: nobody held '$held' KiB of replies, past 1024 KiB and one reply ($((bytes / 1024)) KiB)"
expect_in "$summary" "ok=$N" "6: once read, every one of the $N requests answered (none lost)"
exec {unfd}>&-
kill -KILL "$UNP" 2>/dev/null; wait "$UNP" 2>/dev/null
# root's account is not paused: all of root's processes share it, and one
# stopped reader of root's (40 lists, some 2 MiB the daemon holds) would hold every root
# service's requests
mkfifo "$TMP/ru.in"
"$ABUSE" unread "$SOCK" 40 "v=1 op=list all=1" <"$TMP/ru.in" >"$TMP/ru.out" 2>&1 &
RUP=$!
exec {rufd}>"$TMP/ru.in"
wait_for grep -q '^answered 40 of 40' "$TMP/ru.out" ||
	fail "6: root's 40 unread lists: $(tail -n 1 "$TMP/ru.out"); $(grep 'uid 0 leaves' "$DLOG" | tail -n 1)"
ctl status
expect_rc 0 "6: root's status answered while another root client leaves 40 lists unread"
exec {rufd}>&-
kill -KILL "$RUP" 2>/dev/null; wait "$RUP" 2>/dev/null

# the loop's work: a list of 600 rows costs 60 more tokens of free-rate-limit
printf '[daemon]\nrate-limit = 0\nfree-rate-limit = 5\nfree-rate-burst = 20\nwatchdog = no\n' >"$CONF"
ctl reload
expect_rc 0 "6: reload with free-rate-limit 5, burst 20"
run $AS_NOBODY "$RTSCHEDCTL" --socket "$SOCK" list
expect_rc 0 "6: nobody's list (601 rows) answered"
run $AS_NOBODY "$RTSCHEDCTL" --socket "$SOCK" version
expect_rc 1 "6: nobody's next request, the second of a burst of 20, refused"
expect_in "$ERR$OUT" "a reply costs one more per 10 rows" "6: the refusal says rows cost tokens"
expect_in "$ERR$OUT" "raise free-rate-limit" "6: ... and what to do"
ctl list
expect_rc 0 "6: root's list still answered (root has no free-rate-limit)"
# root is not charged by rows: a why by name looks through the 601 threads
# other users may have made, and root's rate-limit bucket also pays for its
# services' grants (rtkit's, caught calls')
printf '[daemon]\nrate-limit = 5\nrate-burst = 20\nfree-rate-limit = 5\nfree-rate-burst = 20\nwatchdog = no\n' >"$CONF"
ctl reload
expect_rc 0 "6: reload with rate-limit 5, burst 20"
ctl why no-such-name
ctl why no-such-name
ctl jitter
expect_rc 0 "6: root's third request after two whys through 601 threads is answered (no debt for rows)"
exec {bulkfd}>&-
bg_stop
daemon_stop
finish
