#!/bin/bash
# tests/rtkit.sh: rtschedd as org.freedesktop.RealtimeKit1 (issue 13). A
# private dbus-daemon with a system-bus-like policy (deny by default, plus
# rtschedd's own policy file from systemd/dbus/), DBUS_SYSTEM_BUS_ADDRESS
# pointed at it; every method and property of rtkit's interface called with
# busctl or tests/rtkit-client; the kernel's view read back with
# sched_getscheduler (task-helper query) and /proc; refusals for another
# user's thread, over-limit priorities and RLIMIT_RTTIME (unlimited, and
# finite above RTTimeUSecMax) as a non-root user; Reset*/Exit refused by the
# bus policy and, with a test policy that lets them through, by rtschedd
# itself; restore when the caller's process exits, on ResetKnown, ResetAll
# and when rtschedd stops; WithPID for a process that outlives its caller
# (the portal's case); [rtkit] policy = fifo; a second rtschedd finds the name
# taken and says so in one line; Exit releases the name and a reload
# (SIGHUP, rtschedctl reload) takes it back.
. "$(dirname "$0")/lib.sh"
need_root
command -v dbus-daemon >/dev/null || skip "dbus-daemon missing (apt-get install dbus-daemon)"
command -v busctl >/dev/null || skip "busctl missing (systemd)"
command -v setpriv >/dev/null || skip "setpriv missing"
command -v prlimit >/dev/null || skip "prlimit missing"
CLIENT="$top_builddir/tests/rtkit-client"
[ -x "$CLIENT" ] || skip "tests/rtkit-client is not built"

# an unprivileged user the bus can look up (dbus-daemon refuses a uid
# without a passwd entry); no [user nobody] section: [user *] applies
OTHER=$(id -u nobody)
AS_OTHER=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
as_other() { "${AS_OTHER[@]}" "$@"; }
NAME=org.freedesktop.RealtimeKit1
OPATH=/org/freedesktop/RealtimeKit1

# --- a private system bus -------------------------------------------------------
cat >"$TMP/bus.conf" <<EOC
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$TMP/bus</listen>
  <auth>EXTERNAL</auth>
  <!-- the default policy of /usr/share/dbus-1/system.conf -->
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus" send_member="UpdateActivationEnvironment"/>
  </policy>
  <include>$top_srcdir/systemd/dbus/rtschedd-rtkit.conf</include>
  <!-- test policies dropped in later (ReloadConfig) -->
  <includedir>$TMP/bus.d</includedir>
</busconfig>
EOC
mkdir "$TMP/bus.d"
dbus-daemon --config-file="$TMP/bus.conf" --nofork >"$TMP/bus.log" 2>&1 &
BUSPID=$!
bus_stop() { [ -n "${BUSPID:-}" ] && kill "$BUSPID" 2>/dev/null; wait "$BUSPID" 2>/dev/null; BUSPID=; }
at_exit bus_stop
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$TMP/bus"
wait_for test -S "$TMP/bus" || { cat "$TMP/bus.log"; fail "private bus did not start"; finish; exit 1; }
chmod 777 "$TMP/bus"

# the helper's processes carry an RLIMIT_RTTIME hard limit rtkit accepts
cat >"$TMP/helper-rt" <<EOS
#!/bin/sh
exec prlimit --rttime=100000:100000 "$top_builddir/tests/task-helper" "\$@"
EOS
chmod 755 "$TMP/helper-rt"
REALHELPER=$HELPER
HELPER="$TMP/helper-rt"

# --- rtschedd with [rtkit] on ------------------------------------------------------
CONF="$TMP/rtkit.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
max-priority = 80
watchdog = no
[user *]
max-priority = 12
policies = rr,other
max-threads = 8
[rtkit]
enable = yes
max-realtime-priority = 15
min-nice-level = -10
rttime-usec-max = 150000
EOC
daemon_start "$CONF"
rtkit_state() { "$RTSCHEDCTL" --socket "$SOCK" status | sed -n 's/^rtkit  *//p'; }
owned() { [ "$(rtkit_state)" = owned ]; }
if wait_for owned; then pass "rtschedd owns $NAME on the private system bus"; else
	fail "rtschedd does not own $NAME: state '$(rtkit_state)'"; cat "$DLOG"; finish; exit 1; fi
