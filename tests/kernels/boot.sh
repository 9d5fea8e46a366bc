#!/bin/bash
# tests/kernels/boot.sh: run one command inside another kernel under qemu
# (TCG: no KVM needed) and come back with its output and exit status.
#
#   tests/kernels/boot.sh -k VMLINUZ -i INITRD -o OUTDIR [-s PATH]... [-t SECONDS]
#                         [-a KERNEL_ARGS] [-d QEMU_DEVICE]... [-H HOST_CMD] -- COMMAND...
#
# The guest sees the host's root filesystem read-only (virtio-9p), fresh tmpfs
# on /tmp, /run, /var/tmp, and each -s PATH (e.g. an out-of-tree build
# directory and the source tree) read-only at the same path, so test scripts
# run unchanged. OUTDIR (created, emptied) is writable in the guest at the
# same path; there COMMAND's output lands in OUTDIR/output, its exit status
# in OUTDIR/rc and the serial console in OUTDIR/console.log. COMMAND runs as
# root with bash, in the current directory, with the environment variables
# named in PASS_ENV (e.g. "top_builddir top_srcdir").
#
# -a adds words to the kernel's command line (e.g. threadirqs); each -d adds
# one qemu option and its value, split at the first blank (e.g.
# "-device qemu-xhci,id=xhci"). qemu's QMP monitor listens on
# OUTDIR/qmp.sock; -H runs HOST_CMD (with bash, on the host) while the guest
# runs, to drive it: it sees OUTDIR as $OUT and is ended with the guest.
#
# Exit status: COMMAND's; 124 if the guest ran past SECONDS (default 3600,
# or KERNEL_TIMEOUT) and was killed; 125 if it stopped without an exit
# status (kernel panic, init failure: see OUTDIR/console.log).
set -eu
usage() { echo "usage: $0 -k VMLINUZ -i INITRD -o OUTDIR [-s PATH]... [-t SECONDS] [-a ARGS] [-d OPT]... [-H CMD] -- COMMAND..." >&2; exit 64; }
KERNEL= INITRD= OUT= TMO=${KERNEL_TIMEOUT:-3600} KARGS= HOSTCMD=
SHARE=() QEMU_EXTRA=()
while getopts k:i:o:s:t:a:d:H: o; do
	case $o in
	k) KERNEL=$OPTARG ;;
	i) INITRD=$OPTARG ;;
	o) OUT=$OPTARG ;;
	s) SHARE+=("$(realpath -e "$OPTARG")") ;;
	t) TMO=$OPTARG ;;
	a) KARGS="$KARGS $OPTARG" ;;
	d) QEMU_EXTRA+=("${OPTARG%% *}" "${OPTARG#* }") ;;
	H) HOSTCMD=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$KERNEL" ] && [ -n "$INITRD" ] && [ -n "$OUT" ] && [ $# -gt 0 ] || usage
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "boot.sh: qemu-system-x86_64 missing: apt-get install qemu-system-x86" >&2; exit 1; }

mkdir -p "$OUT"
OUT=$(realpath -e "$OUT")
rm -f "$OUT/output" "$OUT/rc" "$OUT/console.log" "$OUT/cmd" "$OUT/guest.conf" "$OUT/qmp.sock"

# the command, as a script the guest's init runs with bash
{
	echo "# written by tests/kernels/boot.sh"
	for v in ${PASS_ENV:-}; do
		[ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
	done
	printf 'cd %q || exit 125\n' "$PWD"
	printf 'exec'; printf ' %q' "$@"; printf '\n'
} >"$OUT/cmd"

# parents before children: a share inside another is mounted after it
args=() shares=
i=0
while read -r p; do
	[ -n "$p" ] || continue
	args+=(-virtfs "local,path=$p,mount_tag=s$i,security_model=none,readonly=on,multidevs=remap")
	shares="$shares s$i:$p"
	i=$((i + 1))
done < <(printf '%s\n' "${SHARE[@]}" | awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-)
printf 'RESULTS=%q\nSHARES=%q\n' "$OUT" "$shares" >"$OUT/guest.conf"

HOSTJOB=
if [ -n "$HOSTCMD" ]; then
	OUT=$OUT bash -c "$HOSTCMD" >"$OUT/host-cmd.log" 2>&1 &
	HOSTJOB=$!
fi
rc=0
# tcg,thread=single: one host thread runs both vCPUs in turn. With qemu's
# multi-threaded TCG (the default) the guest froze three times in about 20
# runs of the CI set (2026-11-26/27), each time where a test's daemon
# starts or stops (where the BPF observer's tracepoints are patched into
# the kernel's text): qemu's two vCPU threads busy, the guest silent (once
# an RCU stall report, twice nothing, sysrq from the keyboard unanswered).
# The cause is not proven; with one thread the CI set passed 8 runs in a
# row, in 47-54 s each, no slower than before.
timeout --kill-after=10 "$TMO" qemu-system-x86_64 \
	-accel tcg,thread=single -cpu max -smp 2 -m 2G -nographic -no-reboot -nic none \
	-kernel "$KERNEL" -initrd "$INITRD" \
	-append "console=ttyS0 panic=-1 quiet nowatchdog$KARGS" \
	-qmp "unix:$OUT/qmp.sock,server=on,wait=off" \
	-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap" \
	-virtfs "local,path=$OUT,mount_tag=results,security_model=none" \
	"${args[@]}" "${QEMU_EXTRA[@]}" </dev/null >"$OUT/console.log" 2>&1 || rc=$?
if [ -n "$HOSTJOB" ]; then
	kill "$HOSTJOB" 2>/dev/null
	wait "$HOSTJOB" 2>/dev/null || true
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "boot.sh: the guest ran past $TMO s and was killed; console: $OUT/console.log" >&2
	exit 124
fi
if [ ! -s "$OUT/rc" ]; then
	echo "boot.sh: the guest stopped without an exit status (qemu exit $rc); last console lines:" >&2
	tail -20 "$OUT/console.log" >&2
	exit 125
fi
exit "$(cat "$OUT/rc")"
