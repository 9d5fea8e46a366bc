#!/bin/bash
# tests/rules.sh: rules that find threads by name, on the real kernel: the
# start-up scan, threads created and renamed later (process events
# connector), precedence, restoration, reload, and the rescan fallback;
# unit = against a user manager's unit of the same name; then the shipped
# example drop-ins (conf/examples) against the real olad,
# gst-launch-1.0, jackd (jackd2) and pipewire and the thread names they use.
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
expect_in "$row" "applied" "list says the rule's policy is applied (its state)"

# rename away: restored; rename back: applied again
h rename rt-demo-out plain
wait_for sh -c "'$HELPER' query $OUT_T | grep -q 'policy=other'" &&
	pass "renamed so no rule matches: restored" || fail "after rename: $(q "$OUT_T")"
expect_sched "$OUT_T" "cpus=$(seq -s, 0 $LASTCPU)" "affinity restored too"
ctl list
case "$(echo "$OUT" | grep -w "^$OUT_T")" in "") pass "list shows managed threads only" ;;
*) fail "list shows the restored thread: $OUT" ;; esac
expect_in "$ERR" "more not managed: refused or restored; rtschedctl list --all" "and says there are more"
ctl list --all
expect_in "$(echo "$OUT" | grep -w "^$OUT_T")" "restored" "list --all shows it, as restored"
h rename plain rt-demo-2
wait_for sh -c "'$HELPER' query $OUT_T | grep -q 'policy=fifo priority=20'" &&
	pass "renamed to match again: applied" || fail "after rename back: $(q "$OUT_T")"

# precedence: two keys beat one, whatever the file order
BP=$(spawn byproc-1)
wait_for sh -c "'$HELPER' query $BP | grep -q 'policy=rr priority=30'" &&
	pass "more specific rule (process-name + thread-name) wins" || fail "byproc: $(q "$BP")"

# an explicit registration is not touched by rules. The proof that the
# daemon has seen the rename: another thread renamed after it, to a name a
# rule matches, gets the rule (the daemon takes the kernel's events in order,
# and a rescan reads both names at once)
EX=$(spawn rt-demo-x)
MK=$(spawn marker)
wait_for sh -c "'$HELPER' query $EX | grep -q 'policy=fifo'"
ctl register --tid "$EX" --policy rr --priority 44
h rename rt-demo-x nomatch
h rename marker rt-demo-mark
wait_for sh -c "'$HELPER' query $MK | grep -q 'policy=fifo priority=20'" &&
	pass "a thread renamed after it got the rule: the daemon has seen both renames" || fail "marker: $(q "$MK")"
expect_sched "$EX" "policy=rr priority=44" "explicit registration survives a rename"
h exit rt-demo-mark

# a matched thread that exits leaves the registry
h exit byproc-1
wait_for sh -c "! '$RTSCHEDCTL' --socket '$SOCK' list | grep -qw '^$BP'" &&
	pass "exited matched thread left the registry" || fail "tid $BP still listed"

# a rule that matches but cannot apply: the kernel would SIGKILL a real-time
# task with RLIMIT_RTTIME 0, so it is refused, and list says so and why
cp /bin/sleep "$TMP/rt-demo-capped"
prlimit --rttime=0:0 "$TMP/rt-demo-capped" 120 &
CAP=$!
cap_stop() { [ -n "${CAP:-}" ] && kill "$CAP" 2>/dev/null; wait "$CAP" 2>/dev/null; CAP=; }
at_exit cap_stop
wait_for sh -c "'$RTSCHEDCTL' --socket '$SOCK' list --all | grep -w '^$CAP' | grep -q 'refused:rttime-zero'" &&
	pass "list --all: the matched thread that could not get the rule is refused:rttime-zero" ||
	fail "list --all: $("$RTSCHEDCTL" --socket "$SOCK" list --all)"
