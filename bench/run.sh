#!/bin/bash
# bench/run.sh: `make bench` (root; not part of `make check`). Runs every
# benchmark of issue 8 (and the fidelity check of issue 6) against the
# freshly built rtschedd on private sockets, each bounded in time:
#   1. registration round trip: the floor, rtschedd (librtsched, kept and new
#      connection) and rtkit (D-Bus), with issue 15's targets
#   2. jitter gain under load: a 1 kHz librtsched timer worker as SCHED_OTHER,
#      then SCHED_FIFO 10 through rtschedd, and cyclictest, under stress-ng
#   3. wait strategies (bench-strategies), idle at five periods, and under
#      load as SCHED_FIFO at 1 kHz beside fixed-guard baselines
#   4. footprint and scale: idle cost; the watchdog's /proc scan against the
#      machine's task count; 1,000 and 10,000 managed threads
#   5. rule matching: creation or rename to policy applied, idle and under
#      stress-ng --cpu 2 (issue 28: back to back, and one every 2 ms, with
#      the loop's budget step-downs meanwhile); start-up scan
#   6. fidelity (issue 6): an rtschedd probe vs cyclictest, alternately
#   7. histogram cost (bench-hist)
#   8. observed vs self-measured (issue 14): cyclictest's own histogram
#      against rtschedd's BPF observation of the same thread, idle and under
#      stress-ng; cyclictest's p99 with the observer on vs off; the
#      programs' run time per traced event (kernel.bpf_stats_enabled)
#   9. start-up (issue 28): exec -> READY=1 with and without the BPF
#      observer, against the exec floor and the BPF load alone (the reload,
#      SIGHUP -> READY=1 with 10,000 threads, is in section 4)
#  10. culprits of late wake-ups (issue 27): a FIFO 10 cyclictest at 1 kHz
#      with known noise on its CPU (a FIFO 50 spinner, a task in long
#      system calls, loopback softirq load, nothing): how often `rtschedctl
#      why` ranks the injected culprit first; the cost of culprit tracking
#      at 1 kHz (the programs' run time and the daemon's CPU time)
#  11. load immunity (issue 29, bench/isolate.sh): a FIFO 10 1 kHz thread
#      idle, under stress-ng --cpu and --cpu --sock, without and with
#      resume-latency-us and isolate = yes; the CPU isolation costs the rest,
#      apply and release times
#  12. caught refusals (issue 26): a thread of a user with RLIMIT_RTPRIO 0
#      calls sched_setscheduler(FIFO 10), is refused, and spins until the
#      kernel shows FIFO 10 (catch-refused = yes): refused call -> applied,
#      idle and under stress-ng --cpu 2; target p99 <= 2 ms idle
#  13. flood (issue 28): an unprivileged user floods list/status/metrics/
#      jitter over 100 connections (BENCH_FLOOD_CONNS) for 60 s (BENCH_QUICK=1: 10 s) against a
#      default rtschedd: watchdog trips, late canary ticks, the daemon's CPU
#      share against its loop-budget, another user's registration p99
#      during the flood against idle; then the same flood with the rate
#      limits off (free-rate-limit = 0), where only the loop's turns per
#      user keep the registration prompt; then the user's storm of renames
#      and new threads a rule matches: the most a period ran past the
#      budget, the refusal lines logged
# Each prints a table and the machine it ran on, and writes CSV and PNG
# files under bench/results/ (summary.md: the README's tables).
# BENCH_QUICK=1: about 75 seconds instead of about 8 minutes (section 13 alone
# takes 70 s and 200 s).
# BENCH_ONLY="1 4": run only those sections (daemon and header always).
# Needs (Debian): rtkit dbus polkitd rt-tests stress-ng gnuplot-nox jq bpftool
# (all in the README's test command); a part whose tools or programs are
# missing says SKIPPED and why (with BENCH_STRICT=1, as tests/all.sh runs it,
# a skip is a break). Exit status: 1 if a section BROKE (a benchmark program
# failed or timed out, a table or plot was not written), listed at the end;
# a missed target only prints its verdict (NOT MET).
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
B=$top_builddir/bench
RTSCHEDD=$top_builddir/rtschedd
RTSCHEDCTL=$top_builddir/rtschedctl
QUICK=0
[ "${BENCH_QUICK:-0}" = 1 ] && QUICK=1
# q QUICK_VALUE DEFAULT_VALUE
q() { if [ "$QUICK" = 1 ]; then echo "$1"; else echo "$2"; fi; }
want() { [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]; }

. "$top_srcdir/bench/lib.sh"
. "$top_srcdir/bench/isolate.sh"

