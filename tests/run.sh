#!/bin/bash
# tests/run.sh: `rtschedctl run` and its preload library (issue 26, item 1).
# A non-root user with RLIMIT_RTPRIO 0 (as under a unit without LimitRTPRIO=,
# a daemon started outside PAM) and a [user] grant in rtschedd's config:
#  (a) tests/run-helper's own calls (sched_setscheduler, sched_setparam,
#      sched_setattr, pthread_setschedparam/setschedprio, pthread_create with
#      explicit scheduling, nice, setpriority) fail with the kernel's error
#      without run and succeed through it, read back from the kernel, shown
#      by `rtschedctl list` as SOURCE preload; a priority above the user's
#      max-priority is refused with the kernel's errno unchanged and one line
#      on stderr; a granted thread that execs a set-user-ID program loses
#      the grant; pthread_setschedparam on other threads of the process
#      names each by its own tid while thousands of threads start and end;
#  (b) olad --scheduler-policy fifo --scheduler-priority 10 exits without run
#      and through it stays up, its threads at the policies and priorities
#      olad gets with CAP_SYS_NICE (its main thread FIFO 10);
#  (c) jackd -R -P 70 -d dummy through run: no "Cannot use real-time
#      scheduling" nor "Cannot create RT messagebuffer thread", its threads
#      as with CAP_SYS_NICE; -P 90, above the user's 80, stays refused;
#  (d) with rtschedd stopped, the kernel's error comes back unchanged;
#  (e) bad input: no program, a missing one, one that cannot be executed,
#      a missing preload library, a bad --rule, a --rule that names no rule
#      or one above the user's limits: the documented exit status, the code
#      and fix, nothing exec'd (a --rule the daemon cannot check: the
#      program runs).
. "$(dirname "$0")/lib.sh"
need_root
for c in useradd userdel setpriv prlimit chrt olad jackd; do
	command -v $c >/dev/null || { echo "FAIL - $c missing (apt-get install passwd util-linux ola jackd2)"; exit 1; }
done
RH="$top_builddir/tests/run-helper"
PRELOAD="$top_builddir/src/preload/.libs/librtsched-preload.so"
[ -x "$RH" ] && [ -r "$PRELOAD" ] || { echo "FAIL - tests/run-helper or $PRELOAD not built"; exit 1; }
export RTSCHED_PRELOAD="$PRELOAD"

U=rtsd-run$$
useradd -M -N -g nogroup -d "$TMP/home" -s /usr/sbin/nologin "$U" || skip "cannot add a test user"
undo_user() { userdel "$U" 2>/dev/null; }
at_exit undo_user
mkdir -p "$TMP/home" && chown "$U" "$TMP/home"
# as $U with RLIMIT_RTPRIO 0; and as $U with CAP_SYS_NICE (what the program
# does where it is allowed: the reference for (b) and (c))
AS_USER=(env HOME="$TMP/home" prlimit --rtprio=0:0 -- setpriv --reuid="$U" --regid=nogroup --clear-groups --)
WITH_NICE=(env HOME="$TMP/home" setpriv --reuid="$U" --regid=nogroup --clear-groups --inh-caps +sys_nice
	--ambient-caps +sys_nice --)
RUN=("$RTSCHEDCTL" --socket "$TMP/control" run)

cat >"$TMP/run.conf" <<EOC
[daemon]
rate-limit = 0
watchdog = no
max-priority = 95
[user $U]
max-priority = 80
policies = fifo,rr,other
min-nice = -10
[rule inherit]
policy = fifo
priority = 10
reset-on-fork = no
[rule too-high]
policy = fifo
priority = 90
EOC
daemon_start "$TMP/run.conf"

# field LINE KEY: the value of KEY=... in a helper line
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# line CALL: the helper's line for CALL in OUT
line() { printf '%s\n' "$OUT" | grep "^$1 " | head -1; }
# expect_call CALL RC ERRNO POLICY PRIORITY DESC
expect_call() {
	local l
	l=$(line "$1")
	if [ "$(field "$l" rc)" = "$2" ] && [ "$(field "$l" errno)" = "$3" ] &&
		[ "$(field "$l" policy)" = "$4" ] && [ "$(field "$l" priority)" = "$5" ]; then
		pass "$6"
	else
		fail "$6: want rc=$2 errno=$3 $4/$5, got: $l"
	fi
}

