#!/bin/bash
# tests/irq.sh: interrupts and kernel threads on this machine's real
# kernel. A real rtschedd with [irq NAME], [kthread NAME] and
# irq-avoid-cpus: an MSI vector's CPUs set and read back from
# /proc/irq/N (smp_affinity_list, effective_affinity_list), a threaded
# IRQ's thread priority and ksoftirqd's changed and read back with chrt,
# all of it given back on stop, on reload without the section and, through
# the state journal, after a crash; the IRQs no section claims moved off a
# CPU and back; a managed vector's refusal with its code; --check's
# findings; and a real irqbalance told what to leave alone (when installed).
#
# System-wide state: it runs under flock /work/systest.lock (tests/all.sh
# holds it). Everything it may change is recorded first and put back by
# the test's exit hook, and by a guardian process of its own session that
# outlives a killed test (kill -9, timeout) and restores the same record.
. "$(dirname "$0")/lib.sh"
need_root
[ -r /proc/interrupts ] && [ -d /proc/irq ] || skip "no /proc/irq"
# a running irqbalance rewrites every IRQ's CPUs every 10 s, under this
# test's readings (tests/all.sh stops the service for the run and starts it after)
IB_RUNNING=$(pgrep -x irqbalance | head -1)
[ -z "$IB_RUNNING" ] || skip "irqbalance (pid $IB_RUNNING) is running and would move the IRQs this test reads back: stop it for the test (systemctl stop irqbalance, or /etc/init.d/irqbalance stop) and start it after"

# --- the record of what this test may change, and its restoration -----------------
SNAP="$TMP/irq.snapshot"
snapshot() {
	local d t
	for d in /proc/irq/[0-9]*; do
		[ -f "$d/smp_affinity_list" ] && echo "irq ${d##*/} $(cat "$d/smp_affinity_list")"
	done
	echo "default $(cat /proc/irq/default_smp_affinity)"
	for t in $(ps -eo pid=,comm= | awk '$2 ~ /^(irq\/|ksoftirqd\/|ktimers\/|rcu)/ { print $1 }'); do
		echo "kt $t $(awk '{ print $22 }' "/proc/$t/stat" 2>/dev/null) $(chrt -p "$t" 2>/dev/null |
			awk -F': ' '/policy/ { p = $2 } /priority/ { print p, $2 }' | sed 's/SCHED_\([A-Z]*\).*\( [0-9]*\)$/\1\2/')"
	done
}
snapshot >"$SNAP"
# restore FILE: put back what FILE recorded, touching only what differs
cat >"$TMP/restore.sh" <<'EOS'
while read -r kind a b c d; do
	case $kind in
	irq) [ -f "/proc/irq/$a/smp_affinity_list" ] && [ "$(cat "/proc/irq/$a/smp_affinity_list")" != "$b" ] &&
		echo "$b" >"/proc/irq/$a/smp_affinity_list" 2>/dev/null ;;
	default) [ "$(cat /proc/irq/default_smp_affinity)" != "$a" ] && echo "$a" >/proc/irq/default_smp_affinity ;;
	kt) [ "$(awk '{ print $22 }' "/proc/$a/stat" 2>/dev/null)" = "$b" ] || continue
		case $c in FIFO) chrt -f -p "$d" "$a" ;; RR) chrt -r -p "$d" "$a" ;; *) chrt -o -p 0 "$a" ;; esac ;;
	esac