[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (CAP_SYS_NICE, and rtkit needs root here)"; exit 1; }
for tool in gnuplot jq; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install gnuplot-nox jq)"; exit 1; }
done
RESULTS=$top_builddir/bench/results
mkdir -p "$RESULTS"
# a full run starts afresh; BENCH_ONLY replaces only its sections' files
# (and writes a summary.md of those sections)
[ -n "${BENCH_ONLY:-}" ] || rm -f "$RESULTS"/*.csv "$RESULTS"/*.png "$RESULTS"/*.txt "$RESULTS"/*.md
TMP=$(mktemp -d /tmp/rtschedd-bench.XXXXXX)
chmod 0711 "$TMP" # polkitd reaches the private bus socket here as user polkitd
# kernel.bpf_stats_enabled as it was before section 8's obs_run set it
# (restored there, and by the EXIT trap if the run is cut short)
OBS_STATS_RESTORE=
obs_stats_restore() {
	[ -n "$OBS_STATS_RESTORE" ] && echo "$OBS_STATS_RESTORE" >/proc/sys/kernel/bpf_stats_enabled
	OBS_STATS_RESTORE=
}

STARTED=$(date +%s)
# rps_cpus of lo as it was before section 10's loopback case set it
WHY_RPS_RESTORE=
why_rps_restore() {
	[ -n "$WHY_RPS_RESTORE" ] && echo "$WHY_RPS_RESTORE" >/sys/class/net/lo/queues/rx-0/rps_cpus
	WHY_RPS_RESTORE=
}
trap 'bg_stop_all; obs_stats_restore; why_rps_restore; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
# everything printed also goes to bench/results/bench.txt
exec > >(tee "$RESULTS/bench.txt") 2>&1

MACHINE=$(machine_line)
MSHORT=$(machine_short)
SUMMARY=$RESULTS/summary.md
echo "$MACHINE" >"$RESULTS/machine.txt"
echo "rtschedd benchmarks ($(q "BENCH_QUICK=1" "default run")), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $MACHINE"
echo "rtschedd: $("$RTSCHEDD" --version 2>&1 | head -1)"
echo "results: $RESULTS"
{
	echo "Measured by \`make bench\`$(q " (BENCH_QUICK=1)" "") on $(date -u '+%Y-%m-%d'): $MACHINE."
	echo "Absolute numbers on a shared virtual machine are noisy; compare within a run."
} >"$SUMMARY"

# --- the daemon under test: private socket, rate limit off -------------------
# bench-match's thread names, this run's own: every rtschedd on the machine
# sees every rename, and another run's daemon with a rule for the same names
# answered too (and, stopped midway, left a thread real-time for good)
MATCH_PREFIX=bm$$
cat >"$TMP/bench.conf" <<EOC
[daemon]
rate-limit = 0
log-level = warning
[rule bench-a]
policy = fifo
priority = 10
[rule bench-b]
policy = fifo
priority = 11
[rule bench-m]
thread-name = $MATCH_PREFIX-*
policy = fifo
priority = 12
EOC
bg_start DPID "$RTSCHEDD" --config "$TMP/bench.conf" --socket "$TMP/control"
wait_for "$TMP/control" 5 || { echo "bench: rtschedd did not start"; exit 1; }
export RTSCHED_SOCKET=$TMP/control

# --- 1. registration: rtschedd vs rtkit -----------------------------------------

# A private system bus with rtkit and polkit on it; sets RTKIT_FLAGS and
# returns 1 (saying why) if any piece is missing or does not come up.
# Does a name have an owner on the private bus?
bus_has() {
	dbus-send --bus="$DBUS_SYSTEM_BUS_ADDRESS" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null | grep -q 'boolean true'
}

# An rtkit D-Bus property (its value only).
rtkit_prop() {
	dbus-send --bus="$DBUS_SYSTEM_BUS_ADDRESS" --print-reply --dest=org.freedesktop.RealtimeKit1 \
		/org/freedesktop/RealtimeKit1 org.freedesktop.DBus.Properties.Get \
		string:org.freedesktop.RealtimeKit1 "string:$1" 2>/dev/null | awk '/variant/ { print $NF }'
}

rtkit_start() {
	local rtkit polkitd conf d
	rtkit=$(command -v rtkit-daemon || ls /usr/libexec/rtkit-daemon /usr/lib/rtkit/rtkit-daemon 2>/dev/null | head -1)
	polkitd=$(ls /usr/lib/polkit-1/polkitd /usr/libexec/polkitd /usr/libexec/polkit-1/polkitd 2>/dev/null | head -1)
	[ -n "$rtkit" ] || { echo "rtkit-daemon not found (apt-get install rtkit)"; return 1; }
	[ -n "$polkitd" ] || { echo "polkitd not found (apt-get install polkitd)"; return 1; }
	command -v dbus-daemon >/dev/null && command -v dbus-send >/dev/null ||
		{ echo "dbus-daemon or dbus-send not found (apt-get install dbus)"; return 1; }
	{
		echo '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
		echo ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">'
		echo "<busconfig><type>system</type><auth>EXTERNAL</auth><listen>unix:path=$TMP/system_bus</listen>"
		# the default policy of Debian's system.conf
		cat <<-'EOP'
		<policy context="default">
		  <allow user="*"/> <deny own="*"/> <deny send_type="method_call"/>
		  <allow send_type="signal"/>
		  <allow send_requested_reply="true" send_type="method_return"/>
		  <allow send_requested_reply="true" send_type="error"/>
		  <allow receive_type="method_call"/> <allow receive_type="method_return"/>
		  <allow receive_type="error"/> <allow receive_type="signal"/>
		  <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
		  <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
		  <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
		</policy>
		EOP
		# rtkit's and polkit's own bus policies, as packaged
		for conf in org.freedesktop.RealtimeKit1.conf org.freedesktop.PolicyKit1.conf; do
			for d in /usr/share/dbus-1/system.d /etc/dbus-1/system.d; do
				[ -r "$d/$conf" ] && { echo "<include>$d/$conf</include>"; break; }
			done
		done
		# polkitd asks for its name as root, before it becomes user polkitd
		# (systemd starts it as polkitd; here it is started as root)
		echo '<policy user="root"><allow own="org.freedesktop.PolicyKit1"/></policy>'
		echo "</busconfig>"
	} >"$TMP/system-bus.conf"
	bg_start BUS_PID dbus-daemon --config-file="$TMP/system-bus.conf" --nofork --nopidfile --nosyslog
	wait_for "$TMP/system_bus" 5 || { echo "private dbus-daemon did not start"; return 1; }
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$TMP/system_bus
	bg_start POLKIT_PID "$polkitd" --no-debug >"$TMP/polkitd.log" 2>&1
	# rtkit as packaged (it chroots to /proc and becomes user rtkit), except:
	# --no-canary: no watchdog thread that could demote threads mid-run;
	# --no-limit-resources: rtkit gives itself RLIMIT_RTTIME 200 ms, and as it
	# only ever sleeps as SCHED_OTHER the kernel never resets its real-time
	# count (that happens on a wake-up in the RT class), so it was SIGKILLed
	# after 1,200 to 2,300 back-to-back requests here (exit 137); the burst
	# limit (25 requests per 20 s per user) raised so thousands of requests
	# can be timed.
	# BENCH_RTKIT_FLAGS replaces these.
	RTKIT_FLAGS=${BENCH_RTKIT_FLAGS:-"--no-canary --no-limit-resources --actions-burst-sec=1 --actions-per-burst-max=1000000000 --stderr"}
	# shellcheck disable=SC2086
	bg_start RTKIT_PID "$rtkit" $RTKIT_FLAGS 2> >(cat >"$TMP/rtkit.log") >/dev/null
	for _ in $(seq 100); do
		bus_has org.freedesktop.RealtimeKit1 && bus_has org.freedesktop.PolicyKit1 && return 0
		sleep 0.1
	done
	echo "rtkit or polkitd did not appear on the private bus; polkitd said: $(tail -2 "$TMP/polkitd.log" | tr '\n' ' ') rtkit said: $(tail -2 "$TMP/rtkit.log" | tr '\n' ' ')"
	return 1
}

# The same client (bench-rtkit) on the same private bus, rtkit stopped and
# rtschedd's [rtkit] service holding org.freedesktop.RealtimeKit1 instead;
# rows labelled rtschedd-dbus in register-dbus.csv, ratios to rtkit's rows of
# this run in register-dbus.md.
rtschedd_dbus() {
	local csv=$RESULTS/register-dbus.csv cdf=$RESULTS/register-cdf.csv pid
	printf '[daemon]\nrate-limit = 0\nwatchdog = no\nlog-level = warning\n[rtkit]\nenable = yes\n' >"$TMP/bench-rtkit.conf"
	bg_start pid "$RTSCHEDD" --config "$TMP/bench-rtkit.conf" --socket "$TMP/control-rtkit" 2>"$TMP/rtschedd-dbus.log"
	for _ in $(seq 100); do bus_has org.freedesktop.RealtimeKit1 && break; sleep 0.1; done
	if ! bus_has org.freedesktop.RealtimeKit1; then
		broken "rtschedd-over-D-Bus: rtschedd did not take the name: $(tail -2 "$TMP/rtschedd-dbus.log" | tr '\n' ' ')"
		bg_stop "$pid"
		return
	fi
	rm -f "$csv"
	grep rtkit, "$RESULTS/register.csv" >"$csv.rtkit"
	# -P: interleaved with the bus alone, Peer.Ping to the same name
	# (answered by sd-bus in rtschedd with no work behind it), row bus-ping
	bench_run 120 "$B/bench-rtkit" -P -l rtschedd-dbus -o "$csv" -c "$cdf" "$1"
	bench_run 120 "$B/bench-rtkit" -l rtschedd-dbus -n -o "$csv" -c "$cdf" "$2"
	bg_stop "$pid"
	cat "$csv.rtkit" >>"$csv"
	rm -f "$csv.rtkit"
	awk -F, '
		NR == 1 || $1 == "system" { next }
		{ key = $1 "," $2; p50[key] = $5; p99[key] = $7; n[key] = $3; f[key] = $4 }
		END {
			print "| MakeThreadRealtime over D-Bus | rtschedd-dbus p50 | rtkit p50 | rtkit / rtschedd p50 | rtschedd-dbus p99 | rtkit p99 | rtkit / rtschedd p99 | failed (rtschedd, rtkit) |"
			print "|---|---|---|---|---|---|---|---|"
			split("persistent new-per-call", conns, " ")
			for (i = 1; i <= 2; i++) {
				a = "rtschedd-dbus," conns[i]; b = "rtkit," conns[i]
				printf "| %s | %s | %s | %s | %s | %s | %s | %s, %s |\n", conns[i], us(p50[a]), us(p50[b]), ratio(p50[b], p50[a]),
					us(p99[a]), us(p99[b]), ratio(p99[b], p99[a]), f[a], f[b]
			}
			a = "bus-ping,persistent"; b = "rtkit,persistent"
			printf "| the bus alone: Peer.Ping to rtschedd (no work), and rtkit / it, the most any service on this bus could reach | %s | %s | %s | %s | %s | %s | %s |\n",
				us(p50[a]), us(p50[b]), ratio(p50[b], p50[a]), us(p99[a]), us(p99[b]), ratio(p99[b], p99[a]), f[a]
			# the target of issue 13: >= 10x faster than rtkit at p50 and p99, the same client on the same bus
			print ""
			print "| target (one bus connection) | measured | verdict |"
			print "|---|---|---|"
			a = "rtschedd-dbus,persistent"; b = "rtkit,persistent"
			target10("p50", p50[a], p50[b]); target10("p99", p99[a], p99[b])
			# what rtschedd adds to the bus round trip (interleaved with it):
			# at most 10 us at p50; p99 printed beside it, no target
			b = "bus-ping,persistent"
			if (p50[a] > 0 && p50[b] > 0 && f[a] == 0 && f[b] == 0) {
				printf "| p50 <= the bus alone (Ping) + 10 µs | +%.1f µs (%s vs %s) | %s |\n", p50[a] - p50[b], us(p50[a]), us(p50[b]), (p50[a] - p50[b] <= 10 ? "met" : "NOT MET")
				printf "| (p99 above the bus alone, no target) | +%.1f µs (%s vs %s) | - |\n", p99[a] - p99[b], us(p99[a]), us(p99[b])
			} else
				print "| p50 <= the bus alone (Ping) + 10 µs | not measured | - |"
		}
		function target10(q, mine, theirs) {
			if (mine > 0 && theirs > 0)
				printf "| >= 10x faster than rtkit at %s | %.1fx (%s vs %s) | %s |\n", q, theirs / mine, us(mine), us(theirs), (theirs / mine >= 10 ? "met" : "NOT MET")
			else
				printf "| >= 10x faster than rtkit at %s | not measured | - |\n", q
		}
		function us(v) { return v == "" ? "-" : (v >= 1000 ? sprintf("%.2f ms", v / 1000) : sprintf("%.1f µs", v)) }
		function ratio(x, y) { return (x > 0 && y > 0) ? sprintf("%.1fx", x / y) : "n/a" }' "$csv" >"$RESULTS/register-dbus.md"
	echo
	echo "The same client (bench-rtkit, sd-bus) on the same private bus, rtkit-daemon stopped and rtschedd's"
	echo "[rtkit] service holding org.freedesktop.RealtimeKit1 (rate-limit 0, watchdog off):"
	cat "$RESULTS/register-dbus.md"
	{
		echo
		echo "### rtschedd over D-Bus vs rtkit: the same client, the same bus"
		echo
		cat "$RESULTS/register-dbus.md"
	} >>"$SUMMARY"
}

bench_register() {
	local n nr nn csv=$RESULTS/register.csv cdf=$RESULTS/register-cdf.csv rk=1
	section "1. Registration round trip: the floor, rtschedd (kept and new connection) and rtkit"
	have bench-register || return
	n=${BENCH_N:-$(q 2000 20000)}
	nr=$(q 300 3000)
	nn=$(q 100 1000)
	echo "Each request makes the calling thread real-time and the reply says so; the kernel's view is checked"
	echo "after every call, outside the timed part. All as root, one client thread, back to back."
	echo "floor: two threads of one process, one SOCK_SEQPACKET round trip (socketpair) in which the other thread"
	echo "does sched_setattr + sched_getattr + sched_getaffinity on the caller: what any daemon must do at least."
	echo "rtschedd: librtsched, FIFO 10/11 alternately (rules bench-a/b), over its kept connection (the default)"
	echo "and with a new connection per call (rtsched_disconnect() first, as rtschedctl does)."
	echo "floor and rtschedd run in 10 interleaved rounds in one process, so load bursts hit all three."
	echo "rtkit: MakeThreadRealtime(tid, 10/11) via sd-bus on a private dbus-daemon --system with Debian's"
	echo "rtkit-daemon and polkitd (polkit authorizes uid 0 at once: a desktop user's request is slower),"
	echo "RLIMIT_RTTIME 200 ms as rtkit demands; grants SCHED_RR|SCHED_RESET_ON_FORK. Warm-up calls untimed."
	echo "rtkit runs as packaged (chroot, user rtkit) but with its canary off, its own resource limits off"
	echo "(its RLIMIT_RTTIME on itself got it SIGKILLed after 1,200 to 2,300 back-to-back calls: see"
	echo "run.sh) and its burst limit raised."
	echo
	printf '%-10s %-20s %8s %6s %9s %9s %9s %9s %9s %10s\n' system connection samples failed p50_us p90_us p99_us max_us mean_us "req/s"
	bench_run 300 "$B/bench-register" -o "$csv" -c "$cdf" "$n"
	if ! have bench-rtkit; then
		rk=0
	elif ! rtkit_start >"$TMP/rtkit-start.txt" 2>&1; then
		skipped "rtkit side: $(tail -1 "$TMP/rtkit-start.txt")"
		rk=0
	else
		bench_run 120 "$B/bench-rtkit" -o "$csv" -c "$cdf" "$nr" || tail -3 "$TMP/rtkit.log"
		bench_run 120 "$B/bench-rtkit" -n -o "$csv" -c "$cdf" "$nn"
		echo "rtkit-daemon flags: $RTKIT_FLAGS"
		echo "rtkit-daemon said at start: $(grep -E 'chroot|privileges|Running' "$TMP/rtkit.log" | sed 's/^rtkit-daemon\[[0-9]*\]: //' | tr '\n' ' ')"
		echo "rtkit's D-Bus properties: MaxRealtimePriority $(rtkit_prop MaxRealtimePriority), RTTimeUSecMax $(rtkit_prop RTTimeUSecMax), MinNiceLevel $(rtkit_prop MinNiceLevel)"
		bg_stop "$RTKIT_PID"
		rtschedd_dbus "$nr" "$nn"
		bg_stop "$POLKIT_PID"
		bg_stop "$BUS_PID"
		unset DBUS_SYSTEM_BUS_ADDRESS
	fi
	[ -s "$csv" ] || return
	# side by side, then the targets of issue 15 against the floor and rtkit
	awk -F, -v rk="$rk" '
		NR == 1 { next }
		{ key = $1 "," $2; p50[key] = $5; p99[key] = $7; mx[key] = $8; rps[key] = $10; n[key] = $3; f[key] = $4 }
		END {
			fl = "floor,socketpair+syscalls"; k = "rtschedd,kept"; a = "rtschedd,new-per-call"
			b = "rtkit,persistent"; c = "rtkit,new-per-call"
			print "| | floor (socketpair + 3 syscalls) | rtschedd, kept connection | rtschedd, new connection per call | rtkit, one bus connection | rtkit, new connection per call |"
			print "|---|---|---|---|---|---|"
			row("p50", p50); row("p99", p99); row("max", mx)
			printf "| requests/s (one client) | %s | %s | %s | %s | %s |\n", fmt0(rps[fl]), fmt0(rps[k]), fmt0(rps[a]), fmt0(rps[b]), fmt0(rps[c])
			printf "| samples (failed) | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s (%s) |\n", or(n[fl]), or(f[fl]), or(n[k]), or(f[k]), or(n[a]), or(f[a]), or(n[b]), or(f[b]), or(n[c]), or(f[c])
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			target("kept connection p50 <= 1.5x the floor", p50[k], p50[fl], 1.5, "floor")
			target("kept connection p99 <= 2x the floor", p99[k], p99[fl], 2, "floor")
			target("new connection p50 <= 2.5x the floor", p50[a], p50[fl], 2.5, "floor")
			if (rk && p50[b] != "" && p50[k] > 0 && f[b] == 0) {
				printf "| >= 50x faster than rtkit at p50 (kept vs rtkit, one bus connection) | %.0fx (%s vs %s) | %s |\n", p50[b] / p50[k], us(p50[b]), us(p50[k]), (p50[b] / p50[k] >= 50 ? "met" : "NOT MET")
				# what no daemon could beat: the floor against rtkit
				printf "| (the floor itself vs rtkit at p50: the most any daemon could reach on this machine) | %.1fx (%s vs %s) | - |\n", p50[b] / p50[fl], us(p50[b]), us(p50[fl])
			} else
				print "| >= 50x faster than rtkit at p50 | rtkit not measured | n/a |"
		}
		function or(v) { return v == "" ? "-" : v }
		function fmt0(v) { return v == "" ? "-" : sprintf("%d", v) }
		function us(v) { return v == "" ? "-" : (v >= 1000 ? sprintf("%.2f ms", v / 1000) : sprintf("%.1f µs", v)) }
		function row(name, arr) {
			printf "| %s | %s | %s | %s | %s | %s |\n", name, us(arr[fl]), us(arr[k]), us(arr[a]), us(arr[b]), us(arr[c])
		}
		function target(what, v, base, lim, bname) {
			if (v == "" || base + 0 <= 0 || f[k] != 0 || f[a] != 0 || f[fl] != 0) { printf "| %s | n/a | n/a |\n", what; return }
			printf "| %s | %.2fx (%s vs %s) | %s |\n", what, v / base, us(v), us(base), v / base <= lim ? "met" : "NOT MET"
		}' "$csv" >"$RESULTS/register.md"
	echo
	cat "$RESULTS/register.md"
	{
		echo
		echo "### Registration round trip: the floor, rtschedd and rtkit"
		echo
		cat "$RESULTS/register.md"
		echo
		echo "One root client thread, back to back; the kernel's view checked after every call. The floor is two threads of one process doing one SOCK_SEQPACKET round trip around sched_setattr + sched_getattr + sched_getaffinity; floor and rtschedd ran in interleaved rounds. rtkit $(rtkit_version) as packaged (chroot, user rtkit) on a private \`dbus-daemon --system\` with polkitd (which authorizes root at once), run as \`rtkit-daemon ${RTKIT_FLAGS:-(not run)}\`: canary off; its own rlimits off (its RLIMIT_RTTIME of 200 ms is never reset, since it sleeps only as SCHED_OTHER, and the kernel SIGKILLed it after 1,200 to 2,300 back-to-back calls); burst limit raised from 25 requests per 20 s so it can be measured. Plot: register.png."
	} >>"$SUMMARY"
	plot register <<-EOF
	set title "Registration round trip (request -> policy applied -> reply), latency by percentile\n$MSHORT" font ',10'
	set logscale xy
	set xlabel "percentile"
	set ylabel "round trip (µs)"
	set xtics ("0%%" 1, "50%%" 2, "90%%" 10, "99%%" 100, "99.9%%" 1000, "99.99%%" 10000, "99.999%%" 100000)
	set key bottom right
	set grid
	f(q) = q < 1 ? 1 / (1 - q) : 1/0
	plot '$cdf' using (strcol(1) eq "floor" ? f(\$2) : 1/0):3 with lines lw 2 dt 2 title "floor (socketpair + sched_setattr/getattr/getaffinity)", \
	     '' using (strcol(1) eq "rtschedd kept" ? f(\$2) : 1/0):3 with lines lw 2 title "rtschedd (librtsched, kept connection)", \
	     '' using (strcol(1) eq "rtschedd new-per-call" ? f(\$2) : 1/0):3 with lines lw 2 title "rtschedd (librtsched, new connection per call)", \
	     '' using (strcol(1) eq "rtkit persistent" ? f(\$2) : 1/0):3 with lines lw 2 title "rtkit MakeThreadRealtime (one bus connection)", \
	     '' using (strcol(1) eq "rtkit new-per-call" ? f(\$2) : 1/0):3 with lines lw 2 title "rtkit (new bus connection per call)"
	EOF
}

rtkit_version() {
	dpkg-query -W -f '${Version}' rtkit 2>/dev/null || echo "?"
}

# --- 2. jitter gain under load ------------------------------------------------

STRESS_PID=
stress_start() {
	command -v stress-ng >/dev/null || { skipped "stress-ng missing (apt-get install stress-ng)"; return 1; }
	bg_start STRESS_PID stress-ng --cpu "$(nproc)" --timeout "$1" --quiet
	sleep 1
}
stress_stop() {
	bg_stop "$STRESS_PID"
	STRESS_PID=
}

bench_jitter() {
	local n csv=$RESULTS/jitter.csv cpid pol s p50 p90 p99 p999 mx ovf mode
	section "2. Jitter gain under load: SCHED_OTHER vs SCHED_FIFO 10 through rtschedd"
	have bench-jitter || return
	command -v cyclictest >/dev/null || { skipped "cyclictest missing (apt-get install rt-tests)"; return; }
	n=$(q 1500 10000)
	echo "A 1 kHz worker waits with librtsched's timer (strategy sleep: clock_nanosleep to absolute deadlines,"
	echo "like cyclictest) for $n periods as SCHED_OTHER, then $n more after rtsched_register_self() made it"
	echo "SCHED_FIFO 10; then cyclictest -t1 -i1000 -l$n as SCHED_OTHER and as SCHED_FIFO 10 (-p10). One after"
	echo "another, none pinned, in one run under stress-ng --cpu $(nproc). Lateness = wake-up - deadline, in µs."
	echo
	stress_start $(( $(q 12 60) + 4 * n / 1000 )) || return
	printf '%-34s %-26s %8s %6s %9s %9s %9s %9s %9s\n' series "ran as" samples missed p50 p90 p99 p99.9 max
	bench_run $(( 60 + 3 * n / 1000 )) "$B/bench-jitter" -n "$n" -o "$csv"
	for mode in other fifo; do
		if [ $mode = other ]; then
			bg_start cpid timeout -k 5 $(( 30 + 2 * n / 1000 )) cyclictest -q -t1 -i1000 -l"$n" -h 20000
		else
			bg_start cpid timeout -k 5 $(( 30 + 2 * n / 1000 )) cyclictest -q -t1 -p10 -i1000 -l"$n" -h 20000
		fi >"$TMP/cyc-$mode.txt" 2>&1
		sleep 0.5
		pol=$(cyc_policy "$(pgrep -P "$cpid" -x cyclictest | head -1)")
		wait "$cpid" || broken "cyclictest ($mode) exited $?: $(tail -2 "$TMP/cyc-$mode.txt" | tr '\n' ' ')"
		read -r s p50 p90 p99 p999 mx ovf < <(cyc_pct "$TMP/cyc-$mode.txt")
		printf '%-34s %-26s %8s %6s %9s %9s %9s %9s %9s\n' "cyclictest" "$pol" "$s" "-" "$p50" "$p90" "$p99" "$p999" "$mx"
		echo "cyclictest,$pol,$s,,$p50,$p90,$p99,$p999,$mx," >>"$csv"
	done
	stress_stop
	[ "$(wc -l <"$csv")" -ge 3 ] || return
	# table with gains (OTHER / FIFO) for the worker and for cyclictest
	awk -F, '
		NR == 1 { next }
		{ n++; name[n] = $1; pol[n] = $2
		  for (i = 5; i <= 9; i++) v[n, i] = $i; s[n] = $3; m[n] = $4 }
		function us(x) { return x == "" ? "-" : (x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.1f µs", x)) }
		function gain(a, b, i) { return (v[b, i] > 0) ? sprintf("%.1fx", v[a, i] / v[b, i]) : "n/a" }
		END {
			print "| | ran as | samples (missed) | p50 | p90 | p99 | p99.9 | max |"
			print "|---|---|---|---|---|---|---|---|"
			for (k = 1; k <= n; k++)
				printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name[k], pol[k], s[k] (m[k] != "" ? " (" m[k] ")" : ""), us(v[k,5]), us(v[k,6]), us(v[k,7]), us(v[k,8]), us(v[k,9])
			if (n >= 2)
				printf "| **gain, worker** (OTHER / FIFO via rtschedd) | | | %s | %s | %s | %s | %s |\n", gain(1,2,5), gain(1,2,6), gain(1,2,7), gain(1,2,8), gain(1,2,9)
			if (n >= 4)
				printf "| **gain, cyclictest** (OTHER / FIFO) | | | %s | %s | %s | %s | %s |\n", gain(3,4,5), gain(3,4,6), gain(3,4,7), gain(3,4,8), gain(3,4,9)
		}' "$csv" >"$RESULTS/jitter.md"
	echo
	cat "$RESULTS/jitter.md"
	{
		echo
		echo "### Jitter gain under load (stress-ng --cpu $(nproc)), 1 kHz, wake-up lateness"
		echo
		cat "$RESULTS/jitter.md"
		echo
		echo "$n periods per row, in one run; the worker uses librtsched's timer (clock_nanosleep to absolute deadlines) and was made SCHED_FIFO 10 by rtschedd through rtsched_register_self(). Plot: jitter.png."
	} >>"$SUMMARY"
	# plot: rows = percentile, columns = series
	awk -F, 'NR > 1 { n++; for (i = 5; i <= 9; i++) v[n, i] = $i; lab[n] = ($1 ~ /^cyclictest/ ? "cyclictest: " : "worker: ") $2 }
		END {
			printf "pct"; for (k = 1; k <= n; k++) printf ",%s", lab[k]; print ""
			split("p50 p90 p99 p99.9 max", q, " ")
			for (i = 5; i <= 9; i++) { printf "%s", q[i - 4]; for (k = 1; k <= n; k++) printf ",%s", v[k, i]; print "" }
		}' "$csv" >"$RESULTS/jitter-plot.csv"
	plot jitter <<-EOF
	set title "Wake-up lateness of a 1 kHz thread under stress-ng --cpu $(nproc): SCHED_OTHER vs SCHED_FIFO 10\n$MSHORT" font ',10'
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set logscale y
	set ylabel "lateness (µs), log scale"
	set grid ytics
	set key top left
	plot for [c=2:5] '$RESULTS/jitter-plot.csv' using c:xtic(1) title columnheader(c)
	EOF
}

# --- 3. wait strategies --------------------------------------------------------

bench_strategies() {
	local csv=$RESULTS/strategies.csv
	section "3. Wait strategies: sleep, hybrid, busy, adaptive at 10 ms .. 100 µs (GStreamer's packet rates); under load with fixed-guard baselines"
	have bench-strategies || return
	echo "bench-strategies (src/shared/waiter.c), one thread, no added load, SCHED_OTHER as GStreamer's table:"
	BENCH_QUICK=$QUICK BENCH_SECONDS=$(q 0.3 1.5) bench_run $(q 60 200) "$B/bench-strategies" "$csv"
	[ -s "$csv" ] || return
	awk -F, '
		NR == 1 { next }
		{ per = $1; st = $2; p99[per, st] = $6 / 1000; p999[per, st] = $7 / 1000; cpu[per, st] = $10; if (!(per in seen)) { seen[per] = 1; order[++np] = per }
		  if (!(st in sseen)) { sseen[st] = 1; sorder[++ns] = st } }
		function us(x) { return x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.1f µs", x) }
		END {
			printf "| period (packets/s) |"; for (j = 1; j <= ns; j++) printf " %s p99 / p99.9 / CPU |", sorder[j]; print ""
			printf "|---|"; for (j = 1; j <= ns; j++) printf "---|"; print ""
			for (i = 1; i <= np; i++) {
				printf "| %s µs (%d) |", order[i], 1e6 / order[i]
				for (j = 1; j <= ns; j++) printf " %s / %s / %.1f%% |", us(p99[order[i], sorder[j]]), us(p999[order[i], sorder[j]]), cpu[order[i], sorder[j]]
				print ""
			}
		}' "$csv" >"$RESULTS/strategies.md"
	echo
	cat "$RESULTS/strategies.md"
	{
		echo
		echo "### Wait strategies (one thread, SCHED_OTHER, no load): p99 / p99.9 lateness / CPU used"
		echo
		cat "$RESULTS/strategies.md"
		echo
		echo "Full percentiles in strategies.csv. Plot: strategies.png."
	} >>"$SUMMARY"
	# one row per period, p99 and CPU columns per strategy
	awk -F, 'NR > 1 { p99[$1, $2] = $6 / 1000; cpu[$1, $2] = $10; if (!($1 in sp)) { sp[$1] = 1; per[++np] = $1 }
			if (!($2 in ss)) { ss[$2] = 1; st[++ns] = $2 } }
		END {
			printf "period_us"; for (j = 1; j <= ns; j++) printf ",%s p99,%s CPU", st[j], st[j]; print ""
			for (i = 1; i <= np; i++) { printf "%s", per[i]; for (j = 1; j <= ns; j++) printf ",%s,%s", p99[per[i], st[j]], cpu[per[i], st[j]]; print "" }
		}' "$csv" >"$RESULTS/strategies-plot.csv"
	plot strategies <<-EOF
	set multiplot layout 1,2 title "Wait strategies: p99 lateness and CPU used, by period (SCHED_OTHER, no added load)\n$MSHORT" font ',10'
	set logscale x
	set xlabel "period (µs)"
	set grid
	set key top right
	set logscale y
	set ylabel "p99 lateness (µs)"
	ns = $(head -1 "$RESULTS/strategies-plot.csv" | awk -F, '{ print (NF - 1) / 2 }')
	plot for [j=1:ns] '$RESULTS/strategies-plot.csv' using 1:(column(2*j)) with linespoints lw 2 title columnheader(2*j)
	unset logscale y
	set ylabel "CPU used (% of one CPU)"
	set yrange [0:105]
	set key top right
	plot for [j=1:ns] '$RESULTS/strategies-plot.csv' using 1:(column(2*j+1)) with linespoints lw 2 title columnheader(2*j+1)
	unset multiplot
	EOF
	bench_strategies_loaded
}

# The loaded case of issue 15: 1 kHz, SCHED_FIFO 10 on the last CPU under
# stress-ng, every strategy and the fixed-guard baselines in turn, in rounds.
bench_strategies_loaded() {
	local csv=$RESULTS/strategies-loaded.csv cpu secs rounds
	cpu=$(( $(nproc) - 1 ))
	secs=$(q 2 10)
	rounds=$(q 2 5)
	echo
	echo "Under load: 1 kHz, SCHED_FIFO 10 pinned to CPU $cpu, under stress-ng --cpu $(nproc); $secs s per strategy in $rounds"
	echo "rounds taken in turn (each strategy keeps its waiter and histogram across its rounds), so load changes hit"
	echo "all alike. fixedN sleeps to N µs before the deadline, then spins: the baselines adaptive is judged against."
	stress_start $(( 7 * secs + 3 * rounds + 20 )) || return
	BENCH_SECONDS=$secs bench_run $(( 7 * secs + 3 * rounds + 60 )) "$B/bench-strategies" --fifo 10 --cpu "$cpu" \
		--period 1000 --strategies sleep,hybrid,busy,adaptive,fixed50,fixed100,fixed200 --rounds "$rounds" "$csv"
	stress_stop
	[ -s "$csv" ] || return
	awk -F, '
		NR == 1 { next }
		{ n++; st[n] = $2; s[$2] = $3; p50[$2] = $4; p90[$2] = $5; p99[$2] = $6; p999[$2] = $7; mx[$2] = $8; ov[$2] = $9; cpu[$2] = $10; g[$2] = $11; pol = $12 " " $13
		  miss[$2] = $15 > 0 ? sprintf("%.2f%%", 100 * $14 / $15) : "-" }
		function us(x) { if (x < 1000) return sprintf("%d ns", x); x /= 1000; return x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.1f µs", x) }
		END {
			print "| strategy | samples (overruns) | p50 | p90 | p99 | p99.9 | max | CPU | guard at the end | sleeps missing the deadline |"
			print "|---|---|---|---|---|---|---|---|---|---|"
			for (i = 1; i <= n; i++) { k = st[i]
				printf "| %s | %s (%s) | %s | %s | %s | %s | %s | %.1f%% | %s | %s |\n", k, s[k], ov[k], us(p50[k]), us(p90[k]), us(p99[k]), us(p999[k]), us(mx[k]), cpu[k], (g[k] >= 0 ? us(g[k]) : "-"), miss[k] }
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			if ("adaptive" in p99 && "fixed100" in p99) {
				# below 100 ns (the first bucket of the histogram, about two clock reads) lateness is not measurable: equal
				printf "| adaptive p99 <= fixed 100 µs guard p99 (under 100 ns counts as equal) | %s vs %s | %s |\n", us(p99["adaptive"]), us(p99["fixed100"]), p99["adaptive"] <= p99["fixed100"] || p99["adaptive"] < 100 ? "met" : "NOT MET"
				printf "| adaptive CPU <= fixed 100 µs guard CPU + 2 points | %.1f%% vs %.1f%% + 2 | %s |\n", cpu["adaptive"], cpu["fixed100"], cpu["adaptive"] <= cpu["fixed100"] + 2 ? "met" : "NOT MET"
				printf "| moonshot: adaptive p99 <= 5 µs at <= 12%% CPU | %s at %.1f%% | %s |\n", us(p99["adaptive"]), cpu["adaptive"], p99["adaptive"] <= 5000 && cpu["adaptive"] <= 12 ? "met" : "NOT MET"
				# issue 28: the tail, at no more CPU than the fixed guard (no allowance)
				printf "| adaptive p99.9 <= fixed 100 µs guard p99.9 (under 100 ns counts as equal) at no more than its CPU | %s vs %s, CPU %.1f%% vs %.1f%% | %s |\n", us(p999["adaptive"]), us(p999["fixed100"]), cpu["adaptive"], cpu["fixed100"], (p999["adaptive"] <= p999["fixed100"] || p999["adaptive"] < 100) && cpu["adaptive"] <= cpu["fixed100"] ? "met" : "NOT MET"
			}
		}' "$csv" >"$RESULTS/strategies-loaded.md"
	echo
	cat "$RESULTS/strategies-loaded.md"
	{
		echo
		echo "### Wait strategies under load: 1 kHz, SCHED_FIFO 10 on CPU $cpu, stress-ng --cpu $(nproc)"
		echo
		cat "$RESULTS/strategies-loaded.md"
		echo
		echo "$secs s per strategy in $rounds rounds taken in turn; fixedN = sleep to N µs before the deadline, then spin. Full percentiles in strategies-loaded.csv."
	} >>"$SUMMARY"
}

# --- 6. fidelity: probe vs cyclictest ---------------------------------------------

bench_fidelity() {
	local rounds secs cpu csv=$RESULTS/fidelity.csv fpid r cpid pol j s p50 p90 p99 p999 mx ovf
	section "6. Fidelity (issue 6): rtschedd probe vs cyclictest, same CPU, policy, priority and period, alternately"
	cpu=$(( $(nproc) - 1 ))
	rounds=$(q 3 8)
	secs=$(q 1 3)
	cat >"$TMP/fid-probe.conf" <<-EOC
	[daemon]
	rate-limit = 0
	log-level = warning
	[probe fidelity]
	cpu = $cpu
	policy = fifo
	priority = 10
	period-us = 1000
	strategy = sleep
	mode = latency
	EOC
	printf '[daemon]\nrate-limit = 0\nlog-level = warning\n' >"$TMP/fid-none.conf"
	if ! "$RTSCHEDD" --test-config --config "$TMP/fid-probe.conf" >/dev/null 2>&1; then
		skipped "this rtschedd does not accept [probe NAME] sections"
		return
	fi
	command -v cyclictest >/dev/null || { skipped "cyclictest missing (apt-get install rt-tests)"; return; }
	echo "Probe [probe fidelity]: cpu $cpu, fifo 10, period 1000 µs, strategy sleep, mode latency; read with"
	echo "rtschedctl --json jitter (and --histogram). cyclictest -t1 -a$cpu -p10 --policy=fifo -i1000 -h20000 --secaligned=500."
	echo "Both wake at the same phase, whole milliseconds + 500 µs in CLOCK_MONOTONIC (the probe's phase for a 1 ms"
	echo "period, see probe.c): the kernel's tick lands on multiples of 4 ms here, and plain --secaligned put 1 in 4"
	echo "of cyclictest's wake-ups on it (6-8 µs later at p50, 10-13 µs at p90), which the probe's did not."
	echo "Each window holds the measurement only: the probe's from jitter --reset (0.3 s after it started) to the"
	echo "snapshot, cyclictest's from its first wake-up (aligned to a full second, after its start-up) to its last;"
	echo "the script waits with shell builtins meanwhile, so no process starts on the measured CPU."
	echo "$rounds rounds of $secs s each, alternately (probe started and stopped by reload), under stress-ng --cpu $(nproc)."
	echo "Agree: p50 and p99 within 10% or 5 µs, judged on the median over rounds of each percentile; all"
	echo "rounds pooled shown too (histograms summed: the probe's 1%-wide buckets by their midpoint,"
	echo "cyclictest's whole µs as it reports them)."
	echo
	cp "$TMP/fid-none.conf" "$TMP/fid.conf"
	bg_start fpid "$RTSCHEDD" --config "$TMP/fid.conf" --socket "$TMP/fid-control"
	wait_for "$TMP/fid-control" 5 || { broken "the second rtschedd did not start"; return; }
	stress_start "$(awk -v r="$rounds" -v s="$secs" 'BEGIN { printf "%d", r * (2 * s + 5) + 15 }')" || return
	echo "round,tool,ran_as,samples,p50_us,p90_us,p99_us,p999_us,max_us" >"$csv"
	: >"$TMP/probe-hist.txt"
	: >"$TMP/cyc-hist.txt"
	printf '%-6s %-12s %-14s %8s %9s %9s %9s %9s %9s %8s\n' round tool "ran as" samples p50 p90 p99 p99.9 max missed
	quiet_setup
	for r in $(seq "$rounds"); do
		cp "$TMP/fid-probe.conf" "$TMP/fid.conf"
		"$RTSCHEDCTL" --socket "$TMP/fid-control" reload >/dev/null
		quiet_sleep 0.3
		# the window starts here (the probe's start-up is behind it) and ends
		# when the daemon takes the snapshot; nothing is started meanwhile
		"$RTSCHEDCTL" --socket "$TMP/fid-control" jitter --reset >/dev/null 2>&1
		quiet_sleep "$secs"
		"$RTSCHEDCTL" --socket "$TMP/fid-control" --json jitter >"$TMP/probe.json"
		"$RTSCHEDCTL" --socket "$TMP/fid-control" --json jitter --histogram fidelity 2>/dev/null |
			jq -r '.[] | "\(.lo_ns) \(.hi_ns) \(.count)"' >>"$TMP/probe-hist.txt"
		cp "$TMP/fid-none.conf" "$TMP/fid.conf"
		"$RTSCHEDCTL" --socket "$TMP/fid-control" reload >/dev/null
		j=$(jq -r '.[] | select(.kind == "probe" and .name == "fidelity") |
			"\(.policy) \(.priority),\(.samples),\(.p50_ns / 1000),\(.p90_ns / 1000),\(.p99_ns / 1000),\(.p999_ns / 1000),\(.max_ns / 1000),\(.overruns)"' "$TMP/probe.json")
		if [ -n "$j" ]; then
			echo "$r,probe,${j%,*}" >>"$csv"
			echo "$j" | awk -F, -v r="$r" '{ printf "%-6s %-12s %-14s %8s %9.1f %9.1f %9.1f %9.1f %9.1f %8s\n", r, "probe", $1, $2, $3, $4, $5, $6, $7, $8 }'
		else
			echo "round $r: no probe row in rtschedctl --json jitter"
		fi
		# cyclictest likewise: started directly (no wrapper), its first
		# wake-up aligned to the next full second so its own start-up is
		# behind the window, plus 500 µs, the probe's phase (--secaligned=500:
		# whole seconds would put every 4th wake-up on the tick), its policy
		# read with builtins while it runs, and -D as the time limit
		cyclictest -q -t1 -a"$cpu" -p10 --policy=fifo -i1000 -l"$(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')" \
			-D "$(awk -v s="$secs" 'BEGIN { printf "%d", s + 15 }')" --secaligned=500 -h 20000 >"$TMP/cyc-fid.txt" 2>&1 &
		cpid=$!
		# the measurement thread sets its policy at once, then waits for the
		# full second: read it there (at the end the process may be a zombie)
		quiet_sleep 0.2
		rt_policy_of "$cpid"
		pol=$RT_POLICY
		wait "$cpid"
		cat "$TMP/cyc-fid.txt" >>"$TMP/cyc-hist.txt"
		read -r s p50 p90 p99 p999 mx ovf < <(cyc_pct "$TMP/cyc-fid.txt")
		echo "$r,cyclictest,$pol,$s,$p50,$p90,$p99,$p999,$mx" >>"$csv"
		printf '%-6s %-12s %-14s %8s %9s %9s %9s %9s %9s %8s\n' "$r" cyclictest "$pol" "$s" "$p50" "$p90" "$p99" "$p999" "$mx" "(skips)"
	done
	stress_stop
	bg_stop "$fpid"
	# all rounds pooled: cyclictest histograms summed per 1 us bucket, the
	# probe's per log-linear bucket
	cyc_pool=$(awk '/^[0-9]+[ \t]+[0-9]+/ { c[$1 + 0] += $2 } /^# Max Latencies:/ { if ($4 + 0 > mx) mx = $4 + 0 }
		/^# Histogram Overflows:/ { o += $4 }
		END { for (b in c) print b, b, c[b]; if (o) print mx, mx, o }' "$TMP/cyc-hist.txt" | pool_pct 1)
	probe_pool=$(awk '{ c[$1 " " $2] += $3 } END { for (k in c) print k, c[k] }' "$TMP/probe-hist.txt" | pool_pct 1000)
	echo "all,cyclictest pooled,,$cyc_pool" >>"$csv"
	echo "all,probe pooled,,$probe_pool" >>"$csv"
	printf '%-6s %-12s %-14s %8s %9s %9s %9s %9s %9s\n' all cyclictest pooled $(echo "$cyc_pool" | tr , ' ')
	printf '%-6s %-12s %-14s %8s %9s %9s %9s %9s %9s\n' all probe pooled $(echo "$probe_pool" | tr , ' ')
	awk -F, '
		function ok(a, b) { d = a - b; if (d < 0) d = -d; tol = 0.1 * b; if (tol < 5) tol = 5; return d <= tol }
		function us(x) { return x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.1f µs", x) }
		function med(t, i,   a, n, j, x, y, z) { n = k[t]; for (j = 1; j <= n; j++) a[j] = v[t, j, i]
			for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] < a[x]) { z = a[x]; a[x] = a[y]; a[y] = z }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		$1 == "all" { t = ($2 ~ /probe/) ? "probe" : "cyc"; n[t] = $4; for (i = 5; i <= 9; i++) pool[t, i] = $i; next }
		NR > 1 { t = ($2 == "probe") ? "probe" : "cyc"; k[t]++; for (i = 5; i <= 9; i++) v[t, k[t], i] = $i
			per[$1, t, 5] = $5; per[$1, t, 7] = $7; nr = $1 }
		END {
			if (!k["probe"] || !k["cyc"]) exit
			print "| | p50 | p90 | p99 | p99.9 | max |"
			print "|---|---|---|---|---|---|"
			for (i = 5; i <= 9; i++) { m["cyc", i] = med("cyc", i); m["probe", i] = med("probe", i) }
			printf "| cyclictest, median of %d rounds | %s | %s | %s | %s | %s |\n", k["cyc"], us(m["cyc", 5]), us(m["cyc", 6]), us(m["cyc", 7]), us(m["cyc", 8]), us(m["cyc", 9])
			printf "| rtschedd probe, median of %d rounds | %s | %s | %s | %s | %s |\n", k["probe"], us(m["probe", 5]), us(m["probe", 6]), us(m["probe", 7]), us(m["probe", 8]), us(m["probe", 9])
			printf "| cyclictest, all rounds pooled (%d samples) | %s | %s | %s | %s | %s |\n", n["cyc"], us(pool["cyc", 5]), us(pool["cyc", 6]), us(pool["cyc", 7]), us(pool["cyc", 8]), us(pool["cyc", 9])
			printf "| rtschedd probe, all rounds pooled (%d samples) | %s | %s | %s | %s | %s |\n", n["probe"], us(pool["probe", 5]), us(pool["probe", 6]), us(pool["probe", 7]), us(pool["probe", 8]), us(pool["probe", 9])
			agree = 0
			for (r = 1; r <= nr; r++) agree += ok(per[r, "probe", 5], per[r, "cyc", 5]) && ok(per[r, "probe", 7], per[r, "cyc", 7])
			printf "\nVerdict (medians over rounds; a burst from another program spoils one round, not the verdict): p50 %s (%s vs %s), p99 %s (%s vs %s). Pooled: p50 %s, p99 %s. Rounds agreeing on both: %d of %d.\n",
				ok(m["probe", 5], m["cyc", 5]) ? "AGREE" : "DISAGREE", us(m["probe", 5]), us(m["cyc", 5]),
				ok(m["probe", 7], m["cyc", 7]) ? "AGREE" : "DISAGREE", us(m["probe", 7]), us(m["cyc", 7]),
				ok(pool["probe", 5], pool["cyc", 5]) ? "agree" : "disagree", ok(pool["probe", 7], pool["cyc", 7]) ? "agree" : "disagree", agree, nr
		}' "$csv" >"$RESULTS/fidelity.md"
	echo
	cat "$RESULTS/fidelity.md"
	{
		echo
		echo "### Fidelity: rtschedd probe vs cyclictest (CPU $cpu, FIFO 10, 1 ms, under stress-ng --cpu $(nproc))"
		echo
		cat "$RESULTS/fidelity.md"
		echo
		echo "$rounds rounds of $secs s each, run alternately; per-round rows in fidelity.csv. Plot: fidelity.png."
	} >>"$SUMMARY"
	awk -F, 'NR > 1 && $1 != "all" { print $1 "," $2 "," $5 "," $7 "," $8 }' "$csv" >"$TMP/fid-plot.csv"
	plot fidelity <<-EOF
	set title "Fidelity: rtschedd probe vs cyclictest, per round (CPU $cpu, FIFO 10, 1 ms, under load)\n$MSHORT" font ',10'
	set logscale y
	set ylabel "lateness (µs)"
	set xlabel "round"
	set xtics 1
	set xrange [0.5:$rounds + 0.5]
	set grid
	set key top left
	plot '$TMP/fid-plot.csv' using (strcol(2) eq "cyclictest" ? \$1 - 0.05 : 1/0):3 with points pt 7 ps 1.5 title "cyclictest p50", \
	     '' using (strcol(2) eq "probe" ? \$1 + 0.05 : 1/0):3 with points pt 5 ps 1.5 title "probe p50", \
	     '' using (strcol(2) eq "cyclictest" ? \$1 - 0.05 : 1/0):4 with points pt 6 ps 1.5 title "cyclictest p99", \
	     '' using (strcol(2) eq "probe" ? \$1 + 0.05 : 1/0):4 with points pt 4 ps 1.5 title "probe p99", \
	     '' using (strcol(2) eq "cyclictest" ? \$1 - 0.05 : 1/0):5 with points pt 8 ps 1.2 title "cyclictest p99.9", \
	     '' using (strcol(2) eq "probe" ? \$1 + 0.05 : 1/0):5 with points pt 10 ps 1.2 title "probe p99.9"
	EOF
}

# --- 4. footprint and scale -------------------------------------------------------

# section 4's reload target: SIGHUP -> READY=1 at most this many times the
# floor (the reapply's kernel calls and the rescan's walk of /proc, from the bench)
RELOAD_FACTOR=2
bench_footprint() {
	local secs csv=$RESULTS/footprint-idle.csv scsv=$RESULTS/footprint-scale.csv d1 d2 layout n procs budget conf extra
	section "4. Footprint and scale"
	have bench-footprint || return
	secs=$(q 2 10)
	# two fresh daemons, the bench config with and without the process events connector
	sed 's/^\[daemon\]$/[daemon]\nprocess-events = no/' "$TMP/bench.conf" >"$TMP/noev.conf"
	bg_start d1 "$RTSCHEDD" --config "$TMP/bench.conf" --socket "$TMP/idle-control"
	bg_start d2 "$RTSCHEDD" --config "$TMP/noev.conf" --socket "$TMP/noev-control"
	wait_for "$TMP/idle-control" 5
	wait_for "$TMP/noev-control" 5
	sleep 1
	echo "Idle: two daemons with nothing to manage, watched together for $secs s (this script starts nothing"
	echo "meanwhile). Wake-ups = context switches of all the daemon's threads. rtschedd listens to the"
	echo "process events connector, so every fork/exec/exit on the machine wakes it: the last column says"
	echo "how many tasks the machine created meanwhile."
	echo
	printf '%-30s %8s %7s %10s %9s %9s %10s\n' daemon rss_kib threads cpu_ms "cpu_%" "wakeups/s" "forks/s"
	"$B/bench-footprint" -o "$csv" idle "$secs" "$d1:rtschedd (process-events=yes)" "$d2:rtschedd (process-events=no)"
	bg_stop "$d1"
	bg_stop "$d2"

	if have bench-scan; then
		echo
		echo "Watchdog scan: what one look of the FIFO 99 watchdog at the machine's tasks costs (it looks four"
		echo "times a check during a starvation episode), through /proc and through the BPF task iterator it"
		echo "uses where it can load one (no path lookups), against the machine's task count; the added"
		echo "threads sleep, SCHED_OTHER (a desktop's thousands, or a user's meant to slow the watchdog down)."
		echo
		# not in a pipeline: broken and skipped must reach this shell's list
		: >"$RESULTS/scan.txt"
		for n in $(q "0 2000" "0 2000 10000"); do
			out=$("$B/bench-scan" -n "$n" -r "$(q 20 50)") || broken "bench-scan -n $n"
			echo "$out" | tee -a "$RESULTS/scan.txt"
			r=0
			out=$("$B/bench-scan" -b -n "$n" -r "$(q 20 50)") || r=$?
			case $r in
			0) echo "$out" | tee -a "$RESULTS/scan.txt" ;;
			3) skipped "bench-scan -b: no BPF task iterator here" ;;
			*) broken "bench-scan -b -n $n exited $r" ;;
			esac
		done
	fi

	echo
	echo "Scale: a fresh rtschedd per layout, the shipped defaults (watchdog on) unless the layout says"
	echo "\"no watchdog\" (watchdog = no: isolates what the watchdog costs per registration). Threads"
	echo "registered one by one through librtsched (as root, by tid, rule bench-a = FIFO 10); rtschedctl"
	echo "commands timed as an administrator sees them (median of 3, one run if the first takes over 1 s),"
	echo "with the daemon's own CPU time per command. Registering stops at the layout's time budget;"
	echo "waiting for rtschedd to forget the exited threads stops after 10 s."
	echo
	sed 's/^\[daemon\]$/[daemon]\nwatchdog = no/' "$TMP/bench.conf" >"$TMP/nowd.conf"
	printf '%-18s %-36s %11s %10s  %s\n' layout step wall_ms daemon_cpu_ms note
	# threads:processes:budget_s:config
	for layout in $(q "1000:1:20:bench" "1000:1:30:bench 10000:100:40:bench 10000:100:40:nowd 10000:1:5:bench"); do
		IFS=: read -r n procs budget conf <<<"$layout"
		rm -f "$TMP/scale-control"
		bg_start d2 env NOTIFY_SOCKET="$TMP/scale-notify" "$RTSCHEDD" --config "$TMP/$conf.conf" --socket "$TMP/scale-control"
		wait_for "$TMP/scale-control" 5 || { broken "rtschedd did not start"; continue; }
		sleep 0.3
		extra=()
		[ "$conf" = nowd ] && extra=(-l "(no watchdog)")
		bench_run $(( budget + 150 )) "$B/bench-footprint" -p "$d2" -s "$TMP/scale-control" -C "$RTSCHEDCTL" \
			-P "$procs" -b "$budget" -x 10 -N "$TMP/scale-notify" -o "$scsv" "${extra[@]}" scale "$n"
		bg_stop "$d2"
	done
	# issue 15's target on every 10,000-thread layout: the worst one is judged
	awk -F, -v quick="$QUICK" -v k="$RELOAD_FACTOR" '$2 ~ /^memory per managed thread/ && $1 ~ /^10000 / {
			n++; v = $3 + 0; if (n == 1 || v > worst) worst = v; list = list sep $1 " " v " B"; sep = ", " }
		# the reload of the shipped defaults (watchdog on) with the most threads
		# (the first such layout: 10,000 threads in 100 processes)
		$2 ~ /^SIGHUP/ && $1 !~ /watchdog/ { if ($1 + 0 > nt) { nt = $1 + 0; lay = $1 }; hup[$1] = $3 }
		$2 ~ /^floor: reapply/ { fa[$1] = $3 } $2 ~ /^floor: rescan/ { fs[$1] = $3 }
		function ms(x) { return x >= 100 ? sprintf("%.0f ms", x) : sprintf("%.1f ms", x) }
		END {
			print "| target | measured | verdict |"
			print "|---|---|---|"
			if (n)
				printf "| memory per thread <= 1 KiB (10,000 threads, worst layout) | %d B (%s) | %s |\n", worst, list, (worst <= 1024 ? "met" : "NOT MET")
			else
				print "| memory per thread <= 1 KiB (10,000 threads) | not measured: no 10,000-thread layout ran (BENCH_QUICK) | n/a |"
			if (lay != "" && hup[lay] > 0 && fa[lay] > 0 && fs[lay] > 0)
				printf "| SIGHUP -> READY=1 <= %sx its floor (the reapply'"'"'s kernel calls + the rescan'"'"'s walk of /proc alone), %s%s | %s vs %s (%s + %s): %.2fx | %s |\n", k, lay, quick ? " (BENCH_QUICK: 10,000 in the full run)" : "",
					ms(hup[lay]), ms(fa[lay] + fs[lay]), ms(fa[lay]), ms(fs[lay]), hup[lay] / (fa[lay] + fs[lay]), (hup[lay] <= k * (fa[lay] + fs[lay]) ? "met" : "NOT MET")
			else
				print "| SIGHUP -> READY=1 against its floor | not measured | n/a |"
		}' "$scsv" >"$RESULTS/footprint-target.md"
	echo
	cat "$RESULTS/footprint-target.md"
	bench_config_load
	{
		echo
		echo "### Footprint and scale"
		echo
		echo "| idle daemon | RSS | CPU | wake-ups/s | machine forks/s meanwhile |"
		echo "|---|---|---|---|---|"
		awk -F, 'NR > 1 { printf "| %s | %d KiB | %.3f%% | %.1f | %.0f |\n", $1, $3, $6, $7, $8 }' "$csv"
		echo
		if [ -s "$RESULTS/scan.txt" ]; then
			echo "| watchdog scan: tasks on the machine | real-time ones | one scan, p50 | max | per task |"
			echo "|---|---|---|---|---|"
			awk '{ printf "| %s | %s | %s µs | %s µs | %s µs |\n", $2, $4, $7, $10, $14 }' "$RESULTS/scan.txt"
			echo
		fi
		# steps down, layouts across: "wall (daemon CPU)"
		awk -F, 'NR > 1 {
				if (!($1 in li)) { li[$1] = ++nl; ln[nl] = $1 }
				if (!($2 in si)) { si[$2] = ++ns; sn[ns] = $2 }
				if ($2 ~ /memory/) cell = sprintf("%d B", $3)
				else if ($3 < 0) cell = "failed"
				else cell = sprintf("%s ms (%s)", fmt($3), fmt($4))
				v[si[$2], li[$1]] = cell
				bad = $5 ~ /STOPPED/ || $5 ~ /; [1-9][0-9]* failed/ || $5 ~ /^[1-9][0-9]* still managed/
				if (match($5, /[0-9]+ of [0-9]+ FIFO/)) { split(substr($5, RSTART, RLENGTH), f, " "); bad = bad || f[1] != f[3] }
				if (bad) notes = notes "\n- " $1 ", " $2 ": " $5
			}
			function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
			END {
				printf "| step: wall (daemon CPU) |"; for (l = 1; l <= nl; l++) printf " %s |", ln[l]; print ""
				printf "|---|"; for (l = 1; l <= nl; l++) printf "---|"; print ""
				for (k = 1; k <= ns; k++) { printf "| %s |", sn[k]; for (l = 1; l <= nl; l++) printf " %s |", v[k, l]; print "" }
				if (notes != "") print "\nNotes:" notes
			}' "$scsv"
		echo
		cat "$RESULTS/footprint-target.md"
		echo
		echo "Plot: footprint.png."
		if [ -s "$RESULTS/config-load.md" ]; then
			echo
			echo "### Configuration loading: \`rtschedd --test-config\` with many [rule] sections"
			echo
			cat "$RESULTS/config-load.md"
		fi
	} >>"$SUMMARY"
	# rows = step, columns = layout
	awk -F, 'NR > 1 && $2 !~ /memory|version/ {
			st = $2; sub(/ \(.*/, "", st); sub(/^rtschedctl /, "", st)
			if (!(st in si)) { si[st] = ++ns; sn[ns] = st }
			if (!($1 in li)) { li[$1] = ++nl; ln[nl] = $1 }
			v[si[st], li[$1]] = $3 > 0 ? $3 : "" }
		END {
			printf "step"; for (l = 1; l <= nl; l++) printf ",%s", ln[l]; print ""
			for (k = 1; k <= ns; k++) { printf "%s", sn[k]; for (l = 1; l <= nl; l++) printf ",%s", v[k, l]; print "" }
		}' "$scsv" >"$RESULTS/footprint-plot.csv"
	plot footprint <<-EOF
	set title "rtschedd at scale: wall time of each step (log scale)\n$MSHORT" font ',10'
	set logscale y
	set ylabel "ms"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set grid ytics
	set key top right
	set datafile missing ''
	ncol = $(head -1 "$RESULTS/footprint-plot.csv" | awk -F, '{ print NF }')
	plot for [c=2:ncol] '$RESULTS/footprint-plot.csv' using c:xtic(1) title columnheader(c)
	EOF
}

