#!/bin/bash
# tests/systemd-e2e.sh: rtschedd under a real systemd. Boots systemd in a
# container (systemd-nspawn --volatile=yes -D /: the host's /usr, a tmpfs
# root), installs the built units with a copy of the built binaries, and
# checks `systemd-analyze verify` and `security`, socket activation,
# `systemctl status`, reload, the watchdog, restart keeping the registrations,
# stop restoring the threads and the journal's priorities, all with rtschedd
# as the user rtschedd inside the unit's sandbox (cpu-dma-latency and
# metrics-file included), and rtkit's D-Bus API on the container's own system
# bus: the name owned by that rtschedd, a call from a non-root process, bus
# activation of the unit and PipeWire's module-rt. Threads come from
# tests/task-helper and tests/rtkit-client run inside the container; every
# scheduling assertion is what the kernel reports there.
. "$(dirname "$0")/lib.sh"
need_root
# bash runs the EXIT trap (and so the cleanup) on a signal only through exit
trap 'exit 143' TERM
trap 'exit 130' INT
# the whole test is bounded, whatever hangs
test_deadline 600

. "$(dirname "$0")/nspawn.sh"
managed() { cin "$top_builddir/rtschedctl" list | grep -q "$1"; }

# --- boot, install ------------------------------------------------------------------
# CAP_BPF, CAP_PERFMON and bpf(): a real machine's PID 1 has them (nspawn drops them by default)
nspawn_boot "rtschedd-e2e-$$" --capability=CAP_BPF,CAP_PERFMON --system-call-filter="bpf perf_event_open"
nspawn_install

# knows KEY = VALUE: does this rtschedd take the key (older ones do not)?
knows() { printf '[daemon]\n%s\n' "$1" >"$TMP/probe.conf"; "$RTSCHEDD" --test-config --config "$TMP/probe.conf" >/dev/null 2>&1; }
PMQOS= METRICS=
# /dev/cpu_dma_latency: the container's /dev lacks it; a node of its own (the
# host's device, not the host's inode) gets the tmpfiles.d ownership
if [ -c /dev/cpu_dma_latency ] && knows "cpu-dma-latency = 100"; then
	PMQOS="cpu-dma-latency = 100"
	cin mknod -m 600 /dev/cpu_dma_latency c $((0x$(stat -c %t /dev/cpu_dma_latency))) \
		$((0x$(stat -c %T /dev/cpu_dma_latency)))
	cin install -D -m 644 "$top_srcdir/systemd/tmpfiles.d/rtschedd.conf" /etc/tmpfiles.d/rtschedd.conf
	cin systemd-tmpfiles --create /etc/tmpfiles.d/rtschedd.conf
	[ "$(cin stat -c '%G %a' /dev/cpu_dma_latency)" = "rtschedd 660" ] &&
		pass "tmpfiles.d gave group rtschedd /dev/cpu_dma_latency (0660)" ||
		fail "/dev/cpu_dma_latency is $(cin stat -c '%U:%G %a' /dev/cpu_dma_latency)"
else
	echo "# /dev/cpu_dma_latency or cpu-dma-latency = not available: not checked"
fi
# the Prometheus file, in the one directory the unit lets rtschedd write
if knows "metrics-file = /run/rtschedd/rtschedd.prom"; then
	METRICS="metrics-file = /run/rtschedd/rtschedd.prom
metrics-interval = 1"
else
	echo "# metrics-file = not available: not checked"
fi

write_conf() { # write_conf AUDIO_PRIORITY [EXTRA_LINE]
	cin sh -c 'cat >/etc/rtschedd.conf' <<EOC
[daemon]
policy = fifo
priority = 10
max-priority = 80
rate-limit = 0
$PMQOS
$METRICS
$2
[rule audio]
policy = fifo
priority = $1
EOC
}
write_conf 50

# --- systemd-analyze verify and security -------------------------------------------
# verify runs man(1) for each Documentation= page: give it the source tree's pages
# (and man(1) its configuration, which the container's fresh /etc lacks)
man=(--man=no)
if command -v man >/dev/null && [ -f /etc/manpath.config ]; then
	for p in "$top_srcdir"/man/*.[1-8]; do
		cin install -D -m 644 "$p" "/root/man/man${p##*.}/${p##*/}"
	done
	for f in /etc/manpath.config /etc/groff/man.local /etc/groff/mdoc.local; do
		[ -f "$f" ] && cin install -D -m 644 /dev/stdin "$f" <"$f"
	done
	man=(--man=yes)