# --- (a) the helper ---------------------------------------------------------------
run "${AS_USER[@]}" "$RH" fifo:10
expect_call fifo:10 -1 EPERM other 0 "(a) without run, sched_setscheduler(FIFO 10) fails with EPERM"

run "${AS_USER[@]}" "${RUN[@]}" -- "$RH" fifo:10 fifo:90 param:20 rr:5 attr:30 pthread:40 prio:41 create:15
expect_rc 0 "(a) the helper through rtschedctl run"
expect_call fifo:10 0 0 fifo 10 "(a) sched_setscheduler(FIFO 10) through run: 0, the kernel shows FIFO 10"
expect_call fifo:90 -1 EPERM fifo 10 "(a) FIFO 90, above the user's max-priority 80: EPERM unchanged, still FIFO 10"
expect_call param:20 0 0 fifo 20 "(a) sched_setparam(20)"
expect_call rr:5 0 0 rr 5 "(a) sched_setscheduler(RR 5)"
expect_call attr:30 0 0 fifo 30 "(a) sched_setattr(FIFO 30), the system call glibc 2.36 does not wrap"
expect_call pthread:40 0 0 fifo 40 "(a) pthread_setschedparam(FIFO 40)"
expect_call prio:41 0 0 fifo 41 "(a) pthread_setschedprio(41)"
expect_call create:15 0 0 fifo 41 "(a) pthread_create with explicit FIFO 15 returns 0"
# the new thread printed this first thing in its start routine: it had the grant before it ran
expect_call thread 0 0 fifo 15 "(a) the explicit-sched thread runs FIFO 15 from its first instruction"
n=$(grep -c '^rtsched-preload: ' <<<"$ERR")
[ "$n" -eq 1 ] && pass "(a) one refusal line for the thread" || fail "(a) $n refusal lines: $ERR"
expect_in "$ERR" "sched_setscheduler(fifo 90) refused by rtschedd: priority-denied" "(a) the line names the call and the code"
expect_in "$ERR" "rtschedctl check --pid" "(a) and where to look further"

run "${AS_USER[@]}" "${RUN[@]}" -- "$RH" nice:-5 setprio:-8 setprio:-15
expect_call nice:-5 0 0 other 0 "(a) nice(-5) through run"
[ "$(field "$(line nice:-5)" nice)" = -5 ] && pass "(a) the kernel shows nice -5" || fail "(a) nice: $(line nice:-5)"
[ "$(field "$(line setprio:-8)" nice)" = -8 ] && pass "(a) setpriority(-8): the kernel shows nice -8" ||
	fail "(a) setpriority: $(line setprio:-8)"
expect_call setprio:-15 -1 EACCES other 0 "(a) setpriority(-15), below min-nice -10: EACCES unchanged"
expect_in "$ERR" "nice-denied" "(a) its refusal line"

# pthread_setschedparam on other threads while 4 x 1100 threads start and
# end (more than the 4096 slots of the library's table of thread ids, which
# takes no lock): each is named by its own tid, and a thread made after the
# churn still finds a slot
run "${AS_USER[@]}" "${RUN[@]}" -- "$RH" others:8
expect_rc 0 "(a) others:8 through run"
for k in 0 1 2 3 4 5 6 7; do
	expect_call "other:$k" 0 0 fifo $((10 + k)) "(a) during the churn, thread $k set to FIFO $((10 + k)) from the main thread"
done
expect_call late 0 0 fifo 30 "(a) after 4400 threads came and went, a new thread set to FIFO 30 from the main thread"
expect_call others:8 0 0 other 0 "(a) every churn thread was made"