# Wall time of `rtschedd --test-config` (parse, validate, print; process
# start included) on generated configurations of 3,000, 6,000 and 12,000
# [rule] sections, each the median of 7 runs with the spread; times are
# taken with $EPOCHREALTIME, so nothing but rtschedd is started in between.
bench_config_load() {
	local n k t0 t1 csv=$RESULTS/config-load.csv
	echo
	echo "Configuration loading: rtschedd --test-config on generated files with N [rule] sections (each with"
	echo "thread-name, policy and priority), output to /dev/null; median of 7 runs, min..max in brackets;"
	echo "the scaling verdict compares the fastest runs (the least disturbed by other load)."
	echo "rules,run,ms" >"$csv"
	for n in 3000 6000 12000; do
		awk -v n="$n" 'BEGIN { print "[daemon]\nrate-limit = 0"
			for (i = 1; i <= n; i++) printf "[rule r%05d]\nthread-name = app-%05d-*\npolicy = fifo\npriority = %d\n", i, i, 1 + i % 50 }' \
			>"$TMP/rules-$n.conf"
		for k in 1 2 3 4 5 6 7; do
			t0=$EPOCHREALTIME
			"$RTSCHEDD" --test-config --config "$TMP/rules-$n.conf" >/dev/null 2>&1 || { echo "rtschedd --test-config failed on $n rules"; break; }
			t1=$EPOCHREALTIME
			echo "$n,$k,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')" >>"$csv"
		done
	done
	awk -F, '
		NR == 1 { next }
		{ k = $1; c[k]++; v[k, c[k]] = $3 + 0; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
		function med(k,   a, m, i, j, x) { m = c[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
			lo[k] = a[1]; hi[k] = a[m]; return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		END {
			if (!n) exit
			printf "| rules |"; for (i = 1; i <= n; i++) printf " %s |", order[i]; print ""
			printf "|---|"; for (i = 1; i <= n; i++) printf "---|"; print ""
			printf "| --test-config wall time, median [min..max] of 7 |"
			for (i = 1; i <= n; i++) { m[order[i]] = med(order[i]); printf " %.1f ms [%.1f..%.1f] |", m[order[i]], lo[order[i]], hi[order[i]] }
			print ""
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			if (lo[3000] > 0 && lo[12000] > 0)
				printf "| loading scales as n log n or better (12,000 / 3,000 rules, fastest runs: linear 4x, quadratic 16x) | %.1fx | %s |\n", lo[12000] / lo[3000], (lo[12000] / lo[3000] <= 6 ? "met" : "NOT MET")
			if (m[12000] > 0)
				printf "| 12,000 rules well under 100 ms (median <= 50 ms, slowest run < 100 ms) | %.1f ms (slowest %.1f ms) | %s |\n", m[12000], hi[12000], (m[12000] <= 50 && hi[12000] < 100 ? "met" : "NOT MET")
			else
				print "| 12,000 rules well under 100 ms | not measured | n/a |"
		}' "$csv" >"$RESULTS/config-load.md"
	cat "$RESULTS/config-load.md"
}

# --- 5. rule matching ----------------------------------------------------------------

# With no argument, remember the bench daemon's loop counters; with one, say
# (and add to match-loop.txt) what its loop did since, for the runs named $1.
MATCH_LOOP0=
match_loop_mark() {
	local now
	now=$("$RTSCHEDCTL" --json status | jq -r '"\(.loop_stepdowns) \(.loop_cpu_ms) \(.loop_budget_pct)"')
	if [ -n "${1:-}" ]; then
		echo "$MATCH_LOOP0 $now" | awk -v what="$1" '{
			printf "the loop during the runs %s: %d budget step-downs (loop-budget %d%%), %d ms of CPU\n", what, $4 - $1, $6, $5 - $2 }' |
			tee -a "$RESULTS/match-loop.txt"
	fi
	MATCH_LOOP0=$now
}

bench_match() {
	local m csv=$RESULTS/match.csv hold d2 line load pace=2000
	section "5. Rule matching: thread creation or rename -> policy applied"
	have bench-match || return
	m=$(q 300 2000)
	load="stress-ng --cpu $(nproc)"
	echo "Rule bench-m (thread-name = $MATCH_PREFIX-*, a prefix of this run's own; FIFO 12); the thread itself"
	echo "polls sched_getscheduler; $m each, idle, then under $load (the daemon's loop as it is by"
	echo "default: SCHED_FIFO 1 with its CPU budget, loop-priority and loop-budget)."
	echo
	: >"$RESULTS/match-loop.txt"
	match_loop_mark
	bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -o "$csv" -c "$RESULTS/match-cdf.csv" rename "$m"
	bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -o "$csv" -c "$RESULTS/match-cdf.csv" create "$m" >"$TMP/match-create.txt"
	tail -3 "$TMP/match-create.txt"
	# a thread created with a name the rule matches (inherited from its
	# creator): matched at the fork event, before it first runs
	bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -o "$csv" -c "$RESULTS/match-cdf.csv" spawn "$m" | tail -1
	match_loop_mark "back to back, idle"
	# issue 28: the same under load, where a SCHED_OTHER loop took milliseconds;
	# stress-ng is bounded by its own --timeout and stopped right after
	# back to back, the renames keep the loop busy enough to spend its
	# budget (a step-down: SCHED_OTHER until the period ends); one every
	# $pace µs they do not: each run says what the loop did meanwhile
	if stress_start 300; then
		for pace in 0 "$pace"; do
			match_loop_mark
			bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -l "$load" -i "$pace" -o "$csv" -c "$RESULTS/match-cdf.csv" rename "$m" >"$TMP/match-stress.txt"
			tail -1 "$TMP/match-stress.txt"
			bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -l "$load" -i "$pace" -o "$csv" -c "$RESULTS/match-cdf.csv" create "$m" >"$TMP/match-stress.txt"
			tail -3 "$TMP/match-stress.txt"
			bench_run 120 "$B/bench-match" -p "$MATCH_PREFIX" -l "$load" -i "$pace" -o "$csv" -c "$RESULTS/match-cdf.csv" spawn "$m" | tail -1
			match_loop_mark "$([ "$pace" = 0 ] && echo "back to back" || echo "one every $pace µs") under $load"
		done
		stress_stop
	fi
	# issue 15: a thread gets its policy within 100 µs of prctl(PR_SET_NAME) at p99
	# (rename, and a new thread naming itself); from pthread_create it also
	# includes the new thread's own start-up, judged too for completeness;
	# issue 28: rename and pthread_create -> applied, p99 <= 100 µs under load
	awk -F, -v load="$load" -v pace="$pace" '
		NR > 1 { p99[$1] = $4; n[$1] = $2; to[$1] = $6 }
		# fl: the row of the new thread'"'"'s own start-up (pthread_create -> it
		# runs, no daemon involved), shown beside a thread that names itself:
		# the daemon cannot see the name before the thread has run
		function row(what, k, fl) {
			if (!(k in p99)) { printf "| %s | not measured | n/a |\n", what; return }
			printf "| %s | %.1f µs (%s samples, %s timeouts%s) | %s |\n", what, p99[k], n[k], to[k],
				(fl != "" && (fl in p99) ? sprintf("; the thread'"'"'s own start-up alone, pthread_create -> it runs: %.1f µs", p99[fl]) : ""),
				(p99[k] <= 100 && to[k] == 0 ? "met" : "NOT MET")
		}
		END {
			print "| target | measured | verdict |"
			print "|---|---|---|"
			row("rule match p99 <= 100 µs: rename, prctl(PR_SET_NAME) -> applied", "rename -> policy applied")
			row("rule match p99 <= 100 µs: new thread, its prctl(PR_SET_NAME) -> applied", "new thread named -> policy applied")
			row("rule match p99 <= 100 µs: new thread from pthread_create (its start-up included)", "create+name -> policy applied", "pthread_create -> new thread runs")
			row("rule match p99 <= 100 µs: new thread created with a matching name, pthread_create -> applied", "created matching -> policy applied")
			row("rule match p99 <= 100 µs under " load ", back to back: rename -> applied", "rename -> policy applied under " load)
			row("rule match p99 <= 100 µs under " load ", back to back: new thread, its prctl(PR_SET_NAME) -> applied", "new thread named -> policy applied under " load)
			row("rule match p99 <= 100 µs under " load ", back to back: new thread from pthread_create -> applied", "create+name -> policy applied under " load, "pthread_create -> new thread runs under " load)
			row("rule match p99 <= 100 µs under " load ", back to back: new thread created with a matching name, pthread_create -> applied", "created matching -> policy applied under " load)
			p = " every " pace " us"
			row("rule match p99 <= 100 µs under " load ", one every " pace " µs: rename -> applied", "rename -> policy applied" p " under " load)
			row("rule match p99 <= 100 µs under " load ", one every " pace " µs: new thread, its prctl(PR_SET_NAME) -> applied", "new thread named -> policy applied" p " under " load)
			row("rule match p99 <= 100 µs under " load ", one every " pace " µs: new thread from pthread_create -> applied", "create+name -> policy applied" p " under " load, "pthread_create -> new thread runs" p " under " load)
			row("rule match p99 <= 100 µs under " load ", one every " pace " µs: new thread created with a matching name, pthread_create -> applied", "created matching -> policy applied" p " under " load)
		}' "$csv" >"$RESULTS/match-target.md"
	echo
	cat "$RESULTS/match-target.md"
	# start-up scan: a second daemon starts while many threads exist
	hold=$(q 2000 10000)
	coproc HOLD { "$B/bench-match" hold "$hold"; }
	read -r _ <&"${HOLD[0]}"
	bg_start d2 "$RTSCHEDD" --config "$TMP/bench.conf" --socket "$TMP/control2"
	wait_for "$TMP/control2" 10
	line=$("$RTSCHEDCTL" --socket "$TMP/control2" --json status |
		jq -r '"start-up scan: \(.scan_tasks) tasks in \(.scan_us / 1000) ms (\(.scan_us * 1000 / (.scan_tasks + (if .scan_tasks == 0 then 1 else 0 end)) | floor) ns per task)"')
	echo "$line"
	bg_stop "$d2"
	exec {HOLD[1]}>&-
	wait "$HOLD_PID" 2>/dev/null
	{
		echo
		echo "### Rule matching: time from a thread's creation or rename to its policy applied"
		echo
		echo "| event | samples | p50 | p99 | max | timeouts |"
		echo "|---|---|---|---|---|---|"
		awk -F, 'NR > 1 { printf "| %s | %s | %.1f µs | %.1f µs | %.2f ms | %s |\n", $1, $2, $3, $4, $5 / 1000, $6 }' "$csv"
		echo
		cat "$RESULTS/match-target.md"
		echo
		sed 's/^t/T/; s/$/./' "$RESULTS/match-loop.txt"
		echo
		echo "$line. Plot: match.png."
	} >>"$SUMMARY"
	plot match <<-EOF
	set title "Rule matching: creation or rename -> policy applied, latency by percentile\n$MSHORT" font ',10'
	set logscale xy
	set xlabel "percentile"
	set ylabel "µs"
	set xtics ("0%%" 1, "50%%" 2, "90%%" 10, "99%%" 100, "99.9%%" 1000, "99.99%%" 10000)
	set key bottom right
	set grid
	f(q) = q < 1 ? 1 / (1 - q) : 1/0
	plot '$RESULTS/match-cdf.csv' using (strcol(1) eq "rename" ? f(\$2) : 1/0):3 with lines lw 2 title "rename -> policy applied", \
	     '' using (strcol(1) eq "create" ? f(\$2) : 1/0):3 with lines lw 2 title "create + name -> policy applied", \
	     '' using (strcol(1) eq "create-name" ? f(\$2) : 1/0):3 with lines lw 2 title "new thread's prctl(PR_SET_NAME) -> policy applied", \
	     '' using (strcol(1) eq "rename under $load" ? f(\$2) : 1/0):3 with lines lw 2 dt 2 title "rename, under $load", \
	     '' using (strcol(1) eq "create under $load" ? f(\$2) : 1/0):3 with lines lw 2 dt 2 title "create + name, under $load", \
	     '' using (strcol(1) eq "rename every $pace us under $load" ? f(\$2) : 1/0):3 with lines lw 2 dt 3 title "rename, one every $pace µs, under $load", \
	     '' using (strcol(1) eq "create every $pace us under $load" ? f(\$2) : 1/0):3 with lines lw 2 dt 3 title "create + name, one every $pace µs, under $load", \
	     '' using (strcol(1) eq "spawn every $pace us under $load" ? f(\$2) : 1/0):3 with lines lw 2 dt 3 title "created with a matching name, one every $pace µs, under $load"
	EOF
}

# --- 9. start-up: exec -> READY=1 -------------------------------------------------------

# The target: rtschedd's own share of its start-up (beyond the exec floor,
# and beyond the BPF load alone when the observer loads) at most this, p50
STARTUP_OWN_MS=3
bench_startup() {
	local rounds csv=$RESULTS/startup.csv
	section "9. Start-up: exec -> READY=1, with and without the BPF observer, against its floors"
	have bench-startup || return
	rounds=$(q 5 30)
	mkdir -p "$TMP/startup"
	# the shipped daemon settings but a private socket and state (rules: none, so the start-up
	# scan reads no task's name; the observer: 64 slots, the default)
	printf '[daemon]\nlog-level = warning\n' >"$TMP/startup-on.conf"
	printf '[daemon]\nlog-level = warning\nobserve-threads = 0\n' >"$TMP/startup-off.conf"
	echo "rtschedd --config C --socket DIR/control started $rounds times per series with NOTIFY_SOCKET set; timed from"
	echo "posix_spawn to its READY=1 (the control socket listens, the observer is loaded, privileges are dropped),"
	echo "then stopped with SIGTERM (it must exit 0). Floors: the bench itself re-executed, sending READY=1 as its"
	echo "first act (fork, exec, dynamic linking, one notification), the BPF observer loaded alone in-process"
	echo "(bpfobs_new, 64 slots), and the watchdog's BPF task iterators loaded alone in-process (tasks_new: the"
	echo "daemon loads them whenever the watchdog is on, the default, observer or not). The five series in"
	echo "interleaved rounds, one untimed start of each first."
	echo
	bench_run 300 "$B/bench-startup" -n "$rounds" -o "$csv" -c "$RESULTS/startup-cdf.csv" -d "$RTSCHEDD" -s "$TMP/startup" \
		"$TMP/startup-on.conf" "$TMP/startup-off.conf"
	[ -s "$csv" ] || return
	awk -F, -v own="$STARTUP_OWN_MS" '
		NR == 1 { next }
		{ p50[$1] = $4 / 1000; p90[$1] = $5 / 1000; mx[$1] = $7 / 1000; n[$1] = $2; f[$1] = $3 }
		function ms(x) { return sprintf("%.1f ms", x) }
		function row(k, what) { if (k in p50) printf "| %s | %s (%s) | %s | %s | %s |\n", what, n[k], f[k], ms(p50[k]), ms(p90[k]), ms(mx[k]) }
		END {
			print "| exec -> READY=1 | samples (failed) | p50 | p90 | max |"
			print "|---|---|---|---|---|"
			row("rtschedd-on", "rtschedd, BPF observer on (the default)"); row("rtschedd-off", "rtschedd, observer off (observe-threads = 0)")
			row("floor-exec", "floor: exec + READY=1 at once"); row("bpf-load", "floor: the BPF load alone (bpfobs_new, in-process)")
			row("tasks-load", "floor: the task iterators alone (tasks_new, in-process)")
			it = ("tasks-load" in p50) ? p50["tasks-load"] : 0   # none loads without BPF: nor does the daemon
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			if (("rtschedd-off" in p50) && ("floor-exec" in p50))
				printf "| observer off: p50 <= exec floor + task iterators alone + %d ms | %s vs %s + %s + %d ms (own share %s) | %s |\n", own, ms(p50["rtschedd-off"]), ms(p50["floor-exec"]), ms(it), own, ms(p50["rtschedd-off"] - p50["floor-exec"] - it), p50["rtschedd-off"] <= p50["floor-exec"] + it + own ? "met" : "NOT MET"
			if (("rtschedd-on" in p50) && ("floor-exec" in p50) && ("bpf-load" in p50))
				printf "| observer on: p50 <= exec floor + BPF load alone + task iterators alone + %d ms | %s vs %s + %s + %s + %d ms (own share %s) | %s |\n", own, ms(p50["rtschedd-on"]), ms(p50["floor-exec"]), ms(p50["bpf-load"]), ms(it), own, ms(p50["rtschedd-on"] - p50["floor-exec"] - p50["bpf-load"] - it), p50["rtschedd-on"] <= p50["floor-exec"] + p50["bpf-load"] + it + own ? "met" : "NOT MET"
			else
				print "| observer on: p50 <= exec floor + BPF load alone + " own " ms | not measured (no BPF here) | n/a |"
		}' "$csv" >"$RESULTS/startup.md"
	echo
	cat "$RESULTS/startup.md"
	{
		echo
		echo "### Start-up: exec -> READY=1"
		echo
		cat "$RESULTS/startup.md"
		echo
		echo "$rounds interleaved rounds of each; no rules (the start-up scan reads no task names), a private socket and state. CDF in startup-cdf.csv."
	} >>"$SUMMARY"
}

# --- 7. histogram cost -----------------------------------------------------------------

bench_hist() {
	section "7. Latency histogram: cost of recording and reading"
	have bench-hist || return
	bench_run 60 "$B/bench-hist" >"$RESULTS/hist.txt"
	cat "$RESULTS/hist.txt"
}

# --- 8. observed vs self-measured: cyclictest against rtschedd's BPF observer -----------

# obs_prog_ids PID: the ids of the BPF programs PID holds (from its fdinfo)
obs_prog_ids() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = anon_inode:bpf-prog ] &&
			sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$1"/fdinfo/"${f##*/}"
	done
}

# obs_others PID: how many BPF observers (each loads one bpfobs_switch) are
# loaded on the machine, but the one of the daemon PID (if it has one); "?"
# if bpftool's list keeps missing ours (a program unloaded while bpftool
# walks the list can cut it short)
obs_others() {
	local all mine=0
	[ -n "$(obs_prog_ids "$1")" ] && mine=1
	for _ in 1 2 3; do
		all=$(bpftool prog show --json 2>/dev/null | jq '[.[] | select(.name == "bpfobs_switch")] | length' 2>/dev/null)
		[ "${all:-0}" -ge "$mine" ] && { echo $((all - mine)); return; }
		sleep 0.1
	done
	echo "?"
}

# nvcsw_of PID TID: the thread's voluntary context switches, with bash
# builtins only (no process is started while cyclictest measures)
nvcsw_of() {
	local k v
	NVCSW=-1
	while read -r k v; do
		[ "$k" = voluntary_ctxt_switches: ] && { NVCSW=$v; return; }
	done 2>/dev/null <"/proc/$1/task/$2/status"
}

# obs_run CONF LOOPS OUT: a fresh rtschedd with CONF on a private socket; a
# cyclictest (SCHED_OTHER, -h, --secaligned so its first cycle waits for the
# next full second) registered from outside before that first cycle, which
# makes it SCHED_FIFO 10 (the daemon's default); stopped (SIGSTOP to the
# measuring thread: the group stop starts there at once) after LOOPS cycles,
# rtschedd read while it is stopped, then SIGCONT and SIGINT (to the same
# thread, so it ends in its next sleep) and cyclictest prints its histogram.
# Writes OUT.cyc (cyclictest's output), OUT.json (the bpf-timer row),
# OUT.hist (its buckets: lo_ns hi_ns count), OUT.pol, OUT.others; with
# OBS_STATS=1 also OUT.stats (the daemon's programs: name run_cnt
# run_time_ns) and OUT.secs (the time kernel.bpf_stats_enabled was 1).
obs_run() {
	local conf=$1 loops=$2 out=$3 dpid cpid tid attempt n0 t0 t1 t id early=1 stopped until_s
	rm -f "$TMP/obs-control"
	bg_start dpid "$RTSCHEDD" --config "$conf" --socket "$TMP/obs-control" 2>>"$TMP/obs-daemon.log"
	wait_for "$TMP/obs-control" 5 || { echo "rtschedd did not start: $(tail -2 "$TMP/obs-daemon.log")"; bg_stop "$dpid"; return 1; }
	obs_others "$dpid" >"$out.others"
	for attempt in 1 2 3 4 5; do
		cyclictest -q -m -a"$OBS_CPU" --policy=other -i1000 -l$((2 * loops + 2000)) -h20000 --secaligned >"$out.cyc" 2>&1 &
		cpid=$!
		BG_PIDS+=("$cpid")
		tid=
		for _ in $(seq 100); do
			for t in /proc/"$cpid"/task/*; do [ "${t##*/}" != "$cpid" ] && [ -e "$t" ] && tid=${t##*/}; done
			[ -n "$tid" ] && break
			sleep 0.01
		done
		[ -n "$tid" ] && "$RTSCHEDCTL" --socket "$TMP/obs-control" register --tid "$tid" >/dev/null || {
			echo "cyclictest's thread not found or not registered"; kill "$cpid"; wait "$cpid"; bg_stop "$dpid"; return 1; }
		nvcsw_of "$cpid" "$tid"
		n0=$NVCSW
		sleep 0.05
		nvcsw_of "$cpid" "$tid"
		# still in its first sleep: it was registered before it measured anything
		[ "$NVCSW" = "$n0" ] && { early=0; break; }
		echo "(attempt $attempt: cyclictest began before it was registered; again)"
		kill "$cpid"
		wait "$cpid"
	done
	[ "$early" = 0 ] || { echo "cyclictest began its cycles before it was registered, 5 times"; bg_stop "$dpid"; return 1; }
	if [ -n "${OBS_STATS:-}" ]; then
		OBS_STATS_RESTORE=$(cat /proc/sys/kernel/bpf_stats_enabled)
		echo 1 >/proc/sys/kernel/bpf_stats_enabled
		read -r t0 _ </proc/uptime
	fi
	# the window: nothing is started until cyclictest is stopped, after
	# LOOPS sleeps or, if it is starved, three times as long as they take
	until_s=$((SECONDS + 3 * loops / 1000 + 5))
	quiet_sleep "$(awk -v l="$loops" 'BEGIN { printf "%.2f", l / 1000 - 0.2 }')"
	while nvcsw_of "$cpid" "$tid"; [ "$NVCSW" -ge 0 ] && [ $((NVCSW - n0)) -lt "$loops" ] && [ "$SECONDS" -lt "$until_s" ]; do
		quiet_sleep 0.02
	done
	[ "$SECONDS" -lt "$until_s" ] || echo "(cyclictest ran $((NVCSW - n0)) of $loops cycles in $((3 * loops / 1000 + 5)) s: stopped there)"
	kill -STOP "$tid"
	stopped=$EPOCHREALTIME
	rt_policy_of "$cpid"
	echo "$RT_POLICY" >"$out.pol"
	if [ -n "${OBS_STATS:-}" ]; then
		read -r t1 _ </proc/uptime
		for id in $(obs_prog_ids "$dpid"); do
			bpftool prog show id "$id" --json | jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
		done >"$out.stats"
		obs_stats_restore
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$out.secs"
	fi
	"$RTSCHEDCTL" --socket "$TMP/obs-control" --json jitter |
		jq -c ".[] | select(.tid == $tid and .kind == \"bpf-timer\")" >"$out.json"
	"$RTSCHEDCTL" --socket "$TMP/obs-control" --json jitter --histogram "bpf-timer:$tid" 2>/dev/null |
		jq -r '.[] | "\(.lo_ns) \(.hi_ns) \(.count)"' >"$out.hist"
	kill -CONT "$cpid"
	kill -INT "$tid"
	# how long it was stopped, in µs: the one wake-up the stop delayed is
	# at least this late, less a period
	awk -v a="$stopped" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d\n", (b - a) * 1e6 }' >"$out.stopus"
	wait "$cpid"
	cyc_trim "$out.cyc" $(( $(cat "$out.stopus") - 1000 )) >"$out.trim"
	bg_stop "$dpid"
}

# cyc_trim FILE THRESHOLD_US: cyclictest's -h output without the wake-up
# the stop delayed: one sample of at least THRESHOLD_US taken out (an
# overflow if it is one, else from the highest such bucket), if there is
# one (when the SIGINT interrupted that sleep, cyclictest did not count it)
cyc_trim() {
	awk -v thr="$2" '
		{ line[NR] = $0 }
		/^# Max Latencies:/ { mx = $4 + 0; mxl = NR }
		/^# Histogram Overflows:/ { ovf = $4 + 0; ovl = NR }
		/^[0-9]+[ \t]+[0-9]+/ && $2 + 0 > 0 { b[NR] = $1 + 0; c[NR] = $2 + 0; if ($1 + 0 >= thr) top = NR }
		END {
			if (ovf > 0 && mx >= thr && (thr >= 20000 || !top)) { ovf--; line[ovl] = sprintf("# Histogram Overflows: %05d", ovf) }
			else if (top) { c[top]--; line[top] = sprintf("%06d %06d", b[top], c[top]) }
			else ovf = -1
			# the largest sample left, when no overflow hides it
			if (ovf == 0 && mxl) { m = 0; for (i in c) if (c[i] > 0 && b[i] > m) m = b[i]; line[mxl] = sprintf("# Max Latencies: %05d", m) }
			for (i = 1; i <= NR; i++) print line[i]
		}' "$1"
}

bench_observed() {
	local loops rounds csv=$RESULTS/observed.csv load r o order f s p50 p90 p99 p999 mx pol oth j
	section "8. Observed vs self-measured: cyclictest's own histogram against rtschedd's BPF observation of the same thread; the observer's cost"
	command -v cyclictest >/dev/null || { skipped "cyclictest missing (apt-get install rt-tests)"; return; }
	command -v bpftool >/dev/null || { skipped "bpftool missing (apt-get install bpftool)"; return; }
	# watchdog off: on this shared machine other programs' real-time threads
	# starve a CPU now and then, and the watchdog would demote cyclictest
	printf '[daemon]\nrate-limit = 0\nlog-level = warning\nwatchdog = no\n' >"$TMP/obs-on.conf"
	printf '[daemon]\nrate-limit = 0\nlog-level = warning\nwatchdog = no\nobserve-threads = 0\n' >"$TMP/obs-off.conf"
	j=$("$RTSCHEDD" --config "$TMP/obs-on.conf" --check 2>&1 | grep -E '^[A-Z]+ +bpf-')
	case $j in
	OK*bpf-observer*) ;;
	*) skipped "this rtschedd cannot observe with BPF here: ${j:-rtschedd --check says nothing about it}"; return ;;
	esac
	OBS_CPU=$(( $(nproc) - 1 ))
	loops=$(q 2000 5000)
	rounds=$(q 1 4)
	echo "cyclictest -q -m -a$OBS_CPU --policy=other -i1000 -h20000 --secaligned (cyclictest pins its thread to a CPU"
	echo "in any case), registered from outside with \`rtschedctl register --tid\` before its first cycle (the"
	echo "daemon's default makes it SCHED_FIFO 10); after $loops cycles (-l $((2 * loops + 2000)) only bounds it) stopped (SIGSTOP) and rtschedd's bpf-timer row"
	echo "read with \`rtschedctl --json jitter\` meanwhile, so both saw the same wake-ups; then cyclictest ends and"
	echo "prints its histogram (1 µs buckets, whole µs, 20 ms and more counted as its max), less the one wake-up the"
	echo "stop delayed. A fresh rtschedd per run (watchdog off): observer on (the default, observe-threads = 64) or"
	echo "off (observe-threads = 0: no program loaded), alternately, $rounds round(s) of each, idle and under"
	echo "stress-ng --cpu $(nproc). The bench's own rtschedd is stopped meanwhile (its observer would be loaded during"
	echo "the off runs); other observers loaded on the machine are counted per run (other_observers)."
	echo "Agree: p50 and p99 within 10% or 5 µs, all rounds pooled (histograms summed: rtschedd's 1%-wide buckets by"
	echo "their midpoint). Cost: cyclictest's p99 with the observer on at most 5% above off, the median over runs."
	echo
	bg_stop "$DPID"
	quiet_setup
	echo "load,round,observer,tool,ran_as,samples,p50_us,p90_us,p99_us,p999_us,max_us,other_observers" >"$csv"
	: >"$TMP/obs-stats.txt"
	printf '%-6s %-5s %-8s %-10s %-10s %8s %8s %8s %8s %8s %8s %6s\n' load round observer tool "ran as" samples p50 p90 p99 p99.9 max others
	for load in idle stress; do
		if [ $load = stress ]; then
			stress_start $(( rounds * 2 * (loops / 1000 + 4) + loops / 2000 + 20 )) || break
		fi
		for r in $(seq "$rounds"); do
			# alternate which goes first, so a drift in load hits both alike
			order="on off"
			[ $((r % 2)) = 0 ] && order="off on"
			for o in $order; do
				f=$TMP/obs-$load-$r-$o
				obs_run "$TMP/obs-$o.conf" "$loops" "$f" || { broken "observed run $load/$r/$o failed"; continue; }
				pol=$(cat "$f.pol"); oth=$(cat "$f.others")
				read -r s p50 p90 p99 p999 mx _ < <(cyc_pct "$f.trim")
				echo "$load,$r,$o,cyclictest,$pol,$s,$p50,$p90,$p99,$p999,$mx,$oth" >>"$csv"
				printf '%-6s %-5s %-8s %-10s %-10s %8s %8s %8s %8s %8s %8s %6s\n' "$load" "$r" "$o" cyclictest "$pol" "$s" "$p50" "$p90" "$p99" "$p999" "$mx" "$oth"
				[ $o = on ] || continue
				j=$(jq -r '"\(.samples),\(.p50_ns / 1000),\(.p90_ns / 1000),\(.p99_ns / 1000),\(.p999_ns / 1000),\(.max_ns / 1000)"' "$f.json")
				if [ -z "$j" ]; then
					echo "$load round $r: no bpf-timer row for cyclictest's thread in rtschedctl --json jitter"
					continue
				fi
				echo "$load,$r,$o,rtschedd bpf-timer,$pol,$j,$oth" >>"$csv"
				echo "$j" | awk -F, -v l="$load" -v r="$r" -v p="$pol" -v o="$oth" '{ printf "%-6s %-5s %-8s %-10s %-10s %8s %8.1f %8.1f %8.1f %8.1f %8.1f %6s\n", l, r, "on", "bpf-timer", p, $1, $2, $3, $4, $5, $6, o }'
			done
		done
		# the programs' own cost: one more observed run with kernel.bpf_stats_enabled = 1
		# (the statistics cost time themselves: two clock reads per program run)
		f=$TMP/obs-$load-stats
		if OBS_STATS=1 obs_run "$TMP/obs-on.conf" $((loops / 2)) "$f" && [ -s "$f.stats" ]; then
			awk -v l="$load" -v secs="$(cat "$f.secs")" '{ print l, secs, $0 }' "$f.stats" >>"$TMP/obs-stats.txt"
		fi
		[ $load = stress ] && stress_stop
	done
	bg_start DPID "$RTSCHEDD" --config "$TMP/bench.conf" --socket "$TMP/control"
	wait_for "$TMP/control" 5 || broken "the bench's rtschedd did not start again"
	cp "$TMP/obs-stats.txt" "$RESULTS/observed-cost.txt"
	# pooled histograms per load: cyclictest's (observer on and off apart) and rtschedd's
	for load in idle stress; do
		for o in on off; do
			cat "$TMP"/obs-$load-[0-9]*-$o.trim 2>/dev/null | awk '/^[0-9]+[ \t]+[0-9]+/ { c[$1 + 0] += $2 }
				/^# Max Latencies:/ { if ($4 + 0 > mx) mx = $4 + 0 } /^# Histogram Overflows:/ { ov += $4 }
				END { for (b in c) if (c[b]) print b, b, c[b]; if (ov) print mx, mx, ov }' | pool_pct 1 |
				sed "s/^/$load,$o,cyclictest,/"
		done
		cat "$TMP"/obs-$load-[0-9]*-on.hist 2>/dev/null | awk '{ c[$1 " " $2] += $3 } END { for (k in c) print k, c[k] }' |
			pool_pct 1000 | sed "s/^/$load,on,rtschedd,/"
	done | awk -F, '$4 > 0' >"$TMP/obs-pooled.csv"
	awk -F, -v rounds="$rounds" -v loops="$loops" -v ncpu="$(nproc)" '
		FILENAME ~ /obs-pooled\.csv$/ { k = $1 "," $2 "," $3; n[k] = $4; p50[k] = $5; p90[k] = $6; p99[k] = $7; p999[k] = $8; next }
		# "load seconds program run_cnt run_time_ns", split by spaces
		FILENAME ~ /obs-stats\.txt$/ { split($0, w, " "); l = w[1]; cnt[l] += w[4]; rt[l] += w[5]; secs[l] = w[2]; pc[l, w[3]] += w[4]; pt[l, w[3]] += w[5]
			if (!((l, w[3]) in seenp)) { seenp[l, w[3]] = 1; pn[l, ++np[l]] = w[3] }; next }
		# cyclictest p99 per run, by load and observer on/off
		FNR > 1 && $4 == "cyclictest" { k = $1 "," $3; v[k, ++nv[k]] = $9 }
		FNR > 1 && $12 != 0 { others++ }
		function us(x) { return x == "" ? "-" : (x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.1f µs", x)) }
		function ok(a, b) { d = a - b; if (d < 0) d = -d; t = 0.1 * b; if (t < 5) t = 5; return d <= t }
		function diff(a, b) { return sprintf("%+.1f µs, %+.0f%%", a - b, b > 0 ? 100 * (a - b) / b : 0) }
		function med(k,   a, m, x, y, z) { m = nv[k]; for (x = 1; x <= m; x++) a[x] = v[k, x]
			for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] < a[x]) { z = a[x]; a[x] = a[y]; a[y] = z }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		function runs(k,   x, t) { t = ""; for (x = 1; x <= nv[k]; x++) t = t (x > 1 ? ", " : "") v[k, x]; return t }
		END {
			print "| load | measured by | samples | p50 | p90 | p99 | p99.9 |"
			print "|---|---|---|---|---|---|---|"
			split("idle stress", L, " ")
			for (i = 1; i <= 2; i++) {
				l = L[i]; lt = l == "idle" ? "idle (no added load)" : "stress-ng --cpu " ncpu
				c = l ",on,cyclictest"; b = l ",on,rtschedd"; f = l ",off,cyclictest"
				if (c in n) printf "| %s | cyclictest itself (observer on) | %d | %s | %s | %s | %s |\n", lt, n[c], us(p50[c]), us(p90[c]), us(p99[c]), us(p999[c])
				if (b in n) printf "| %s | rtschedd bpf-timer (BPF, from outside) | %d | %s | %s | %s | %s |\n", lt, n[b], us(p50[b]), us(p90[b]), us(p99[b]), us(p999[b])
				if (f in n) printf "| %s | cyclictest itself (observer off) | %d | %s | %s | %s | %s |\n", lt, n[f], us(p50[f]), us(p90[f]), us(p99[f]), us(p999[f])
			}
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			for (i = 1; i <= 2; i++) {
				l = L[i]; c = l ",on,cyclictest"; b = l ",on,rtschedd"; f = l ",off,cyclictest"
				if ((c in n) && (b in n)) {
					printf "| %s: rtschedd p50 within 10%% or 5 µs of cyclictest | %s vs %s (%s) | %s |\n", l, us(p50[b]), us(p50[c]), diff(p50[b], p50[c]), ok(p50[b], p50[c]) ? "met" : "NOT MET"
					printf "| %s: rtschedd p99 within 10%% or 5 µs of cyclictest | %s vs %s (%s) | %s |\n", l, us(p99[b]), us(p99[c]), diff(p99[b], p99[c]), ok(p99[b], p99[c]) ? "met" : "NOT MET"
					printf "| %s: samples (rtschedd vs cyclictest) | %d vs %d (%+d) | - |\n", l, n[b], n[c], n[b] - n[c]
				} else
					printf "| %s: observed vs self-measured | not measured | - |\n", l
				# the median over rounds: a burst from another program spoils one run, not the verdict
				if (nv[l ",on"] && nv[l ",off"]) {
					mon = med(l ",on"); moff = med(l ",off")
					printf "| %s: cyclictest p99, observer on <= off + 5%% (median of %d run(s) each) | %s vs %s (%s; runs on: %s µs, off: %s µs) | %s |\n", l, nv[l ",on"], us(mon), us(moff), diff(mon, moff), runs(l ",on"), runs(l ",off"), mon <= 1.05 * moff ? "met" : "NOT MET"
				}
				if (cnt[l] > 0)
					printf "| %s: ns per traced event (kernel.bpf_stats_enabled, all %d programs) | %.0f ns, %.0f events/s, %.3f%% of %d CPUs | - |\n", l, np[l], rt[l] / cnt[l], cnt[l] / secs[l], 100 * rt[l] / (secs[l] * 1e9 * ncpu), ncpu
			}
			for (i = 1; i <= 2; i++) {
				l = L[i]
				if (!np[l]) continue
				line = ""
				for (k = 1; k <= np[l]; k++) { p = pn[l, k]; line = line sprintf("%s%s %.0f ns x %.0f/s", k > 1 ? "; " : "", p, pc[l, p] ? pt[l, p] / pc[l, p] : 0, pc[l, p] / secs[l]) }
				printf "\nPer program, %s: %s.\n", l, line
			}
			if (others) printf "\nOther BPF observers were loaded on the machine during some runs (other_observers in observed.csv): their programs ran in the off runs too.\n"
		}' "$TMP/obs-pooled.csv" "$TMP/obs-stats.txt" "$csv" >"$RESULTS/observed.md"
	echo
	cat "$RESULTS/observed.md"
	{
		echo
		echo "### Observed vs self-measured: cyclictest against rtschedd's BPF observation of the same thread"
		echo
		cat "$RESULTS/observed.md"
		echo
		echo "cyclictest (1 ms, registered from outside before its first cycle: SCHED_FIFO 10 on CPU $OBS_CPU), $loops cycles per run, $rounds round(s) of observer on and off alternately per load, pooled; rtschedd read while cyclictest was stopped. Per run in observed.csv; the programs' run time in observed-cost.txt."
	} >>"$SUMMARY"
}