fi
out=$(cin env MANPATH=/root/man systemd-analyze verify "${man[@]}" /etc/systemd/system/$UNIT \
	/etc/systemd/system/rtschedd.socket 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] && pass "systemd-analyze verify is clean" || fail "systemd-analyze verify (exit $rc): $out"
sctl daemon-reload
# security_check [WHEN]: systemd-analyze security of the unit, 2.0 or lower
security_check() {
	cin systemd-analyze security --no-pager $UNIT >"$TMP/security" 2>&1
	grep '✗' "$TMP/security" | sed 's/^/    /'
	score=$(sed -n "s/.*Overall exposure level for $UNIT: \\([0-9.]*\\).*/\\1/p" "$TMP/security")
	echo "    $(grep 'Overall exposure' "$TMP/security")"
	if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
		pass "systemd-analyze security${1:+ $1}: exposure $score (target 2.0 or lower)"
	else
		fail "systemd-analyze security${1:+ $1}: exposure '$score', want 2.0 or lower"
	fi
}
security_check
grep -q '^RestrictRealtime=' <(cin cat /etc/systemd/system/$UNIT) && fail "the unit sets RestrictRealtime=" ||
	pass "the unit does not set RestrictRealtime="

# Test settings only: a short watchdog (and the time after which a hung
# rtschedd gets SIGKILL), no core files, no start rate limit for the restarts.
# In a --enable-sanitizers build LeakSanitizer cannot stop the daemon's
# threads inside the unit's seccomp sandbox and makes every stop exit 1 (a
# failed unit); ASan's other checks stay on, and rtkit.sh and the other tests
# check rtschedd for leaks outside the sandbox. No effect on a plain build.
cin sh -c "cat >/etc/systemd/system/$UNIT.d/e2e.conf" <<EOC
[Unit]
StartLimitIntervalSec=0
[Service]
WatchdogSec=2s
TimeoutAbortSec=2s
LimitCORE=0
Environment=ASAN_OPTIONS=detect_leaks=0
EOC
sctl daemon-reload

# --- socket activation --------------------------------------------------------------
sctl start rtschedd.socket
[ "$(sctl is-active rtschedd.socket)" = active ] && pass "rtschedd.socket listening" || fail "rtschedd.socket not active"
[ "$(sctl is-active $UNIT)" = inactive ] && pass "rtschedd.service not started yet" ||
	fail "rtschedd.service already $(sctl is-active $UNIT)"

# the helper runs in the container's pid namespace; its FIFOs are opened here
hin="$TMP/helper.in"; hout="$TMP/helper.out"
mkfifo "$hin" "$hout"
nsenter -t "$LEADER" -m -u -i -n -p -- env -u RTSCHED_SOCKET "$HELPER" <"$hin" >"$hout" &
HPID=$!
exec 3>"$hin" 4<"$hout"
q() { cin "$HELPER" query "$1"; }

T=$(spawn e2e-audio)
cin chrt -b -p 0 "$T"      # SCHED_BATCH: restoring is not just "back to other"
ORIG=$(q "$T")
h register e2e-audio audio
expect_in "$HR" "ok fifo 50" "a thread registers itself through the socket (librtsched): $HR"
expect_sched "$T" "policy=fifo priority=50" "kernel reports SCHED_FIFO 50 inside the container"
[ "$(sctl is-active $UNIT)" = active ] && pass "the connection started rtschedd.service (socket activation)" ||
	fail "rtschedd.service is $(sctl is-active $UNIT)"
wait_for journal_has "socket activation" &&
	pass "rtschedd logged that it listens on the socket from systemd" || fail "no 'socket activation' line in the journal"

out=$(sctl status $UNIT); rc=$?
expect_in "$out" "Active: active (running)" "systemctl status: active (running) (exit $rc)"
expect_in "$out" "TriggeredBy: ● rtschedd.socket" "systemctl status: triggered by rtschedd.socket"
st=$(printf '%s\n' "$out" | grep -m1 '^ *Status: "')
[ -n "$st" ] && pass "systemctl status shows the daemon's STATUS= (sd_notify):${st#*:}" ||
	fail "systemctl status shows no Status: line"