row=$("$RTSCHEDCTL" --socket "$SOCK" --json list --all | jq -c ".[] | select(.tid == $CAP)")
[ "$(echo "$row" | jq -r '.state + " " + .state_code + " " + .rule')" = "refused rttime-zero demo" ] &&
	expect_in "$(echo "$row" | jq -r .state_msg)" "RLIMIT_RTTIME of pid $CAP is 0" "list --json: state, code and why" ||
	fail "list --json row: $row"
expect_sched "$CAP" "policy=other" "and the kernel shows it was left alone"
cap_stop

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

# --- names cut to 15 characters, on a real GStreamer pipeline ------------------
# GStreamer names a source's streaming thread "audiotestsrc0:src"; the kernel
# keeps "audiotestsrc0:s". --test-config warns and names the form that matches.
if command -v gst-launch-1.0 >/dev/null && gst-inspect-1.0 audiotestsrc >/dev/null 2>&1; then
	cat >"$TMP/gst.conf" <<EOC
[daemon]
rate-limit = 0
[rule gst-source]
thread-name = audiotestsrc0:src
policy = fifo
priority = 31
[rule gst-any-src]
thread-name = *:src
policy = fifo
priority = 32
EOC
	run "$RTSCHEDD" --test-config --config "$TMP/gst.conf"
	expect_rc 0 "--test-config: warnings leave the file valid"
	expect_in "$ERR" "thread-name: 'audiotestsrc0:src' can never match: the kernel keeps only the first 15 characters of a name; use 'audiotestsrc0:s'" \
		"--test-config: a 17-character thread-name can never match, and the cut form is named"
	expect_in "$ERR" "thread-name: '*:src' misses names longer than 15 characters" \
		"--test-config: '*:src' misses the names the kernel cut"
	sed -i 's/^thread-name = audiotestsrc0:src$/thread-name = audiotestsrc0:s/' "$TMP/gst.conf"
	run "$RTSCHEDD" --test-config --config "$TMP/gst.conf"
	case "$ERR" in *"can never match"*) fail "the named form is still warned about: $ERR" ;;
		*) pass "the named form (audiotestsrc0:s) draws no warning" ;; esac
	daemon_start "$TMP/gst.conf"
	gst-launch-1.0 -q audiotestsrc is-live=true ! queue ! fakesink sync=true >/dev/null 2>&1 &
	GST=$!
	gst_stop() { kill "$GST" 2>/dev/null; return 0; }
	at_exit gst_stop
	gst_tid() { ps -L -o tid=,comm= -p "$GST" | awk -v n="$1" '$2 == n { print $1 }'; }
	wait_for sh -c "ps -L -o comm= -p $GST | grep -qx 'audiotestsrc0:s'"
	wait_for sh -c "ps -L -o comm= -p $GST | grep -qx 'queue0:src'"
	SRC_T=$(gst_tid audiotestsrc0:s) QUEUE_T=$(gst_tid queue0:src)
	if [ -n "$SRC_T" ] && [ -n "$QUEUE_T" ]; then
		wait_for sh -c "'$HELPER' query $SRC_T | grep -q 'policy=fifo priority=31'"
		expect_sched "$SRC_T" "policy=fifo priority=31" "the pipeline's audiotestsrc0:s thread matched the named form"
		wait_for sh -c "'$HELPER' query $QUEUE_T | grep -q 'policy=fifo priority=32'"
		expect_sched "$QUEUE_T" "policy=fifo priority=32" "queue0:src (10 characters) matched '*:src'"
	else
		fail "the pipeline's threads: $(ps -L -o tid=,comm= -p "$GST" | tr '\n' ' ')"
	fi
	kill "$GST"; wait "$GST" 2>/dev/null
	daemon_stop
else
	echo "# gst-launch-1.0 or its audiotestsrc missing (gstreamer1.0-tools, gstreamer1.0-plugins-base): the GStreamer case is not run"
fi