B() { run busctl --system "$@"; }
# D METHOD ARGS...: dbus-send, which prints the D-Bus error name (busctl does not)
D() { m=$1; shift; run dbus-send --bus="$DBUS_SYSTEM_BUS_ADDRESS" --print-reply --dest=$NAME $OPATH "$NAME.$m" "$@"; }
DO() { m=$1; shift; run "${AS_OTHER[@]}" dbus-send --bus="$DBUS_SYSTEM_BUS_ADDRESS" --print-reply --dest=$NAME $OPATH "$NAME.$m" "$@"; }

# --- properties, introspection --------------------------------------------------
B get-property $NAME $OPATH $NAME RTTimeUSecMax
[ "$OUT" = "x 150000" ] && pass "RTTimeUSecMax is rttime-usec-max ($OUT)" || fail "RTTimeUSecMax: '$OUT' $ERR"
B get-property $NAME $OPATH $NAME MaxRealtimePriority
[ "$OUT" = "i 15" ] && pass "MaxRealtimePriority is max-realtime-priority ($OUT)" || fail "MaxRealtimePriority: '$OUT' $ERR"
B get-property $NAME $OPATH $NAME MinNiceLevel
[ "$OUT" = "i -10" ] && pass "MinNiceLevel is min-nice-level ($OUT)" || fail "MinNiceLevel: '$OUT' $ERR"
B call $NAME $OPATH org.freedesktop.DBus.Properties GetAll s $NAME
expect_in "$OUT" 'a{sv} 3 "RTTimeUSecMax" x 150000 "MaxRealtimePriority" i 15 "MinNiceLevel" i -10' "Properties.GetAll answers all three"
B call $NAME $OPATH org.freedesktop.DBus.Introspectable Introspect
INTRO=$OUT
# every method and property of rtkit's own interface file, with its signature
XML=/usr/share/dbus-1/interfaces/org.freedesktop.RealtimeKit1.xml
B introspect --xml-interface $NAME $OPATH
if [ -r "$XML" ]; then
	want=$(grep -oE '<(method|property) name="[A-Za-z]+"' "$XML" | sed 's/.*name="//; s/"//' | sort)
	missing=""
	for m in $want; do case "$INTRO" in *"name=\\\"$m\\\""*|*"name=\"$m\""*) ;; *) missing="$missing $m" ;; esac; done
	[ -z "$missing" ] && pass "Introspect lists every member of rtkit's $XML ($(echo $want | wc -w))" ||
		fail "Introspect lacks:$missing"
else
	echo "# $XML absent (package rtkit): member list checked against busctl only"
fi
B introspect $NAME $OPATH $NAME
for sig in "MakeThreadRealtime method tu" "MakeThreadRealtimeWithPID method ttu" "MakeThreadHighPriority method ti" \
	   "MakeThreadHighPriorityWithPID method tti" "ResetKnown method -" "ResetAll method -" "Exit method -" \
	   "RTTimeUSecMax property x" "MaxRealtimePriority property i" "MinNiceLevel property i"; do
	set -- $sig
	if printf '%s\n' "$OUT" | grep -qE "^\.$1 +$2 +$3 "; then pass "signature: $1 $2 $3"; else fail "signature of $1 is not $2 $3: $(printf '%s\n' "$OUT" | grep "\.$1 ")"; fi
done