MAIN=$(prop MainPID)
if [ -n "$PMQOS" ]; then
	wait_for journal_has "holding /dev/cpu_dma_latency at 100 us" &&
		pass "rtschedd (user rtschedd, PrivateDevices=yes) holds /dev/cpu_dma_latency at 100 us" ||
		fail "no 'holding /dev/cpu_dma_latency' in the journal: $(cin journalctl -u $UNIT -o cat | grep -i dma)"
	v=$(od -An -td4 -N4 /dev/cpu_dma_latency | tr -d ' ')
	[ -n "$v" ] && [ "$v" -le 100 ] && pass "the kernel's PM QoS CPU latency target is $v us (100 or less)" ||
		fail "the kernel's PM QoS CPU latency target is '$v' us"
fi
if [ -n "$METRICS" ]; then
	metrics_readable() { [ "$(cin stat -c %A /run/rtschedd/rtschedd.prom)" = -rw-r--r-- ]; }
	wait_for cin test -s /run/rtschedd/rtschedd.prom && pass "metrics-file written to /run/rtschedd/rtschedd.prom" ||
		fail "no metrics-file: $(cin journalctl -u $UNIT -o cat | grep metrics)"
	metrics_readable && pass "metrics-file is readable by node_exporter's user (-rw-r--r--, under UMask=0077)" ||
		fail "metrics-file mode $(cin stat -c %A /run/rtschedd/rtschedd.prom), want -rw-r--r-- (node_exporter reads it as another user)"
fi
puid=$(cin cat /proc/"$MAIN"/status | awk '/^Uid:/ { print $2 }')
cap=$(cin cat /proc/"$MAIN"/status | awk '/^CapEff:/ { print $2 }')
[ "$puid" = "$RUID" ] && pass "rtschedd runs as user rtschedd (uid $puid)" || fail "rtschedd runs as uid '$puid'"
[ "$cap" = 0000000000800000 ] && pass "its effective capabilities are CAP_SYS_NICE only (CapEff $cap)" ||
	fail "CapEff $cap, want 0000000000800000 (CAP_SYS_NICE)"

# --- reload ---------------------------------------------------------------------------
write_conf 55
sctl reload $UNIT
rc=$?
[ $rc -eq 0 ] && pass "systemctl reload (exit 0)" || fail "systemctl reload exit $rc"
expect_sched "$T" "policy=fifo priority=55" "reload re-applied the changed rule (priority 55)"
write_conf 60 "no-such-key = 1"
sctl reload $UNIT 2>"$TMP/reload.err"
rc=$?
[ $rc -ne 0 ] && pass "systemctl reload fails on an invalid configuration (exit $rc): $(head -1 "$TMP/reload.err")" ||
	fail "systemctl reload of an invalid configuration succeeded"
expect_sched "$T" "policy=fifo priority=55" "the running configuration was kept"
[ "$(sctl is-active $UNIT)" = active ] && pass "rtschedd still active after the failed reload" ||
	fail "rtschedd is $(sctl is-active $UNIT) after the failed reload"
write_conf 55
sctl reload $UNIT && pass "reload with the configuration fixed" || fail "reload after fixing the configuration"

# --- RestrictRealtime= of a transient unit: no file says it, systemd does ---------------
RU=rtsd-e2e-restricted.service
ctl_in() { cin "$top_builddir/rtschedctl" "$@" 2>&1; }
cin systemd-run --quiet --unit="$RU" -p RestrictRealtime=yes sleep 600
RP=$(sctl show -P MainPID "$RU")
out=$(ctl_in check --pid "$RP")
expect_in "$out" "restrict-realtime: pid $RP runs in $RU, which sets RestrictRealtime=yes (a transient unit, as systemd reports it)" \
	"check finds RestrictRealtime=yes of a transient unit (systemd-run -p), asking systemd over the bus"
expect_in "$out" "fix: $RU is a transient unit (systemd-run): systemctl stop $RU and start it again without -p RestrictRealtime=yes" \
	"and the fix fits a transient unit"
# the fix, applied: the process may now make itself real-time
sctl stop "$RU"
cin systemd-run --quiet --unit="$RU" chrt -f 10 sleep 600
RP=$(sctl show -P MainPID "$RU")
# systemd-run returns once the unit started, maybe before chrt has set the
# policy: it has when it has become sleep (exec after sched_setscheduler)
wait_for cin grep -qx sleep "/proc/$RP/comm"
expect_sched "$RP" "policy=fifo priority=10" "started again without the property, the process makes itself SCHED_FIFO 10"
case "$(ctl_in check --pid "$RP")" in
*restrict-realtime*) fail "check still reports restrict-realtime after the fix" ;;
*) pass "check no longer reports restrict-realtime" ;;
esac
sctl stop "$RU"

