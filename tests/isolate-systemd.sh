#!/bin/bash
# tests/isolate-systemd.sh: isolate = yes where systemd owns the cgroup tree.
# A real systemd boots in a container with cgroup2 alone and the cpuset
# controller on it; rtschedd.service runs there as user rtschedd in its
# sandbox. A thread of a transient service registers with an isolating
# rule, and rtschedd asks systemd (D-Bus, SetUnitProperties) for
# AllowedCPUs= on every unit beside that service: a process started in such
# a unit cannot run on the isolated CPU, which the kernel's cpuset files of
# the units say too; the service's other thread leaves the CPU by affinity;
# the managed thread keeps it. Without polkit's permission the code is
# isolate-refused and the thread is still managed; with the example rule
# (conf/examples/rtschedd-isolate.rules) it works. Unregister, stop, and a
# restart with the key and then without it put every unit's AllowedCPUs=
# and every task's affinity back as they were.
#
# This project's machines have the cpuset controller on the v1 hierarchy
# (systemd's hybrid layout, no systemd as PID 1): for the test the v1
# cpuset hierarchy is unmounted (it must have no group: its controller then
# moves to cgroup2) and mounted back at the end, whatever ends the test. It
# changes the machine's cgroups: run it alone (tests/all.sh holds
# /work/systest.lock around make check).
. "$(dirname "$0")/lib.sh"
need_root
machine_wide
trap 'exit 143' TERM
trap 'exit 130' INT
test_deadline 600
[ "$NCPU" -ge 2 ] || skip "needs two CPUs"
[ -x /usr/lib/polkit-1/polkitd ] || skip "polkitd is not installed (apt-get install polkitd)"

U=/sys/fs/cgroup/unified
[ -f /sys/fs/cgroup/cgroup.controllers ] && U=/sys/fs/cgroup
CS=/sys/fs/cgroup/cpuset
ISO=$LASTCPU