# --- the shipped example drop-ins (conf/examples), uncommented, on real olad and GStreamer ---
EX="$top_srcdir/conf/examples"
if command -v gst-launch-1.0 >/dev/null && command -v olad >/dev/null && getent passwd olad >/dev/null && [ -d "$EX" ]; then
	mkdir -p "$TMP/ex/rtschedd.d"
	printf '[daemon]\nrate-limit = 0\n' >"$TMP/ex/rtschedd.conf"
	# the rtschedd.d drop-ins (NN-name.conf); rtschedd-*.conf are systemd unit drop-ins
	for f in "$EX"/[0-9][0-9]-*.conf; do sed -E 's/^#(\[|[a-z-]+ = )/\1/' "$f" >"$TMP/ex/rtschedd.d/${f##*/}"; done
	run "$RTSCHEDD" --test-config --config "$TMP/ex/rtschedd.conf"
	[ "$RC" -eq 0 ] && [ -z "$ERR" ] && pass "the example drop-ins, uncommented, are valid and draw no warning" ||
		fail "the example drop-ins: exit $RC: $ERR"
	rm "$TMP/ex/rtschedd.d/50-pipewire.conf"   # its [rtkit] wants the system bus
	daemon_start "$TMP/ex/rtschedd.conf"
	mkdir "$TMP/ola"; chown olad "$TMP/ola"
	# without avahi-daemon olad's DNS-SD thread (also named olad) spins:
	# the example file says to turn it off. As Debian runs it: user olad,
	# whom the example's rules name (the test's config has no [user] section)
	setpriv --reuid=olad --regid=nogroup --clear-groups olad -c "$TMP/ola" -l 1 --no-register-with-dns-sd \
		>"$TMP/ola.log" 2>&1 &
	OLA=$!
	gst-launch-1.0 -q audiotestsrc is-live=true ! queue ! fakesink sync=true >/dev/null 2>&1 &
	GST=$!
	ex_stop() { kill "$OLA" "$GST" 2>/dev/null; return 0; }
	at_exit ex_stop
	wait_for sh -c "ps -L -o comm= -p $GST | grep -qx 'audiotestsrc0:s'"
	wait_for sh -c "ps -L -o comm= -p $GST | grep -qx 'queue0:src'"
	wait_for sh -c "[ \$(ps -L -o comm= -p $OLA | grep -cx olad) -ge 1 ]"
	SRC_T=$(gst_tid audiotestsrc0:s) QUEUE_T=$(gst_tid queue0:src)
	wait_for sh -c "'$HELPER' query $SRC_T | grep -q 'policy=fifo priority=31'"
	expect_sched "$SRC_T" "policy=fifo priority=31" "example gst-source: GStreamer's audiotestsrc0:s thread"
	wait_for sh -c "'$HELPER' query $QUEUE_T | grep -q 'policy=fifo priority=30'"
	expect_sched "$QUEUE_T" "policy=fifo priority=30" "example gst-queue: GStreamer's queue0:src thread"
	wait_for sh -c "'$HELPER' query $OLA | grep -q 'policy=fifo priority=40'"
	expect_sched "$OLA" "policy=fifo priority=40" "example ola-main: olad's main thread (run as user olad, named by the rule)"
	ctl list
	expect_in "$(echo "$OUT" | grep -w "^$OLA")" "ola-main" "list names the example's rule for olad's thread"
	daemon_stop
	expect_sched "$OLA" "policy=other priority=0" "stopping rtschedd gave olad's thread its scheduling back"
	expect_sched "$SRC_T" "policy=other priority=0" "and GStreamer's"
	kill "$OLA" "$GST"; wait "$OLA" "$GST" 2>/dev/null
else
	echo "# gst-launch-1.0, olad or its user olad (package ola) missing: the example drop-ins are not run"
fi