# --- RestrictRealtime= on rtschedd itself: what the kernel allows it, asked of
# the kernel, not inferred from the unit (issue 23: this systemd's filter
# covers sched_setscheduler, and rtschedd applies with sched_setattr) ---------
SR=rtsd-e2e-selfrr.service
TU=rtsd-e2e-target.service
cin sh -c 'printf "[daemon]\nrate-limit = 0\nwatchdog = no\n" >/etc/rtsd-selfrr.conf'
cin systemd-run --quiet --unit="$SR" -p RestrictRealtime=yes "$OPT/sbin/rtschedd" --config /etc/rtsd-selfrr.conf \
	--socket /run/rtsd-selfrr/control
wait_for cin "$top_builddir/rtschedctl" --socket /run/rtsd-selfrr/control version
cin systemd-run --quiet --unit="$TU" sleep 600
TP=$(sctl show -P MainPID "$TU")
cin "$top_builddir/rtschedctl" --socket /run/rtsd-selfrr/control register --pid "$TP" --policy fifo --priority 10 >/dev/null 2>&1
kernel=$(q "$TP")
out=$(cin "$top_builddir/rtschedctl" --socket /run/rtsd-selfrr/control check 2>&1)
case "$kernel" in
*"policy=fifo priority=10"*)
	pass "rtschedd under RestrictRealtime=yes applied FIFO 10 ($kernel): the kernel lets its sched_setattr through"
	case "$out" in
	*"ERROR    self-restrict-realtime"*) fail "check calls RestrictRealtime=yes an error although the kernel applied FIFO 10" ;;
	*) pass "check does not call it an error" ;;
	esac
	expect_in "$out" "yet the kernel let it set a real-time policy on a thread of its own" \
		"check says what the kernel allows, from asking it: $(echo "$out" | grep -m1 self-restrict-realtime | cut -c1-90)" ;;
*)
	pass "rtschedd under RestrictRealtime=yes could not apply FIFO 10 ($kernel): this systemd filters sched_setattr"
	expect_in "$out" "ERROR    self-restrict-realtime" "check calls it an error, as the kernel refused it" ;;
esac
sctl stop "$SR" "$TU"

# --- watchdog ---------------------------------------------------------------------------
[ "$(prop WatchdogUSec)" = 2s ] && pass "WatchdogSec=2s in force" || fail "WatchdogUSec=$(prop WatchdogUSec)"
w1=$(prop WatchdogTimestampMonotonic)
sleep 3
w2=$(prop WatchdogTimestampMonotonic)
if [ -n "$w1" ] && [ -n "$w2" ] && [ "$w2" -gt "$w1" ] && [ "$(prop NRestarts)" = 0 ] &&
	[ "$(sctl is-active $UNIT)" = active ]; then
	pass "watchdog pings arrive (WATCHDOG=1 at $w1, then $w2 µs); still active after 3 s, NRestarts=0"
else
	fail "watchdog: timestamps '$w1' '$w2', NRestarts=$(prop NRestarts), $(sctl is-active $UNIT)"
fi

# --- restart keeps the registration -------------------------------------------------
sctl restart $UNIT
rc=$?
MAIN2=$(prop MainPID)
[ $rc -eq 0 ] && [ "$MAIN2" != "$MAIN" ] && [ "$MAIN2" != 0 ] &&
	pass "systemctl restart: new main pid $MAIN2 (was $MAIN)" || fail "restart: exit $rc, MainPID $MAIN -> $MAIN2"
expect_sched "$T" "policy=fifo priority=55" "after the restart the thread is still SCHED_FIFO 55"
cin "$top_builddir/rtschedctl" list >"$TMP/list" 2>&1
expect_in "$(cat "$TMP/list")" "e2e-audio" "rtschedctl list after the restart shows the thread"
expect_in "$(grep -w "^$T" "$TMP/list")" "audio" "... under its rule audio"
j=$(cin journalctl -u $UNIT -o cat)
expect_in "$j" "received Terminated, restarting: threads stay as they are" "the old rtschedd saw the restart job over D-Bus"
expect_in "$j" "re-adopted 1 thread" "the new rtschedd re-adopted the thread from the state journal"
case "$j" in *"restoring 1 managed thread"*) fail "the thread was restored during the restart" ;;
*) pass "the thread was not restored during the restart" ;; esac

