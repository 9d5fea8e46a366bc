#!/bin/bash
# tests/kernels/fetch.sh: fetch Debian's own kernel image package with
# `apt-get download` and unpack it (dpkg-deb -x, never installed) into a cache
# directory; print that directory. The package is linux-image-VERSION; VERSION
# defaults to what the metapackage linux-image-amd64 depends on (the newest
# 6.1 image of Debian 12 in the configured sources), or KERNEL_VERSION.
#
#   tests/kernels/fetch.sh [VERSION]      e.g. 6.1.0-56-amd64
#
# KERNEL_SUITE: take the image from that suite of Debian's archive instead of
# the configured sources, through a private apt state under KERNEL_CACHE (the
# machine's own sources and lists are not touched), e.g. bookworm-backports
# for Debian 12's 6.12 kernel; KERNEL_MIRROR (default http://deb.debian.org/debian).
# KERNEL_CACHE: where images are kept (default ~/.cache/rtschedd-kernels).
# The unpacked tree gets a modules.dep (depmod -b) so the initramfs can
# resolve module dependencies, and DIR/vmlinux, the kernel decompressed out
# of the bzImage: qemu boots that ELF directly (PVH entry, CONFIG_PVH=y), as
# under TCG the bzImage's own xz decompressor alone takes minutes.
set -eu
CACHE=${KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtschedd-kernels}
VERSION=${1:-${KERNEL_VERSION:-}}

FLAVOUR=${KERNEL_FLAVOUR:+$KERNEL_FLAVOUR-}
case "$FLAVOUR" in ""|rt-) ;; *) echo "fetch.sh: KERNEL_FLAVOUR is empty or rt" >&2; exit 1 ;; esac
# apt drops to the _apt user to download, which cannot write here: as
# root, tell apt to stay root rather than warn about it
APT=(-o APT::Sandbox::User=root)
[ "$(id -u)" -eq 0 ] || APT=()
SUITE=${KERNEL_SUITE:-}
if [ -n "$SUITE" ]; then
	case "$SUITE" in *[!a-z0-9-]*) echo "fetch.sh: bad KERNEL_SUITE '$SUITE' (want e.g. bookworm-backports)" >&2; exit 1 ;; esac
	A="$CACHE/apt-$SUITE"
	mkdir -p "$A/lists/partial" "$A/cache"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${KERNEL_MIRROR:-http://deb.debian.org/debian} $SUITE main" >"$A/sources.list"
	APT+=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache")
	if [ -z "$VERSION" ]; then
		apt-get "${APT[@]}" -qq update >&2 || {
			echo "fetch.sh: apt-get update of $SUITE failed (network, or KERNEL_MIRROR)" >&2
			exit 1
		}
	fi
fi
if [ -z "$VERSION" ]; then
	# "Depends: linux-image-6.1.0-NN-[rt-]amd64" of the candidate version
	# (bookworm-backports: linux-image-6.12.NN+deb12-[rt-]amd64)
	VERSION=$(apt-cache "${APT[@]}" depends "linux-image-${FLAVOUR}amd64" 2>/dev/null |
		sed -n "s/^ *Depends: linux-image-\(6\.[0-9]*\.[0-9]*[-+][0-9a-z]*-${FLAVOUR}amd64\)\$/\1/p" | head -1)
	if [ -z "$VERSION" ]; then
		echo "fetch.sh: no linux-image-6.*-amd64 behind linux-image-amd64 in the apt sources${SUITE:+ of $SUITE};" \
			"run apt-get update on Debian 12 (bookworm), or give a version, e.g. 6.1.0-56-amd64" >&2
		exit 1
	fi
fi
case "$VERSION" in
*[!A-Za-z0-9.+-]*|"") echo "fetch.sh: bad kernel version '$VERSION' (want e.g. 6.1.0-56-amd64)" >&2; exit 1 ;;
esac

DIR="$CACHE/$VERSION"
if [ -f "$DIR/vmlinux" ] && [ -f "$DIR/root/lib/modules/$VERSION/modules.dep" ]; then
	echo "$DIR"
	exit 0
fi
mkdir -p "$DIR"
rm -rf "$DIR/root" "$DIR/root.tmp" "$DIR/vmlinux"
(
	cd "$DIR"
	apt-get "${APT[@]}" download "linux-image-$VERSION" >&2
) || {
	echo "fetch.sh: apt-get download linux-image-$VERSION failed; is it in 'apt-cache policy linux-image-$VERSION'?" >&2
	exit 1
}
deb=$(ls -t "$DIR"/linux-image-"$VERSION"_*.deb | head -1)
dpkg-deb -x "$deb" "$DIR/root.tmp"
depmod -b "$DIR/root.tmp" "$VERSION"
# the bzImage carries vmlinux as one xz stream (CONFIG_KERNEL_XZ, Debian 12's
# 6.1) or one zstd frame (CONFIG_KERNEL_ZSTD, the 6.12 of bookworm-backports)
bz="$DIR/root.tmp/boot/vmlinuz-$VERSION"
off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$bz" | head -1 | cut -d: -f1)
if [ -n "$off" ]; then
	tail -c +$((off + 1)) "$bz" | xz -dc --single-stream >"$DIR/vmlinux.tmp" || true
elif off=$(LC_ALL=C grep -abo $'\x28\xb5\x2f\xfd' "$bz" | head -1 | cut -d: -f1) && [ -n "$off" ]; then
	# zstd decodes the frame, then fails on what follows it in the bzImage
	# (not zstd): the ELF check below judges the result
	tail -c +$((off + 1)) "$bz" | zstd -dcq 2>/dev/null >"$DIR/vmlinux.tmp" || true
fi
if ! [ -s "$DIR/vmlinux.tmp" ] || ! head -c 4 "$DIR/vmlinux.tmp" | grep -q $'^\x7fELF'; then
	echo "fetch.sh: no xz- or zstd-compressed vmlinux found in $bz (needs xz-utils and zstd)" >&2
	exit 1
fi
mv "$DIR/root.tmp" "$DIR/root"
mv "$DIR/vmlinux.tmp" "$DIR/vmlinux"
echo "$DIR"