# --- 10. culprits of late wake-ups --------------------------------------------------------

# why_prog_stats PID: "run_cnt run_time_ns" of all of PID's BPF programs
why_prog_stats() {
	local id c=0 t=0 a b
	for id in $(obs_prog_ids "$1"); do
		read -r a b < <(bpftool prog show id "$id" --json | jq -r '"\(.run_cnt // 0) \(.run_time_ns // 0)"')
		c=$((c + a)); t=$((t + b))
	done
	echo "$c $t"
}

# why_cpu_ticks PID: the process's utime + stime in clock ticks
why_cpu_ticks() {
	local line f
	read -r line <"/proc/$1/stat"
	read -r -a f <<<"${line##*) }"
	echo $((f[11] + f[12]))
}

# why_case CONF CASE SECONDS OUT: a fresh rtschedd with CONF; cyclictest
# -p10 -a$WHY_CPU -i1000 registered with rule bench-why; the noise of CASE
# (a spinner, b syscall, c udp with RPS to WHY_CPU, d none) for SECONDS;
# `rtschedctl --json why` into OUT.json (and as text in OUT.txt), the jitter rows into
# OUT.jitter. With WHY_COST=1 (case d only) also
# OUT.cost: "t0 t1 run_cnt0 run_time_ns0 run_cnt1 run_time_ns1 ticks0
# ticks1 CLK_TCK" around the window (bpf_stats_enabled on; the daemon's
# BPF programs' totals and its utime + stime).
why_case() {
	local conf=$1 c=$2 secs=$3 out=$4 dpid cpid ctt npid ntid t0 t1 c0 c1 r0 r1 k0 k1
	rm -f "$TMP/why-control"
	bg_start dpid "$RTSCHEDD" --config "$conf" --socket "$TMP/why-control" 2>>"$TMP/why-daemon.log"
	wait_for "$TMP/why-control" 5 || { broken "rtschedd did not start: $(tail -2 "$TMP/why-daemon.log")"; bg_stop "$dpid"; return 1; }
	bg_start cpid cyclictest -q -m -a"$WHY_CPU" -p10 -i1000 -D $((secs + 30))
	for _ in $(seq 100); do
		ctt=$(ls /proc/"$cpid"/task 2>/dev/null | grep -vx "$cpid" | head -1)
		[ -n "$ctt" ] && break
		sleep 0.01
	done
	"$RTSCHEDCTL" --socket "$TMP/why-control" register --tid "$ctt" --role bench-why >/dev/null ||
		{ broken "cyclictest's thread not registered"; bg_stop "$cpid"; bg_stop "$dpid"; return 1; }
	npid=
	case $c in
	a) bg_start npid "$top_builddir/tests/spin-helper" --cpu "$WHY_CPU" --name spinner --mode duty --busy-ms 2 \
		--period-ms 10 --seconds "$secs" >"$TMP/why-noise.out" ;;
	b) bg_start npid "$top_builddir/tests/noise-helper" syscall --cpu "$WHY_CPU" --seconds "$secs" >"$TMP/why-noise.out" ;;
	c) WHY_RPS_RESTORE=$(cat /sys/class/net/lo/queues/rx-0/rps_cpus)
	   printf '%x\n' $((1 << WHY_CPU)) >/sys/class/net/lo/queues/rx-0/rps_cpus
	   bg_start npid "$top_builddir/tests/noise-helper" udp --cpu 0 --seconds "$secs" --count 100000000 >"$TMP/why-noise.out" ;;
	esac
	if [ "$c" = a ]; then
		for _ in $(seq 100); do grep -q '^tid ' "$TMP/why-noise.out" && break; sleep 0.01; done
		ntid=$(sed -n 's/^tid \([0-9]*\) .*/\1/p' "$TMP/why-noise.out")
		chrt -f -p 50 "$ntid"
	fi
	if [ -n "${WHY_COST:-}" ]; then
		OBS_STATS_RESTORE=$(cat /proc/sys/kernel/bpf_stats_enabled)
		echo 1 >/proc/sys/kernel/bpf_stats_enabled
		read -r c0 r0 < <(why_prog_stats "$dpid")
		k0=$(why_cpu_ticks "$dpid")
		t0=$EPOCHREALTIME
	fi
	sleep "$secs"
	if [ -n "${WHY_COST:-}" ]; then
		t1=$EPOCHREALTIME
		k1=$(why_cpu_ticks "$dpid")
		read -r c1 r1 < <(why_prog_stats "$dpid")
		obs_stats_restore
		echo "$t0 $t1 $c0 $r0 $c1 $r1 $k0 $k1 $(getconf CLK_TCK)" >"$out.cost"
	fi
	[ -z "$npid" ] || bg_stop "$npid"
	why_rps_restore
	"$RTSCHEDCTL" --socket "$TMP/why-control" --json why "$ctt" >"$out.json"
	"$RTSCHEDCTL" --socket "$TMP/why-control" why "$ctt" >"$out.txt"
	"$RTSCHEDCTL" --socket "$TMP/why-control" --json jitter | jq -c ".[] | select(.tid == $ctt)" >"$out.jitter"
	bg_stop "$cpid"
	bg_stop "$dpid"
}

