#!/bin/bash
# tests/irq-hotplug.sh: a USB audio device plugged in and out of a running
# machine, as `make check-kernels` does it in Debian 12's 6.1 kernel under
# qemu: booted with threadirqs, an xHCI controller (qemu-xhci, whose driver
# asks for one MSI-X vector per CPU plus one, each with its thread
# irq/N-xhci_hcd at FIFO 50), and the host adding and removing a
# usb-audio device through qemu's monitor (tests/kernels/qmp-host.py) when
# this test asks. An [irq NAME] section that matches the device by its USB
# id must give the thread of the vector serving it (vector 0) its priority
# once the device is there, leave the controller's other vectors alone, and
# give the old priority back when the device goes: first with the kernel's
# uevents (no udev), then, where systemd-udevd can run, through udev's
# sd-device monitor.
#
# Needs KERNEL_QMP (the directory qmp-host.py reads commands from) and
# KERNEL_MODULES (the unpacked kernel package's root, for modprobe -d):
# tests/kernels/run.sh passes both into the guest; elsewhere it skips.
. "$(dirname "$0")/lib.sh"
need_root
[ -n "${KERNEL_QMP:-}" ] && [ -d "$KERNEL_QMP" ] ||
	skip "runs in make check-kernels' guest, where the host plugs devices in (KERNEL_QMP)"
grep -qw threadirqs /proc/cmdline || skip "the guest was not booted with threadirqs"

# the xHCI driver, from the guest kernel's own modules (the guest's PATH is /bin)
PATH=$PATH:/usr/sbin:/sbin
modprobe -d "$KERNEL_MODULES" xhci_pci || fail "modprobe xhci_pci"
modprobe -d "$KERNEL_MODULES" snd-usb-audio 2>/dev/null || true
XHCI=$(for d in /sys/bus/pci/devices/*; do
	[ "$(readlink "$d/driver" 2>/dev/null | sed 's|.*/||')" = xhci_hcd ] && basename "$d"; done | head -1)
[ -n "$XHCI" ] || { fail "no xHCI controller bound to xhci_hcd"; finish; exit; }
VECS=$(ls "/sys/bus/pci/devices/$XHCI/msi_irqs" | sort -n)
V0=$(echo "$VECS" | head -1)
echo "# xHCI $XHCI, vectors $(echo $VECS), vector 0 is irq $V0"
[ "$(echo "$VECS" | wc -l)" -ge 2 ] && pass "the controller has $(echo "$VECS" | wc -l) vectors, all named xhci_hcd" ||
	echo "# only one vector: 'only the vector serving it' is trivially true here"
# the threads of its vectors, and what each had
tid_of() { ps -eo pid=,comm= | awk -v p="irq/$1-" 'index($2, p) == 1 { print $1; exit }'; }
declare -A BEFORE
for v in $VECS; do
	t=$(tid_of "$v")
	[ -n "$t" ] || { fail "irq $v has no thread: threadirqs did not thread it"; continue; }
	BEFORE[$v]=$(q "$t")
done
expect_in "${BEFORE[$V0]}" "policy=fifo priority=50" "vector 0's thread irq/$V0-xhci_hcd is FIFO 50 before"

# the host's monitor
N=0
qmp() { # qmp JSON: run one command on the host; the reply in QMP_OUT
	N=$((N + 1))
	printf '%s\n' "$1" >"$KERNEL_QMP/$N.cmd.tmp" && mv "$KERNEL_QMP/$N.cmd.tmp" "$KERNEL_QMP/$N.cmd"
	wait_for test -f "$KERNEL_QMP/$N.out" || { QMP_OUT="(no reply)"; return 1; }
	QMP_OUT=$(cat "$KERNEL_QMP/$N.out")
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }

cat >"$TMP/hp.conf" <<EOC
[daemon]
rate-limit = 0
max-priority = 95
watchdog = no

[irq usb-audio]
usb-id = 46f4:*
priority = 70
EOC

# round: plug in, check, plug out, check; $1 says how events arrive
round() {
	local how=$1 t0 t1 tid
	daemon_start "$TMP/hp.conf"
	expect_in "$(cat "$DLOG")" "$how" "hotplug through $how"
	expect_in "$(cat "$DLOG")" "[irq usb-audio] matches no interrupt now" "before the device: the section matches nothing, and says so"
	tid=$(tid_of "$V0")
	local synced0
	synced0=$(grep -c "interrupts synced" "$DLOG")
	t0=$(ms)
	qmp '{"execute":"device_add","arguments":{"driver":"usb-audio","id":"snd0","audiodev":"none","bus":"xhci.0"}}'
	expect_in "$QMP_OUT" '"return"' "$how: device_add usb-audio"
	at70() { q "$tid" | grep -q "policy=fifo priority=70"; }
	if wait_for at70; then
		t1=$(ms)
		pass "$how: irq/$V0-xhci_hcd got FIFO 70 $((t1 - t0)) ms after device_add returned"
	else
		fail "$how: irq/$V0-xhci_hcd is $(q "$tid") after the device came"
	fi
	# each sync after the device came: the first of the burst (the USB
	# device) applies the priority; the rest follow its interfaces and card
	echo "# $how, from the kernel's event to the sync: $(grep -o 'synced [0-9.]* ms' "$DLOG" | tail -n +$((synced0 + 1)) |
		sed 's/synced //' | tr '\n' ' ')"
	for v in $VECS; do
		[ "$v" = "$V0" ] && continue
		[ "$(q "$(tid_of "$v")")" = "${BEFORE[$v]}" ] || fail "$how: vector irq $v changed: $(q "$(tid_of "$v")")"
	done
	pass "$how: the controller's other vectors kept their scheduling"
	ctl list
	expect_in "$OUT" "usb-audio" "$how: list names the section"
	t0=$(ms)
	qmp '{"execute":"device_del","arguments":{"id":"snd0"}}'
	expect_in "$QMP_OUT" '"return"' "$how: device_del"
	at50() { [ "$(q "$tid")" = "${BEFORE[$V0]}" ]; }
	if wait_for at50; then
		pass "$how: the device gone, irq/$V0-xhci_hcd has ${BEFORE[$V0]} back ($(( $(ms) - t0 )) ms after device_del)"
	else
		fail "$how: after removal irq/$V0-xhci_hcd is $(q "$tid")"
	fi
	# the device_del finishes when the guest has let the device go
	gone() { ! grep -qs 46f4 /sys/bus/usb/devices/*/idVendor; }
	wait_for gone
	daemon_stop
	for v in $VECS; do
		[ "$(q "$(tid_of "$v")")" = "${BEFORE[$v]}" ] || fail "$how: stopped, irq $v is $(q "$(tid_of "$v")")"
	done
}

round "kernel uevents (no udev)"
UDEVD=/lib/systemd/systemd-udevd
if [ -x "$UDEVD" ] && [ -z "${IRQ_HOTPLUG_NO_UDEV:-}" ]; then
	"$UDEVD" --daemon 2>"$TMP/udevd.err" && wait_for test -e /run/udev/control
	if [ -e /run/udev/control ]; then
		UPID=$(pgrep -x systemd-udevd | head -1)
		round "udev (sd-device monitor)"
		udevadm control --exit 2>/dev/null || kill "$UPID" 2>/dev/null
	else
		echo "# systemd-udevd did not start here ($(cat "$TMP/udevd.err")): udev's path is not tested"
	fi
fi
finish