# --- the JACK and PipeWire example files' thread names, on the real programs ---
# Both files say a name rule cannot single out the real-time thread, because
# it carries the same name as every other thread of the program; and
# 50-jack.conf gives a recipe instead. Both claims, checked.
# names PID: the comm of each of PID's threads, sorted, on one line
names() { ps -L -o comm= -p "$1" | sort | tr '\n' ' '; }
# fifo_tid PID: the tid of PID's SCHED_FIFO thread, as 50-jack.conf finds it
fifo_tid() { ps -L -o tid=,cls= -p "$1" | awk '$2 == "FF" { print $1; exit }'; }
if command -v jackd >/dev/null; then
	mkdir -p "$TMP/jack/rtschedd.d"
	printf '[daemon]\nrate-limit = 0\n' >"$TMP/jack/rtschedd.conf"
	sed -E 's/^#(\[|[a-z-]+ = )/\1/' "$EX/50-jack.conf" >"$TMP/jack/rtschedd.d/50-jack.conf"
	daemon_start "$TMP/jack/rtschedd.conf"
	# root's jackd makes its process thread SCHED_FIFO 10 itself; a server
	# name of its own, so another jackd on the machine is not disturbed
	# (jackd leaves its shared-memory registry behind: removed if this made it
	# and no other jackd runs)
	REG=/dev/shm/jack-shm-registry; REG_NEW=; [ -e "$REG" ] || REG_NEW=1
	HOME="$TMP/jack" JACK_NO_AUDIO_RESERVATION=1 jackd -n "rtsd-rules-$$" -d dummy >"$TMP/jack/jackd.log" 2>&1 &
	JP=$!
	jack_stop() {
		[ -n "${JP:-}" ] || return 0
		kill "$JP" 2>/dev/null; wait "$JP" 2>/dev/null; JP=
		[ -n "$REG_NEW" ] && ! pgrep -x jackd >/dev/null && rm -f "$REG"
		return 0
	}
	at_exit jack_stop
	wait_for sh -c "ps -L -o cls= -p $JP | grep -q FF"
	JT=$(fifo_tid "$JP")
	n=$(ps -L -o comm= -p "$JP" | wc -l)
	[ -n "$JT" ] && [ "$n" -ge 2 ] && [ "$(names "$JP")" = "$(printf 'jackd %.0s' $(seq "$n"))" ] &&
		pass "50-jack.conf: all $n threads of jackd are named jackd, the SCHED_FIFO one (tid $JT) too" ||
		fail "jackd's threads: $(ps -L -o tid=,comm=,cls= -p "$JP" | tr '\n' ';') log: $(tail -3 "$TMP/jack/jackd.log")"
	expect_sched "$JT" "policy=fifo priority=10" "jackd made its process thread SCHED_FIFO 10 itself"
	ctl register --tid "$JT" --role jack
	expect_rc 0 "50-jack.conf's recipe: the SCHED_FIFO thread registered with --role jack"
	expect_sched "$JT" "policy=fifo priority=70" "and the kernel shows [rule jack]'s FIFO 70"
	daemon_stop
	expect_sched "$JT" "policy=fifo priority=10" "stopping rtschedd gave jackd's thread its own FIFO 10 back"
	jack_stop
else
	echo "# jackd missing (apt-get install jackd2): 50-jack.conf's thread names are not checked"
fi
if command -v pipewire >/dev/null; then
	mkdir -m 700 "$TMP/pw"
	cat >"$TMP/pw/pw.conf" <<'EOC'