# held: the grant in rtschedctl list, SOURCE preload, until the program ends
mkfifo "$TMP/hold"; chmod 666 "$TMP/hold"
"${AS_USER[@]}" "${RUN[@]}" -- "$RH" fifo:12 hold <"$TMP/hold" >"$TMP/hold.out" 2>&1 &
HP=$!
exec {hfd}>"$TMP/hold"
wait_for grep -q holding "$TMP/hold.out"
HT=$(field "$(grep '^fifo:12 ' "$TMP/hold.out")" tid)
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$HT" '$1 == t')
[ -n "$HT" ] && [ "$(awk '{ print $4 "/" $5 " " $9 " " $10 }' <<<"$row")" = "fifo/12 preload $(id -u "$U")" ] &&
	pass "(a) rtschedctl list: the thread, fifo 12, SOURCE preload, owner $U" || fail "(a) list row for $HT: $OUT"
exec {hfd}>&-
bounded_wait "$HP" "run-helper hold"

# the owner changed by exec: a thread granted through run that then execs a
# set-user-ID program (its euid 0 now) loses the grant: unmanaged, and its
# scheduling from before the grant back
SUID_SLEEP="$TMP/suid-sleep"
cp "$(command -v sleep)" "$SUID_SLEEP" && chmod 4755 "$SUID_SLEEP"
"${AS_USER[@]}" "${RUN[@]}" -- "$RH" fifo:12 exec "$SUID_SLEEP" 3600 >"$TMP/exec.out" 2>&1 &
EP=$!
wait_for grep -q '^exec pid=' "$TMP/exec.out"
expect_call_in() { OUT=$(cat "$1"); expect_call "${@:2}"; }
expect_call_in "$TMP/exec.out" fifo:12 0 0 fifo 12 "(a) before its exec, the helper's FIFO 12 was granted through run"
wait_for sh -c "awk '/^Uid:/ { exit !(\$3 == 0) }' /proc/$EP/status"
wait_for sh -c "! '$RTSCHEDCTL' --socket '$TMP/control' list | awk '\$1 == $EP' | grep -q ."
ctl list
printf '%s\n' "$OUT" | awk -v t="$EP" '$1 == t' | grep -q . &&
	fail "(a) the set-user-ID program $EP is still managed on $U's grant: $OUT" ||
	pass "(a) after exec'ing a set-user-ID program (euid 0), the thread is no longer managed"
got=$(chrt -p "$EP" | sed -n 's/.*scheduling policy: //p')
[ "$got" = SCHED_OTHER ] && pass "(a) and runs SCHED_OTHER again, as before the grant" ||
	fail "(a) the set-user-ID program runs $got on $U's earlier grant"
kill -KILL "$EP" 2>/dev/null
bounded_wait "$EP" "the set-user-ID sleep"

# --- (b) olad with OLA's flags --------------------------------------------------------
OLA_ARGS=(--scheduler-policy fifo --scheduler-priority 10 --no-http --no-register-with-dns-sd -r $((20000 + $$ % 10000)))
mkdir -p "$TMP/ola" && chown "$U" "$TMP/ola"
run "${AS_USER[@]}" olad "${OLA_ARGS[@]}" -c "$TMP/ola"
[ "$RC" -ne 0 ] && pass "(b) without run, olad with OLA's flags exits (status $RC)" || fail "(b) olad without run exited 0"
expect_in "$OUT$ERR" "Unable to set thread scheduling parameters" "(b) with OLA's message"