bench_why() {
	local secs cost_secs c f n first late top share wake csv=$RESULTS/why.csv desc re kind
	section "10. Culprits of late wake-ups: a FIFO 10 thread at 1 kHz against known noise on its CPU; the cost of culprit tracking"
	command -v cyclictest >/dev/null || { skipped "cyclictest missing (apt-get install rt-tests)"; return; }
	command -v bpftool >/dev/null || { skipped "bpftool missing (apt-get install bpftool)"; return; }
	for p in tests/noise-helper tests/spin-helper; do
		[ -x "$top_builddir/$p" ] || { skipped "$top_builddir/$p is not built (make $p)"; return; }
	done
	[ "$(nproc)" -ge 2 ] || { skipped "needs two CPUs"; return; }
	WHY_CPU=$(( $(nproc) - 1 ))
	secs=$(q 8 20)
	cost_secs=$(q 10 30)
	for cul in yes no; do
		printf '[daemon]\nrate-limit = 0\nlog-level = warning\nwatchdog = no\nculprits = %s\n[rule bench-why]\npolicy = fifo\npriority = 10\ncpus = %s\nbudget-us = 100\n' \
			"$cul" "$WHY_CPU" >"$TMP/why-$cul.conf"
	done
	j=$("$RTSCHEDD" --config "$TMP/why-yes.conf" --check 2>&1 | grep -E '^[A-Z]+ +bpf-')
	case $j in
	OK*bpf-observer*) ;;
	*) skipped "this rtschedd cannot observe with BPF here: ${j:-rtschedd --check says nothing about it}"; return ;;
	esac
	echo "cyclictest -q -m -a$WHY_CPU -p10 -i1000 (SCHED_FIFO 10, 1 kHz), registered from outside with [rule bench-why]"
	echo "(budget-us = 100: a wake-up more than 100 µs after its timer's expiry is late); for $secs s each, on CPU $WHY_CPU:"
	echo "(a) a SCHED_FIFO 50 spinner in 2 ms bursts every 10 ms; (b) a SCHED_OTHER task in long system calls (pagemap"
	echo "reads, ~3 ms each); (c) 64-byte UDP datagrams to 127.0.0.1 from CPU 0, steered to CPU $WHY_CPU by RPS on lo,"
	echo "each made costly to receive by a 4,096-instruction socket filter (NET_RX softirq load); (d) nothing. A fresh rtschedd per case (watchdog off). \`rtschedctl --json why\`"
	echo "after each: how many late wake-ups the injected culprit led (had the largest part of). Cost: case (d) for"
	echo "$cost_secs s with culprits = yes, then no, kernel.bpf_stats_enabled = 1: all the daemon's BPF programs' run"
	echo "time and the daemon's own CPU time (utime + stime), as a share of one CPU."
	echo
	bg_stop "$DPID"
	echo "case,wakeups,late,worked_out,injected_led,top_culprit,top_share_pct,verdict" >"$csv"
	printf '%-4s %-44s %8s %6s %7s %9s  %s\n' case noise wake-ups late "w. out" "inj. led" "top culprit (share of the delay)"
	for c in a b c d; do
		f=$TMP/why-case-$c
		why_case "$TMP/why-yes.conf" "$c" "$secs" "$f" || continue
		case $c in
		a) desc="FIFO 50 spinner, 2 ms bursts"; kind=task; re='^spinner \(' ;;
		b) desc="SCHED_OTHER task in long system calls"; kind=kernel; re='^noise-syscall ' ;;
		c) desc="loopback UDP, softirq steered by RPS"; kind=softirq; re='^softirq NET_RX$' ;;
		d) desc="nothing"; kind=none; re='^(spinner|noise-)' ;;
		esac
		wake=$(jq '.thread.wakeups // 0' "$f.json")
		late=$(jq '.thread.late // 0' "$f.json")
		n=$(jq '.thread.explained // 0' "$f.json")
		if [ "$c" = d ]; then
			first=$(jq --arg re "$re" '[.culprits[]? | select(.name | test($re)) | .first] | add // 0' "$f.json")
		else
			first=$(jq --arg k "$kind" --arg re "$re" '[.culprits[]? | select(.kind == $k and (.name | test($re))) | .first] | add // 0' "$f.json")
		fi
		top=$(jq -r '.culprits[0].name // "-"' "$f.json")
		share=$(jq -r '.culprits[0].share_pct // 0' "$f.json")
		cp "$f.txt" "$RESULTS/why-$c.txt"
		# no commas inside a field: the names' and the verdict's become semicolons
		echo "$c,$wake,$late,$n,$first,${top//,/;},$share,$(jq -r '.verdict' "$f.json" | tr ',' ';')" >>"$csv"
		printf '%-4s %-44s %8s %6s %7s %9s  %s (%s%%)\n' "($c)" "$desc" "$wake" "$late" "$n" "$first" "$top" "$share"
	done
	# the cost at 1 kHz, nothing injected: culprit tracking on, then off
	for cul in yes no; do
		WHY_COST=1 why_case "$TMP/why-$cul.conf" d "$cost_secs" "$TMP/why-cost-$cul" || true
	done
	bg_start DPID "$RTSCHEDD" --config "$TMP/bench.conf" --socket "$TMP/control"
	wait_for "$TMP/control" 5 || broken "the bench's rtschedd did not start again"
	{
		echo "| case | noise on CPU $WHY_CPU | wake-ups | late (> 100 µs) | worked out | led by the injected culprit | top culprit (share of the delay) |"
		echo "|---|---|---|---|---|---|---|"
		awk -F, 'NR > 1 { printf "| (%s) | %s | %s | %s | %s | %s | %s (%s%%) |\n", $1, $1 == "a" ? "SCHED_FIFO 50 spinner, 2 ms bursts every 10 ms" : $1 == "b" ? "SCHED_OTHER task in long system calls" : $1 == "c" ? "loopback UDP, its softirq steered here by RPS" : "nothing", $2, $3, $4, $1 == "d" ? "-" : $5, $6, $7 }' "$csv"
		echo
		echo "| target | measured | verdict |"
		echo "|---|---|---|"
		# (printf's arguments in parentheses: a bare > there is a redirection)
		awk -F, 'NR > 1 && $1 != "d" { pct = $4 > 0 ? 100 * $5 / $4 : 0
				v = ($4 >= 20 && pct >= 95) ? "met" : ($4 < 20 ? "NOT MET (fewer than 20 late wake-ups)" : "NOT MET")
				printf("| (%s) the injected culprit leads >= 95%% of late wake-ups | %d of %d (%.1f%%) | %s |\n", $1, $5, $4, pct, v) }
			NR > 1 && $1 == "d" { printf("| (d) no noise program named when none runs | %d late wake-ups led by one | %s |\n", $5, $5 == 0 ? "met" : "NOT MET") }' "$csv"
		for cul in yes no; do
			[ -s "$TMP/why-cost-$cul.cost" ] || continue
			awk -v cul="$cul" '{ secs = $2 - $1; ev = $5 - $3; ns = $6 - $4; cpu = ($8 - $7) / $9
				bpf = 100 * ns / (secs * 1e9); d = 100 * cpu / secs
				on = cul == "yes" ? "on" : "off"
				printf "| culprit tracking %s, 1 kHz: BPF programs (all, kernel.bpf_stats_enabled) | %.0f ns per event, %.0f events/s: %.3f%% of one CPU | - |\n", on, ev ? ns / ev : 0, ev / secs, bpf
				printf "| culprit tracking %s, 1 kHz: rtschedd'"'"'s own CPU time (utime + stime) | %.2f s in %.0f s: %.3f%% of one CPU | - |\n", on, cpu, secs, d
				if (on == "on")
					printf "| culprit tracking on, 1 kHz: at most 1%% of one CPU (programs + daemon) | %.3f%% | %s |\n", bpf + d, bpf + d <= 1 ? "met" : "NOT MET"
			}' "$TMP/why-cost-$cul.cost"
		done
	} >"$RESULTS/why.md"
	echo
	cat "$RESULTS/why.md"
	for c in a b c d; do
		[ -s "$TMP/why-case-$c.json" ] && echo "verdict ($c): $(jq -r .verdict "$TMP/why-case-$c.json")"
	done
	{
		echo
		echo "### Culprits of late wake-ups: a FIFO 10 thread at 1 kHz against known noise"
		echo
		cat "$RESULTS/why.md"
		echo
		echo "cyclictest at SCHED_FIFO 10, 1 kHz, on CPU $WHY_CPU, registered with budget-us = 100; $secs s per case, a fresh rtschedd each. Per case in why.csv (with \`rtschedctl why\`'s verdict)."
	} >>"$SUMMARY"
}