# --- the watchdog acts: a hung rtschedd is killed, restarted, re-adopts -----------------
cin kill -STOP "$MAIN2"
for _ in $(seq $((HANG_S * 10))); do
	MAIN3=$(prop MainPID)
	[ "$MAIN3" != "$MAIN2" ] && [ "$MAIN3" != 0 ] && [ "$(sctl is-active $UNIT)" = active ] && break
	sleep 0.1
done
[ "$(prop NRestarts)" = 1 ] && [ "$MAIN3" != "$MAIN2" ] &&
	pass "a hung rtschedd hit the watchdog and Restart=on-failure started pid $MAIN3" ||
	fail "after SIGSTOP: NRestarts=$(prop NRestarts), MainPID $MAIN3, $(sctl is-active $UNIT)"
expect_in "$(cin journalctl -u $UNIT -o cat)" "Watchdog timeout" "systemd logged the watchdog timeout"
wait_for managed e2e-audio &&
	pass "the restarted rtschedd re-adopted the thread" || fail "thread not managed after the watchdog restart"
expect_sched "$T" "policy=fifo priority=55" "still SCHED_FIFO 55"

# --- stop restores --------------------------------------------------------------------------
sctl stop $UNIT
[ "$(q "$T")" = "$ORIG" ] && pass "systemctl stop restored the thread ($ORIG)" ||
	fail "after stop: $(q "$T"), want $ORIG"
cin test -e /run/rtschedd/state && fail "state journal left after a stop" || pass "stop removed the state journal"
[ "$(sctl is-active rtschedd.socket)" = active ] && cin test -S /run/rtschedd/control &&
	pass "rtschedd.socket still listening at /run/rtschedd/control" || fail "the socket did not survive the stop"
h register e2e-audio audio
expect_in "$HR" "ok fifo 55" "a new registration starts rtschedd again"
sctl stop $UNIT rtschedd.socket
[ "$(q "$T")" = "$ORIG" ] && pass "stopping both units restored the thread again" || fail "after the last stop: $(q "$T")"