context.properties = { core.daemon = true core.name = pipewire-rtsd-rules support.dbus = false }
context.spa-libs = { support.* = support/libspa-support }
context.modules = [
    { name = libpipewire-module-rt
      args = { rt.prio = 11 rtportal.enabled = false rtkit.enabled = false } }
    { name = libpipewire-module-protocol-native }
]
EOC
	XDG_RUNTIME_DIR="$TMP/pw" pipewire -c "$TMP/pw/pw.conf" >"$TMP/pw/pw.log" 2>&1 &
	PW=$!
	pw_stop() { [ -n "${PW:-}" ] && kill "$PW" 2>/dev/null; wait "$PW" 2>/dev/null; PW=; }
	at_exit pw_stop
	wait_for sh -c "ps -L -o cls= -p $PW | grep -q FF"
	PT=$(fifo_tid "$PW")
	[ -n "$PT" ] && [ "$(names "$PW")" = "pipewire pipewire " ] &&
		pass "50-pipewire.conf: PipeWire's data loop (SCHED_FIFO, tid $PT) is named pipewire, like its main thread" ||
		fail "PipeWire's threads: $(ps -L -o tid=,comm=,cls= -p "$PW" | tr '\n' ';') log: $(tail -3 "$TMP/pw/pw.log")"
	pw_stop
else
	echo "# pipewire missing (apt-get install pipewire-bin): 50-pipewire.conf's thread names are not checked"
fi

# --- unit = is the system manager's: a user's own unit of the same name is not ---------
# (the audit of the grant paths, F1: systemd-run --user --unit=jackd.service
# matched a rule meant for the system's jackd.service.) Two processes in cgroup v2
# cgroups of the run's own (cgroup2 mounted under $TMP; no controller is
# enabled in them): one at /rtsd-rules-N.slice/rtsdu-N.service, one at the same
# unit's name below /rtsd-rules-N.slice/user@65534.service/app.slice/.
CG2="$TMP/cg2"
mkdir "$CG2"
if mount -t cgroup2 none "$CG2" 2>/dev/null; then
	CGS="$CG2/rtsd-rules-$$.slice"
	CGU="$CGS/user@65534.service/app.slice/rtsdu-$$.service"
	cg2_stop() {
		for d in "$CGU" "$CGS/rtsdu-$$.service"; do
			[ -d "$d" ] || continue
			for p in $(cat "$d/cgroup.procs"); do kill -KILL "$p" 2>/dev/null; echo "$p" >"$CG2/cgroup.procs" 2>/dev/null; done
		done
		for d in "$CGU" "${CGU%/*}" "$CGS/user@65534.service" "$CGS/rtsdu-$$.service" "$CGS"; do rmdir "$d" 2>/dev/null; done
		umount "$CG2" 2>/dev/null
	}
	at_exit cg2_stop
	mkdir -p "$CGU" "$CGS/rtsdu-$$.service"
	cat >"$TMP/unit.conf" <<EOC
[daemon]
rate-limit = 0
[rule by-unit]
unit = rtsdu-$$.service
policy = fifo
priority = 25
EOC
	# cg_sleep DIR: a sleep moved into cgroup DIR before it execs; its pid on stdout
	cg_sleep() { sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 3600' - "$1" >/dev/null & echo $!; }
	SYSP=$(cg_sleep "$CGS/rtsdu-$$.service")
	USRP=$(cg_sleep "$CGU")
	wait_for sh -c "grep -qx '0::/rtsd-rules-$$.slice/rtsdu-$$.service' /proc/$SYSP/cgroup && grep -q '^0::.*/user@65534.service/' /proc/$USRP/cgroup"
	daemon_start "$TMP/unit.conf"   # the start-up scan decides both before it answers
	expect_sched "$SYSP" "policy=fifo priority=25" "unit = rtsdu-N.service matches the system's unit of that name"
	expect_sched "$USRP" "policy=other priority=0" "and not a unit of that name under user@65534.service (a user's own manager)"
	# a pattern of cgroup = is how a rule names a user's unit
	cat >>"$TMP/unit.conf" <<EOC
[rule user-unit]
cgroup = /rtsd-rules-$$.slice/user@*.service/app.slice/rtsdu-$$.service
policy = fifo
priority = 15
EOC
	ctl reload
	expect_sched "$USRP" "policy=fifo priority=15" "cgroup = with the user manager's path matches the user's unit"
	daemon_stop
	cg2_stop
else
	echo "# cgroup2 cannot be mounted here: unit = and user units are not checked"
fi

finish