# other programs' real-time threads, sampled all along (see bench-rtwatch.c)
RTW=
if [ -x "$B/bench-rtwatch" ]; then
	bg_start RTW "$B/bench-rtwatch" $$ "$TMP/rtwatch.log" 500
fi
# --- 12. caught refusals: refused call -> applied ----------------------------------------
# libbpf reads the syscall tracepoints' ids in tracefs, which systemd mounts
# at boot (sys-kernel-tracing.mount): a machine without it gets it for the
# section, as tests/catcher.sh does, and loses it again after
bench_caught() {
	local tr=/sys/kernel/tracing mounted=
	[ ! -e "$tr/events" ] && mount -t tracefs nodev "$tr" 2>/dev/null && mounted=1 &&
		echo "mounted tracefs on $tr for the section"
	bench_caught_run
	[ -z "$mounted" ] || umount "$tr" 2>/dev/null || true
}

bench_caught_run() {
	local u=rtsd-bench$$ rounds csv=$RESULTS/caught.csv md=$RESULTS/caught.md
	section "12. Caught refusals: sched_setscheduler(FIFO 10) refused (RLIMIT_RTPRIO 0) -> FIFO 10 applied by the catcher"
	have bench-caught || return
	command -v useradd >/dev/null || { skipped "useradd missing (apt-get install passwd)"; return; }
	rounds=$(q 200 1000)
	printf '[daemon]\nrate-limit = 0\nlog-level = warning\nwatchdog = no\ncatch-refused = yes\n[user %s]\nmax-priority = 80\npolicies = fifo,rr,other\n' \
		"$u" >"$TMP/caught.conf"
	j=$("$RTSCHEDD" --config "$TMP/caught.conf" --check 2>&1 | grep -E '^[A-Z]+ +catcher')
	case $j in
	OK*catcher:*) ;;
	*) skipped "this rtschedd cannot catch refused calls here: ${j:-rtschedd --check says nothing about it}"; return ;;
	esac
	useradd -M -N -g nogroup -d / -s /usr/sbin/nologin "$u" || { broken "cannot add the test user $u"; return; }
	bg_start CAUGHT_PID "$RTSCHEDD" --config "$TMP/caught.conf" --socket "$TMP/caught.sock"
	if wait_for "$TMP/caught.sock" 5; then
		echo "bench-caught: $rounds rounds each: back to SCHED_OTHER, sched_setscheduler(FIFO 10) -> EPERM, spin on"
		echo "sched_getscheduler() until SCHED_FIFO (1 s: a miss); a private rtschedd with catch-refused = yes; µs:"
		echo "label n p50_us p99_us max_us misses"
		# the user cannot write $RESULTS: its line goes to the CSV from here
		echo "label,n,p50_us,p99_us,max_us,misses" >"$csv"
		run_caught() {
			bench_run 120 prlimit --rtprio=0:0 -- setpriv --reuid="$u" --regid=nogroup --clear-groups -- \
				"$B/bench-caught" "$rounds" 10 "$1" >"$TMP/caught.line" || return
			cat "$TMP/caught.line"
			tr ' ' , <"$TMP/caught.line" >>"$csv"
		}
		run_caught idle
		if stress_start 150; then
			run_caught "stress-ng-cpu-2"
			stress_stop
		fi
	else
		broken "rtschedd with catch-refused = yes did not start"
	fi
	bg_stop "$CAUGHT_PID"
	userdel "$u" 2>/dev/null
	[ -s "$csv" ] || return
	awk -F, 'NR > 1 { printf "| %s | %d | %.0f µs | %.0f µs | %.0f µs | %d |\n", $1, $2, $3, $4, $5, $6
		if ($1 == "idle") { p99 = $4; seen = 1 } }
		BEGIN { print "| load | samples | p50 | p99 | max | misses |"; print "|---|---|---|---|---|---|" }
		END { if (seen) { print ""; printf "| target | measured | verdict |\n|---|---|---|\n| refused call -> applied p99 <= 2 ms idle | %.0f µs | %s |\n", p99, (p99 <= 2000 ? "met" : "NOT MET") } }' \
		"$csv" >"$md"
	cat "$md"
	{ echo; echo "Caught refusals (refused sched_setscheduler -> applied by the catcher):"; echo; cat "$md"; } >>"$SUMMARY"
}

