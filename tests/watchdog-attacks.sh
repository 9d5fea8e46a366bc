#!/bin/bash
# tests/watchdog-attacks.sh: the watchdog of issue 23, finding 5, attacked.
#
#   A  the main thread stopped inside glibc's stdio and malloc locks
#      (RTSCHEDD_TEST_HOLD_LOCKS: malloc_stats() blocked in a write to a full
#      pipe, MALLOC_ARENA_MAX=1 so every thread shares the one arena lock)
#      while a FIFO spinner starves CPU 0: the FIFO 99 watchdog must still
#      demote it, with the main loop still stuck
#   B  the serial-spinner dodge: short-lived threads that register, spin
#      95 ms and exit, one after another, never published to the watchdog
#   C  an innocent real-time thread using 30% of the CPU beside a runaway
#      keeps its policy
#   D  a hold is per uid: the runaway's user forking a new process does not
#      escape it
#   E  a rule's hold is per rule and uid: another user's thread the same rule
#      matches still gets real-time
#   F  a runaway in step with the canary: 150 ms bursts, 10 ms gaps, timed so
#      that a canary re-armed at its wake-up would never wait past the floor
#   G  a thread registered on CPU 1 moves itself to CPU 0 and spins there: the
#      canaries must watch every CPU, not the CPUs a thread had at its grant
#   H  the watchdog parked (nothing real-time for a while), then one request
#      makes two spinners real-time, one per CPU, at once: they starve the
#      FIFO 1 main loop at once, so the watchdog must be watching before the
#      kernel write, not from the main loop's next publication
#   I  six equal-priority spinners of one user queued on CPU 0: one runs, the
#      others wait behind it having run nothing; one trip must demote all six,
#      not one per trip (32 of them once took a minute of a starved CPU)
#   J  a demoted runaway that may set real-time itself (root's, or a user's
#      with an RLIMIT_RTPRIO of its own) raises itself back at once: the
#      watchdog must still know it as a thread it manages, and demote it again
#   K  every look of the watchdog at /proc held 600 ms in the kernel (a path
#      lookup waiting on the same name's lookup by a task the runaway starves;
#      RTSCHEDD_TEST_WATCHDOG_STALL_MS stands in for it): the watchdog wakes
#      late at every check, yet the canary of the other CPU ticks on time, so
#      the daemon was not stopped: it must judge, not start over
#   L  what K stands in for, removed at its root: through a whole episode
#      and its trip, the watchdog thread (strace'd) looks up no path at all
#      (no open, no stat: it reads the tasks through BPF task iterators,
#      bpf(BPF_ITER_CREATE)), so no lookup a starved task has in flight can
#      hold it; and the runaway is still demoted. Skipped in a build
#      without BPF, whose watchdog reads /proc (status says so).
#   M  a runaway that steps aside for 1 ms every 40 ms (97.5% of CPU 0): no
#      canary's wait ever reaches the 50 ms floor, so only the watchdog's
#      duty windows (watchdog-duty, 90% of a window) see it (audit I1).
#      Skipped without BPF, as L. (runaway.sh's 60% of a CPU stays.)
#
# Every assertion about scheduling reads the kernel. The bounds of the waits
# (HANG_S) only end a hang; how long each took is printed, never judged.
. "$(dirname "$0")/lib.sh"
need_root
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs: the runaways take CPU 0 and the others must stay free"
SPIN="$top_builddir/tests/spin-helper"
[ -x "$SPIN" ] || skip "tests/spin-helper is not built"
command -v jq >/dev/null || skip "jq missing"
NOBODY=$(id -u nobody)

