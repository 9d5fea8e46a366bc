#!/bin/bash
# tests/catcher.sh: the catcher of refused scheduling calls (issue 26,
# item 2). A non-root user with RLIMIT_RTPRIO 0 (as under a unit without
# LimitRTPRIO=, a daemon started outside PAM) and a [user] grant in
# rtschedd's config; tests/run-helper, NOT through rtschedctl run, calls
# sched_setscheduler / sched_setattr itself, gets EPERM and carries on:
#  (a) catch-refused = yes: the thread becomes what it asked for, read back
#      from the kernel (chrt -p), listed with SOURCE caught, logged once;
#  (b) sched_setattr(FIFO 30) the same;
#  (c) FIFO 90, above the user's max-priority 80: refused as a register of
#      90 would be (max-priority refuses; over-cap clamps rtprio-cap only),
#      the reason logged, the thread never 90;
#  (e) a refused call aimed at another process's thread (root's, and one
#      of the same user's other processes) is not granted: the catcher
#      acts only as a register by the caller would, on its own threads;
#  (f) in a pid namespace of its own (a container), a thread naming itself
#      by its number there (as pthread_setschedparam does) is granted: the
#      BPF side translates it (that number is 1 in the machine's namespace);
#  (g) jackd -R -P 70 -d dummy, not through run: refused, it carries on,
#      and the catcher makes its thread real-time at 70 (the refused call
#      logged as caught and granted);
#  (d) catch-refused = no: the thread stays SCHED_OTHER, and rtschedd
#      --check and rtschedctl check say the catcher is off.
. "$(dirname "$0")/lib.sh"
need_root
for c in setpriv prlimit chrt unshare pgrep; do
	command -v $c >/dev/null || { echo "FAIL - $c missing (apt-get install passwd util-linux procps)"; exit 1; }
done
RH="$top_builddir/tests/run-helper"
[ -x "$RH" ] || { echo "FAIL - tests/run-helper not built"; exit 1; }
# libbpf reads the syscall tracepoints' ids in tracefs, which systemd mounts
# at boot (sys-kernel-tracing.mount); a machine without it gets it for the
# test, as the daemon's message tells an administrator to do
TR=/sys/kernel/tracing
if [ ! -e "$TR/events" ] && mount -t tracefs nodev "$TR" 2>/dev/null; then
	undo_tracefs() { umount "$TR" 2>/dev/null; }
	at_exit undo_tracefs
	echo "# mounted tracefs on $TR for the test"
fi
run "$RTSCHEDD" --check
case "$OUT" in
*"catcher-unavailable"*"without BPF"*) skip "rtschedd was built without BPF (configure --enable-bpf)" ;;
esac

# a user of its own; where none can be added (check-kernels' guest runs
# on the host's root filesystem read-only, without useradd), nobody
U=rtsd-catch$$
if command -v useradd >/dev/null && useradd -M -N -g nogroup -d "$TMP/home" -s /usr/sbin/nologin "$U"; then
	undo_user() { userdel "$U" 2>/dev/null; }
	at_exit undo_user
else
	U=nobody
	echo "# no user can be added here: the test runs as nobody"
fi
mkdir -p "$TMP/home" && chown "$U" "$TMP/home"
AS_USER=(env HOME="$TMP/home" prlimit --rtprio=0:0 -- setpriv --reuid="$U" --regid=nogroup --clear-groups --)

# conf FILE yes|no: the test's configuration, the catcher on or off
conf() {
	cat >"$1" <<EOC
[daemon]
rate-limit = 0
watchdog = no
max-priority = 95
catch-refused = $2
[user $U]
max-priority = 80
policies = fifo,rr,other
EOC
}

# field LINE KEY: the value of KEY=... in a helper line
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# the helpers hold on a FIFO no one writes to (opened read-write here, so
# that neither side's open blocks)
mkfifo "$TMP/hold" && chmod 666 "$TMP/hold"
exec {HFD}<>"$TMP/hold"
HELD=()
stop_held() { local p; for p in "${HELD[@]}"; do kill "$p" 2>/dev/null; bounded_wait "$p" run-helper; done; HELD=(); }
at_exit stop_held
# held NAME CALL: run-helper as $U making CALL, then holding; its first line
# in LINE (the call's result), its tid in HT, its pid in HP
held() {
	"${AS_USER[@]}" "$RH" "$2" hold <"$TMP/hold" >"$TMP/$1.out" 2>&1 &
	HP=$!
	HELD+=("$HP")
	wait_for grep -q holding "$TMP/$1.out" || fail "$1: the helper did not start: $(cat "$TMP/$1.out")"
	LINE=$(head -1 "$TMP/$1.out")
	HT=$(field "$LINE" tid)
}
# kern TID: "fifo 10" as the kernel reports the thread (chrt -p)
kern() {
	chrt -p "$1" 2>/dev/null | sed -n 's/.*policy: SCHED_\([A-Z]*\).*/\1/p;s/.*priority: //p' | paste -sd ' ' |
		tr 'A-Z' 'a-z'
}
is_kern() { [ "$(kern "$1")" = "$2" ]; }