# --- rtkit's D-Bus API on the container's real system bus ----------------------------
# The README's switch from rtkit to rtschedd, done in the container: rtschedd's
# bus policy where the bus reads it, rtkit-daemon.service masked, rtkit's
# activation file replaced by rtschedd's (the container's /usr is the host's
# and read-only: a copy of the directory is bind-mounted over it in the
# container's mount namespace only), [rtkit] enable = yes in a drop-in of
# /etc/rtschedd.conf. Then: the name owned by the rtschedd of the hardened
# unit, a call from a non-root process in the container answered and the
# kernel's view checked, bus activation of rtschedd.service, and PipeWire's
# module-rt.
RK=org.freedesktop.RealtimeKit1
RKPATH=/org/freedesktop/RealtimeKit1
CLIENT="$top_builddir/tests/rtkit-client"
SVCDIR=/usr/share/dbus-1/system-services
rtkit_stage() {
	[ -x "$CLIENT" ] || { echo "# tests/rtkit-client is not built: the rtkit stage is skipped"; return 0; }
	cin test -e /usr/lib/systemd/system/dbus.service || cin test -e /lib/systemd/system/dbus.service ||
		{ echo "# no dbus.service in the container (package dbus): the rtkit stage is skipped"; return 0; }
	NOBODY=$(cin id -u nobody 2>/dev/null)
	[ -n "$NOBODY" ] || { echo "# no user nobody in the container: the rtkit stage is skipped"; return 0; }
	AS_NOBODY=(setpriv --reuid=nobody --regid="$(cin id -g nobody)" --clear-groups)
	rbus() { cin busctl --system "$@"; }

	cin install -D -m 644 "$top_srcdir/systemd/dbus/rtschedd-rtkit.conf" /etc/dbus-1/system.d/rtschedd-rtkit.conf
	sctl mask rtkit-daemon.service >/dev/null 2>&1
	cin mkdir -p "$OPT/system-services"
	cin sh -c "cp -a $SVCDIR/. $OPT/system-services/ 2>/dev/null; true"
	cin install -m 644 "$top_srcdir/systemd/dbus/$RK.service" "$OPT/system-services/$RK.service"
	host_file=$(cat "$SVCDIR/$RK.service" 2>/dev/null)
	cin mount --bind "$OPT/system-services" "$SVCDIR"
	# the container's mounts do not reach the host (nspawn makes them slaves)
	if [ "$(cat "$SVCDIR/$RK.service" 2>/dev/null)" != "$host_file" ]; then
		fail "the bind mount in the container changed the host's $SVCDIR: undoing it"
		umount "$SVCDIR"
		return 1
	fi
	grep -q '^SystemdService=rtschedd.service$' < <(cin cat "$SVCDIR/$RK.service") &&
		pass "the container's bus sees rtschedd's activation file ($SVCDIR/$RK.service: SystemdService=rtschedd.service)" ||
		fail "activation file in the container: $(cin cat "$SVCDIR/$RK.service")"
	# ReloadConfig: the bus rereads its policy and service files (and starts if
	# it was not running: dbus.socket)
	rbus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus ReloadConfig >/dev/null &&
		pass "the container's system bus (dbus.service) reloaded its configuration" ||
		fail "ReloadConfig on the container's system bus failed"
	[ "$(sctl is-active dbus.service)" = active ] && pass "dbus.service is active in the container" ||
		fail "dbus.service is $(sctl is-active dbus.service)"

	cin mkdir -p /etc/rtschedd.d
	cin sh -c 'cat >/etc/rtschedd.d/rtkit.conf' <<EOC
# what a desktop grants its users through rtkit's API
[user *]
max-priority = 20
policies = rr,other
min-nice = -15
[rtkit]
enable = yes
EOC
	cin "$OPT/sbin/rtschedd" --test-config --config /etc/rtschedd.conf >/dev/null 2>&1 &&
		pass "the configuration with the drop-in /etc/rtschedd.d/rtkit.conf ([rtkit] enable = yes) is valid" ||
		fail "rtschedd --test-config: $(cin "$OPT/sbin/rtschedd" --test-config --config /etc/rtschedd.conf 2>&1 | tail -3)"
	# the unit as rated above serves the bus: nothing in it is loosened for [rtkit]
	security_check "with [rtkit] enable = yes"

	rk_state() { cin "$top_builddir/rtschedctl" status | sed -n 's/^rtkit  *//p'; }
	rk_owned() { [ "$(rk_state)" = owned ]; }
	sctl start $UNIT
	if wait_for rk_owned; then pass "rtschedd.service started with [rtkit]: status says rtkit owned"; else
		fail "rtkit state '$(rk_state)': $(cin journalctl -u $UNIT -o cat | grep rtkit | tail -3)"; return 1; fi
	MAIN=$(prop MainPID)
	owner=$(rbus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
		GetConnectionUnixProcessID s $RK | awk '{ print $2 }')
	[ -n "$owner" ] && [ "$owner" = "$MAIN" ] &&
		pass "the bus says $RK is owned by pid $owner, rtschedd.service's main process" ||
		fail "$RK owned by pid '$owner', rtschedd.service's MainPID is $MAIN"
	rbus status $RK >"$TMP/busstatus" 2>&1
	grep -E '^(PID|UID|EUID|Comm|Unit|WellKnownNames)=' "$TMP/busstatus" | sed 's/^/    busctl status: /'
	grep -qx "UID=$RUID" "$TMP/busstatus" && grep -qx "Unit=$UNIT" "$TMP/busstatus" &&
		pass "busctl status $RK: UID=$RUID (rtschedd), Unit=$UNIT" ||
		fail "busctl status $RK: $(tr '\n' ' ' <"$TMP/busstatus")"
	puid=$(cin cat /proc/"$MAIN"/status | awk '/^Uid:/ { print $2 }')
	cap=$(cin cat /proc/"$MAIN"/status | awk '/^CapEff:/ { print $2 }')
	[ "$puid" = "$RUID" ] && [ "$cap" = 0000000000800000 ] &&
		pass "the owner runs as user rtschedd (uid $puid) with CAP_SYS_NICE only (CapEff $cap)" ||
		fail "the owner runs as uid '$puid' with CapEff '$cap'"
	p=$(rbus get-property $RK $RKPATH $RK MaxRealtimePriority)
	[ "$p" = "i 20" ] && pass "MaxRealtimePriority over the real bus: $p" || fail "MaxRealtimePriority: '$p'"

	# rk_client N PRIO: rtkit-client as nobody in the container (RLIMIT_RTTIME
	# within rtkit's contract), kept alive by the FIFO rkN.in (the caller
	# holds it open, see below); its first line in RKL, its tid in RKT
	rk_client() {
		mkfifo "$TMP/rk$1.in"
		nsenter -t "$LEADER" -m -u -i -n -p -- env -u DBUS_SYSTEM_BUS_ADDRESS "${AS_NOBODY[@]}" \
			prlimit --rttime=100000:100000 "$CLIENT" realtime "$2" <"$TMP/rk$1.in" >"$TMP/rk$1.out" 2>&1 &
	}
	rk_line() { # rk_line N: the client's answer
		has_line() { [ -s "$TMP/rk$1.out" ]; }
		wait_for has_line "$1"
		RKL=$(head -1 "$TMP/rk$1.out")
		RKT=$(echo "$RKL" | awk '{ print $2 }')
	}
	rk_client 1 10
	exec 7>"$TMP/rk1.in"
	rk_line 1
	expect_in "$RKL" "ok " "nobody in the container: MakeThreadRealtime(own thread, 10) over the system bus: $RKL"
	RKT1=$RKT
	expect_sched "$RKT1" "policy=rr priority=10" "kernel (in the container): the caller's thread is SCHED_RR 10"
	expect_sched "$RKT1" "rfork=1" "... with SCHED_RESET_ON_FORK"
	row=$(cin "$top_builddir/rtschedctl" list | awk -v t="$RKT1" '$1 == t')
	expect_in "$row" " rtkit " "rtschedctl list: SOURCE rtkit, owner $NOBODY: $(echo $row)"

	# bus activation: nothing holds the name, a call starts rtschedd.service
	sctl stop $UNIT rtschedd.socket
	expect_sched "$RKT1" "policy=other priority=0" "rtschedd stopped: the caller's thread is restored"
	[ "$(sctl is-active $UNIT)" = inactive ] && [ "$(sctl is-active rtschedd.socket)" = inactive ] &&
		pass "rtschedd.service and rtschedd.socket stopped" ||
		fail "after stop: $(sctl is-active $UNIT) / $(sctl is-active rtschedd.socket) ($UNIT: result $(prop Result), exit status $(prop ExecMainStatus); its last lines: $(cin journalctl -u $UNIT -o cat -n 15 | tr '\n' '|'))"
	# the bus drops the name when it sees the connection close
	no_owner() { ! rbus status $RK >/dev/null 2>&1; }
	wait_for no_owner && pass "$RK has no owner now" || fail "$RK still has an owner after the stop"
	rk_client 2 12
	exec 8>"$TMP/rk2.in"
	rk_line 2
	expect_in "$RKL" "ok " "nobody calls MakeThreadRealtime(own thread, 12) with no owner on the bus: $RKL"
	expect_sched "$RKT" "policy=rr priority=12" "kernel: SCHED_RR 12, granted by the bus-activated rtschedd"
	# (systemd may see READY=1 after the call was answered)
	unit_active() { [ "$(sctl is-active $UNIT)" = active ]; }
	wait_for unit_active && pass "rtschedd.service is active again" ||
		fail "rtschedd.service is $(sctl is-active $UNIT)"
	act=$(cin journalctl -u dbus.service -o cat | grep "Activating via systemd: service name='$RK' unit='$UNIT'")
	[ -n "$act" ] && pass "the bus started it: $(echo "$act" | tail -1)" ||
		fail "no activation line in dbus.service's journal: $(cin journalctl -u dbus.service -o cat | tail -5)"
	MAIN=$(prop MainPID)
	owner=$(rbus call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
		GetConnectionUnixProcessID s $RK | awk '{ print $2 }')
	puid=$(cin cat /proc/"$MAIN"/status | awk '/^Uid:/ { print $2 }')
	cap=$(cin cat /proc/"$MAIN"/status | awk '/^CapEff:/ { print $2 }')
	[ "$owner" = "$MAIN" ] && [ "$puid" = "$RUID" ] && [ "$cap" = 0000000000800000 ] &&
		pass "the activated rtschedd (pid $MAIN, uid $puid, CapEff $cap) owns $RK" ||
		fail "after activation: owner pid '$owner', MainPID $MAIN, uid '$puid', CapEff '$cap'"
	exec 7>&- 8>&-

	rtkit_pipewire
}