# --- 13. flood: the real-time loop's budget under a flood of free requests ---------------

# utime + stime of process $1 (or of its thread $2), in clock ticks
flood_cpu_ticks() {
	local f=/proc/$1/stat
	[ -n "${2:-}" ] && f=/proc/$1/task/$2/stat
	sed 's/.*) //' "$f" 2>/dev/null | awk '{ print $12 + $13 }'
}

# run_delay (ns) and timeslices of the watchdog's canaries of daemon $1, summed
flood_canaries() {
	local t rd=0 n=0 a b c
	for t in /proc/"$1"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in rtsd-canary*) ;; *) continue ;; esac
		read -r a b c <"$t/schedstat" || continue
		rd=$((rd + b)) n=$((n + c))
	done
	echo "$rd $n"
}

# One registration series of user $1 through librtsched's kept connection,
# paced under the daemon's rate-limit: bench-register's row on stdout.
flood_register() {
	bench_run $(( $3 / 10 + 60 )) setpriv --reuid="$1" --regid=nogroup --clear-groups -- \
		env RTSCHED_SOCKET="$TMP/flood.sock" "$B/bench-register" -s kept -w 5 -r 1 -i "$FLOOD_PAUSE_US" "$2"
}

# flood_start UID CONNS SECS NAME: CONNS abuse-clients as UID, each
# pipelining one of list, status, metrics, jitter at $TMP/flood.sock for
# SECS; their output in $TMP/NAME1..; their pids in FLOOD_PIDS.
flood_start() {
	local i ops=("v=1 op=list" "v=1 op=status" "v=1 op=metrics" "v=1 op=jitter")
	FLOOD_PIDS=()
	for i in $(seq "$2"); do
		timeout -k 5 $(($3 + 150)) setpriv --reuid="$1" --regid="$1" --clear-groups \
			"$top_builddir/tests/abuse-client" flood-for "$TMP/flood.sock" "$3" "${ops[$((i % 4))]}" >"$TMP/$4$i" 2>&1 &
		FLOOD_PIDS+=($!)
	done
}

# flood_totals NAME CONNS: the sums over abuse-client's last lines in
# $TMP/NAME1..CONNS, in FL_SENT, FL_ANSWERED, FL_LIMITED, and in FL_LOST the
# connections whose replies fell short (each named on stdout).
flood_totals() {
	local i line v fl_sent fl_replies fl_rate_limited
	FL_SENT=0 FL_ANSWERED=0 FL_LIMITED=0 FL_LOST=0
	for i in $(seq "$2"); do
		line=$(tail -1 "$TMP/$1$i")
		for v in sent replies rate-limited; do
			declare "fl_${v//-/_}=$(echo "$line" | tr ' ' '\n' | sed -n "s/^$v=//p")"
		done
		FL_SENT=$((FL_SENT + ${fl_sent:-0})) FL_ANSWERED=$((FL_ANSWERED + ${fl_replies:-0}))
		FL_LIMITED=$((FL_LIMITED + ${fl_rate_limited:-0}))
		[ -n "${fl_sent:-}" ] && [ "${fl_sent:-0}" = "${fl_replies:-x}" ] || { FL_LOST=$((FL_LOST + 1)); echo "$1 $i: $line"; }
	done
}