# --- (a)..(c): the catcher on ------------------------------------------------------
conf "$TMP/on.conf" yes
run "$RTSCHEDD" --config "$TMP/on.conf" --check
expect_in "$OUT" "catcher: the catcher of refused scheduling calls loads here" "rtschedd --check: the catcher loads"
daemon_start "$TMP/on.conf"
ctl check
expect_in "$OUT" "catcher: the catcher of refused scheduling calls is loaded" "rtschedctl check: the catcher is loaded"

held a fifo:10
[ "$(field "$LINE" rc)" = -1 ] && [ "$(field "$LINE" errno)" = EPERM ] &&
	pass "(a) sched_setscheduler(FIFO 10) as $U with RLIMIT_RTPRIO 0 fails with EPERM" ||
	fail "(a) the helper's call: $LINE"
wait_for is_kern "$HT" "fifo 10" && pass "(a) after the refusal the kernel shows tid $HT FIFO 10" ||
	fail "(a) tid $HT is '$(kern "$HT")', want 'fifo 10'; log: $(cat "$DLOG")"
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$HT" '$1 == t')
[ "$(awk '{ print $4 "/" $5 " " $9 " " $10 }' <<<"$row")" = "fifo/10 caught $(id -u "$U")" ] &&
	pass "(a) rtschedctl list: fifo 10, SOURCE caught, owner $U" || fail "(a) list row for $HT: $OUT"
n=$(grep -c "caught a refused sched_setscheduler(fifo 10) of tid $HT " "$DLOG")
[ "$n" -eq 1 ] && pass "(a) logged once" || fail "(a) $n log lines for tid $HT: $(cat "$DLOG")"

held b attr:30
wait_for is_kern "$HT" "fifo 30" && pass "(b) sched_setattr(FIFO 30) refused, then the kernel shows FIFO 30" ||
	fail "(b) tid $HT is '$(kern "$HT")', want 'fifo 30' ($LINE)"

held c fifo:90
wait_for grep -q "caught a refused sched_setscheduler(fifo 90) of tid $HT " "$DLOG" ||
	fail "(c) no log line for tid $HT's FIFO 90"
expect_in "$(cat "$DLOG")" "of tid $HT (pid $HP, uid $(id -u "$U")): not granted: priority 90 (requested) is above max-priority 80" \
	"(c) FIFO 90 above the user's max-priority 80: not granted, the reason logged"
got=$(kern "$HT")
[ "$got" = "other 0" ] && pass "(c) tid $HT stays SCHED_OTHER (never FIFO 90)" ||
	fail "(c) tid $HT is '$got', want 'other 0'"

# (e) the call names another process's thread: a root process's (the kernel
# refuses it as another user's) and the same user's other helper (refused
# for RLIMIT_RTPRIO 0); neither becomes real-time, each refusal logged
sleep 1000 <"$TMP/hold" &
VP=$!
HELD+=("$VP")
held e1 nice:0
OT=$HT
for victim in "$VP" "$OT"; do
	held e2 "fifo-of:$victim:10"
	[ "$(field "$LINE" errno)" = EPERM ] || fail "(e) the helper's call on $victim: $LINE"
	wait_for grep -q "caught a refused sched_setscheduler(fifo 10) of tid $victim " "$DLOG" ||
		fail "(e) no log line for the call on tid $victim: $(cat "$DLOG")"
	expect_in "$(grep "of tid $victim " "$DLOG")" "not granted: tid $victim belongs to process" \
		"(e) sched_setscheduler($victim, FIFO 10) from another process: not granted, the reason logged"
	got=$(kern "$victim")
	[ "$got" = "other 0" ] && pass "(e) tid $victim stays SCHED_OTHER" || fail "(e) tid $victim is '$got'"
done