# --- the cpuset controller on cgroup2, for the test's time -------------------------------------
CS_MOVED= CS_ENABLED=
cpuset_back() {
	local d
	# the container's groups go first (nspawn leaves them), deepest first
	for d in $(find "$U/payload" "$U/supervisor" -mindepth 1 -type d 2>/dev/null | awk '{ print length, $0 }' |
		sort -rn | cut -d' ' -f2-); do
		rmdir "$d" 2>/dev/null
	done
	if [ -n "$CS_ENABLED" ]; then
		for d in $(find "$U" -mindepth 1 -type d | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-); do
			grep -qw cpuset "$d/cgroup.subtree_control" 2>/dev/null && echo -cpuset >"$d/cgroup.subtree_control"
		done
		echo -cpuset >"$U/cgroup.subtree_control"
	fi
	if [ -n "$CS_MOVED" ] && ! mountpoint -q "$CS"; then
		mount -t cgroup -o cpuset cgroup "$CS" || echo "FAIL - could not mount the v1 cpuset hierarchy back at $CS"
	fi
	true
}
# registered before the container's hook: it runs after the container is gone
at_exit cpuset_back
if [ -f "$CS/cpuset.cpus" ]; then
	[ -z "$(find "$CS" -mindepth 1 -type d)" ] ||
		skip "the v1 cpuset hierarchy has groups: its controller cannot move to cgroup2"
	# a process that still holds a file there (one exiting) keeps it busy a moment
	for _ in 1 2 3 4 5 6 7 8 9 10; do umount "$CS" 2>"$TMP/umount.err" && break; sleep 0.5; done
	if mountpoint -q "$CS"; then
		held=$(for p in /proc/[0-9]*; do
			for f in "$p"/cwd "$p"/root "$p"/fd/*; do
				[ "$(stat -L -c %d "$f" 2>/dev/null)" = "$(stat -c %d "$CS")" ] && echo "${p#/proc/}:$(cat "$p/comm")" && break
			done
		done 2>/dev/null | sort -u | tr '\n' ' ')
		# a process whose descriptors even root may not read (a sandbox's own
		# init) can hold it unseen: named, so the skip says what to look at
		hidden=$(for p in /proc/[0-9]*; do
			stat -L "$p"/fd/* 2>&1 >/dev/null | grep -q "Permission denied" && echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null)"
		done | sort -u | tr '\n' ' ')
		skip "cannot unmount $CS: $(cat "$TMP/umount.err") (held by: ${held:-no process found}${hidden:+; processes whose descriptors cannot be read: $hidden})"
	fi
	CS_MOVED=1
fi
grep -qw cpuset "$U/cgroup.controllers" ||
	skip "the cpuset controller did not come to cgroup2 (a v1 hierarchy holds it elsewhere)"
if ! grep -qw cpuset "$U/cgroup.subtree_control"; then
	echo +cpuset >"$U/cgroup.subtree_control" && CS_ENABLED=1
fi
pass "the cpuset controller is on cgroup2 for the test ($U)"

. "$(dirname "$0")/nspawn.sh"
# cgroup2 alone in the container, as on a machine booted with it
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
nspawn_boot "rtschedd-iso-$$" --capability=CAP_BPF,CAP_PERFMON --system-call-filter="bpf perf_event_open"
unset SYSTEMD_NSPAWN_UNIFIED_HIERARCHY
cin grep -qw cpuset /sys/fs/cgroup/cgroup.controllers &&
	pass "the container's systemd has the cpuset controller ($(cin cat /sys/fs/cgroup/cgroup.controllers))" ||
	{ fail "no cpuset controller in the container: $(cin cat /sys/fs/cgroup/cgroup.controllers)"; finish; exit; }
nspawn_install
cin sh -c 'cat >/etc/rtschedd.conf' <<EOC
[daemon]
rate-limit = 0
watchdog = no
[rule iso]
policy = fifo
priority = 10
cpus = $ISO
isolate = yes
EOC
cin sh -c "cat >/etc/systemd/system/$UNIT.d/test.conf" <<EOC
[Service]
Environment=ASAN_OPTIONS=detect_leaks=0
EOC
sctl daemon-reload
sctl start rtschedd.socket
ctl_in() { cin "$top_builddir/rtschedctl" "$@"; }
st() { ctl_in status | grep "^$1 "; }
isolated() { st isolation | grep -q " cpu $ISO for rule iso (systemd)"; }
released() { st isolation | grep -q " off$"; }
# allowed_in UNIT: what a process started in UNIT's slice now may run on
allowed_in() { cin systemd-run --quiet --wait --pipe --slice="$1" grep Cpus_allowed_list /proc/self/status | awk '{ print $2 }'; }
has_iso() { case ",$1," in *",$ISO,"*|*"-$ISO,"*) return 0 ;; *) return 1 ;; esac; }
# units_allowed: "unit ID CPUS" for every unit in the container (CPUS empty:
# no AllowedCPUs=); one paragraph per unit, and a unit without resource
# control (a target, a timer) has no AllowedCPUs line at all
units_allowed() {
	cin systemctl show '*' -p Id -p AllowedCPUs | awk 'BEGIN { RS = ""; FS = "\n" } {
		id = ""; a = ""
		for (i = 1; i <= NF; i++)
			if ($i ~ /^Id=/) id = substr($i, 4); else if ($i ~ /^AllowedCPUs=/) a = substr($i, 13)
		if (id != "") print "unit", id, a
	}'
}
# snapshot FILE: every unit's AllowedCPUs= and every task's affinity in the container
snapshot() {
	{
		units_allowed
		cin sh -c 'for s in /proc/[0-9]*/task/[0-9]*/status; do t=${s%/status}; echo "aff ${t##*/} $(sed -n "s/^Cpus_allowed_list:\t//p" $s)"; done' 2>/dev/null
	} | sort >"$1"
}
same() {
	local diff
	diff=$(awk 'NR == FNR { a[$1 " " $2] = $0; next } ($1 " " $2) in a && a[$1 " " $2] != $0 { print "was: " a[$1 " " $2] "; now: " $0 }' "$1" "$2")
	[ -z "$diff" ] && pass "$3: every unit's AllowedCPUs= and every task's affinity as before" ||
		fail "$3: $(echo "$diff" | head -5 | tr '\n' ';')"
}

# a slice with a service in it before anything is isolated, and the
# thread's own service: a task-helper as a transient service (systemd-run
# --pipe hands it the FIFOs)
cin systemd-run --quiet --unit=iso-other --slice=iso-other.slice sleep 600
hin="$TMP/helper.in"; hout="$TMP/helper.out"
mkfifo "$hin" "$hout"
nsin systemd-run --quiet --pipe --unit=iso-helper \
	-E RTSCHED_SOCKET=/run/rtschedd/control "$HELPER" <"$hin" >"$hout" &