OLAD=""
stop_olad() { [ -n "$OLAD" ] && { kill "$OLAD" 2>/dev/null; bounded_wait "$OLAD" olad; }; OLAD=; }
at_exit stop_olad
# threads PID: "comm policy priority" of each thread, sorted, from the kernel
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null) $(chrt -p "${t##*/}" 2>/dev/null | sed -n 's/.*policy: SCHED_\([A-Z]*\).*/\1/p;s/.*priority: //p' | paste -sd ' ')"
	done | sort
}
# olad_threads HOW...: start olad (HOW: AS_USER with run, or WITH_NICE), wait
# until its USB thread is up, keep its thread list in OLA_T, stop it
olad_threads() {
	"$@" olad "${OLA_ARGS[@]}" -c "$TMP/ola" >"$TMP/olad.log" 2>&1 &
	OLAD=$!
	wait_for sh -c "grep -qx libusb_event /proc/$OLAD/task/*/comm" || fail "olad's libusb_event thread did not start"
	sleep 1 # its start-up threads settle
	kill -0 "$OLAD" 2>/dev/null && OLA_UP=1 || OLA_UP=
	OLA_T=$(threads "$OLAD")
	stop_olad
}
olad_threads "${WITH_NICE[@]}"
REF=$OLA_T
olad_threads "${AS_USER[@]}" "${RUN[@]}" --rule inherit --
[ -n "$OLA_UP" ] && pass "(b) olad through run stays up" || fail "(b) olad through run exited: $(tail -5 "$TMP/olad.log")"
expect_in "$OLA_T" "olad FIFO 10" "(b) olad's main thread is SCHED_FIFO 10"
[ "$OLA_T" = "$REF" ] && pass "(b) every olad thread as with CAP_SYS_NICE: $(tr '\n' ',' <<<"$OLA_T")" ||
	fail "(b) olad's threads through run: $OLA_T; with CAP_SYS_NICE: $REF"

# --- (c) jackd -R -P 70 -d dummy ---------------------------------------------------------
JACKD=""
stop_jackd() { [ -n "$JACKD" ] && { kill "$JACKD" 2>/dev/null; bounded_wait "$JACKD" jackd; }; JACKD=; }
at_exit stop_jackd
# jack_threads PRIO HOW...: jackd -P PRIO started HOW, until its thread at
# FIFO PRIO is up (or 5 s if none comes, the refused case), then 1 s for the
# drivers it probes at start (libffado's FIFO 1 thread) to go; its threads
# in JACK_T, its output in $TMP/jackd.log
jack_threads() {
	local p=$1; shift
	JACK_NO_AUDIO_RESERVATION=1 "$@" jackd -n "rtsd-run$$" -R -P "$p" -d dummy >"$TMP/jackd.log" 2>&1 &
	JACKD=$!
	local end=$((SECONDS + 5))
	until threads "$JACKD" | grep -q "FIFO $p\$" || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
	sleep 1
	JACK_T=$(threads "$JACKD" | awk '{ print $2, $3 }' | sort)
	stop_jackd
}
jack_threads 70 "${AS_USER[@]}"
expect_in "$(cat "$TMP/jackd.log")" "Cannot use real-time scheduling" "(c) without run, jackd says it cannot use real-time"
jack_threads 70 "${WITH_NICE[@]}"
REF=$JACK_T
jack_threads 70 "${AS_USER[@]}" "${RUN[@]}" --
log=$(cat "$TMP/jackd.log")
case "$log" in
*"Cannot use real-time scheduling"* | *"Cannot create RT messagebuffer thread"*) fail "(c) through run jackd still says: $log" ;;
*) pass "(c) through run, no 'Cannot use real-time scheduling' or 'Cannot create RT messagebuffer thread'" ;;
esac
expect_in "$JACK_T" "FIFO 70" "(c) jackd's real-time thread at FIFO 70"
[ "$JACK_T" = "$REF" ] && pass "(c) jackd's threads as with CAP_SYS_NICE: $(tr '\n' ',' <<<"$JACK_T")" ||
	fail "(c) jackd's threads through run: $JACK_T; with CAP_SYS_NICE: $REF"
jack_threads 90 "${AS_USER[@]}" "${RUN[@]}" --
log=$(cat "$TMP/jackd.log")
expect_in "$log" "Cannot use real-time scheduling" "(c) -P 90, above the user's max-priority 80: still refused"
expect_in "$log" "refused by rtschedd: priority-denied" "(c) with the preload library's line"
case "$JACK_T" in *FIFO*) fail "(c) -P 90 gave a real-time thread: $JACK_T" ;; *) pass "(c) -P 90: no real-time thread" ;; esac

