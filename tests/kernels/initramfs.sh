#!/bin/bash
# tests/kernels/initramfs.sh: build the initramfs that tests/kernels/boot.sh
# boots: busybox (package busybox-static), tests/kernels/guest-init as /init,
# and the modules the guest needs to reach the host over virtio-9p, taken from
# the unpacked kernel package (tests/kernels/fetch.sh) with their dependencies
# in load order (/modules.load).
#
#   tests/kernels/initramfs.sh KERNEL_DIR OUTPUT
#
# KERNEL_DIR is what fetch.sh printed (it holds root/lib/modules/VERSION).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 KERNEL_DIR OUTPUT" >&2; exit 64; }
KDIR=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
BUSYBOX=/bin/busybox
case "$(ldd "$BUSYBOX" 2>&1 || true)" in
*"not a dynamic"*|*"statically linked"*) ;;
*) echo "initramfs.sh: needs a static $BUSYBOX: apt-get install busybox-static" >&2; exit 1 ;;
esac
MODDIR=$(ls -d "$KDIR"/root/lib/modules/*/ | head -1)
[ -f "$MODDIR/modules.dep" ] || { echo "initramfs.sh: no modules.dep in $MODDIR (run fetch.sh)" >&2; exit 1; }

# What the guest needs: the virtio PCI transport, 9p over virtio.
WANT="virtio_pci 9pnet_virtio 9p"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,dev,proc,sys,lib/modules,results,newroot}
cp "$BUSYBOX" "$STAGE/bin/busybox"
cp "$HERE/guest-init" "$STAGE/init"
chmod 755 "$STAGE/init"

# modules.dep: "kernel/x/m.ko: dep.ko ...", dependencies listed so that the
# last one loads first; emit each module after what it needs, once.
declare -A done_
load() {
	local line deps d i
	[ -z "${done_[$1]:-}" ] || return 0
	line=$(grep -E "(^|/)$1\.ko(\.[a-z]+)?:" "$MODDIR/modules.dep") ||
		{ grep -qE "/$1\.ko" "$MODDIR/modules.builtin" && return 0
		  echo "initramfs.sh: module $1 is neither in modules.dep nor built in" >&2; exit 1; }
	read -r -a deps <<<"${line#*:}"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		d=$(basename "${deps[i]}"); load "${d%%.ko*}"
	done
	done_[$1]=1
	echo "${line%%:*}"
}
: >"$STAGE/modules.load"
# busybox's insmod loads plain .ko files: the 6.12 of bookworm-backports
# ships them xz-compressed, so they go in uncompressed
for m in $WANT; do load "$m"; done | while read -r ko; do
	plain=$(basename "${ko%.ko*}.ko")
	case "$ko" in
	*.ko) cp "$MODDIR/$ko" "$STAGE/lib/modules/" ;;
	*.ko.xz) xz -dc "$MODDIR/$ko" >"$STAGE/lib/modules/$plain" ;;
	*.ko.zst) zstd -dcq "$MODDIR/$ko" >"$STAGE/lib/modules/$plain" ;;
	*) echo "initramfs.sh: $ko: only plain, .xz and .zst modules are handled" >&2; exit 1 ;;
	esac
	echo "$plain" >>"$STAGE/modules.load"
done

(cd "$STAGE" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "initramfs.sh: $OUT with $(tr '\n' ' ' <"$STAGE/modules.load")" >&2