# PipeWire as nobody with RLIMIT_RTPRIO 0 in the container, its module-rt
# asking RealtimeKit1 on the container's system bus (tests/rtkit.sh's setup)
rtkit_pipewire() {
	command -v pipewire >/dev/null ||
		{ echo "# pipewire not installed (apt-get install pipewire-bin): PipeWire in the container not checked"; return 0; }
	cin install -d -m 700 -o nobody /run/pw-e2e
	cin install -m 644 "$top_srcdir/tests/pipewire-rt.conf" "$OPT/pw.conf"
	# the shell writes its pid (pipewire's, after exec) in the container's namespace
	nsenter -t "$LEADER" -m -u -i -n -p -- env -u DBUS_SYSTEM_BUS_ADDRESS XDG_RUNTIME_DIR=/run/pw-e2e \
		PIPEWIRE_DEBUG=3 sh -c "echo \$\$ >/run/pw-e2e.pid; exec ${AS_NOBODY[*]} prlimit --rtprio=0:0 pipewire -c $OPT/pw.conf" \
		</dev/null >"$TMP/pw.log" 2>&1 &
	PWNS=$!
	pw_pid() { PWPID=$(cin cat /run/pw-e2e.pid 2>/dev/null); [ -n "$PWPID" ]; }
	wait_for pw_pid
	pw_rt() { PWTID=$(cin "$top_builddir/rtschedctl" list | awk -v p="$PWPID" '$2 == p && $4 == "rr" { print $1; exit }'); [ -n "$PWTID" ]; }
	if wait_for pw_rt; then
		expect_sched "$PWTID" "policy=rr priority=11" \
			"PipeWire (nobody, RLIMIT_RTPRIO 0) got its data loop tid $PWTID SCHED_RR 11 through module-rt and the real bus"
		expect_in "$(grep 'acquired realtime' "$TMP/pw.log")" "using RTKit" "PipeWire's log: $(grep -o 'acquired realtime.*' "$TMP/pw.log")"
		sctl stop $UNIT 2>/dev/null   # (its warning that rtschedd.socket can start it again)
		expect_sched "$PWTID" "policy=other priority=0" "systemctl stop: PipeWire's data loop restored (PipeWire still running)"
	else
		fail "PipeWire got no real-time thread: $(grep -E 'mod.rt|rtkit|RTKit' "$TMP/pw.log" | tail -5)"
	fi
	cin kill "$PWPID" 2>/dev/null
	wait "$PWNS" 2>/dev/null
}
rtkit_stage
sctl stop $UNIT rtschedd.socket