CONF="$TMP/w.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
watchdog = yes
watchdog-threshold = 1000
watchdog-cooldown = 30
[rule runaway]
process-name = spin-helper
thread-name = runaway*
policy = fifo
priority = 50
cpus = 0
[rule flush-a]
policy = fifo
priority = 10
[rule flush-b]
policy = fifo
priority = 11
[rule steady]
process-name = spin-helper
thread-name = steady*
policy = fifo
priority = 60
cpus = 0
[user *]
max-priority = 60
policies = fifo,other
max-threads = 1000
EOC
PIDS=""
spin_stop() { for p in $PIDS; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; PIDS=; }
at_exit spin_stop
# spin NAME [USER] ARGS...: a spin-helper on CPU 0 (as USER if given), output in $TMP/NAME.out
spin() {
	local n=$1 u=$2; shift 2
	if [ -n "$u" ]; then
		RTSCHED_SOCKET=$SOCK setpriv --reuid="$u" --regid=nogroup --clear-groups "$SPIN" --cpu 0 "$@" >"$TMP/$n.out" 2>&1 &
	else
		RTSCHED_SOCKET=$SOCK "$SPIN" --cpu 0 "$@" >"$TMP/$n.out" 2>&1 &
	fi
	PIDS="$PIDS $!"
	LASTPID=$!
}
started() { wait_for grep -q '^tid ' "$TMP/$1.out"; awk '/^tid / { print $2; exit }' "$TMP/$1.out"; }
is_sched() { "$HELPER" query "$1" | grep -q "policy=$2 "; }
# rt_threads PID: how many of the process's threads are real-time (field 41 of stat: 1 fifo, 2 rr)
rt_threads() { cat /proc/"$1"/task/*/stat 2>/dev/null | sed 's/.*) //' | awk '$39 == 1 || $39 == 2' | wc -l; }
watching() { "$RTSCHEDCTL" --socket "$SOCK" status | grep -q 'watchdog  *watching'; }
trip_seen() { grep -Eq 'watchdog: CPU 0|nothing demoted' "$DLOG"; }
# demoted_by_trip TID WHILE WHAT: a trip comes (else fail: "no trip WHILE"),
# and the kernel shows TID demoted (the pass or fail line says WHAT)
demoted_by_trip() {
	wait_for trip_seen || fail "${3%%:*}: no trip $2: $(grep watchdog "$DLOG" | tail -2)"
	wait_for is_sched "$1" other
	expect_sched "$1" "policy=other" "$3"
}
restart() { spin_stop; daemon_stop; : >"$DLOG"; taskset -pc "0-$LASTCPU" $$ >/dev/null; daemon_start "$CONF" "$@";
	taskset -pc "1-$LASTCPU" $$ >/dev/null; }

# --- A. the main loop stuck inside glibc's locks -----------------------------------------
mkfifo "$TMP/locks"
exec {lk}<>"$TMP/locks"   # a reader that reads only when the test says
MALLOC_ARENA_MAX=1 RTSCHEDD_TEST_HOLD_LOCKS="$TMP/locks" daemon_start "$CONF"
# this shell off CPU 0 from here (the daemon, started before, keeps every CPU)
taskset -pc "1-$LASTCPU" $$ >/dev/null
spin a "" --name runaway --mode idle --seconds 120
A=$(started a)
wait_for is_sched "$A" fifo
expect_sched "$A" "policy=fifo priority=50" "A: [rule runaway] made the spinner FIFO 50 on CPU 0"
wait_for watching
kill -USR2 "$DPID"
blocked() { case "$(cat "/proc/$DPID/wchan")" in *pipe*) return 0 ;; *) return 1 ;; esac; }
wait_for blocked && pass "A: the daemon's main thread is stuck in a write inside malloc_stats() ($(cat "/proc/$DPID/wchan"))" ||
	fail "A: the hook did not block the main thread (wchan $(cat "/proc/$DPID/wchan"))"
t0=$(date +%s%N)
kill -USR1 "$LASTPID"
wait_for is_sched "$A" other
ms=$((($(date +%s%N) - t0) / 1000000))
if is_sched "$A" other; then
	blocked && pass "A: the watchdog demoted the spinner ${ms} ms after it began, the main thread still stuck ($(cat "/proc/$DPID/wchan"))" ||
		fail "A: the spinner was demoted only once the main thread was free"
else
	fail "A: the spinner is still $("$HELPER" query "$A") with the main thread stuck in glibc's locks: the watchdog waits on them"
fi
kill -USR2 "$LASTPID"   # idle from now on
# free the main thread: read the pipe until the daemon answers again
cat <&$lk >/dev/null &
DRAIN=$!
wait_for "$RTSCHEDCTL" --socket "$SOCK" version
kill "$DRAIN" 2>/dev/null; wait "$DRAIN" 2>/dev/null
exec {lk}>&-
wait_for grep -q 'watchdog: CPU 0: tid' "$DLOG" && pass "A: once free, the main loop logs the trip: $(grep -m1 -o 'CPU 0: tid [^;]*' "$DLOG")" ||
	fail "A: no trip logged: $(grep watchdog "$DLOG" | tail -3)"

# --- B. the serial-spinner dodge -------------------------------------------------------------
restart
spin b nobody --name sspin --serial 95 --register - --seconds 90
BP=$LASTPID
wait_for grep -q '^registered' "$TMP/b.out"
expect_in "$(grep -m1 '^registered' "$TMP/b.out")" "registered fifo" "B: nobody's short-lived spinners register (default fifo 10)"
wait_for trip_seen || fail "B: no trip at all while the spinners kept CPU 0 real-time-busy: $(grep watchdog "$DLOG" | tail -2)"
echo "# B: $(grep -c '^registered' "$TMP/b.out") spinners registered before the trip; $(grep -m1 -o 'watchdog: .*' "$DLOG" | cut -c1-200)"
if grep -q 'nothing demoted' "$DLOG" || ! grep -q 'watchdog: CPU 0' "$DLOG"; then
	fail "B: no trip blamed the spinners: $(grep -m1 'watchdog: ' "$DLOG" | cut -c1-200)"
else
	pass "B: the trip blamed the spinners: $(grep -m1 -o 'CPU 0: [^;]*' "$DLOG" | cut -c1-160)"
fi
wait_for grep -q '^err' "$TMP/b.out" &&
	pass "B: the next spinner's registration is refused: $(grep -m1 '^err' "$TMP/b.out" | cut -c1-120)" ||
	fail "B: the spinners kept registering after the trip ($(grep -c '^registered' "$TMP/b.out") registered, no refusal)"
# the 20 spinners after the first refusal are refused too (the cooldown is 30 s)
twenty() { [ "$(sed -n '/^err/,$p' "$TMP/b.out" | grep -c '^tid ')" -ge 20 ]; }
wait_for twenty
after=$(sed -n '/^err/,$p' "$TMP/b.out" | grep '^registered\|^err' | head -20)
[ -n "$after" ] && ! echo "$after" | grep -q '^registered' &&
	pass "B: and the 20 spinners after it are refused as well: its user is held" ||
	fail "B: spinners registered again after the first refusal: $(echo "$after" | sort | uniq -c | tr -s ' \n' ' ')"

# --- C. an innocent 30% beside a runaway ---------------------------------------------------------
restart
spin c1 "" --name steady --mode duty --busy-ms 40 --period-ms 100 --seconds 120
S=$(started c1)
wait_for is_sched "$S" fifo
# run time, not wall time: it has run long enough (2 s at 40%) to have used
# more than the threshold within any window before the runaway starts
ran2s() { [ "$(awk '{ print $1 }' "/proc/$S/schedstat")" -ge 2000000000 ]; }
wait_for ran2s
spin c2 "" --name runaway --mode spin --seconds 120
R=$(started c2)
wait_for trip_seen
wait_for is_sched "$R" other
expect_sched "$R" "policy=other" "C: the runaway (FIFO 50, ~55% of CPU 0) is demoted"
expect_sched "$S" "policy=fifo priority=60" "C: the innocent FIFO 60 thread using 40% of CPU 0 keeps its policy"
echo "# C: $(grep -m1 -o 'watchdog: CPU 0: .*' "$DLOG" | cut -c1-300)"

# --- D. a hold is the user's: a new process does not escape it -------------------------------------
restart
spin d1 nobody --name nspin --mode spin --register - --seconds 120
D1=$(started d1)
wait_for trip_seen
wait_for is_sched "$D1" other
expect_sched "$D1" "policy=other" "D: nobody's registered spinner is demoted"
spin d2 nobody --name nspin2 --mode idle --register - --seconds 120
wait_for grep -q '^registered\|^err' "$TMP/d2.out"
expect_in "$(grep -m1 '^registered\|^err' "$TMP/d2.out")" "err" "D: a new process of the same user is held too: $(grep -m1 '^registered\|^err' "$TMP/d2.out" | cut -c1-120)"
D2=$(started d2)
expect_sched "$D2" "policy=other" "D: and the kernel shows it SCHED_OTHER"

# --- E. a rule's hold is per rule and uid ---------------------------------------------------------------
restart
spin e1 nobody --name runaway --mode spin --seconds 120
E1=$(started e1)
wait_for trip_seen
wait_for is_sched "$E1" other
expect_sched "$E1" "policy=other" "E: nobody's thread [rule runaway] matched is demoted"
grep -q "and rule runaway of uid $NOBODY (nobody)" "$DLOG" &&
	pass "E: held: $(grep -o 'held back for pid.*' "$DLOG" | head -1 | cut -c1-120)" ||
	fail "E: no hold of rule runaway for uid $NOBODY logged: $(grep 'held back' "$DLOG")"
# both matched while the cooldown lasts (30 s): the kernel's view is read at
# once, before the cooldown could end and promote what it held
spin e2 "" --name runaway2 --mode idle --seconds 120
E2=$(started e2)
spin e3 nobody --name runaway3 --mode idle --seconds 120
E3=$(started e3)
listed() { "$RTSCHEDCTL" --socket "$SOCK" --json list | jq -e ".[] | select(.tid == $1)" >/dev/null; }
wait_for listed "$E2"
wait_for listed "$E3"
k2=$("$HELPER" query "$E2") k3=$("$HELPER" query "$E3")
"$RTSCHEDCTL" --socket "$SOCK" status | grep -q 'watchdog  *cooldown' || fail "E: the cooldown ended before the check"
case "$k2" in *"policy=fifo priority=50"*) pass "E: root's new thread [rule runaway] matches gets FIFO 50 during the cooldown ($k2)" ;;
*) fail "E: root's new thread [rule runaway] matches is held by nobody's runaway: $k2" ;; esac
case "$k3" in *"policy=other"*) pass "E: nobody's new process [rule runaway] matches is held ($k3)" ;;
*) fail "E: nobody's new process [rule runaway] matches is not held: $k3" ;; esac

# --- F. a runaway in step with the canary ----------------------------------------------------
# 150 ms of every 160 ms, one thread: a canary re-armed at its wake-up +
# 125 ms wakes as each burst ends and ticks 115 ms into the next, so it waits
# 35 ms (under the 50 ms floor) every time and never counts CPU 0 taken 94%
# of the time. Its ticks are spread at random, so some land early in a
# burst, and after such a wait it ticks every 10 ms.
restart
spin f nobody --name lockstep --mode duty --busy-ms 150 --period-ms 160 --register - --seconds 120
F=$(started f)
wait_for is_sched "$F" fifo
demoted_by_trip "$F" "while a 150 ms-of-160 runaway kept CPU 0" "F: the runaway in step with the canary's ticks is demoted"
echo "# F: $(grep -m1 -o 'watchdog: CPU 0: .*' "$DLOG" | cut -c1-200)"

# --- G. a thread that moves itself off the CPUs it was granted on -------------------------------
restart
spin g nobody --cpu 1 --move-to 0 --name hop --mode spin --register - --seconds 120
G=$(started g)
wait_for grep -q '^moved' "$TMP/g.out"
expect_in "$(grep -m1 '^registered\|^err' "$TMP/g.out")" "registered fifo" "G: nobody's thread registered on CPU 1 (default fifo 10), then moved itself to CPU 0"
demoted_by_trip "$G" "while the thread that moved itself kept CPU 0" "G: the thread that moved itself to CPU 0 and spins there is demoted"

# --- H. spinners on every CPU at once, the watchdog parked -----------------------------------
restart
watching && fail "H: the watchdog is watching with nothing real-time"
# two workers spinning from the start (SCHED_OTHER: ordinary load), one per
# CPU; then one request (pid=) makes every thread of the process real-time in
# one turn of the loop, which is starved from the second write on: its reply
# may never come, and no later publication of the loop's would start the
# watchdog
spin h nobody --workers 2 --name pair --mode spin --register-process - --seconds 60
two_tids() { [ "$(grep -c '^tid ' "$TMP/h.out")" -ge 2 ]; }
wait_for two_tids
# the worker on CPU 0, then the one on CPU 1 (they announce in any order)
read -r H1 H2 < <(for t in $(awk '/^tid / { print $2 }' "$TMP/h.out"); do
	echo "$(awk '{ print $39 }' "/proc/$t/stat") $t"; done | sort -n | awk '{ printf "%s ", $2 }')
# one trip for both CPUs or one each: either names each CPU's spinner
both_cpus() { grep -q "CPU 0: tid $H1 " "$DLOG" && grep -q "CPU 1: tid $H2 " "$DLOG"; }
wait_for both_cpus && pass "H: the trip names each CPU's spinner: CPU 0 tid $H1, CPU 1 tid $H2" ||
	fail "H: no trip named the spinners $H1 (CPU 0) and $H2 (CPU 1): $(grep watchdog "$DLOG" | tail -2)"
# demoted, not never granted: a demotion keeps the grant's reset-on-fork
wait_for is_sched "$H1" other
wait_for is_sched "$H2" other
expect_sched "$H1" "policy=other priority=0 cpus=0 rfork=1" "H: the spinner on CPU 0, real-time from the request on, is demoted"
expect_sched "$H2" "policy=other priority=0 cpus=1 rfork=1" "H: the spinner on CPU 1 too: the watchdog was watching before the main loop was starved"
echo "# H: $(grep -m2 'watchdog: CPU' "$DLOG" | cut -c1-240 | tr '\n' ' ')"

# --- I. twins queued behind a runaway -------------------------------------------------------------
restart
# six workers (on CPUs 0, 1, 0, ...) move to CPU 0 and spin there as
# SCHED_OTHER; one request then makes the process real-time at fifo 10:
# one of them runs, five wait at the same priority
spin i nobody --workers 6 --move-to 0 --name twin --mode spin --register-process - --seconds 60
six_moved() { [ "$(grep -c '^moved' "$TMP/i.out")" -ge 6 ]; }
wait_for six_moved
I_TIDS=$(awk '/^tid / { print $2 }' "$TMP/i.out")
wait_for trip_seen || fail "I: no trip while six fifo spinners took CPU 0: $(grep watchdog "$DLOG" | tail -2)"
# the kernel's view as soon as the first trip is logged: a trip per twin
# would leave five of them real-time for a second or more
rt_twins=$(for t in $I_TIDS; do sed 's/.*) //' "/proc/$t/stat"; done | awk '$39 == 1 || $39 == 2' | wc -l)
first=$(grep -m1 -o 'watchdog: CPU 0: SCHED_OTHER tasks were kept waiting .*' "$DLOG")
[ "$rt_twins" = 0 ] && pass "I: when the first trip is logged, none of the six is real-time (kernel)" ||
	fail "I: when the first trip was logged, $rt_twins of the six were still real-time (kernel)"
expect_in "$first" "demoted 6 managed real-time threads" "I: the first trip demotes the runaway and the five waiting behind it"
for t in $I_TIDS; do
	wait_for is_sched "$t" other
	expect_sched "$t" "policy=other priority=0 cpus=0 rfork=1" "I: twin $t demoted (reset-on-fork kept: granted, then demoted)"
done
echo "# I: $(grep -m1 'watchdog: CPU 0: tid' "$DLOG" | cut -c1-300)"

# --- J. a demoted runaway that raises itself back -------------------------------------------------
restart
spin j "" --name phoenix --mode spin --register - --repromote 2 --seconds 120
J=$(started j)
expect_in "$(wait_for grep -q '^registered\|^err' "$TMP/j.out"; grep -m1 '^registered\|^err' "$TMP/j.out")" "registered fifo" \
	"J: root's spinner registered"
# the helper reads its own policy: each "demoted" line is a demotion the kernel showed it
demotions() { grep -c '^demoted' "$TMP/j.out"; }
wait_for grep -q '^demoted' "$TMP/j.out" || fail "J: the spinner was never demoted: $(grep watchdog "$DLOG" | tail -2)"
# 1,100 grants of another root process since: the watchdog's memory of
# recent grants (1,024) no longer holds the spinner's
FLUSH=$(echo "alt flush-a flush-b 1100" | RTSCHED_SOCKET=$SOCK "$top_builddir/tests/lib-conn-helper")
expect_in "$FLUSH" "ok 1100" "J: another root process registered 1,100 times, fifo 10 and 11 in turn"
kill -USR1 "$LASTPID"
wait_for grep -q '^repromoted' "$TMP/j.out" || fail "J: the spinner did not raise itself back: $(tail -2 "$TMP/j.out")"
twice() { [ "$(demotions)" -ge 2 ]; }
wait_for twice && pass "J: demoted, raised itself back to fifo/10, demoted again: the demoted thread stays one the watchdog manages" ||
	fail "J: the runaway that raised itself back was not demoted again: $(demotions) demotion(s); $(grep watchdog "$DLOG" | tail -2)"
echo "# J: $(grep 'watchdog: CPU 0: tid' "$DLOG" | sed -n 2p | cut -c1-200)"

# --- K. the watchdog held in the kernel at every look -------------------------------------------
export RTSCHEDD_TEST_WATCHDOG_STALL_MS=600
restart
unset RTSCHEDD_TEST_WATCHDOG_STALL_MS
spin k nobody --name held --mode spin --register - --seconds 120
K=$(started k)
wait_for is_sched "$K" fifo
demoted_by_trip "$K" "while each look of the watchdog was held 600 ms" "K: the runaway is demoted though the watchdog woke late at every check"
echo "# K: $(grep -m1 -o 'watchdog: CPU 0: .*' "$DLOG" | cut -c1-200)"

# --- L. no path lookup in the watchdog thread ------------------------------------------------
restart
how=$("$RTSCHEDCTL" --socket "$SOCK" status | sed -n 's/^ *watchdog_tasks *//p')
case "$how" in
bpf)
	WD=$(grep -l '^rtsd-watchdog$' /proc/"$DPID"/task/*/comm | awk -F/ '{ print $5 }')
	[ -n "$WD" ] || fail "L: no rtsd-watchdog thread in the daemon"
	# strace on this shell's CPUs (not CPU 0, which the runaway takes),
	# attached (the kernel names it the tracer) before the runaway starts
	strace -qq -p "$WD" -e trace=%file,%stat,bpf -o "$TMP/l.strace" &
	ST=$!
	wait_for grep -Eq '^TracerPid:[[:space:]]*[1-9]' "/proc/$WD/status" || fail "L: strace did not attach"
	spin l nobody --name nolookup --mode spin --register - --seconds 120
	L=$(started l)
	wait_for is_sched "$L" fifo
	demoted_by_trip "$L" "with the watchdog under strace" "L: the runaway is demoted"
	kill -INT "$ST"; wait "$ST" 2>/dev/null
	iters=$(grep -c 'BPF_ITER_CREATE' "$TMP/l.strace")
	paths=$(grep -v 'bpf(' "$TMP/l.strace" | grep -c '(')
	[ "$iters" -ge 2 ] && [ "$paths" = 0 ] &&
		pass "L: through the episode and its trip the watchdog read the tasks $iters times through BPF iterators and looked up no path" ||
		fail "L: the watchdog made $iters iterator reads and $paths path lookups: $(grep -v 'bpf(' "$TMP/l.strace" | head -3)"
	;;
'/proc (rtschedd was built without BPF'*)
	echo "# L skipped: $how" ;;
*)
	fail "L: the watchdog does not read tasks through BPF iterators in a build with BPF: watchdog_tasks ${how:-missing}" ;;
esac

# --- M. a runaway that lets the canary run: the duty window ------------------------------------
restart
case "$("$RTSCHEDCTL" --socket "$SOCK" status | sed -n 's/^ *watchdog_tasks *//p')" in
bpf)
	expect_in "$("$RTSCHEDCTL" --socket "$SOCK" status | grep watchdog_duty)" "90%" "M: status says the share it allows: watchdog_duty 90%"
	spin m2 nobody --name sidestep --mode duty --busy-ms 40 --period-ms 41 --register - --seconds 120
	M2=$(started m2)
	wait_for is_sched "$M2" fifo
	wait_for grep -q 'managed real-time threads kept' "$DLOG" &&
		pass "M: a duty trip: $(grep -m1 -o 'watchdog: CPU 0: managed.*' "$DLOG" | cut -c1-170)" ||
		fail "M: no duty trip while a runaway kept 40 ms of every 41 on CPU 0: $(grep watchdog "$DLOG" | tail -3)"
	wait_for is_sched "$M2" other
	expect_sched "$M2" "policy=other" "M: the runaway that let the canary run is demoted"
	grep -q 'SCHED_OTHER tasks were kept waiting' "$DLOG" &&
		echo "# M: a canary also counted a wait: $(grep -m1 -o 'watchdog: CPU 0: SCHED_OTHER.*' "$DLOG" | cut -c1-150)"
	;;
*)
	echo "# M skipped: the watchdog reads /proc, and duty windows need the task iterators" ;;
esac

spin_stop
daemon_stop
finish