bench_flood() {
	local u=rtsd-flood$$ flooder=4243 conns=${BENCH_FLOOD_CONNS:-100} secs idle_n n csv=$RESULTS/flood.csv md=$RESULTS/flood.md
	local i pids=() p live t0 t1 c0 c1 l0 l1 k0 k1 s0 s1 fifo=0 other=0 hz idle_row flood_row
	local sent answered limited lost
	section "13. Flood: an unprivileged user floods list/status/metrics/jitter over $conns connections"
	have bench-register || return
	[ -x "$top_builddir/tests/abuse-client" ] || { skipped "tests/abuse-client is not built (make tests/abuse-client)"; return; }
	command -v useradd >/dev/null || { skipped "useradd missing (apt-get install passwd)"; return; }
	command -v setpriv >/dev/null || { skipped "setpriv missing (apt-get install util-linux)"; return; }
	secs=$(q 10 60)
	FLOOD_PAUSE_US=50000     # 20 registrations per second: under rate-limit's default 50
	idle_n=$(( secs * 15 ))
	n=$(( secs * 15 ))       # ~0.8 of the flood: every one of them is made during it
	# the daemon as it is by default (loop-priority 1, loop-budget 10,
	# free-rate-limit 200, rate-limit 50, the watchdog on), with the
	# registration bench's rules and a user allowed to use them
	printf '[daemon]\nlog-level = warning\n[rule bench-a]\npolicy = fifo\npriority = 10\n[rule bench-b]\npolicy = fifo\npriority = 11\n[user %s]\nmax-priority = 20\npolicies = fifo,other\n' \
		"$u" >"$TMP/flood.conf"
	useradd -M -N -g nogroup -d / -s /usr/sbin/nologin "$u" || { broken "cannot add the test user $u"; return; }
	ulimit -n 65536 2>/dev/null || true
	bg_start FLOOD_DPID "$RTSCHEDD" --config "$TMP/flood.conf" --socket "$TMP/flood.sock"
	if ! wait_for "$TMP/flood.sock" 5; then
		broken "rtschedd for the flood did not start"
		userdel "$u" 2>/dev/null
		return
	fi
	status_json() { "$RTSCHEDCTL" --socket "$TMP/flood.sock" --json status; }
	hz=$(getconf CLK_TCK)
	echo "A private rtschedd as configured by default: the loop SCHED_FIFO 1 with loop-budget 10 (% of one CPU"
	echo "per 100 ms), free-rate-limit 200/s and rate-limit 50/s per user, the watchdog on. uid $flooder (no"
	echo "passwd entry) floods: $conns connections (abuse-client flood-for), each pipelining one of list, status,"
	echo "metrics, jitter as fast as the socket takes them, for $secs s$(q " (BENCH_QUICK=1: 60 s in the default run)" "")."
	echo "User $u registers (bench-register, kept connection, FIFO 10/11 in turn, one every $((FLOOD_PAUSE_US / 1000)) ms"
	echo "to stay under rate-limit): $idle_n times idle, then $n times during the flood; its thread is real-time"
	echo "meanwhile, so the watchdog's canaries run."
	echo
	idle_row=$(flood_register "$u" "$idle_n" "$idle_n") || true
	echo "idle:   $idle_row"
	# the flood, and the registrations in the middle of it
	s0=$(status_json)
	read -r k0 l0 < <(flood_canaries "$FLOOD_DPID")
	c0=$(flood_cpu_ticks "$FLOOD_DPID")
	t0=$(date +%s.%N)
	flood_start "$flooder" "$conns" "$secs" flood
	pids=("${FLOOD_PIDS[@]}")
	sleep 0.5
	flood_register "$u" "$n" "$n" >"$TMP/flood-reg.txt" &
	p=$!
	# the loop's policy as the kernel has it, every 100 ms while the flood runs
	while :; do
		live=0
		for i in "${pids[@]}"; do kill -0 "$i" 2>/dev/null && live=1 && break; done
		[ "$live" = 1 ] || break
		case "$(sed 's/.*) //' "/proc/$FLOOD_DPID/stat" 2>/dev/null | awk '{ print $39 }')" in
		0) other=$((other + 1)) ;; 1) fifo=$((fifo + 1)) ;;
		esac
		sleep 0.1
	done
	t1=$(date +%s.%N)
	c1=$(flood_cpu_ticks "$FLOOD_DPID")
	read -r k1 l1 < <(flood_canaries "$FLOOD_DPID")
	for i in "${pids[@]}"; do wait "$i"; done
	wait "$p"
	s1=$(status_json)
	flood_row=$(cat "$TMP/flood-reg.txt")
	echo "flood:  $flood_row"
	kill -0 "$FLOOD_DPID" 2>/dev/null || broken "rtschedd died in the flood"
	bg_stop "$FLOOD_DPID"
	flood_totals flood "$conns"
	sent=$FL_SENT answered=$FL_ANSWERED limited=$FL_LIMITED lost=$FL_LOST
	echo
	echo "flood: $sent requests sent in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $answered answered ($limited refused by a rate limit), $lost connections lost replies"
	echo "loop policy samples (every 100 ms): $fifo SCHED_FIFO, $other SCHED_OTHER"
	# one CSV row with everything the verdicts are made of
	{
		echo "wall_s,sent,answered,rate_limited,lost_conns,cpu_pct,budget_pct,loop_cpu_ms,stepdowns,fifo_samples,other_samples,trips,canary_late,canary_stall_ms,canary_delay_ms,canary_slices,reg_idle_n,reg_idle_fail,reg_idle_p50_us,reg_idle_p99_us,reg_flood_n,reg_flood_fail,reg_flood_p50_us,reg_flood_p99_us"
		jq -n -r --argjson a "$s0" --argjson b "$s1" \
			--arg wall "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" \
			--arg cpu "$(awk -v a="$c0" -v b="$c1" -v hz="$hz" -v w0="$t0" -v w1="$t1" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / (w1 - w0) }')" \
			--arg canary "$(awk -v a="$k0" -v b="$k1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')" \
			--arg slices "$((l1 - l0))" \
			--arg idle "$(echo "$idle_row" | awk '{ print $3 "," $4 "," $5 "," $7 }')" \
			--arg flood "$(echo "$flood_row" | awk '{ print $3 "," $4 "," $5 "," $7 }')" \
			--arg rest "$sent,$answered,$limited,$lost" --arg pol "$fifo,$other" \
			'[$wall, $rest, $cpu, $b.loop_budget_pct, ($b.loop_cpu_ms|tonumber) - ($a.loop_cpu_ms|tonumber),
			  ($b.loop_stepdowns|tonumber) - ($a.loop_stepdowns|tonumber), $pol,
			  ($b.watchdog_trips|tonumber) - ($a.watchdog_trips|tonumber),
			  ($b.watchdog_canary_late|tonumber) - ($a.watchdog_canary_late|tonumber),
			  ($b.watchdog_canary_stall_ms|tonumber) - ($a.watchdog_canary_stall_ms|tonumber), $canary, $slices, $idle, $flood] | map(tostring) | join(",")'
	} >"$csv"
	awk -F, -v secs="$secs" -v quick="$QUICK" 'NR == 2 {
		print "| target | measured | verdict |"
		print "|---|---|---|"
		printf "| no watchdog trip during the flood | %d trips | %s |\n", $12, ($12 == 0 ? "met" : "NOT MET")
		printf "| canaries on time: no tick woken over 50 ms late (watchdog_canary_late) | %d late ticks, %d ms in all; the canaries waited %.1f ms to run in %d time slices (run_delay) | %s |\n", $13, $14, $15, $16, ($13 == 0 ? "met" : "NOT MET")
		printf "| the daemon'"'"'s CPU share during the flood <= its loop-budget (%d%% of one CPU) | %.1f%% of one CPU (utime+stime over %.1f s; the loop thread %d ms; %d budget step-downs; loop sampled %d times SCHED_FIFO, %d SCHED_OTHER) | %s |\n", $7, $6, $1, $8, $9, $10, $11, ($6 <= $7 ? "met" : "NOT MET")
		printf "| another user'"'"'s registration p99 during the flood <= 2x idle | %.1f µs vs idle %.1f µs (%.2fx; p50 %.1f vs %.1f µs; %d and %d samples) | %s |\n", $24, $20, ($20 ? $24 / $20 : 0), $23, $19, $21, $17, (!$18 && !$22 && $24 <= 2 * $20 ? "met" : "NOT MET")
		printf "\nThe flood: %d requests in %.1f s, %d answered, %d of them refused by a rate limit; %d connections lost replies; the daemon spent %.1f µs of CPU per request.\n", $2, $1, $3, $4, $5, ($2 ? $6 / 100 * $1 * 1e6 / $2 : 0)
		if (quick) printf "\nBENCH_QUICK=1: a %d s flood (60 s in the default run).\n", secs
	}' "$csv" >"$md"
	flood_unlimited "$u" "$flooder" "$conns" "$secs" "$n" "$idle_row" >>"$md"
	flood_storm "$u" "$flooder" "$secs" "$n" "$idle_row" >>"$md"
	userdel "$u" 2>/dev/null
	echo
	cat "$md"
	{
		echo
		echo "Flood (uid $flooder, $conns connections of list/status/metrics/jitter at full speed for $secs s; default loop-priority 1, loop-budget 10):"
		echo
		cat "$md"
	} >>"$SUMMARY"
}

# The same flood with the rate limits off (free-rate-limit = 0, rate-limit
# out of reach), as root's requests or a limit set high would be: nothing
# holds the flooder, so what keeps another user's registration prompt is
# that the loop takes turns per user, not per connection (control.c): a
# registration waits behind about one flood request, not one per flooding
# connection. That is the p50's verdict, against the idle row of the
# defaults' daemon (per connection it was 34x idle). The p99 is given
# without one: the flood spends the loop's budget, and for the rest of
# each period the loop is SCHED_OTHER among the hundred flooding
# processes, so the tail is the fair scheduler's (loop-budget's trade).
# Called from bench_flood (its configuration, user, and status_json on the
# same socket path).
flood_unlimited() {
	local u=$1 flooder=$2 conns=$3 secs=$4 n=$5 idle_row=$6 i row c0 c1 t0 t1 sd0 sd1
	# the defaults' configuration (bench_flood's user and rules) with the limits off
	sed 's/^\[daemon\]$/[daemon]\nfree-rate-limit = 0\nrate-limit = 1000000/' "$TMP/flood.conf" >"$TMP/flood-off.conf"
	rm -f "$TMP/flood.sock"
	bg_start FLOOD_DPID "$RTSCHEDD" --config "$TMP/flood-off.conf" --socket "$TMP/flood.sock"
	if ! wait_for "$TMP/flood.sock" 5; then
		broken "rtschedd (rate limits off) for the flood did not start"
		return
	fi
	sd0=$(status_json | jq -r .loop_stepdowns)
	c0=$(flood_cpu_ticks "$FLOOD_DPID")
	t0=$(date +%s.%N)
	flood_start "$flooder" "$conns" "$secs" flood-off
	sleep 0.5
	row=$(flood_register "$u" "$n" "$n") || true
	for i in "${FLOOD_PIDS[@]}"; do wait "$i"; done
	t1=$(date +%s.%N)
	c1=$(flood_cpu_ticks "$FLOOD_DPID")
	sd1=$(status_json | jq -r .loop_stepdowns)
	kill -0 "$FLOOD_DPID" 2>/dev/null || broken "rtschedd (rate limits off) died in the flood"
	bg_stop "$FLOOD_DPID"
	flood_totals flood-off "$conns" >&2
	echo "flood, rate limits off: $row" >&2
	echo "$idle_row $row" | awk -v sent="$FL_SENT" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" \
		-v sd="$(( ${sd1:-0} - ${sd0:-0} ))" '{
		# bench-register rows: name mode n fail p50 p90 p99 ...; the flood row starts at field 11
		printf "\nThe same flood with the rate limits off (free-rate-limit = 0): the flood sent %d requests in %.1f s, the daemon used %.1f%% of one CPU, its loop stepped down %d times.\n\n| target | measured | verdict |\n|---|---|---|\n",
			sent, t1 - t0, 100 * (c1 - c0) / hz / (t1 - t0), sd
		printf "| another user'"'"'s registration p50 during the flood <= 2x idle (turns per user: it waits behind about one flood request) | %.1f µs vs idle %.1f µs (%.2fx; %d samples, %d failed) | %s |\n",
			$15, $5, ($5 ? $15 / $5 : 0), $13, $14, (!$4 && !$14 && $15 <= 2 * $5 ? "met" : "NOT MET")
		printf "| (its p99: the loop SCHED_OTHER among the flooders once its budget is spent, no target) | %.1f µs vs idle %.1f µs (%.2fx) | - |\n",
			$17, $7, ($7 ? $17 / $7 : 0)
	}'
}

# A storm of process events by the flooder: for SECS seconds one thread
# renames itself storm-0, storm-1, ... and another creates and joins
# threads named storm- (abuse-client storm), as fast as the machine
# allows; a rule matches them all and the flooder may not have it (rr). A
# turn of the loop reads at most 64 events for at most 200 us
# (sys/procev.h) and the budget is checked after each turn: the most a
# period ran at real-time priority past its budget (loop_over_max_us, an
# upper bound) is the verdict. The refusal lines the daemon wrote are
# counted against the per-user cap (core/registry.h: 10 at once, then one
# a second). Another user registers meanwhile: its p99 against idle is
# given without a target (the storm spends the budget, and for the rest
# of each period the loop is SCHED_OTHER beside the storm's threads).
# Called from bench_flood, as flood_unlimited.
flood_storm() {
	local u=$1 flooder=$2 secs=$3 n=$4 idle_row=$5 row sp t0 t1 c0 c1 s0 s1 lines unlogged storm over sd ev ovr
	sed 's/^log-level = warning$/log-level = notice/' "$TMP/flood.conf" >"$TMP/storm.conf"
	printf '[rule storm]\nthread-name = storm-*\npolicy = rr\npriority = 10\n' >>"$TMP/storm.conf"
	rm -f "$TMP/flood.sock"
	bg_start FLOOD_DPID "$RTSCHEDD" --config "$TMP/storm.conf" --socket "$TMP/flood.sock" 2>"$TMP/storm.log"
	if ! wait_for "$TMP/flood.sock" 5; then
		broken "rtschedd for the storm did not start"
		return
	fi
	s0=$(status_json)
	c0=$(flood_cpu_ticks "$FLOOD_DPID")
	t0=$(date +%s.%N)
	timeout -k 5 $((secs + 60)) setpriv --reuid="$flooder" --regid="$flooder" --clear-groups \
		"$top_builddir/tests/abuse-client" storm "$secs" storm- >"$TMP/storm.out" 2>&1 &
	sp=$!
	sleep 0.5
	row=$(flood_register "$u" "$n" "$n") || true
	wait "$sp" || broken "abuse-client storm: $(cat "$TMP/storm.out")"
	t1=$(date +%s.%N)
	c1=$(flood_cpu_ticks "$FLOOD_DPID")
	s1=$(status_json)
	kill -0 "$FLOOD_DPID" 2>/dev/null || broken "rtschedd died in the storm"
	bg_stop "$FLOOD_DPID"
	storm=$(tail -1 "$TMP/storm.out")
	lines=$(grep -c 'rule storm matched' "$TMP/storm.log" || true)
	unlogged=$(sed -n 's/.* \([0-9]*\) refusals\{0,1\} for threads of uid '"$flooder"' went unlogged.*/\1/p' "$TMP/storm.log" |
		awk '{ n += $1 } END { print n + 0 }')
	echo "storm: $storm; registrations meanwhile: $row" >&2
	read -r over sd ev ovr < <(jq -n -r --argjson a "$s0" --argjson b "$s1" '[$b.loop_over_max_us,
		(["loop_stepdowns", "connector_events", "connector_overruns"][] as $k | ($b[$k]|tonumber) - ($a[$k]|tonumber))] | map(tostring) | join(" ")')
	echo "$idle_row $row" | awk -v storm="$storm" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" \
		-v lines="$lines" -v unlogged="$unlogged" \
		-v over="$over" -v sd="$sd" -v ev="$ev" -v ovr="$ovr" '{
		w = t1 - t0
		sub(/^storm: /, "", storm)
		printf "\nA storm of process events by the same user for %.1f s (%s; a rule matches every thread, rr, which the user may not have): the daemon handled %d events (%d connector overruns), used %.1f%% of one CPU, its loop stepped down %d times.\n\n| target | measured | verdict |\n|---|---|---|\n",
			w, storm, ev, ovr, 100 * (c1 - c0) / hz / w, sd
		printf "| the most a period ran at real-time priority past its budget (loop_over_max_us) <= 1 ms | %d µs | %s |\n", over, (over <= 1000 ? "met" : "NOT MET")
		printf "| refusal lines in the log <= 10 + 1 a second | %d lines in %.1f s (%d more refusals said unlogged) | %s |\n", lines, w, unlogged, (lines <= 10 + w + 1 ? "met" : "NOT MET")
		printf "| (another user'"'"'s registration during the storm: no target) | p50 %.1f µs, p99 %.1f µs vs idle %.1f / %.1f µs; %d samples, %d failed | - |\n", $15, $17, $5, $7, $13, $14
	}'
}

# What bench-rtwatch saw between two /proc/uptime readings ($1, $2), in
# full on stdout and in one line for summary.md into file $3.
foreign_rt() {
	if [ -z "$RTW" ]; then
		echo "other programs' real-time threads: not watched (bench-rtwatch not built)"
		return
	fi
	awk -v s="$1" -v e="$2" '
		$1 >= s && $1 <= e {
			split($6, c, "/"); k = c[1] " (pid " $2 ")"
			if (!((k, $3) in seen)) { seen[k, $3] = 1; thr[k]++ }
			if (!((k, $1) in at)) { at[k, $1] = 1; samples[k]++ }
			if ($5 + 0 > top[k] + 0) { top[k] = $5; pol[k] = $4 }
			if ($7 == "R") running[k]++
		}
		END {
			for (k in thr) {
				line = line sep sprintf("%s: %d thread%s up to %s %d, seen for ~%.1f s, running in %d thread-samples", k, thr[k], thr[k] > 1 ? "s" : "", pol[k], top[k], samples[k] * 0.5, running[k]); sep = "; "
				nt += thr[k]; np++; nrun += running[k]; split(k, w, " "); if (!(w[1] in nm)) { nm[w[1]] = 1; names = names nsep w[1]; nsep = ", " }
			}
			print "other programs'"'"' real-time threads during this section (sampled every 0.5 s): " (line == "" ? "none" : line)
			if (short != "")
				print (np ? sprintf("Other programs'"'"' real-time threads meanwhile: %d thread%s in %d process%s (%s), seen running in %d samples (every 0.5 s; details in bench.txt).", nt, nt > 1 ? "s" : "", np, np > 1 ? "es" : "", names, nrun) : "Other programs'"'"' real-time threads meanwhile: none.") >short
		}' short="$3" \
		"$TMP/rtwatch.log"
}

for sec in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
	want $sec || continue
	ts=$(date +%s)
	SECTION=$sec
	read -r up0 _ </proc/uptime
	read -r load0 _ </proc/loadavg
	prefix=(x register jitter strategies footprint match fidelity hist observed startup why isolate caught flood)
	rm -f "$RESULTS/${prefix[$sec]}"*
	case $sec in
	1) bench_register ;;
	2) bench_jitter ;;
	3) bench_strategies ;;
	4) bench_footprint ;;
	5) bench_match ;;
	6) bench_fidelity ;;
	7) bench_hist ;;
	8) bench_observed ;;
	9) bench_startup ;;
	10) bench_why ;;
	11) bench_isolate ;;
	12) bench_caught ;;
	13) bench_flood ;;
	esac
	SECTION=$sec
	case $sec in
	1) expect register.md register.png ;;
	2) expect jitter.md jitter.png ;;
	3) expect strategies.md strategies.png strategies-loaded.md ;;
	4) expect footprint-idle.csv footprint-target.md footprint.png config-load.md ;;
	5) expect match-target.md match.png ;;
	6) expect fidelity.md fidelity.png ;;
	7) expect hist.txt ;;
	8) expect observed.md ;;
	9) expect startup.md ;;
	10) expect why.md ;;
	11) expect isolate.md isolate.png ;;
	12) expect caught.md ;;
	13) expect flood.csv flood.md ;;
	esac
	read -r up1 _ </proc/uptime
	foreign_rt "$up0" "$up1" "$TMP/foreign-short.txt"
	read -r load1 _ </proc/loadavg
	echo "load average (1 min) at the end: $load1"
	[ "$sec" = 7 ] || [ ! -s "$TMP/foreign-short.txt" ] ||
		{ echo; echo "Load average (1 min) $load0 at the start, $load1 at the end. $(cat "$TMP/foreign-short.txt")"; } >>"$SUMMARY"
	rm -f "$TMP/foreign-short.txt"
	echo "(section $sec took $(( $(date +%s) - ts )) s)"
done
echo
echo "=== README summary (bench/results/summary.md)"
cat "$SUMMARY"
echo
echo "all benchmarks took $(( $(date +%s) - STARTED )) s; results in $RESULTS"
if [ "${#BROKEN[@]}" -gt 0 ]; then
	echo
	echo "bench: ${#BROKEN[@]} section part(s) BROKEN (a missed target is not one; its verdict says so):"
	printf '  %s\n' "${BROKEN[@]}"
	exit 1
fi