# --- root: the WithPID variants on a helper's thread ------------------------------
helper_start
h pid; set -- $HR; HP=$2
T1=$(spawn w1)
ORIG1=$(q "$T1")
B call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" 10
expect_rc 0 "root: MakeThreadRealtimeWithPID $HP $T1 10"
expect_sched "$T1" "policy=rr priority=10" "kernel: RR 10 after MakeThreadRealtimeWithPID"
expect_sched "$T1" "rfork=1" "kernel: SCHED_RESET_ON_FORK set, as rtkit grants"
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$T1" '$1 == t')
expect_in "$row" " rtkit " "rtschedctl list shows the thread with SOURCE rtkit"
B call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" 50
expect_rc 0 "root: priority 50 is accepted"
expect_sched "$T1" "policy=rr priority=15" "kernel: capped at MaxRealtimePriority 15"
T2=$(spawn w2)
nice_of() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $17 }'; }
NICE0=$(nice_of "$T2")   # what it inherited (make check may run under nice)
B call $NAME $OPATH $NAME MakeThreadHighPriorityWithPID tti -- "$HP" "$T2" -5
expect_rc 0 "root: MakeThreadHighPriorityWithPID $T2 -5"
[ "$(nice_of "$T2")" = -5 ] && pass "kernel: nice -5 ($(q "$T2"))" || fail "nice of $T2 is $(nice_of "$T2"), want -5"
B call $NAME $OPATH $NAME MakeThreadHighPriorityWithPID tti -- "$HP" "$T2" -20
[ "$(nice_of "$T2")" = -10 ] && pass "kernel: nice -20 floored to MinNiceLevel -10" || fail "nice of $T2 is $(nice_of "$T2"), want -10"
D MakeThreadRealtimeWithPID uint64:"$HP" uint64:99999999 uint32:10
expect_in "$ERR" "org.freedesktop.DBus.Error.InvalidArgs" "no such thread: InvalidArgs"
expect_in "$ERR" "no-such-thread" "... with rtschedd's diagnosis code"
D MakeThreadRealtimeWithPID uint64:"$HP" uint64:"$T1" uint32:0
expect_in "$ERR" "org.freedesktop.DBus.Error.InvalidArgs" "priority 0: InvalidArgs"

# --- RLIMIT_RTTIME: rtkit's contract --------------------------------------------
exec 5< <(prlimit --rttime=unlimited:unlimited "$CLIENT" realtime 5 </dev/null & sleep 30)
# the client prints and then waits on stdin (/dev/null: it exits at once)
read -r -t 10 line <&5
case "$line" in
"err "*AccessDenied*rttime-over-max*) pass "RLIMIT_RTTIME unlimited: AccessDenied rttime-over-max" ;;
*) fail "RLIMIT_RTTIME unlimited: got '$line'" ;;
esac
exec 5<&-

# --- a non-root user ------------------------------------------------------------
# client USER-PREFIX ARGS...: start rtkit-client, its first line in CL, the
# process held by a FIFO; cl_stop ends it
CLN=0
client() {
	CLN=$((CLN + 1))
	mkfifo "$TMP/cl$CLN.in"; chmod 666 "$TMP/cl$CLN.in"
	"$@" <"$TMP/cl$CLN.in" >"$TMP/cl$CLN.out" 2>&1 &
	CLPID=$!
	exec 6>"$TMP/cl$CLN.in"
	for _ in $(seq 100); do [ -s "$TMP/cl$CLN.out" ] && break; sleep 0.1; done
	CL=$(head -1 "$TMP/cl$CLN.out")
	CLTID=$(echo "$CL" | awk '{ print $2 }')
}
cl_stop() { exec 6>&-; wait "$CLPID" 2>/dev/null; }
RT="prlimit --rttime=100000:100000"

client as_other $RT "$CLIENT" realtime 10
expect_in "$CL" "ok " "uid $OTHER: MakeThreadRealtime(own thread, 10)"
expect_sched "$CLTID" "policy=rr priority=10" "kernel: the user's thread is RR 10"
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$CLTID" '$1 == t')
expect_in "$row" "$OTHER" "list: owner is uid $OTHER"
OWNTID=$CLTID
# the caller's process exits: its thread is gone and rtschedd drops it
cl_stop
gone() { ! "$RTSCHEDCTL" --socket "$SOCK" list | awk '{ print $1 }' | grep -qx "$OWNTID"; }
wait_for gone && pass "caller exited: tid $OWNTID left the registry" || fail "tid $OWNTID still listed after its process exited"