HPID=$!
exec 3>"$hin" 4<"$hout"
q() { cin "$HELPER" query "$1"; }
T=$(spawn iso-worker)
h pid; HP=${HR#pid }
[ -n "$T" ] && [ -n "$HP" ] && pass "a thread of the transient service iso-helper.service (tid $T)" || fail "no helper thread"
snapshot "$TMP/before"

# --- without polkit's permission: refused, the thread managed all the same --------------------
h register iso-worker iso
expect_in "$HR" "ok fifo 10" "the thread registers with the isolating rule: $HR"
refused() { st isolation_error | grep -q " isolate-refused: AllowedCPUs= on"; }
wait_for refused && pass "without polkit's permission: $(st isolation_error | cut -c1-150)" ||
	fail "no isolate-refused: $(st isolation) $(st isolation_error)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "and the thread is managed"
h unregister iso-worker
sctl stop "$UNIT"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after the refusal"

# --- with the example rule ------------------------------------------------------------------------
cin install -D -m 644 "$top_srcdir/conf/examples/rtschedd-isolate.rules" /etc/polkit-1/rules.d/50-rtschedd-isolate.rules
sctl try-restart polkit.service   # it reads the directory at start (it did not exist then)
h register iso-worker iso
expect_in "$HR" "ok fifo 10" "registered again (rtschedd.service started by the socket)"
wait_for isolated && pass "isolated with polkit's rule: $(st isolation | cut -c1-160)" ||
	fail "not isolated: $(st isolation) $(st isolation_error)"
[ "$(sctl show -P User "$UNIT")" = rtschedd ] && pass "by rtschedd.service as user rtschedd" || fail "User=$(sctl show -P User "$UNIT")"
HK=$(cin sh -c "seq 0 $LASTCPU | grep -vx $ISO | paste -sd, -")
# for the log: which units rtschedd narrowed, and what it said
echo "# units with AllowedCPUs= now: $(units_allowed | awk '$3 != "" { printf "%s=%s ", $2, $3 }')"
cin journalctl -u "$UNIT" -o cat --no-pager | grep -v irq | tail -15 | sed 's/^/# rtschedd: /'
# iso-other.slice is below iso.slice (a dash in a slice's name is a level):
# the top-level slice beside system.slice is the one restricted
[ "$(sctl show -P AllowedCPUs iso.slice)" = "$HK" ] && pass "iso.slice, iso-other.slice's parent, has AllowedCPUs=$HK" ||
	fail "iso.slice AllowedCPUs='$(sctl show -P AllowedCPUs iso.slice)'"
# (iso-other.slice has no cpuset files of its own: the controller is on
# down to the group that sets CPUs, whose cpuset its children share)
[ "$(cin cat /sys/fs/cgroup/iso.slice/cpuset.cpus.effective)" = "$HK" ] &&
	pass "the kernel's cpuset of iso.slice is $HK" ||
	fail "iso.slice's cpuset.cpus.effective: $(cin cat /sys/fs/cgroup/iso.slice/cpuset.cpus.effective)"
a=$(allowed_in iso-other.slice)
has_iso "$a" && fail "a process started now in iso-other.slice may run on CPU $ISO ($a)" ||
	pass "a process started now in iso-other.slice may not run on CPU $ISO ($a)"
[ -z "$(sctl show -P AllowedCPUs system.slice)" ] && pass "system.slice, which holds the thread's service, keeps every CPU" ||
	fail "system.slice has AllowedCPUs=$(sctl show -P AllowedCPUs system.slice)"
[ "$(sctl show -P AllowedCPUs systemd-journald.service)" = "$HK" ] && pass "another service in it is restricted" ||
	fail "systemd-journald.service AllowedCPUs='$(sctl show -P AllowedCPUs systemd-journald.service)'"
[ -z "$(sctl show -P AllowedCPUs iso-helper.service)" ] && pass "the thread's own service is not" ||
	fail "iso-helper.service AllowedCPUs=$(sctl show -P AllowedCPUs iso-helper.service)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "the managed thread keeps CPU $ISO"
main_off() { ! has_iso "$(q "$HP" | sed -n 's/.*cpus=\([^ ]*\).*/\1/p')"; }
wait_for main_off && pass "the service's other thread left CPU $ISO by affinity ($(q "$HP"))" || fail "main thread: $(q "$HP")"

# a restart keeps it (the journal), then the last thread going gives it all back
sctl restart "$UNIT"
wait_for isolated && pass "after systemctl restart still isolated" || fail "not isolated after restart"
h unregister iso-worker
wait_for released && pass "released when the thread unregistered" || fail "not released: $(st isolation)"
a=$(allowed_in iso-other.slice)
has_iso "$a" && pass "a process started in iso-other.slice may run on CPU $ISO again ($a)" || fail "still not: $a"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after release"

# stop while isolated; then kill -9 and a restart without the key
h register iso-worker iso
wait_for isolated || fail "not isolated again"
sctl stop "$UNIT"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after systemctl stop"

# systemd slower than rtschedd's 5 s wait for an answer: a polkit rule that
# takes 6 s over init.scope (on a loaded machine polkit's answer can be that
# late). The call rtschedd gave up waiting for is carried out all the same
# when polkit answers, so rtschedd must count it as made (journaled before
# the call) and give the unit back at stop.
cin sh -c 'cat >/etc/polkit-1/rules.d/40-slow.rules' <<'EOR'
polkit.addRule(function(action, subject) {
	if (action.id == "org.freedesktop.systemd1.manage-units" && action.lookup("unit") == "init.scope") {
		var t = Date.now();
		while (Date.now() - t < 6000) {}
	}
});
EOR
sctl try-restart polkit.service
init_allowed() { [ "$(sctl show -P AllowedCPUs init.scope)" = "$1" ]; }
h register iso-worker iso
wait_for isolated || fail "not isolated with the slow rule: $(st isolation) $(st isolation_error)"
gave_up() { cin journalctl -u "$UNIT" -o cat --no-pager | grep -q "did not answer within .* on init.scope"; }
wait_for gave_up && pass "rtschedd stopped waiting for systemd's answer about init.scope" ||
	fail "the slow polkit rule did not make rtschedd's call time out: $(cin journalctl -u "$UNIT" -o cat --no-pager | grep init.scope | tail -2 | tr '\n' ';')"
wait_for init_allowed "$HK" && pass "init.scope has AllowedCPUs=$HK once polkit's late answer came" ||
	fail "init.scope AllowedCPUs='$(sctl show -P AllowedCPUs init.scope)'"
sctl stop "$UNIT"
wait_for init_allowed "" && pass "after systemctl stop, init.scope has every CPU again" ||
	fail "init.scope kept AllowedCPUs='$(sctl show -P AllowedCPUs init.scope)' after the stop: $(cin journalctl -u "$UNIT" -o cat --no-pager | grep -i 'init.scope' | tail -3 | tr '\n' ';')"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after" "after systemctl stop with a slow polkit"
cin rm /etc/polkit-1/rules.d/40-slow.rules
sctl try-restart polkit.service

# a directory named like PID 1's unit in a subtree its owner may write (a
# delegated unit, user@UID.service: made here as root for the test) beside
# a managed thread's group: rtschedd must not restrict the real unit of
# that name (system.slice holds rtschedd.service and the thread's own
# unit), and moves what runs in the directory off by affinity instead
D=/sys/fs/cgroup/system.slice/iso-helper.service
cin mkdir "$D/payload" "$D/system.slice"
cin sh -c "echo $HP >$D/payload/cgroup.procs"
# a process of another unit moved into the directory
cin systemd-run --quiet --unit=iso-fake sleep 600
FP=$(sctl show -P MainPID iso-fake)
moved=$(cin sh -c "echo $FP >$D/system.slice/cgroup.procs" 2>&1) || fail "could not move pid $FP into $D/system.slice: $moved"
h register iso-worker iso
wait_for isolated || fail "not isolated again: $(st isolation) $(st isolation_error)"
fake_aff() { cin sed -n 's/^Cpus_allowed_list:\t//p' "/proc/$FP/status"; }
fake_off() { a=$(fake_aff); [ -n "$a" ] && ! has_iso "$a"; }
[ -z "$moved" ] && wait_for fake_off && pass "the process in $D/system.slice left CPU $ISO by affinity ($(fake_aff))" ||
	fail "the process in the directory named system.slice: '$(fake_aff)'"
[ -z "$(sctl show -P AllowedCPUs system.slice)" ] && pass "PID 1's system.slice still keeps every CPU" ||
	fail "a directory named system.slice in a unit's subtree had PID 1's system.slice restricted: AllowedCPUs=$(sctl show -P AllowedCPUs system.slice)"
expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "the managed thread, in $D/payload, keeps CPU $ISO"
h unregister iso-worker
wait_for released || fail "not released: $(st isolation)"
cin kill "$FP"
sctl stop iso-fake
cin sh -c "echo $HP >$D/cgroup.procs"
for _ in 1 2 3 4 5 6 7 8 9 10; do cin rmdir "$D/system.slice" "$D/payload" 2>/dev/null && break; sleep 0.2; done

h register iso-worker iso
wait_for isolated || fail "not isolated again"
cin sed -i '/^isolate = yes/d' /etc/rtschedd.conf
# Restart=on-failure starts it again: it reads the journal the killed one left
sctl kill -s KILL "$UNIT"
sctl start "$UNIT"
wait_for released && pass "a restart without the key after kill -9 gives everything back" || fail "not released: $(st isolation)"
# the thread itself stays managed (the journal re-adopts it; its rule is
# still there): its rule's CPU is its own, not the isolation's
if ctl_in list | grep -qw "$T"; then
	expect_sched "$T" "policy=fifo priority=10 cpus=$ISO" "the re-adopted thread keeps its rule's CPU $ISO after the restart"
else
	fail "tid $T not re-adopted: $(ctl_in list)"
fi
snapshot "$TMP/after"
grep -v "^aff $T " "$TMP/after" >"$TMP/after.t" && mv "$TMP/after.t" "$TMP/after"
same "$TMP/before" "$TMP/after" "after kill -9 and a restart without the key (the re-adopted thread aside)"
sctl stop "$UNIT" rtschedd.socket
helper_stop
finish