# (f) a caller in a pid namespace of its own: the helper is pid 1 there
unshare --pid --fork --kill-child -- "${AS_USER[@]}" "$RH" fifo-tid:20 hold <"$TMP/hold" >"$TMP/f.out" 2>&1 &
HP=$!
HELD+=("$HP")
wait_for grep -q holding "$TMP/f.out" || fail "(f) the helper did not start in a pid namespace: $(cat "$TMP/f.out")"
GT=$(pgrep -P "$HP" | head -1)
# the helper is its namespace's init: it takes SIGKILL only, and unshare's
# --kill-child was cleared by setpriv's change of user; killed first
kill_init() { [ -n "${GT:-}" ] && kill -KILL "$GT" 2>/dev/null; GT=; return 0; }
at_exit kill_init
LINE=$(head -1 "$TMP/f.out")
[ "$(field "$LINE" errno)" = EPERM ] && [ "$(field "$LINE" tid)" = 1 ] &&
	pass "(f) in its own pid namespace, sched_setscheduler(1 = itself, FIFO 20) fails with EPERM" ||
	fail "(f) the helper's call: $LINE"
wait_for is_kern "$GT" "fifo 20" && pass "(f) the kernel then shows tid $GT (1 in its namespace) FIFO 20" ||
	fail "(f) tid $GT is '$(kern "$GT")', want 'fifo 20'; log: $(grep "tid $GT \|tid 1 " "$DLOG")"
kill_init
stop_held

# (g) jackd -R -P 70 -d dummy as $U, not through run: the kernel refuses its
# real-time call, jackd says so and carries on; the catcher then makes its
# thread real-time at the priority jackd asked for
if command -v jackd >/dev/null; then
	JACK_NO_AUDIO_RESERVATION=1 "${AS_USER[@]}" jackd -n "rtsd-catch$$" -R -P 70 -d dummy >"$TMP/jackd.log" 2>&1 &
	JACKD=$!
	stop_jackd() { [ -n "${JACKD:-}" ] && { kill "$JACKD" 2>/dev/null; bounded_wait "$JACKD" jackd; }; JACKD=; }
	at_exit stop_jackd
	# jackd's thread at priority 70, whatever its policy (RR or FIFO, as jackd asks)
	jack_rt() { local t; for t in /proc/"$JACKD"/task/*; do kern "${t##*/}"; done | grep -Eq '^(fifo|rr) 70$'; }
	if wait_for jack_rt; then
		pass "(g) jackd -R -P 70 without run: a thread of it is real-time at 70 after the catcher"
	else
		fail "(g) no jackd thread at 70: $(for t in /proc/"$JACKD"/task/*; do echo "${t##*/} $(kern "${t##*/}")"; done | tr '\n' ',') log: $(tail -5 "$TMP/jackd.log")"
	fi
	expect_in "$(grep "caught a refused" "$DLOG")" "(pid $JACKD, uid $(id -u "$U")): granted" "(g) the grant logged for jackd's process"
	stop_jackd
	# its words for the kernel's refusals (of its message-buffer threads,
	# which end before rtschedd could grant them: glibc ends a thread
	# whose explicit scheduling it cannot set)
	expect_in "$(cat "$TMP/jackd.log")" "Operation not permitted" \
		"(g) jackd says the kernel refused it: the catcher made the difference"
else
	echo "# jackd not installed (apt-get install jackd2): (g) not run"
fi
daemon_stop

# --- (d): the catcher off ------------------------------------------------------------
conf "$TMP/off.conf" no
run "$RTSCHEDD" --config "$TMP/off.conf" --check
expect_in "$OUT" "catcher-off" "rtschedd --check: the catcher is off (catch-refused = no)"
daemon_start "$TMP/off.conf"
ctl check
expect_in "$OUT" "catcher-off" "rtschedctl check: the catcher is off"
held d fifo:10
[ "$(field "$LINE" errno)" = EPERM ] || fail "(d) the helper's call: $LINE"
# a negative: give the daemon the time the catcher took above many times over
# (a slow machine can only make this pass wrongly, never fail wrongly)
sleep 2
got=$(kern "$HT")
[ "$got" = "other 0" ] && pass "(d) catch-refused = no: tid $HT stays SCHED_OTHER" ||
	fail "(d) tid $HT is '$got' with the catcher off"
ctl list
printf '%s\n' "$OUT" | grep -q " caught " && fail "(d) a caught row with the catcher off: $OUT" ||
	pass "(d) no caught row in rtschedctl list"
stop_held
finish