# --- (e) --rule the user may not use: refused before anything runs -----------------------
ran="$TMP/ran"
run "${AS_USER[@]}" "${RUN[@]}" --rule no-such-rule -- touch "$ran"
expect_rc 77 "(e) --rule naming no rule: exit 77"
expect_in "$ERR" "--rule no-such-rule: unknown-role" "(e) with the code"
expect_in "$ERR" "add [rule no-such-rule]" "(e) and the fix"
run "${AS_USER[@]}" "${RUN[@]}" --rule too-high -- touch "$ran"
expect_rc 77 "(e) --rule whose FIFO 90 is above the user's max-priority 80: exit 77"
expect_in "$ERR" "--rule too-high: priority-denied" "(e) with the code"
[ -e "$ran" ] && fail "(e) a refused --rule exec'd its program" || pass "(e) no refused --rule exec'd its program"
run "${AS_USER[@]}" "${RUN[@]}" --rule inherit -- "$RH" fifo:10
expect_rc 0 "(e) --rule inherit, which the user may use, runs the program"
expect_call fifo:10 0 0 fifo 10 "(e) and its call is granted"

# --- (d) rtschedd not running -------------------------------------------------------------
daemon_stop
run "${AS_USER[@]}" "${RUN[@]}" --rule too-high -- "$RH" fifo:10
expect_rc 0 "(d) rtschedd stopped: --rule cannot be checked, the program runs"
expect_in "$ERR" "--rule too-high not checked; the program runs" "(d) and run says so"
expect_call fifo:10 -1 EPERM other 0 "(d) its call gets the kernel's EPERM"
run "${AS_USER[@]}" "${RUN[@]}" -- "$RH" fifo:10 pthread:10 create:10
expect_call fifo:10 -1 EPERM other 0 "(d) rtschedd stopped: sched_setscheduler's EPERM unchanged"
expect_call pthread:10 -1 EPERM other 0 "(d) pthread_setschedparam's EPERM unchanged"
expect_call create:10 -1 EPERM other 0 "(d) pthread_create's EPERM unchanged"
[ "$(grep -c '^rtsched-preload: ' <<<"$ERR")" -eq 1 ] && expect_in "$ERR" "rtschedd did not answer" "(d) said once: rtschedd did not answer" ||
	fail "(d) want one line: $ERR"
run "${AS_USER[@]}" "${RUN[@]}" -- sh -c "exec 2>&-; exec '$RH' fifo:10"
expect_call fifo:10 -1 EPERM other 0 "(d) with stderr closed, the same"

# --- (e) bad input -------------------------------------------------------------------------
run "${RUN[@]}"
expect_rc 64 "(e) run without a program: usage"
expect_in "$ERR" "run needs a program" "(e) it says so"
run "${RUN[@]}" --rule "a b" -- touch "$ran"
expect_rc 64 "(e) a --rule with a blank"
run "${RUN[@]}" -- "no-such-program-$$" "$ran"
expect_rc 127 "(e) a program not in PATH"
expect_in "$ERR" "not found in \$PATH; give the program's full path" "(e) with the fix"
touch "$TMP/not-exec"
run "${RUN[@]}" -- "$TMP/not-exec"
expect_rc 126 "(e) a file that is not executable"
RTSCHED_PRELOAD="$TMP/none.so" run "${RUN[@]}" -- touch "$ran"
expect_rc 69 "(e) no preload library"
expect_in "$ERR" "RTSCHED_PRELOAD" "(e) says how to point at it"
[ -e "$ran" ] && fail "(e) a refused run exec'd its program" || pass "(e) no refused run exec'd its program"
cp /bin/true "$TMP/suid-true" && chmod 4755 "$TMP/suid-true"
run "${RUN[@]}" -- "$TMP/suid-true"
expect_rc 0 "(e) a set-user-ID program still runs"
expect_in "$ERR" "the loader ignores LD_PRELOAD for it" "(e) with a warning that run cannot reach it"
# (a sanitizer build's rtschedctl would refuse a library loaded before its runtime)
run env ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" LD_PRELOAD=libc.so.6 "${RUN[@]}" -- sh -c 'echo "$LD_PRELOAD"'
[ "$OUT" = "libc.so.6:$PRELOAD" ] && pass "(e) an existing LD_PRELOAD is kept, the library appended" || fail "(e) LD_PRELOAD: $OUT"

finish
