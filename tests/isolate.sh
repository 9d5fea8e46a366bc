#!/bin/bash
# tests/isolate.sh: isolate = yes and resume-latency-us on the real kernel,
# through the v1 cpuset hierarchy (this project's machines; the systemd
# path is tests/isolate-systemd.sh). A managed thread of a rule with
# isolate = yes empties its CPU: a process started afterwards (no affinity
# of its own) cannot run there, and can again once the thread goes; the
# unbound workqueues leave it; its resume latency is held; the threads of
# other rules stay. After unregister, stop, a reload without the key and a
# kill -9 with a restart, every task's cpuset group and affinity, every
# group's CPUs, the workqueue mask and each CPU's resume latency are what
# they were before (a snapshot of the kernel's view, compared task by
# task). Bad configurations are errors with file:line; a CPU that cannot
# be isolated gets its code and the thread stays managed.
#
# It moves every task of the machine: run it alone (tests/all.sh holds
# /work/systest.lock around make check). Whatever ends it, the EXIT trap
# puts back what the daemon did not.
. "$(dirname "$0")/lib.sh"
need_root
machine_wide
trap 'exit 143' TERM
trap 'exit 130' INT

CS=/sys/fs/cgroup/cpuset
WQ=/sys/devices/virtual/workqueue/cpumask
HK=$CS/rtschedd.housekeeping
[ -f "$CS/cpuset.cpus" ] || skip "no v1 cpuset hierarchy at $CS (cgroup2 machines: tests/isolate-systemd.sh)"
[ "$NCPU" -ge 2 ] || skip "needs two CPUs"
[ -e "$HK" ] && skip "$HK exists: another rtschedd isolates CPUs here"
ISO=$LASTCPU
QOS=/sys/devices/system/cpu/cpu$ISO/power/pm_qos_resume_latency_us