# Who a new caller is is asked of the bus off the event loop (issue 23): a
# caller's MakeThreadRealtime reaches a stopped rtschedd, then the bus daemon
# stops and rtschedd continues: it must go on serving its control socket
# while the bus is silent, and grant the call once the bus answers.
queued() { ss -xp 2>/dev/null | awk -v p="pid=$DPID," 'index($0, p) && $3 > 0 { f = 1 } END { exit !f }'; }
kill -STOP "$DPID"
mkfifo "$TMP/slow.in"; chmod 666 "$TMP/slow.in"
as_other $RT "$CLIENT" realtime 10 <"$TMP/slow.in" >"$TMP/slow.out" 2>&1 &
SLOWPID=$!
exec 7>"$TMP/slow.in"
wait_for queued || fail "the call never reached rtschedd's bus connection"
kill -STOP "$BUSPID"
kill -CONT "$DPID"
t0=$(date +%s%N)
run "$RTSCHEDCTL" --socket "$SOCK" status
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 0 "with the bus silent while rtschedd asks who a new caller is, status answers (${ms} ms; the bus still stopped)"
kill -CONT "$BUSPID"
wait_for grep -q . "$TMP/slow.out"
expect_in "$(head -1 "$TMP/slow.out")" "ok " "once the bus answers, the waiting call is granted: $(head -1 "$TMP/slow.out" | cut -c1-100)"
exec 7>&-
wait "$SLOWPID" 2>/dev/null

# [rtkit] min-nice-level narrows what [user]/[group] allow, never widens it
# (issue 23): with no min-nice for nobody (the built-in 0), a bus call
# gets no negative nice, as a control-socket request would not
client as_other $RT "$CLIENT" high -7
expect_in "$CL" "LimitsExceeded" "uid $OTHER, no [user] min-nice: MakeThreadHighPriority(own thread, -7) refused"
expect_in "$CL" "nice-denied" "... with code nice-denied"
[ "$(nice_of "$CLTID")" = "$NICE0" ] && pass "kernel: the thread's nice stays $NICE0" || fail "nice of $CLTID is $(nice_of "$CLTID") without a [user] min-nice"
cl_stop
printf 'min-nice = -12\n' >"$TMP/min-nice.conf"
sed -i '/^max-threads = 8$/r '"$TMP/min-nice.conf" "$CONF"
ctl reload
expect_rc 0 "reload with min-nice = -12 in [user *]"

# plain MakeThreadHighPriority: no pid, the caller's own thread
client as_other $RT "$CLIENT" high -7
expect_in "$CL" "ok " "uid $OTHER: MakeThreadHighPriority(own thread, -7)"
[ "$(nice_of "$CLTID")" = -7 ] && pass "kernel: the thread's nice is -7 ($(q "$CLTID"))" ||
	fail "nice of $CLTID is $(nice_of "$CLTID"), want -7"
expect_sched "$CLTID" "policy=other" "kernel: a nice change only, the thread stays SCHED_OTHER"
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$CLTID" '$1 == t')
expect_in "$row" " rtkit " "list: the nice grant shows with SOURCE rtkit"
cl_stop

# rtkit's RLIMIT_RTTIME contract with a finite limit: above RTTimeUSecMax (150000) is refused too
client as_other prlimit --rttime=200000:200000 "$CLIENT" realtime 10
expect_in "$CL" "org.freedesktop.DBus.Error.AccessDenied" "uid $OTHER, RLIMIT_RTTIME 200000 us: AccessDenied"
expect_in "$CL" "rtschedd: rttime-over-max:" "... with code rttime-over-max"
expect_in "$CL" "RLIMIT_RTTIME hard limit 200000 us, above RTTimeUSecMax 150000 us" "... naming the limit and the maximum"
expect_sched "$CLTID" "policy=other priority=0" "kernel: the refused thread stays SCHED_OTHER"
cl_stop

client as_other $RT "$CLIENT" -p high -15
expect_in "$CL" "ok " "uid $OTHER: MakeThreadHighPriorityWithPID(own, -15)"
[ "$(nice_of "$CLTID")" = -10 ] && pass "kernel: floored to -10" || fail "nice $(nice_of "$CLTID"), want -10"
cl_stop

# over the user's limit ([user *] max-priority 12), under MaxRealtimePriority
client as_other $RT "$CLIENT" realtime 14
expect_in "$CL" "LimitsExceeded" "uid $OTHER: priority 14 over [user *] max-priority 12: LimitsExceeded"
expect_in "$CL" "priority-denied" "... with code priority-denied"
expect_in "$CL" "[user *]" "... naming the section that sets the limit"
expect_sched "$CLTID" "policy=other" "kernel: the refused thread stays SCHED_OTHER"
cl_stop

