#!/bin/bash
# tests/package.sh: the Debian packages the way a Debian user meets them.
# Builds them with `make deb` (lintian must report no error and no warning),
# boots a real systemd in a container on a throwaway overlay of this
# machine's root (systemd-nspawn -b on an overlayfs whose upper layer is a
# tmpfs, so apt and dpkg install into it without touching the host), and there: `apt-get install
# ./*.deb` (rtschedd enabled and running as user rtschedd, `rtschedctl status`
# answers), registers two sleeping processes with `rtschedctl register --tid`
# and reads SCHED_FIFO back with chrt -p, upgrades to a rebuilt package with a
# higher version (repacked, see below; the registrations survive: a restart,
# not a stop), `apt-get
# remove` (a stop: both threads get their own scheduling back) and `apt-get
# purge` (user, group, /run/rtschedd and /etc/rtschedd.conf gone).
# Not part of `make check` (it builds the packages); tests/all.sh runs
# it. Run it from a configured build directory:
#   top_builddir=$PWD top_srcdir=/path/to/source bash /path/to/source/tests/package.sh
# (DEBDIR=$PWD/deb in front reuses the packages of an earlier make deb.)
. "$(dirname "$0")/lib.sh"
need_root
# bash runs the EXIT trap (and so the cleanup) on a signal only through exit
trap 'exit 143' TERM
trap 'exit 130' INT
for c in systemd-nspawn:systemd-container nsenter:util-linux chrt:util-linux dpkg-buildpackage:dpkg-dev \
	dh:debhelper lintian:lintian; do
	command -v "${c%%:*}" >/dev/null || skip "${c%%:*} not found (apt-get install ${c#*:})"
done
[ -x /lib/systemd/systemd ] || [ -x /usr/lib/systemd/systemd ] || skip "no systemd to boot"
[ -f "$top_builddir/Makefile" ] || skip "$top_builddir is not a configured build directory"
# The container starts from this machine's root: an rtschedd package installed
# here would be in it already.
if dpkg-query -W -f='${db:Status-Status}' rtschedd 2>/dev/null | grep -qv '^not-installed$'; then
	skip "the rtschedd package is installed on this machine (dpkg -l rtschedd): the test needs a root without it"
fi

MACHINE="rtschedd-pkg-$$"
NSPID= LEADER=
DEBS=/srv/rtschedd-debs               # inside the container

# --- build -------------------------------------------------------------------------
# make deb: the packages and lintian's verdict (it fails on an error or a warning).
# DEBDIR=DIR takes the packages make deb left there instead (the container part
# again, without building them anew).
if [ -n "${DEBDIR:-}" ]; then
	echo "# packages from DEBDIR=$DEBDIR (make deb and lintian not run)"
else
echo "# make deb"
if timeout -k 10 "${PKGTEST_BUILD_LIMIT:-5400}" make -C "$top_builddir" deb >"$TMP/deb.log" 2>&1; then
	pass "make deb built: $(cd "$top_builddir/deb" && ls *.deb | tr '\n' ' ')"
else
	tail -30 "$TMP/deb.log"
	fail "make deb failed"
	finish; exit
fi
sed -n '/^lintian deb/,$p' "$TMP/deb.log" | sed 's/^/    /'
grep -q '^lintian: no error, no warning$' "$TMP/deb.log" && pass "lintian on the .changes: no error, no warning" ||
	fail "lintian reported errors or warnings (above)"
DEBDIR="$top_builddir/deb"
fi
# everything after the build is bounded, whatever hangs (the build has a bound
# of its own: it takes an hour on a loaded 2-core machine)
test_deadline "${PKGTEST_LIMIT:-1800}"

VERSION=$(dpkg-deb -f "$DEBDIR"/rtschedd_*.deb Version)
ARCH=$(dpkg --print-architecture)
for p in rtschedd librtsched0 librtsched-dev; do
	[ -f "$DEBDIR/${p}_${VERSION}_$ARCH.deb" ] || fail "no ${p}_${VERSION}_$ARCH.deb"
done