# --- what the kernel holds, and putting it back whatever happens -------------------------------
# snapshot FILE: every task's cpuset group and affinity (but unbound
# kworkers', which follow the workqueue mask's pools), every cpuset
# group's CPUs, the workqueue mask, each CPU's resume latency
snapshot() {
	{
		grep -H . /proc/[0-9]*/task/[0-9]*/cpuset 2>/dev/null |
			sed -n 's|^/proc/[0-9]*/task/\([0-9]*\)/cpuset:|cg \1 |p'
		awk '/^Name:/ { n = $2 } /^Cpus_allowed_list:/ { split(FILENAME, p, "/"); if (n !~ /^kworker\/u/) print "aff", p[5], $2 }' \
			/proc/[0-9]*/task/[0-9]*/status 2>/dev/null
		find "$CS" -name cpuset.cpus | while read -r f; do echo "group ${f#"$CS"} $(cat "$f")"; done
		echo "wq - $(cat "$WQ")"
		echo "lb - $(cat "$CS/cpuset.sched_load_balance")"
		for f in /sys/devices/system/cpu/cpu[0-9]*/power/pm_qos_resume_latency_us; do echo "qos $f $(cat "$f")"; done
		for f in /proc/irq/[0-9]*/smp_affinity_list; do echo "irq $f $(cat "$f")"; done
		echo "dflt - $(cat /proc/irq/default_smp_affinity)"
	} | sort >"$1"
}
# has_cpu N LIST: CPU N is in the CPU list LIST (1,3-5)
has_cpu() { echo "$2" | awk -v n="$1" -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-"); if (n >= r[1] && n <= (r[2] == "" ? r[1] : r[2])) f = 1 } } END { exit !f }'; }
# same BEFORE AFTER DESC: every line of BEFORE whose task (or file) is still
# there is in AFTER unchanged, and nothing is in the housekeeping group
same() {
	local diff
	diff=$(awk 'NR == FNR { a[$1 " " $2] = $0; next } ($1 " " $2) in a && a[$1 " " $2] != $0 { print "was: " a[$1 " " $2] "; now: " $0 }' "$1" "$2")
	if [ -z "$diff" ] && [ ! -e "$HK" ] && ! grep -q " /rtschedd.housekeeping$" "$2"; then
		pass "$3: every task's group and affinity, every group, load balancing, the workqueue mask, resume latencies and IRQs' CPUs as before"
	else
		fail "$3: $(echo "$diff" | head -5 | tr '\n' ';') $( [ -e "$HK" ] && echo "$HK is still there")"
	fi
}
snapshot "$TMP/before"
WQ0=$(cat "$WQ")
LB0=$(cat "$CS/cpuset.sched_load_balance")
put_back() {
	# the daemon restores on stop; this is for a test killed midway
	if [ -d "$HK" ]; then
		for _ in 1 2 3; do for t in $(cat "$HK/tasks"); do echo "$t" >"$CS/tasks" 2>/dev/null; done; done
		rmdir "$HK" 2>/dev/null
	fi
	[ "$(cat "$WQ")" = "$WQ0" ] || echo "$WQ0" >"$WQ"
	[ "$(cat "$CS/cpuset.sched_load_balance")" = "$LB0" ] || echo "$LB0" >"$CS/cpuset.sched_load_balance"
	awk '$1 == "qos" || $1 == "irq" { print $2, $3 }' "$TMP/before" |
		while read -r f v; do [ "$(cat "$f" 2>/dev/null)" = "$v" ] || echo "$v" >"$f" 2>/dev/null; done
	awk '$1 == "dflt" { print $3 }' "$TMP/before" | while read -r v; do echo "$v" >/proc/irq/default_smp_affinity; done
	awk '$1 == "group" && $2 != "/" { print $2, $3 }' "$TMP/before" | while read -r g v; do
		[ -f "$CS$g/cpuset.cpus" ] && [ "$(cat "$CS$g/cpuset.cpus")" != "$v" ] && echo "$v" >"$CS$g/cpuset.cpus"; done
	[ -n "${SUB:-}" ] && rmdir "$CS/$SUB" 2>/dev/null
	true
}
at_exit put_back
# the whole test is bounded, whatever hangs
test_deadline $((HANG_S + 300))

# st KEY: a line of rtschedctl status ("KEY   VALUE")
st() { "$RTSCHEDCTL" --socket "$SOCK" status | grep "^$1 "; }
isolated() { st isolation | grep -q " cpu $ISO for "; }
released() { st isolation | grep -q " off$"; }
allowed() { awk '/^Cpus_allowed_list:/ { print $2 }' /proc/"$1"/status; }
# a process started now, with no affinity of its own
fresh() { sleep 600 >/dev/null 2>&1 & echo $!; }

# --- bad configurations: errors with file:line ------------------------------------------------
bad() {
	printf '[rule r]\npolicy = fifo\npriority = 10\n%s\n' "$1" >"$TMP/bad.conf"
	run "$RTSCHEDD" --test-config --config "$TMP/bad.conf"
	if [ "$RC" -eq 1 ] && case "$ERR" in *"$TMP/bad.conf:$2: [rule r]: $3"*) true ;; *) false ;; esac; then
		pass "config error: $4"
	else
		fail "config error: $4: exit $RC, stderr: $ERR"
	fi
}
bad "isolate = yes" 4 "isolate = yes needs the CPUs" "isolate = yes without cpus"
bad $'cpus = 0-'"$LASTCPU"$'\nisolate = yes' 4 "isolate = yes with cpus = 0-$LASTCPU empties every online CPU" \
	"isolate = yes with every CPU"
# CPUs outside the cpuset rtschedd runs in: --test-config from a group with CPU 0 only
SUB=rtschedd-test.$$
mkdir "$CS/$SUB" && echo 0 >"$CS/$SUB/cpuset.cpus" && cat "$CS/cpuset.mems" >"$CS/$SUB/cpuset.mems"
printf '[rule r]\npolicy = fifo\npriority = 10\ncpus = %s\nisolate = yes\n' "$ISO" >"$TMP/bad.conf"
run sh -c "echo \$\$ >$CS/$SUB/tasks && exec '$RTSCHEDD' --test-config --config '$TMP/bad.conf'"
rmdir "$CS/$SUB"; SUB=
expect_rc 1 "isolate = yes with a CPU outside rtschedd's cpuset is an error"
expect_in "$ERR" "$TMP/bad.conf:4: [rule r]: isolate = yes with cpus = $ISO: CPU $ISO is outside rtschedd's cpuset (0)" \
	"it names file:line, the CPU and the cpuset"
printf '[rule r]\npolicy = fifo\npriority = 10\nresume-latency-us = 5\n' >"$TMP/warn.conf"
run "$RTSCHEDD" --test-config --config "$TMP/warn.conf"
expect_rc 0 "resume-latency-us without cpus is valid"
expect_in "$ERR" "warning: $TMP/warn.conf:4: [rule r]: resume-latency-us without cpus" \
	"and warned about, with file:line: every CPU its threads may run on"