# another user's thread (root's helper), with and without a pid
DO MakeThreadRealtimeWithPID uint64:"$HP" uint64:"$T2" uint32:5
expect_in "$ERR" "org.freedesktop.DBus.Error.AccessDenied" "uid $OTHER: WithPID on root's thread: AccessDenied"
expect_in "$ERR" "not-own-thread" "... with code not-own-thread"
expect_sched "$T2" "policy=other" "kernel: root's thread untouched"
DO MakeThreadRealtime uint64:"$T2" uint32:5
expect_in "$ERR" "org.freedesktop.DBus.Error.AccessDenied" "uid $OTHER: MakeThreadRealtime(root's tid): AccessDenied"
# ResetKnown, ResetAll, Exit: the bus policy (rtschedd-rtkit.conf) stops them
for m in ResetKnown ResetAll Exit; do
	DO $m
	expect_in "$ERR" "org.freedesktop.DBus.Error.AccessDenied: Rejected send message" "uid $OTHER: $m refused by the bus policy"
done
expect_sched "$T1" "policy=rr priority=15" "kernel: root's grant survived the refused resets"
# a policy that lets them through (a machine without rtschedd's file, or a
# looser one): rtschedd refuses them itself
cat >"$TMP/bus.d/let-nobody-reset.conf" <<EOC
<busconfig>
  <policy user="nobody">
    <allow send_destination="$NAME" send_interface="$NAME" send_member="ResetKnown"/>
    <allow send_destination="$NAME" send_interface="$NAME" send_member="ResetAll"/>
    <allow send_destination="$NAME" send_interface="$NAME" send_member="Exit"/>
  </policy>
</busconfig>
EOC
reload_bus() { B call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig; }
reload_bus
for m in ResetKnown ResetAll Exit; do
	DO $m
	case "$ERR" in
	*"Rejected send message"*) fail "uid $OTHER: $m still stopped by the bus after the test policy: $ERR" ;;
	*"org.freedesktop.DBus.Error.AccessDenied: rtschedd: not-admin: $m needs root or admin-group (uid $OTHER "*)
		pass "uid $OTHER: $m let through by the bus, refused by rtschedd (AccessDenied, not-admin)" ;;
	*) fail "uid $OTHER: $m let through by the bus: got '$ERR'" ;;
	esac
done
expect_sched "$T1" "policy=rr priority=15" "kernel: root's grant survived the resets rtschedd refused"
[ "$(nice_of "$T2")" = -10 ] && pass "kernel: root's nice grant survived too (nice -10)" || fail "nice of $T2 is $(nice_of "$T2"), want -10"
owned && pass "Exit refused: rtschedd still owns the name" || fail "after a refused Exit: '$(rtkit_state)'"
rm "$TMP/bus.d/let-nobody-reset.conf"
reload_bus

# --- status, ResetKnown, a second rtschedd, restore on stop ----------------------------
ctl status
expect_in "$OUT" "rtkit_calls" "status shows the bus side's counters"
calls=$(printf '%s\n' "$OUT" | awk '$1 == "rtkit_refusals" { print $2 }')
[ "${calls:-0}" -ge 5 ] && pass "status counts refusals over the bus ($calls)" || fail "rtkit_refusals '$calls'"

# a second rtschedd on another socket: the name is taken, one clear line
"$RTSCHEDD" --config "$CONF" --socket "$TMP/control2" >"$TMP/second.log" 2>&1 &
P2=$!
taken() { "$RTSCHEDCTL" --socket "$TMP/control2" status 2>/dev/null | grep -q '^rtkit  *not owned'; }
if wait_for taken; then pass "second rtschedd: status says not owned"; else fail "second rtschedd: $(cat "$TMP/second.log")"; fi
n=$(grep -c "RealtimeKit1 is held by pid $DPID" "$TMP/second.log")
[ "$n" = 1 ] && pass "second rtschedd logs one line naming the holder: $(grep 'held by' "$TMP/second.log" | sed 's/^.*rtkit: //')" ||
	fail "second rtschedd log: $(cat "$TMP/second.log")"
kill "$P2"; wait "$P2" 2>/dev/null
owned && pass "the first rtschedd still owns the name" || fail "first rtschedd lost the name: $(rtkit_state)"