# what each package holds, where Debian 12 wants it
has() { # has PACKAGE PATH
	dpkg-deb -c "$DEBDIR/$1_${VERSION}_$ARCH.deb" | awk '{ print $6 }' | grep -qx "\\.$2" &&
		pass "$1 ships $2" || fail "$1 does not ship $2"
}
has rtschedd /usr/sbin/rtschedd
has rtschedd /usr/bin/rtschedctl
has rtschedd /lib/systemd/system/rtschedd.service
has rtschedd /lib/systemd/system/rtschedd.socket
has rtschedd /usr/lib/sysusers.d/rtschedd.conf
has rtschedd /usr/lib/tmpfiles.d/rtschedd.conf
has rtschedd /etc/rtschedd.conf
# the bus policy of the rtkit D-Bus service, and its activation file (beside
# rtschedd's data: rtkit's package owns that name in the bus's directory)
has rtschedd /usr/share/dbus-1/system.d/rtschedd-rtkit.conf
has rtschedd /usr/share/rtschedd/dbus-1/system-services/org.freedesktop.RealtimeKit1.service
for m in man1/rtschedctl.1 man5/rtschedd.conf.5 man7/rtschedd-protocol.7 man8/rtschedd.8; do
	has rtschedd "/usr/share/man/$m.gz"
done
# the drop-in directory the docs write to; the docs the man pages name, uncompressed
has rtschedd /etc/rtschedd.d/
has rtschedd /usr/share/doc/rtschedd/rtkit.md
has rtschedd /usr/share/doc/rtschedd/security.md
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has librtsched0 "/usr/lib/$MA/librtsched.so.0"
has librtsched-dev /usr/include/rtsched.h
has librtsched-dev "/usr/lib/$MA/librtsched.so"
has librtsched-dev "/usr/lib/$MA/pkgconfig/librtsched.pc"
has librtsched-dev /usr/share/man/man3/librtsched.3.gz
dpkg-deb -I "$DEBDIR/rtschedd_${VERSION}_$ARCH.deb" conffiles | grep -qx /etc/rtschedd.conf &&
	pass "/etc/rtschedd.conf is a conffile" || fail "/etc/rtschedd.conf is not a conffile"
dpkg-deb --ctrl-tarfile "$DEBDIR/librtsched0_${VERSION}_$ARCH.deb" | tar -t | grep -qx './symbols' &&
	pass "librtsched0 carries a symbols file" || fail "librtsched0 has no symbols file"

# --- the upgrade: the same packages with a higher version ---------------------------
# Each .deb unpacked and packed again as $VERSION+pkgtest1 (librtsched-dev's
# exact dependency on librtsched0 follows). The files are the same; what an
# upgrade exercises is dpkg's and the maintainer scripts' part (prerm upgrade,
# postinst configure with the old version, dh_installsystemd's restart), and
# that runs as for a rebuild from source. UPGRADE=rebuild rebuilds from the
# distribution tarball with a changelog entry instead (the whole build again:
# long on a loaded machine).
UPVERSION="$VERSION+pkgtest1"
UPDIR="$TMP/upgrade"
mkdir -p "$UPDIR"
if [ "${UPGRADE:-repack}" = rebuild ]; then
	tarball=$(cd "$top_builddir" && ls -t rtschedd-*.tar.gz | head -1)
	tar -xzf "$top_builddir/$tarball" -C "$UPDIR"
	src=$(echo "$UPDIR"/rtschedd-*/)
	{
		printf 'rtschedd (%s) unstable; urgency=medium\n\n  * Rebuilt by tests/package.sh to test an upgrade.\n\n' "$UPVERSION"
		printf ' -- rtschedd developers <dev@rtschedd.invalid>  %s\n\n' "$(date -R)"
		cat "$src/debian/changelog"
	} >"$TMP/changelog" && mv "$TMP/changelog" "$src/debian/changelog"
	how="rebuilt from source"
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym" dpkg-buildpackage -us -uc -b -j2) >"$TMP/upgrade.log" 2>&1
else
	how="repacked"
	for p in rtschedd librtsched0 librtsched-dev; do
		d="$TMP/repack-$p"
		dpkg-deb -R "$DEBDIR/${p}_${VERSION}_$ARCH.deb" "$d" &&
			sed -i -e "s/^Version: .*/Version: $UPVERSION/" \
				-e "/^Depends:/s/librtsched0 (= $VERSION)/librtsched0 (= $UPVERSION)/" "$d/DEBIAN/control" &&
			dpkg-deb --root-owner-group -b "$d" "$UPDIR/${p}_${UPVERSION}_$ARCH.deb" || break
	done >"$TMP/upgrade.log" 2>&1