# --- isolation and release ----------------------------------------------------------------------
CONF="$TMP/iso.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
[rule iso]
policy = fifo
priority = 10
cpus = $ISO
isolate = yes
resume-latency-us = 0
[rule other]
policy = fifo
priority = 11
EOC
# --check: what stays on the CPU whatever rtschedd does, and the boot
# parameters that would move it
run "$RTSCHEDD" --check --config "$CONF"
expect_in "$OUT" "isolate-kthreads: " "--check names the per-CPU kernel threads that stay (isolate-kthreads)"
expect_in "$OUT" "ksoftirqd/$ISO" "ksoftirqd/$ISO among them"
expect_in "$OUT" "isolate-boot-params: " "--check reports what only the command line moves (isolate-boot-params)"
grep -qw "rcu_nocbs=[^ ]*$ISO" /proc/cmdline || expect_in "$OUT" "rcu_nocbs=$ISO" "with the boot parameter that would"
taskset -c "$ISO" sleep 600 & PINNED=$!
sleep 600 & LOOSE=$!
daemon_start "$CONF"
helper_start
T=$(spawn iso-worker)
O=$(spawn other-worker)
ctl register --tid "$O" --role other
ctl register --tid "$T" --role iso
expect_rc 0 "a thread registers with the isolating rule"
wait_for isolated && pass "CPU $ISO isolated ($(st isolation | cut -c1-160))" || fail "no isolation: $(st isolation)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "the managed thread keeps its CPU"
N=$(fresh)
case ",$(allowed "$N")," in *",$ISO,"*|*"-$ISO,"*) fail "a process started now may run on CPU $ISO: $(allowed "$N")" ;;
	*) pass "a process started after isolation may not run on CPU $ISO ($(allowed "$N"))" ;; esac
taskset -pc "$ISO" "$N" >/dev/null 2>&1 && fail "taskset moved it onto CPU $ISO" ||
	pass "and the kernel refuses it CPU $ISO (taskset -pc $ISO fails)"
[ "$(cat "$QOS")" = "n/a" ] && pass "CPU $ISO's resume latency is n/a (no idle state)" || fail "$QOS is $(cat "$QOS")"
[ "$(cat /sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us)" = "$(awk '$2 ~ /cpu0\// { print $3 }' "$TMP/before")" ] &&
	pass "CPU 0's resume latency untouched" || fail "CPU 0's resume latency changed"
[ "$(cat "$WQ")" != "$WQ0" ] && pass "the unbound workqueue mask left CPU $ISO ($WQ0 -> $(cat "$WQ"))" || fail "workqueue mask still $WQ0"
# the IRQs nobody claimed leave the CPU (irq-avoid-cpus is off here): all
# but those the kernel refuses, each listed with its code
ctl --json list
REFUSED=" $(echo "$OUT" | jq -r '.[] | select(.source == "irq-avoid" and .state == "refused") | .irq' | tr '\n' ' ')"
moved=0 left=""
while read -r kind f cpus; do
	[ "$kind" = irq ] && has_cpu "$ISO" "$cpus" || continue
	n=${f#/proc/irq/}; n=${n%%/*}
	case "$REFUSED" in *" $n "*) continue ;; esac
	if has_cpu "$ISO" "$(cat "$f")"; then left="$left $n"; else moved=$((moved + 1)); fi
done <"$TMP/before"
if pgrep -x irqbalance >/dev/null; then
	echo "# irqbalance runs: it moves the IRQs at its own pace (rtschedd bans the CPU there); not checked"
elif [ "$moved" -gt 0 ] && [ -z "$left" ]; then
	pass "$moved unclaimed IRQs left CPU $ISO (refused by the kernel, and listed so:${REFUSED% })"
else
	fail "IRQs: $moved moved, still on CPU $ISO:${left:- none}"
fi
DFLT=$(tr -d , </proc/irq/default_smp_affinity)
(( (0x$DFLT >> ISO) & 1 )) && fail "new IRQs may still start on CPU $ISO (default_smp_affinity $DFLT)" ||
	pass "new IRQs start off CPU $ISO (default_smp_affinity $DFLT)"