B call $NAME $OPATH $NAME ResetKnown
expect_rc 0 "root: ResetKnown"
expect_sched "$T1" "policy=other priority=0" "kernel: ResetKnown restored root's RR thread"
[ "$(nice_of "$T2")" = "$NICE0" ] && pass "kernel: ResetKnown restored nice $NICE0" || fail "nice of $T2 is $(nice_of "$T2"), want $NICE0"

B call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" 7
expect_sched "$T1" "policy=rr priority=7" "granted again after ResetKnown"

# ResetAll: every thread rtschedd manages, the control socket's too
T3=$(spawn w3)
ORIG3=$(q "$T3")
h register w3 -
expect_in "$HR" "ok fifo 10" "a thread registers itself through the control socket: $HR"
expect_sched "$T3" "policy=fifo priority=10" "kernel: SCHED_FIFO 10 (SOURCE thread)"
B call $NAME $OPATH $NAME ResetAll
expect_rc 0 "root: ResetAll"
[ "$(q "$T1")" = "$ORIG1" ] && pass "kernel: ResetAll restored the bus's thread ($ORIG1)" ||
	fail "after ResetAll: $T1 is $(q "$T1"), want $ORIG1"
[ "$(q "$T3")" = "$ORIG3" ] && pass "kernel: ResetAll restored the control socket's thread too ($ORIG3)" ||
	fail "after ResetAll: $T3 is $(q "$T3"), want $ORIG3"
ctl list
[ -z "$(printf '%s\n' "$OUT" | awk -v a="$T1" -v b="$T3" '$1 == a || $1 == b')" ] &&
	pass "list: neither thread is managed after ResetAll" || fail "list after ResetAll: $OUT"
B call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" 7
expect_sched "$T1" "policy=rr priority=7" "granted again after ResetAll"

# --- WithPID for a process that outlives its caller (the Realtime portal's case:
# the portal calls for an app's process and goes on; rtkit keeps the grant) ------
SP=""
sp_stop() { [ -n "$SP" ] && kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; SP=""; }
at_exit sp_stop
"${AS_OTHER[@]}" prlimit --rttime=100000:100000 sleep 100000 </dev/null >/dev/null 2>&1 &
SP=$!   # setpriv and prlimit exec: this is the sleep
is_sleep() { [ "$(cat /proc/"$SP"/comm)" = sleep ]; }
wait_for is_sleep || fail "the target process did not start"
SORIG=$(q "$SP")
run "${AS_OTHER[@]}" busctl --system call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$SP" "$SP" 9
expect_rc 0 "uid $OTHER (busctl, another process): MakeThreadRealtimeWithPID for its process $SP"
expect_sched "$SP" "policy=rr priority=9" "kernel: the target is RR 9"
# busctl has exited (run waited for it); rtschedd answers later requests
B get-property $NAME $OPATH $NAME MaxRealtimePriority
ctl list
row=$(printf '%s\n' "$OUT" | awk -v t="$SP" '$1 == t')
expect_in "$row" " rtkit " "caller gone: the target is still managed (SOURCE rtkit)"
expect_in "$row" "$OTHER" "... owned by uid $OTHER"
expect_sched "$SP" "policy=rr priority=9" "kernel: the target keeps RR 9 after its caller exited (as with rtkit)"

# --- WithPID for a root process in a seteuid(nobody) window: its /proc owner is
# nobody (it set itself dumpable again, as some daemons do), its real uid root --
cat >"$TMP/euid.py" <<'EOP'
import ctypes, os, sys, time
os.setresuid(0, int(sys.argv[1]), 0)
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)   # PR_SET_DUMPABLE
print("ready", flush=True)
time.sleep(100000)
EOP
prlimit --rttime=100000:100000 python3 "$TMP/euid.py" "$OTHER" >"$TMP/euid.out" 2>&1 </dev/null &
EP=$!   # prlimit execs: this is python
sp_stop2() { kill "$EP" 2>/dev/null; wait "$EP" 2>/dev/null; }
at_exit sp_stop2
wait_for grep -q ready "$TMP/euid.out" || fail "the seteuid process did not start: $(cat "$TMP/euid.out")"
expect_in "$(awk '/^Uid:/ { print $2, $3 }' /proc/"$EP"/status) $(stat -c %u /proc/"$EP")" "0 $OTHER $OTHER" \
	"the target runs as root, effective uid $OTHER, /proc owner $OTHER"