fi
if [ -f "$UPDIR/rtschedd_${UPVERSION}_$ARCH.deb" ] && [ -f "$UPDIR/librtsched-dev_${UPVERSION}_$ARCH.deb" ] &&
	dpkg-deb -f "$UPDIR/librtsched-dev_${UPVERSION}_$ARCH.deb" Depends | grep -qF "librtsched0 (= $UPVERSION)"; then
	pass "$how the packages as version $UPVERSION"
else
	tail -30 "$TMP/upgrade.log"
	fail "making the packages of version $UPVERSION ($how) failed"
	finish; exit
fi

# --- boot ------------------------------------------------------------------------------
# find_leader: LEADER = nspawn's child that is pid 1 of its own pid namespace
# (the container's systemd; nspawn has short-lived helper children too).
find_leader() {
	for c in $(cat /proc/"$NSPID"/task/*/children 2>/dev/null); do
		[ "$(awk '/^NSpid:/ { print (NF > 2 ? $NF : "") }' /proc/"$c"/status 2>/dev/null)" = 1 ] && LEADER=$c
	done
	[ -n "$LEADER" ]
}
# The container's init dies first: everything in its pid namespace goes with
# it; nspawn then tears the container down (the overlay's tmpfs with it).
container_stop() {
	[ -n "$NSPID" ] || return 0
	[ -n "$LEADER" ] || find_leader
	[ -n "$LEADER" ] && kill -KILL "$LEADER" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
	kill -TERM "$NSPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$NSPID" 2>/dev/null
	wait "$NSPID" 2>/dev/null
	NSPID=
	# nspawn refuses to rm -rf this (empty) directory where /run is not a tmpfs
	rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null
}

# cin CMD...: run a command inside the container, bounded (apt gets longer).
cin() { timeout 30 nsenter -t "$LEADER" -m -u -i -n -p -- env SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"; }
# capt ARGS...: apt-get in the container, bounded
capt() {
	timeout 600 nsenter -t "$LEADER" -m -u -i -n -p -- env DEBIAN_FRONTEND=noninteractive \
		apt-get -y -q -o Dpkg::Use-Pty=0 "$@"
}
sctl() { cin systemctl --no-pager "$@"; }
sched() { cin chrt -p "$1" 2>&1 | sed -n 's/.*current scheduling policy: //p'; }
prio() { cin chrt -p "$1" 2>&1 | sed -n 's/.*current scheduling priority: //p'; }
status_of() { cin dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null; }

# The container's root: this machine's root file system (only that one: an
# overlay does not reach into the mounts below it) under an overlay whose
# upper layer is a tmpfs, so everything apt and dpkg write there is thrown
# away. `systemd-nspawn --volatile=overlay -D /` would be the same, but
# systemd 252 refuses -D / ("Spawning container on root directory is not
# supported"), and --volatile=yes keeps /usr read-only and /etc and /var empty.
ROOT="$TMP/root" LAYERS="$TMP/layers"
mkdir "$ROOT" "$LAYERS"
overlay_stop() {
	mountpoint -q "$ROOT" && { umount "$ROOT" || umount -l "$ROOT"; }
	mountpoint -q "$LAYERS" && { umount "$LAYERS" || umount -l "$LAYERS"; }
}
at_exit overlay_stop       # runs after container_stop (hooks run last-registered first)
mount -t tmpfs -o size=2g,mode=700 tmpfs "$LAYERS" && mkdir "$LAYERS/upper" "$LAYERS/work" &&
	mount -t overlay -o lowerdir=/,upperdir="$LAYERS/upper",workdir="$LAYERS/work" overlay "$ROOT" ||
	skip "cannot mount an overlay of / (overlayfs)"
at_exit container_stop

# --keep-unit --register=no: no D-Bus calls to a host systemd (there may be none);
# basic.target: journald, D-Bus and the socket units, not the host's services.
systemd-nspawn --quiet --keep-unit --register=no -D "$ROOT" --machine="$MACHINE" \
	--capability=CAP_BPF,CAP_PERFMON --system-call-filter="bpf perf_event_open" \
	-b -- systemd.firstboot=off systemd.unit=basic.target </dev/null >"$TMP/boot.log" 2>&1 &
NSPID=$!
for _ in $(seq 300); do
	kill -0 "$NSPID" 2>/dev/null || break
	find_leader && break
	sleep 0.1
done
if [ -z "$LEADER" ]; then
	container_stop
	skip "systemd-nspawn cannot run a container here: $(grep -v '^$' "$TMP/boot.log" | tail -3 | tr '\n' ' ')"
fi
state=
for _ in $(seq 90); do
	state=$(cin systemctl is-system-running 2>"$TMP/state.err")
	case "$state" in running|degraded) break ;; esac
	kill -0 "$NSPID" 2>/dev/null || break
	sleep 1
done
case "$state" in
running|degraded) pass "systemd booted in the container on an overlay of / (pid $LEADER on the host, $state)" ;;
*)
	echo "--- boot log:"; tail -30 "$TMP/boot.log"; cat "$TMP/state.err"
	fail "systemd in the container did not finish booting within 90 s (state '$state')"
	finish; exit ;;
esac
cin touch /pkgtest-overlay-probe && [ ! -e /pkgtest-overlay-probe ] &&
	pass "the container's root is writable and the host's is untouched" ||
	fail "writing the container's root: the overlay is missing or reaches the host"

# The starting point a fresh Debian machine has: no rtschedd user or
# configuration (earlier runs of other tests may have left them on this one;
# removed in the overlay only), and /dev/cpu_dma_latency as the kernel makes it
# (the container's /dev lacks it: a node of its own, the host's device).
cin sh -c 'rm -f /etc/rtschedd.conf; rm -rf /etc/rtschedd.d; ! getent passwd rtschedd >/dev/null || userdel rtschedd;
	! getent group rtschedd >/dev/null || groupdel rtschedd'
# Container images (this machine's root may be one) carry a policy-rc.d that
# forbids starting services (exit 101): a Debian machine has none. And
# man-db's trigger, rebuilding its index, takes minutes on a loaded machine
# and is not under test: off, as its own debconf question man-db/auto-update
# turns it off (the flag file it checks).
cin rm -f /usr/sbin/policy-rc.d /var/lib/man-db/auto-update
DMA=
if [ -c /dev/cpu_dma_latency ]; then
	DMA=1
	cin mknod -m 600 /dev/cpu_dma_latency c $((0x$(stat -c %t /dev/cpu_dma_latency))) \
		$((0x$(stat -c %T /dev/cpu_dma_latency)))
fi
cin mkdir -p -m 755 "$DEBS"
# copy_debs DIR VERSION: the three packages into $DEBS, their paths in DEBFILES
copy_debs() {
	DEBFILES=()
	for p in rtschedd librtsched0 librtsched-dev; do
		cin sh -c "cat >$DEBS/${p}_$2_$ARCH.deb" <"$1/${p}_$2_$ARCH.deb"
		cin chmod 644 "$DEBS/${p}_$2_$ARCH.deb"
		DEBFILES+=("$DEBS/${p}_$2_$ARCH.deb")
	done
}

# --- two sleeping processes: one SCHED_OTHER, one SCHED_BATCH (restoring is
# giving back what each had, not resetting to SCHED_OTHER) ------------------------------
cin systemd-run --quiet --unit=pkgtest-other sleep 1h
cin systemd-run --quiet --unit=pkgtest-batch -p CPUSchedulingPolicy=batch sleep 1h
A=$(sctl show -P MainPID pkgtest-other.service)
B=$(sctl show -P MainPID pkgtest-batch.service)
[ "$(sched "$A")" = SCHED_OTHER ] && [ "$(sched "$B")" = SCHED_BATCH ] &&
	pass "sleepers started: pid $A SCHED_OTHER, pid $B SCHED_BATCH" ||
	fail "sleepers: pid '$A' $(sched "$A"), pid '$B' $(sched "$B")"

# --- install ------------------------------------------------------------------------------
copy_debs "$DEBDIR" "$VERSION"
echo "# apt-get install ${DEBFILES[*]}"
if capt install "${DEBFILES[@]}" >"$TMP/install.log" 2>&1; then
	pass "apt-get install of the three packages (exit 0)"
else
	tail -30 "$TMP/install.log"
	fail "apt-get install failed"
fi
grep -E '^(Setting up|Created symlink)' "$TMP/install.log" | sed 's/^/    /'
for p in rtschedd librtsched0 librtsched-dev; do
	[ "$(status_of $p)" = "installed $VERSION" ] && pass "dpkg: $p $VERSION installed" ||
		fail "dpkg: $p is '$(status_of $p)'"
done
for u in rtschedd.socket rtschedd.service; do
	[ "$(sctl is-enabled $u)" = enabled ] && [ "$(sctl is-active $u)" = active ] &&
		pass "$u enabled and active" || fail "$u is $(sctl is-enabled $u), $(sctl is-active $u)"
done
RUID=$(cin id -u rtschedd 2>/dev/null)
[ -n "$RUID" ] && pass "postinst created the system user rtschedd (uid $RUID, from sysusers.d)" ||
	fail "no user rtschedd after the install"
MAIN=$(sctl show -P MainPID rtschedd.service)
puid=$(cin cat /proc/"$MAIN"/status 2>/dev/null | awk '/^Uid:/ { print $2 }')
[ -n "$RUID" ] && [ "$puid" = "$RUID" ] && pass "rtschedd (pid $MAIN) runs as user rtschedd" ||
	fail "rtschedd pid '$MAIN' runs as uid '$puid'"
if [ -n "$DMA" ]; then
	[ "$(cin stat -c '%G %a' /dev/cpu_dma_latency)" = "rtschedd 660" ] &&
		pass "postinst applied tmpfiles.d: /dev/cpu_dma_latency group rtschedd, 0660" ||
		fail "/dev/cpu_dma_latency is $(cin stat -c '%U:%G %a' /dev/cpu_dma_latency)"
fi
out=$(cin rtschedctl status 2>&1); rc=$?
[ $rc -eq 0 ] && pass "rtschedctl status answers (exit 0)" || fail "rtschedctl status (exit $rc): $out"
printf '%s\n' "$out" | sed 's/^/    /'
cin test -f /etc/rtschedd.conf && pass "/etc/rtschedd.conf installed" || fail "no /etc/rtschedd.conf"

# --- register: the kernel shows SCHED_FIFO ------------------------------------------------
for t in "$A" "$B"; do
	out=$(cin rtschedctl register --tid "$t" --role audio 2>&1); rc=$?
	[ $rc -eq 0 ] && pass "rtschedctl register --tid $t --role audio: $out" || fail "register $t (exit $rc): $out"
	[ "$(sched "$t")" = "SCHED_FIFO|SCHED_RESET_ON_FORK" ] && [ "$(prio "$t")" = 50 ] &&
		pass "chrt -p $t: $(sched "$t") $(prio "$t")" || fail "chrt -p $t: $(sched "$t") $(prio "$t")"
done

# --- upgrade: a restart, so the registrations survive --------------------------------------
copy_debs "$UPDIR" "$UPVERSION"
echo "# apt-get install ${DEBFILES[*]}"
if capt install "${DEBFILES[@]}" >"$TMP/upgrade-install.log" 2>&1; then
	pass "apt-get install of version $UPVERSION over $VERSION (exit 0)"
else
	tail -30 "$TMP/upgrade-install.log"
	fail "the upgrade failed"
fi
grep -E '^(Preparing|Unpacking|Setting up)' "$TMP/upgrade-install.log" | sed 's/^/    /'
[ "$(status_of rtschedd)" = "installed $UPVERSION" ] && pass "dpkg: rtschedd $UPVERSION installed" ||
	fail "dpkg: rtschedd is '$(status_of rtschedd)'"
MAIN2=$(sctl show -P MainPID rtschedd.service)
[ "$(sctl is-active rtschedd.service)" = active ] && [ "$MAIN2" != "$MAIN" ] && [ "$MAIN2" != 0 ] &&
	pass "the upgrade restarted rtschedd (pid $MAIN -> $MAIN2)" ||
	fail "after the upgrade: rtschedd.service $(sctl is-active rtschedd.service), pid $MAIN -> $MAIN2"
[ "$(sctl is-enabled rtschedd.service)" = enabled ] && [ "$(sctl is-active rtschedd.socket)" = active ] &&
	pass "still enabled, socket active" || fail "after the upgrade: $(sctl is-enabled rtschedd.service), socket $(sctl is-active rtschedd.socket)"
for t in "$A" "$B"; do
	[ "$(sched "$t")" = "SCHED_FIFO|SCHED_RESET_ON_FORK" ] && [ "$(prio "$t")" = 50 ] &&
		pass "after the upgrade chrt -p $t: $(sched "$t") $(prio "$t")" ||
		fail "after the upgrade chrt -p $t: $(sched "$t") $(prio "$t")"
done
wait_for cin sh -c "rtschedctl list | grep -qw '^$A' && rtschedctl list | grep -qw '^$B'" &&
	pass "rtschedctl list shows both threads managed by the new rtschedd" ||
	fail "after the upgrade rtschedctl list: $(cin rtschedctl list 2>&1)"
j=$(cin journalctl -u rtschedd.service -o cat)
expect_in "$j" "restarting: threads stay as they are" "the old rtschedd saw a restart job, not a stop"
expect_in "$j" "re-adopted 2 thread" "the new rtschedd re-adopted both threads from the state journal"
case "$j" in *"restoring 2 managed thread"*) fail "the threads were restored during the upgrade" ;;
*) pass "no thread was restored during the upgrade" ;; esac

# --- remove: a stop, so every thread gets its scheduling back ------------------------------
echo "# apt-get remove rtschedd"
if capt remove rtschedd >"$TMP/remove.log" 2>&1; then
	pass "apt-get remove rtschedd (exit 0)"
else
	tail -30 "$TMP/remove.log"
	fail "apt-get remove failed"
fi
[ "$(status_of rtschedd)" = "config-files $UPVERSION" ] && pass "dpkg: rtschedd in state config-files" ||
	fail "dpkg: rtschedd is '$(status_of rtschedd)'"
[ "$(sched "$A")" = SCHED_OTHER ] && pass "chrt -p $A: SCHED_OTHER again" || fail "after remove chrt -p $A: $(sched "$A")"
[ "$(sched "$B")" = SCHED_BATCH ] && pass "chrt -p $B: SCHED_BATCH again (its own, not a reset)" ||
	fail "after remove chrt -p $B: $(sched "$B")"
j=$(cin journalctl -u rtschedd.service -o cat)
expect_in "$j" "restoring 2 managed thread" "rtschedd logged restoring both threads on the stop"
for u in rtschedd.service rtschedd.socket; do
	s=$(sctl is-active $u)
	[ "$s" != active ] && pass "$u $s" || fail "$u still active after remove"
done
cin test -e /run/rtschedd && fail "/run/rtschedd left after remove" || pass "/run/rtschedd gone"
cin test -f /etc/rtschedd.conf && pass "/etc/rtschedd.conf kept (a conffile, until purge)" ||
	fail "/etc/rtschedd.conf gone on remove"
cin id -u rtschedd >/dev/null 2>&1 && pass "user rtschedd kept until purge" || fail "user rtschedd gone on remove"

# --- purge: user, group, state and configuration gone -----------------------------------------
echo "# apt-get purge rtschedd librtsched0 librtsched-dev"
if capt purge rtschedd librtsched0 librtsched-dev >"$TMP/purge.log" 2>&1; then
	pass "apt-get purge (exit 0)"
else
	tail -30 "$TMP/purge.log"
	fail "apt-get purge failed"
fi
for p in rtschedd librtsched0 librtsched-dev; do
	s=$(status_of $p)
	case "$s" in ""|not-installed*) pass "dpkg: $p purged" ;; *) fail "dpkg: $p is '$s'" ;; esac
done
cin getent passwd rtschedd >/dev/null && fail "user rtschedd left after purge" || pass "user rtschedd gone"
cin getent group rtschedd >/dev/null && fail "group rtschedd left after purge" || pass "group rtschedd gone"
cin test -e /run/rtschedd && fail "/run/rtschedd left after purge" || pass "/run/rtschedd gone"
cin test -e /etc/rtschedd.conf && fail "/etc/rtschedd.conf left after purge" || pass "/etc/rtschedd.conf gone"
left=$(cin sh -c 'ls -d /lib/systemd/system/rtschedd.* /etc/systemd/system/*/rtschedd.* \
	/var/lib/systemd/deb-systemd-helper-enabled/*rtschedd* /usr/sbin/rtschedd /usr/bin/rtschedctl 2>/dev/null')
[ -z "$left" ] && pass "no unit, enablement link or binary left" || fail "left after purge: $left"
if [ -n "$DMA" ]; then
	[ "$(cin stat -c '%U:%G %a' /dev/cpu_dma_latency)" = "root:root 600" ] &&
		pass "/dev/cpu_dma_latency is root's alone again (0600)" ||
		fail "/dev/cpu_dma_latency is $(cin stat -c '%U:%G %a' /dev/cpu_dma_latency) after purge"
fi
[ "$(sched "$A")" = SCHED_OTHER ] && [ "$(sched "$B")" = SCHED_BATCH ] &&
	pass "the sleepers are still running, with their own scheduling" || fail "sleepers: $(sched "$A") $(sched "$B")"

container_stop
finish