done <"$1"
EOS
# the guardian: when this test's shell is gone, stop its daemon and irqbalance
# (their pids are in $TMP/pids as they start) and restore; bounded by the test
GUARD_DIR=$(mktemp -d /tmp/rtschedd-irq-guard.XXXXXX)
cp "$SNAP" "$TMP/restore.sh" "$GUARD_DIR/"
setsid bash -c '
	while kill -0 '"$$"' 2>/dev/null; do sleep 1; done
	[ -f "'"$GUARD_DIR"'/done" ] && { rm -rf "'"$GUARD_DIR"'"; exit 0; }
	for p in $(cat "'"$GUARD_DIR"'/pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	sleep 1
	bash "'"$GUARD_DIR"'/restore.sh" "'"$GUARD_DIR"'/irq.snapshot"
	rm -rf "'"$GUARD_DIR"'"' </dev/null >/dev/null 2>&1 &
track() { echo "$1" >>"$GUARD_DIR/pids"; }
put_back() {
	daemon_stop
	[ -n "${IBPID:-}" ] && { kill "$IBPID" 2>/dev/null; wait "$IBPID" 2>/dev/null; }
	[ -n "${MADE_RUNDIR:-}" ] && rm -rf /run/irqbalance
	bash "$TMP/restore.sh" "$SNAP"
	touch "$GUARD_DIR/done"
}
at_exit put_back

# in_list CPU LIST: is CPU in the kernel's CPU list ("0-3,6")?
in_list() {
	local r lo hi
	for r in ${2//,/ }; do
		lo=${r%-*} hi=${r#*-}
		[ "$1" -ge "$lo" ] && [ "$1" -le "$hi" ] && return 0
	done
	return 1
}
on_last() { in_list "$LASTCPU" "$(cat "/proc/irq/$1/smp_affinity_list")"; }

# same_as_snapshot WHAT: every IRQ's CPUs, the default and the kernel threads as recorded
same_as_snapshot() {
	snapshot >"$TMP/now"
	if diff "$SNAP" "$TMP/now" >"$TMP/diff"; then
		pass "$1: every IRQ's CPUs and every kernel thread as they were"
	else
		fail "$1: differs from the record: $(tr '\n' ';' <"$TMP/diff")"
	fi
}

# --- what this machine has to test with ---------------------------------------------
# an MSI vector whose CPUs can be moved (the kernel refuses managed ones):
# the busiest, so it soon fires and the kernel makes the move, which it
# does at a vector's next interrupt
NET= NETIRQ=
while read -r n count; do
	a=$(cat "/sys/kernel/irq/$n/actions" 2>/dev/null) c=$(cat "/sys/kernel/irq/$n/chip_name" 2>/dev/null)
	case "$c" in *PCI-MSI*) ;; *) continue ;; esac
	case "$a" in ""|*,*|*" "*) continue ;; esac
	cur=$(cat "/proc/irq/$n/smp_affinity_list")
	if echo "$cur" >"/proc/irq/$n/smp_affinity_list" 2>/dev/null; then NET=$a NETIRQ=$n; break; fi
done < <(awk -F: '$1 ~ /^ *[0-9]+$/ { n = $1 + 0; split($2, f, " "); s = 0;
	for (i = 1; i <= '"$NCPU"'; i++) s += f[i]; print n, s }' /proc/interrupts | sort -k2,2nr)
[ -n "$NETIRQ" ] || skip "no MSI vector whose CPUs can be set here"
# a threaded IRQ (irq/N-name), e.g. this VM's irq/24-ACPI:Ged at FIFO 50
read -r GEDTID GEDIRQ GEDNAME < <(ps -eo pid=,comm= | awk '$2 ~ /^irq\/[0-9]+-/ { split($2, a, "[/-]");
	sub(/^irq\/[0-9]+-/, "", $2); print $1, a[2], $2; exit }')
GEDACT=$(cat "/sys/kernel/irq/$GEDIRQ/actions" 2>/dev/null)
SOFT0=$(ps -eo pid=,comm= | awk '$2 == "ksoftirqd/0" { print $1 }')
echo "# moving irq $NETIRQ ($NET) to CPU $LASTCPU; thread ${GEDTID:-none} of irq ${GEDIRQ:-none} ($GEDACT); ksoftirqd/0 is $SOFT0"
ORIG_NET=$(cat "/proc/irq/$NETIRQ/smp_affinity_list")

# the configurations: BASE, and BASE with [irq ged]; the daemon reads LIVE
cat >"$TMP/base.conf" <<EOC
[daemon]
rate-limit = 0
max-priority = 95
watchdog = no