run "${AS_OTHER[@]}" busctl --system call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$EP" "$EP" 9
[ "$RC" != 0 ] && pass "uid $OTHER: MakeThreadRealtimeWithPID for root's process in its seteuid window is refused: $ERR" ||
	fail "uid $OTHER was granted real-time on root's process $EP (real uid 0): $OUT"
expect_sched "$EP" "policy=other" "kernel: root's process stays SCHED_OTHER"
sp_stop2

# --- the real client: PipeWire's module-rt, as nobody with RLIMIT_RTPRIO 0 ------
# (so it cannot make itself real-time and asks RealtimeKit1, as on a desktop)
PWPID=""; PWTID=""
pw_stop() { [ -n "$PWPID" ] && kill "$PWPID" 2>/dev/null; wait "$PWPID" 2>/dev/null; PWPID=""; }
at_exit pw_stop
if command -v pipewire >/dev/null; then
	mkdir -m 700 "$TMP/xdg"; chown nobody "$TMP/xdg"
	install -m 644 "$top_srcdir/tests/pipewire-rt.conf" "$TMP/pw.conf"
	# setpriv and prlimit exec: $! is pipewire's pid
	XDG_RUNTIME_DIR="$TMP/xdg" PIPEWIRE_DEBUG=3 "${AS_OTHER[@]}" prlimit --rtprio=0:0 \
		pipewire -c "$TMP/pw.conf" >"$TMP/pw.log" 2>&1 &
	PWPID=$!
	pw_rt() { PWTID=$("$RTSCHEDCTL" --socket "$SOCK" list | awk -v p="$PWPID" '$2 == p && $4 == "rr" { print $1; exit }'); [ -n "$PWTID" ]; }
	if wait_for pw_rt; then
		expect_sched "$PWTID" "policy=rr priority=11" "PipeWire (module-rt, rtkit path) got its data loop tid $PWTID RR 11 from rtschedd"
		expect_in "$(grep 'acquired realtime' "$TMP/pw.log")" "using RTKit" "PipeWire's log: $(grep -o 'acquired realtime.*' "$TMP/pw.log")"
	else
		fail "PipeWire got no real-time thread: $(grep -E 'mod.rt|rtkit' "$TMP/pw.log" | tail -5)"
	fi
else
	echo "# pipewire not installed (apt-get install pipewire-bin): the real-client part is skipped"
fi

daemon_stop
expect_sched "$T1" "policy=other priority=0" "kernel: rtschedd stopped, the thread is restored"
[ "$(q "$SP")" = "$SORIG" ] && pass "kernel: the target whose caller had exited is restored on stop ($SORIG)" ||
	fail "after stop: $SP is $(q "$SP"), want $SORIG"
sp_stop
[ -n "$PWTID" ] && expect_sched "$PWTID" "policy=other priority=0" "kernel: PipeWire's data loop restored when rtschedd stops (PipeWire still running)"
pw_stop

B call $NAME $OPATH $NAME Exit   # nobody on the name now: the bus says so
expect_in "$ERR" "not" "with rtschedd stopped the name has no owner"

# --- [rtkit] policy = fifo: MakeThreadRealtime grants SCHED_FIFO ------------------
# ([user *] must allow fifo for the user: policies = fifo,other)
sed -e 's/^policies = rr,other$/policies = fifo,other/' -e 's/^\[rtkit\]$/[rtkit]\npolicy = fifo/' \
	"$CONF" >"$TMP/rtkit-fifo.conf"
grep -q '^policy = fifo$' "$TMP/rtkit-fifo.conf" || fail "could not write policy = fifo into the test config"
daemon_start "$TMP/rtkit-fifo.conf"
wait_for owned || fail "rtschedd with policy = fifo does not own the name: '$(rtkit_state)'"
client as_other $RT "$CLIENT" realtime 10
expect_in "$CL" "ok " "uid $OTHER: MakeThreadRealtime(own thread, 10) with [rtkit] policy = fifo"
expect_sched "$CLTID" "policy=fifo priority=10" "kernel: SCHED_FIFO 10"
expect_sched "$CLTID" "rfork=1" "kernel: with SCHED_RESET_ON_FORK still"
cl_stop