# --- the journal: the daemon's messages at their priorities ---------------------------------
cin journalctl -u $UNIT -o json >"$TMP/journal.json"
prio() { jq -r --arg m "$1" 'select(.SYSLOG_IDENTIFIER == "rtschedd" and ((.MESSAGE | strings) | contains($m))) | .PRIORITY' \
	"$TMP/journal.json" | head -1; }
jqcheck() { # jqcheck TEXT WANT DESC
	got=$(prio "$1")
	[ "$got" = "$2" ] && pass "journal: $3 at PRIORITY $2" || fail "journal: '$1' at PRIORITY '$got', want $2"
}
jqcheck "started: default policy" 6 "the start-up line (info)"
jqcheck "keeping the running configuration" 4 "the failed reload (warning)"
jqcheck "no-such-key" 3 "the configuration error (err)"
jqcheck "restoring 1 managed thread" 6 "restoring on stop (info)"
# anything the sandbox broke (the connector, the state journal, the device,
# the metrics file...) shows up as a notice, a warning or an error
other=$(jq -r 'select(.SYSLOG_IDENTIFIER == "rtschedd" and (.PRIORITY | tonumber) <= 5) | .MESSAGE | strings' \
	"$TMP/journal.json" | grep -v -e 'no-such-key' -e 'keeping the running configuration')
[ -z "$other" ] && pass "journal: no other notice, warning or error from rtschedd" ||
	fail "journal: rtschedd logged: $other"
uids=$(jq -r 'select(.SYSLOG_IDENTIFIER == "rtschedd") | ._UID' "$TMP/journal.json" | sort -u | tr '\n' ' ')
[ "$uids" = "$RUID " ] && pass "journal: every rtschedd message came from uid $RUID" || fail "journal: _UID values $uids"

helper_stop
finish