expect_sched "$O" "policy=fifo priority=11" "another rule's managed thread is left alone"
[ "$(cat /proc/"$O"/cpuset)" = / ] && pass "and stays in the root group" || fail "it is in $(cat /proc/"$O"/cpuset)"
h pid; HP=${HR#pid }
[ "$(cat /proc/"$HP"/task/"$HP"/cpuset)" = /rtschedd.housekeeping ] &&
	pass "the managed thread's own process's main thread left the CPU" || fail "main thread in $(cat /proc/"$HP"/cpuset)"
# a thread created now by an unmanaged thread of that process, and
# managed later, gets the CPU back
L=$(spawn late-worker)
ctl register --tid "$L" --role iso
expect_rc 0 "a thread born in the housekeeping group registers with the isolating rule"
expect_sched "$L" "policy=fifo priority=10 cpus=$ISO" "and gets the isolated CPU"
ctl unregister --tid "$L"

ctl unregister --tid "$T"
wait_for released && pass "released when the last thread of the rule went" || fail "not released"
case ",$(allowed "$N")," in *",$ISO,"*|*"-$ISO,"*) pass "the process started during isolation may run on CPU $ISO again ($(allowed "$N"))" ;;
	*) fail "it still may not: $(allowed "$N")" ;; esac
[ "$(allowed "$PINNED")" = "$ISO" ] && pass "a process pinned to CPU $ISO before is pinned there again" ||
	fail "pinned process now on $(allowed "$PINNED")"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after the last thread unregistered"
st isolation_release_us >/dev/null && pass "status says how long the release took ($(st isolation_release_us))" ||
	fail "no isolation_release_us in status"

# a reload without the key releases it
ctl register --tid "$T" --role iso
wait_for isolated || fail "not isolated again"
sed -i '/^isolate = yes/d; /^resume-latency-us/d' "$CONF"
ctl reload
expect_rc 0 "reload without isolate"
wait_for released && pass "a reload without isolate releases the CPU" || fail "still isolated after reload"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after the reload"

# kill -9 keeps it; a restart without the key puts it all back from the journal
sed -i "s/^cpus = $ISO\$/cpus = $ISO\nisolate = yes\nresume-latency-us = 0/" "$CONF"
ctl reload
wait_for isolated || fail "not isolated after reload with the key"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
[ -d "$HK" ] && [ "$(cat "$QOS")" = "n/a" ] && pass "after kill -9 CPU $ISO stays isolated (the thread is still real-time)" ||
	fail "kill -9 undid the isolation by itself?"
daemon_start "$CONF"
wait_for isolated && pass "a restart with the same configuration takes the isolation over" || fail "not taken over"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
sed -i '/^isolate = yes/d; /^resume-latency-us/d' "$CONF"
daemon_start "$CONF"
wait_for released && pass "a restart without the key releases what the crashed one isolated" || fail "not released"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after kill -9 and a restart without the key"

# a reload that adds the key to an rtschedd started without it: refused
# with its code (the capability is kept only for a configuration at
# start), the thread still managed; a restart isolates
sed -i "s/^cpus = $ISO\$/cpus = $ISO\nisolate = yes\nresume-latency-us = 0/" "$CONF"
ctl reload
refused() { st isolation_error | grep -q " isolate-refused: .*restart it"; }
wait_for refused && pass "isolate = yes added by a reload: isolate-refused, saying to restart" ||
	fail "no isolate-refused: $(st isolation_error)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "and the thread is still managed"
daemon_stop
daemon_start "$CONF"
ctl register --tid "$T" --role iso
# stop while isolated
wait_for isolated && pass "a restart with the key isolates" || fail "not isolated"
daemon_stop
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after a stop"

# --- what cannot be isolated: a code, and the thread stays managed ------------------------------
mkdir "$HK"
daemon_start "$CONF"
ctl register --tid "$T" --role iso
busy() { st isolation_error | grep -q " isolate-busy:"; }
wait_for busy && pass "a housekeeping group that is not this rtschedd's: isolate-busy" || fail "no isolate-busy: $(st isolation)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "and the thread is still managed"
daemon_stop
rmdir "$HK"
cat >>"$CONF" <<EOC
[rule iso0]
policy = fifo
priority = 12
cpus = 0-$((ISO - 1))
isolate = yes
EOC
daemon_start "$CONF"
Z=$(spawn zero-worker)
ctl register --tid "$T" --role iso
ctl register --tid "$Z" --role iso0
nohk() { st isolation_error | grep -q " isolate-no-housekeeping:"; }
wait_for nohk &&
	pass "two rules that would empty every CPU: isolate-no-housekeeping" || fail "no isolate-no-housekeeping"
expect_sched "$Z" "policy=fifo priority=12" "and both threads are still managed"
[ ! -e "$HK" ] && pass "and nothing is isolated" || fail "$HK exists"
daemon_stop
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "at the end"
kill "$PINNED" "$LOOSE" "$N" 2>/dev/null
helper_stop
finish