# --- Exit releases the name, the daemon keeps its socket --------------------------
B call $NAME $OPATH $NAME Exit
expect_rc 0 "root: Exit"
released() { [ "$(rtkit_state)" = released ]; }
wait_for released && pass "after Exit: status says released, the control socket answers" || fail "after Exit: '$(rtkit_state)'"

# --- a reload with enable = yes takes the name back after Exit -----------------------
# the bus's own answer: who owns the name, by pid (not what rtschedd says of itself)
bus_owner_pid() { busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
	GetConnectionUnixProcessID s $NAME 2>/dev/null | awk '{ print $2 }'; }
owned_by_daemon() { [ "$(bus_owner_pid)" = "$DPID" ]; }
left_bus() { ! owned_by_daemon; }
wait_for left_bus && pass "after Exit the bus gives the name to no rtschedd" ||
	fail "after Exit the bus still gives the name to pid $DPID"
kill -HUP "$DPID"
if wait_for owned_by_daemon; then pass "SIGHUP after Exit: the bus gives $NAME to rtschedd (pid $DPID) again"; else
	fail "SIGHUP after Exit: owner pid '$(bus_owner_pid)', status '$(rtkit_state)'"; fi
wait_for owned && pass "... and status says owned" || fail "after SIGHUP: status '$(rtkit_state)'"
B get-property $NAME $OPATH $NAME MaxRealtimePriority
[ "$OUT" = "i 15" ] && pass "... and the service answers again ($OUT)" || fail "MaxRealtimePriority after SIGHUP: '$OUT' $ERR"
B call $NAME $OPATH $NAME Exit
expect_rc 0 "root: Exit again"
wait_for released && wait_for left_bus || fail "after the second Exit: '$(rtkit_state)', owner pid '$(bus_owner_pid)'"
ctl reload
expect_rc 0 "rtschedctl reload after Exit"
if wait_for owned_by_daemon; then pass "rtschedctl reload after Exit: the bus gives $NAME to rtschedd again"; else
	fail "rtschedctl reload after Exit: owner pid '$(bus_owner_pid)', status '$(rtkit_state)'"; fi
n=$(grep -c "asking for $NAME again after Exit" "$DLOG")
[ "$n" = 2 ] && pass "the log says so once per reload" || fail "log lines about asking again: $n"

# --- many callers: rtschedd keeps what the bus said about the last 64 connections;
# 70 (busctl: one connection each) go past that, each still answered for itself ---
ok=0
for i in $(seq 70); do
	busctl --system call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" $((5 + i % 2)) >/dev/null 2>&1 &&
		ok=$((ok + 1))
done
[ "$ok" = 70 ] && pass "70 callers on 70 connections: each granted" || fail "70 connections: $ok granted"
expect_sched "$T1" "policy=fifo priority=5" "kernel: the 70th call's priority (5; [rtkit] policy = fifo here)"
DO MakeThreadRealtimeWithPID uint64:"$HP" uint64:"$T1" uint32:6
expect_in "$ERR" "not-own-thread" "then uid $OTHER on a new connection is still refused root's thread"
expect_sched "$T1" "policy=fifo priority=5" "kernel: root's thread untouched by it"

# --- the bus goes away and comes back: a reload connects again ---------------------
bus_stop
lost_bus() { [ "$(rtkit_state)" = failed ]; }
wait_for lost_bus && pass "bus stopped: status says failed" || fail "bus stopped: status '$(rtkit_state)'"
rm -f "$TMP/bus"
dbus-daemon --config-file="$TMP/bus.conf" --nofork >>"$TMP/bus.log" 2>&1 &
BUSPID=$!
wait_for test -S "$TMP/bus" || fail "private bus did not start again"
chmod 777 "$TMP/bus"
kill -HUP "$DPID"
if wait_for owned_by_daemon; then pass "bus back, SIGHUP: rtschedd connects again and owns $NAME"; else
	fail "bus back, SIGHUP: owner pid '$(bus_owner_pid)', status '$(rtkit_state)'"; fi
B call $NAME $OPATH $NAME MakeThreadRealtimeWithPID ttu "$HP" "$T1" 8
expect_rc 0 "root: MakeThreadRealtimeWithPID on the new bus"
expect_sched "$T1" "policy=fifo priority=8" "kernel: FIFO 8 granted over the new bus"
helper_stop
finish