[irq net]
match = $NET
cpus = $LASTCPU

[kthread softirq]
match = ksoftirqd/*
policy = fifo
priority = 2
cpus = 0
EOC
cp "$TMP/base.conf" "$TMP/ged.conf"
if [ -n "$GEDTID" ]; then
	printf '\n[irq ged]\nmatch = %s\npriority = 60\n' "$GEDACT" >>"$TMP/ged.conf"
	GED_ORIG=$(q "$GEDTID")
fi
printf '[daemon]\nrate-limit = 0\nwatchdog = no\n' >"$TMP/none.conf"
CONF_A="$TMP/live.conf"
cp "$TMP/ged.conf" "$CONF_A"

daemon_start "$CONF_A"
track "$DPID"
[ "$(cat "/proc/irq/$NETIRQ/smp_affinity_list")" = "$LASTCPU" ] &&
	pass "[irq net]: /proc/irq/$NETIRQ/smp_affinity_list is $LASTCPU" ||
	fail "[irq net]: smp_affinity_list $(cat "/proc/irq/$NETIRQ/smp_affinity_list"), want $LASTCPU"
# the kernel moves a vector at its next interrupt: wait for one (the
# busiest vector was picked), but a vector that did not fire has not moved
# yet, which is no failure
moved() { [ "$(cat "/proc/irq/$NETIRQ/effective_affinity_list" 2>/dev/null || echo "$LASTCPU")" = "$LASTCPU" ]; }
fired() { awk -F: -v n="$NETIRQ" '$1 + 0 == n && $1 ~ /^ *[0-9]+$/ { split($2, f, " "); s = 0;
	for (i = 1; i <= '"$NCPU"'; i++) s += f[i]; print s }' /proc/interrupts; }
count0=$(fired)
HANG_S=30 wait_for moved
if moved; then
	pass "and the kernel's effective_affinity_list agrees, after the vector's next interrupt"
elif [ "$(fired)" = "$count0" ]; then
	echo "# irq $NETIRQ did not fire in 30 s: the kernel moves it at its next interrupt (effective $(cat "/proc/irq/$NETIRQ/effective_affinity_list"))"
else
	fail "irq $NETIRQ fired, and its effective_affinity_list is $(cat "/proc/irq/$NETIRQ/effective_affinity_list"), want $LASTCPU"
fi
expect_sched "$SOFT0" "policy=fifo priority=2" "[kthread softirq]: ksoftirqd/0 is SCHED_FIFO 2"
if [ -n "$GEDTID" ]; then
	expect_sched "$GEDTID" "policy=fifo priority=60" "[irq ged]: the thread of irq $GEDIRQ is SCHED_FIFO 60"
fi
ctl list
expect_in "$OUT" "ksoftirqd/0" "list shows ksoftirqd/0"
expect_in "$OUT" "partial:kthread-bound" "ksoftirqd's cpus = is reported: kthread-bound (PF_NO_SETAFFINITY)"
ctl --json list
[ "$(echo "$OUT" | jq -r '[.[] | select(.source == "irq")] | length')" -ge 1 ] &&
	[ "$(echo "$OUT" | jq -r '[.[] | select(.source == "kthread")] | length')" -ge 1 ] &&
	pass "list shows IRQ rows and kernel thread rows with their own SOURCE" || fail "list --json sources: $OUT"
[ "$(echo "$OUT" | jq -r ".[] | select(.irq == $NETIRQ) | .rule")" = net ] &&
	pass "list --json: irq $NETIRQ is [irq net]'s" || fail "list --json: $OUT"
[ "$(echo "$OUT" | jq -r ".[] | select(.irq == $NETIRQ) | .irq_original")" = "$ORIG_NET" ] &&
	pass "list --json: its original CPUs $ORIG_NET" || fail "list --json irq_original: $OUT"
ctl status
expect_in "$OUT" "kthreads" "status counts the kernel threads"
# check --pid of a held kernel thread names its section
ctl check --pid "$SOFT0"
expect_in "$OUT" "held by [kthread softirq]" "check --pid of ksoftirqd/0 names the section that holds it"
# jitter names a held kernel thread by its section (the BPF observer's rows)
ctl --json status
BPF=no
case "$(echo "$OUT" | jq -r .observer)" in bpf*) BPF=yes ;; *) echo "# no BPF observer here: $(echo "$OUT" | jq -r .observer)" ;; esac
if [ "$BPF" = yes ]; then
	ctl --json jitter
	[ "$(echo "$OUT" | jq -r ".[] | select(.tid == $SOFT0 and .kind == \"bpf-wakeup\") | .name")" = softirq ] &&
		pass "jitter: ksoftirqd/0's wake-up row is named by its section, softirq" || fail "jitter --json: $OUT"
	if [ -n "$GEDTID" ]; then
		[ "$(echo "$OUT" | jq -r ".[] | select(.tid == $GEDTID and .kind == \"bpf-wakeup\") | .name")" = ged ] &&
			pass "jitter: irq $GEDIRQ's thread is named ged" || fail "jitter --json, irq thread $GEDTID: $OUT"
	fi
fi
# a link that comes up (when most NIC drivers request their vectors, with
# no device event): matched again, here on a dummy interface of this test's
if ip link add rtsd-irqtest type dummy 2>/dev/null; then
	del_dummy() { ip link del rtsd-irqtest 2>/dev/null; true; }
	at_exit del_dummy
	synced() { grep -c "interrupts synced" "$DLOG"; }
	settled() { [ "$(synced)" -ge 1 ]; }
	wait_for settled
	n0=$(synced)
	more() { [ "$(synced)" -gt "$n0" ]; }
	ip link set rtsd-irqtest up
	wait_for more && pass "a link coming up is matched again ($(grep "interrupts synced" "$DLOG" | tail -1 | sed 's/.*synced //'))" ||
		fail "no sync after a link came up"
	del_dummy
else
	echo "# no dummy interfaces here: the link-up path is not tested"
fi

# reload without [irq ged]: its thread gets FIFO 50 back, the rest stays
if [ -n "$GEDTID" ]; then
	cp "$TMP/base.conf" "$CONF_A"
	ctl reload
	expect_rc 0 "reload without [irq ged]"
	[ "$(q "$GEDTID")" = "$GED_ORIG" ] && pass "the IRQ thread has its own scheduling back ($GED_ORIG)" ||
		fail "after reload: $(q "$GEDTID"), want $GED_ORIG"
	expect_sched "$SOFT0" "policy=fifo priority=2" "ksoftirqd/0 keeps FIFO 2"
	if [ "$BPF" = yes ]; then
		ctl --json jitter
		[ -z "$(echo "$OUT" | jq -r ".[] | select(.tid == $GEDTID) | .name")" ] &&
			pass "jitter: irq $GEDIRQ's thread is no longer shown once its section is gone" ||
			fail "jitter --json after the reload: $OUT"
	fi
	cp "$TMP/ged.conf" "$CONF_A"
	ctl reload
	expect_sched "$GEDTID" "policy=fifo priority=60" "reload with it again: FIFO 60"
fi

# a crash: everything stays; the next rtschedd, without the sections, gives it back
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
[ "$(cat "/proc/irq/$NETIRQ/smp_affinity_list")" = "$LASTCPU" ] && pass "after a crash the IRQ keeps its CPUs" ||
	fail "after a crash: $(cat "/proc/irq/$NETIRQ/smp_affinity_list")"
[ -s "$TMP/state" ] && grep -q "^I $NETIRQ " "$TMP/state" && pass "the journal holds the IRQ's original" ||
	fail "no I line in the journal: $(cat "$TMP/state" 2>/dev/null)"
daemon_start "$TMP/none.conf"
track "$DPID"
expect_in "$(cat "$DLOG")" "from the last run" "the next rtschedd read the IRQ entries of the journal"
same_as_snapshot "a restart without the sections"
daemon_stop

# a clean stop gives back everything
daemon_start "$CONF_A"
track "$DPID"
[ "$(cat "/proc/irq/$NETIRQ/smp_affinity_list")" = "$LASTCPU" ] && pass "started again: CPU $LASTCPU" || fail "not set"
daemon_stop
same_as_snapshot "a stop"

# --- irq-avoid-cpus: unclaimed IRQs off the last CPU, and back --------------------------
if [ "$NCPU" -ge 2 ]; then
	printf '[daemon]\nrate-limit = 0\nwatchdog = no\nirq-avoid-cpus = %s\n' "$LASTCPU" >"$TMP/avoid.conf"
	daemon_start "$TMP/avoid.conf"
	track "$DPID"
	left=0 moved=0
	while read -r kind n cpus; do
		[ "$kind" = irq ] && in_list "$LASTCPU" "$cpus" || continue
		if on_last "$n"; then left=$((left + 1)); else moved=$((moved + 1)); fi
	done <"$SNAP"
	ctl --json list
	refused=$(echo "$OUT" | jq '[.[] | select(.source == "irq-avoid" and .state == "refused")] | length')
	REFUSED=" $(echo "$OUT" | jq -r '.[] | select(.source == "irq-avoid" and .state == "refused") | .irq' | tr '\n' ' ')"
	echo "$OUT" | jq -r '.[] | select(.state != "applied") | "# refused: irq \(.irq) (\(.irq_actions)): \(.state_code): \(.state_msg)"'
	MANAGED=$(echo "$OUT" | jq -r '[.[] | select(.source == "irq-avoid" and .state_code == "irq-managed")][0].irq_actions // empty')
	MANAGED_IRQ=$(echo "$OUT" | jq -r '[.[] | select(.source == "irq-avoid" and .state_code == "irq-managed")][0].irq // empty')
	[ "$moved" -gt 0 ] && [ "$left" -eq "$refused" ] &&
		pass "irq-avoid-cpus = $LASTCPU: $moved IRQs off CPU $LASTCPU, $refused left that the kernel refused (each listed with its code)" ||
		fail "irq-avoid-cpus: $moved moved, $left left, $refused refused: $(echo "$OUT" | jq -c '.[] | select(.state != "applied")')"
	case "$(cat /proc/irq/default_smp_affinity)" in
	"$(printf %x $(( (1 << NCPU) - 1 - (1 << LASTCPU) )))") pass "new IRQs start off CPU $LASTCPU (default_smp_affinity)" ;;
	*) fail "default_smp_affinity is $(cat /proc/irq/default_smp_affinity)" ;;
	esac
	daemon_stop
	same_as_snapshot "irq-avoid-cpus, stopped"

	# auto: the CPUs a managed real-time thread is pinned to
	printf '[daemon]\nrate-limit = 0\nwatchdog = no\nirq-avoid-cpus = auto\n' >"$TMP/auto.conf"
	daemon_start "$TMP/auto.conf"
	track "$DPID"
	[ "$(cat "/proc/irq/$NETIRQ/smp_affinity_list")" = "$ORIG_NET" ] &&
		pass "auto, no pinned real-time thread: nothing moved" || fail "auto moved irq $NETIRQ already"
	helper_start
	T=$(spawn rt-pinned)
	ctl register --tid "$T" --policy fifo --priority 5 --cpus "$LASTCPU"
	expect_rc 0 "a thread pinned to CPU $LASTCPU at FIFO 5"
	off_last() { ! on_last "$NETIRQ"; }
	wait_for off_last &&
		pass "auto: irq $NETIRQ moved off CPU $LASTCPU ($(cat "/proc/irq/$NETIRQ/smp_affinity_list"))" ||
		fail "auto: irq $NETIRQ still on $(cat "/proc/irq/$NETIRQ/smp_affinity_list")"
	ctl unregister --tid "$T"
	wait_for sh -c "[ \"\$(cat /proc/irq/$NETIRQ/smp_affinity_list)\" = '$ORIG_NET' ]" &&
		pass "auto: unregistered, irq $NETIRQ back on $ORIG_NET" ||
		fail "auto: irq $NETIRQ on $(cat "/proc/irq/$NETIRQ/smp_affinity_list") after unregister"
	helper_stop
	daemon_stop
	same_as_snapshot "irq-avoid-cpus = auto, stopped"
fi

# --- a vector the kernel manages (a multi-queue disk's) is refused with a code ---------
# (irq-avoid-cpus above found them: the rows it listed as refused)
if [ -n "${MANAGED:-}" ]; then
	printf '[daemon]\nrate-limit = 0\nwatchdog = no\n[irq disk]\nmatch = %s\ncpus = 0\n' "$MANAGED" >"$TMP/m.conf"
	daemon_start "$TMP/m.conf"
	track "$DPID"
	ctl list
	expect_in "$OUT" "refused:irq-managed" "[irq disk] on $MANAGED: refused with irq-managed, not silently"
	ctl check
	expect_in "$OUT" "irq-managed" "rtschedctl check names it"
	daemon_stop
	same_as_snapshot "a refused section, stopped"
else
	echo "# no managed vector here: the irq-managed refusal is the unit tests' only"
fi

# --- --check and bad input ----------------------------------------------------------------
cat >"$TMP/c.conf" <<EOC
[daemon]
max-priority = 90
[rule audio]
policy = fifo
priority = 85
[irq nothing]
match = no-such-device-*
priority = 50
[irq net]
match = $NET
priority = 80
EOC
run "$RTSCHEDD" --check --config "$TMP/c.conf"
expect_in "$OUT" "irq-unmatched: [irq nothing] ($TMP/c.conf:6) matches no interrupt now" "--check: an [irq] matching nothing, with file:line"
expect_in "$OUT" "rt-above-irq: [rule audio] (priority 85) is at or above [irq net] (priority 80)" \
	"--check: a real-time rule above the IRQ thread it shares CPUs with"
daemon_start "$TMP/c.conf"
track "$DPID"
expect_in "$(cat "$DLOG")" "c.conf:6: [irq nothing] matches no interrupt now" "the daemon warns about it at load, with file:line"
daemon_stop
printf '[irq x]\nmatch = %s\npriority = 90\n' "$NET" >"$TMP/bad1.conf"
run "$RTSCHEDD" --test-config --config "$TMP/bad1.conf"
expect_rc 1 "a priority above max-priority is a config error"
expect_in "$ERR" "bad1.conf:3: [irq x]: priority 90 is above max-priority 80" "naming file:line"
printf '[irq x]\nmatch = %s\ncpus =\n' "$NET" >"$TMP/bad2.conf"
run "$RTSCHEDD" --test-config --config "$TMP/bad2.conf"
expect_rc 1 "an empty CPU list is a config error"
expect_in "$ERR" "bad2.conf:3: cpus: empty CPU list" "naming file:line"

# --- a real irqbalance: told what to leave alone, given its own settings back -------------
IRQBALANCE=$(command -v irqbalance || echo /usr/sbin/irqbalance)
if [ -x "$IRQBALANCE" ] && [ "$NCPU" -ge 2 ]; then
	ib_setup() { # irqbalance's own view, over its socket (as irqbalance-ui asks)
		python3 - "$1" <<'EOP'
import os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendmsg([b"setup"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, struct.pack("iII", os.getpid(), 0, 0))])
print(s.recv(65536).decode())
EOP
	}
	[ -d /run/irqbalance ] || { mkdir -p /run/irqbalance; MADE_RUNDIR=1; }
	env -u IRQBALANCE_BANNED_CPULIST -u IRQBALANCE_BANNED_CPUS "$IRQBALANCE" --foreground --interval=1 --debug \
		>"$TMP/irqbalance.log" 2>&1 &
	IBPID=$!
	track "$IBPID"
	IBSOCK=/run/irqbalance/irqbalance$IBPID.sock
	wait_for test -S "$IBSOCK" && pass "irqbalance (pid $IBPID) serves $IBSOCK" || fail "irqbalance has no socket"
	OWN_BANNED=$(ib_setup "$IBSOCK" | grep -o 'BANNED [0-9a-f,]*')
	printf '[daemon]\nrate-limit = 0\nwatchdog = no\nirq-avoid-cpus = %s\n[irq net]\nmatch = %s\ncpus = %s\n' \
		"$LASTCPU" "$NET" "$LASTCPU" >"$TMP/ib.conf"
	daemon_start "$TMP/ib.conf"
	track "$DPID"
	ctl status
	expect_in "$OUT" "running (pid $IBPID), banning CPUs $LASTCPU and IRQs $NETIRQ" "status: irqbalance told to ban CPU $LASTCPU and irq $NETIRQ"
	setup=$(ib_setup "$IBSOCK")
	expect_in "$setup" "IRQ $NETIRQ " "irqbalance's own setup lists irq $NETIRQ as banned"
	# the CPUs at irqbalance's next pass (--interval=1: within seconds)
	ib_banned() { ib_setup "$IBSOCK" | grep -q "BANNED $(printf %08x $((1 << LASTCPU)))"; }
	wait_for ib_banned && pass "and, from its next pass, CPU $LASTCPU as banned" ||
		fail "irqbalance does not ban CPU $LASTCPU: $(ib_setup "$IBSOCK")"
	expect_in "$(cat "$DLOG")" "irqbalance (pid $IBPID) runs" "the daemon left the unclaimed IRQs to irqbalance"
	# irqbalance places the unclaimed IRQs itself, at its passes, as its own
	# balancing decides (what it moves is its business, and recorded here;
	# that it was told is the test)
	still_on_last() {
		local kind n cpus k=0
		while read -r kind n cpus; do
			[ "$kind" = irq ] && [ "$n" != "$NETIRQ" ] || continue
			case "${REFUSED:-}" in *" $n "*) continue ;; esac   # the kernel's to place
			in_list "$LASTCPU" "$cpus" && on_last "$n" && k=$((k + 1))
		done <"$SNAP"
		echo "$k"
	}
	sleep 5
	echo "# irqbalance (--interval=1) after 5 s: $(still_on_last) unclaimed IRQs it may place still have CPU $LASTCPU"
	[ "$(cat "/proc/irq/$NETIRQ/smp_affinity_list")" = "$LASTCPU" ] &&
		pass "irqbalance left the claimed irq $NETIRQ on CPU $LASTCPU" ||
		fail "irq $NETIRQ moved to $(cat "/proc/irq/$NETIRQ/smp_affinity_list") under irqbalance"
	daemon_stop
	# the IRQs at once; the CPUs at its next pass
	setup=$(ib_setup "$IBSOCK")
	case "$setup" in *"IRQ $NETIRQ "*) fail "irq $NETIRQ still banned: $setup" ;; *) pass "stopped: irqbalance bans no IRQ of rtschedd's" ;; esac
	ib_own() { ib_setup "$IBSOCK" | grep -q "$OWN_BANNED\$"; }
	wait_for ib_own && pass "and, from its next pass, its own banned CPUs again ($OWN_BANNED)" ||
		fail "irqbalance's banned CPUs are not its own again: $(ib_setup "$IBSOCK")"
	kill "$IBPID"; wait "$IBPID" 2>/dev/null; IBPID=
	grep -E "Banned CPUs|banned|Rescanning|cannot" "$TMP/irqbalance.log" | sort | uniq -c | sed 's/^/# irqbalance: /' | head -20
	[ -n "${MADE_RUNDIR:-}" ] && rm -rf /run/irqbalance && MADE_RUNDIR=
	bash "$TMP/restore.sh" "$SNAP"
	same_as_snapshot "irqbalance stopped, its moves undone"
else
	echo "# irqbalance is not installed: its cooperation is not tested"
fi
finish
