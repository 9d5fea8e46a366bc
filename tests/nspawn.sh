# tests/nspawn.sh: a real systemd booted in a container, for the shell tests
# that need one (sourced after lib.sh; systemd-e2e.sh, isolate-systemd.sh).
# systemd-nspawn --volatile=yes -D / gives the container the host's /usr
# and a tmpfs root; nsenter runs commands in it. nspawn_boot skips the test
# where nspawn cannot run a container; container_stop (an EXIT hook) ends
# it whatever ends the test.

command -v systemd-nspawn >/dev/null || skip "systemd-nspawn not found (apt-get install systemd-container)"
command -v nsenter >/dev/null || skip "nsenter not found (util-linux)"
command -v jq >/dev/null || skip "jq not found"
[ -x /lib/systemd/systemd ] || [ -x /usr/lib/systemd/systemd ] || skip "no systemd to boot"
for f in rtschedd rtschedctl systemd/rtschedd.service systemd/rtschedd.socket tests/task-helper; do
	[ -e "$top_builddir/$f" ] || skip "$top_builddir/$f is not built"
done
for f in rtschedd rtschedctl; do
	# a libtool wrapper script cannot be copied into the container
	[ "$(head -c4 "$top_builddir/$f" | od -An -c | tr -d ' ')" = '177ELF' ] ||
		skip "$top_builddir/$f is not an ELF binary (libtool wrapper?)"
done

OPT=/opt/rtschedd-e2e               # inside the container: /usr is the host's, read-only
UNIT=rtschedd.service
NSPID= LEADER= MACHINE=

# find_leader: LEADER = nspawn's child that is pid 1 of its own pid namespace
# (the container's systemd; nspawn has short-lived helper children too).
find_leader() {
	for c in $(cat /proc/"$NSPID"/task/*/children 2>/dev/null); do
		[ "$(awk '/^NSpid:/ { print (NF > 2 ? $NF : "") }' /proc/"$c"/status 2>/dev/null)" = 1 ] && LEADER=$c
	done
	[ -n "$LEADER" ]
}
# The container's init dies first: everything in its pid namespace goes with
# it, the helper included; nspawn then tears the container down and exits.
container_stop() {
	helper_stop
	[ -n "$NSPID" ] || return 0
	[ -n "$LEADER" ] || find_leader
	[ -n "$LEADER" ] && kill -KILL "$LEADER" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
	kill -TERM "$NSPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$NSPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$NSPID" 2>/dev/null
	wait "$NSPID" 2>/dev/null
	NSPID= LEADER=
	# nspawn refuses to rm -rf this (empty) directory where /run is not a tmpfs
	rmdir "/run/systemd/nspawn/propagate/$MACHINE" 2>/dev/null
}
at_exit container_stop

# nsin CMD...: run a command in the container's namespaces, at its root
# (-r -w: where the container's mount namespace is not rooted at the
# container's root, as when nspawn ran in a chroot, the qemu guest's, the
# namespace's root is not the container's).
NSIN=(-m -u -i -n -p -r -w)
nsin() { nsenter -t "$LEADER" "${NSIN[@]}" -- "$@"; }
# cin CMD...: the same, bounded, without pager or colours.
cin() { timeout "$HANG_S" nsenter -t "$LEADER" "${NSIN[@]}" -- env SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"; }
sctl() { cin systemctl --no-pager "$@"; }
prop() { sctl show -P "$1" "$UNIT"; }
journal_has() { cin journalctl -u "$UNIT" -o cat | grep -q "$1"; }

# nspawn_boot NAME [NSPAWN_OPTION...]: boot the container NAME (the build
# and source trees bound read-only) to basic.target: journald, D-Bus and
# the socket units, not the host's services. --keep-unit --register=no: no
# D-Bus calls to a host systemd (there may be none).
nspawn_boot() {
	local binds state
	MACHINE=$1
	shift
	binds=(--bind-ro="$top_builddir")
	[ "$(cd "$top_srcdir" && pwd)" != "$(cd "$top_builddir" && pwd)" ] && binds+=(--bind-ro="$top_srcdir")
	systemd-nspawn --quiet --keep-unit --register=no --volatile=yes -D / --machine="$MACHINE" "$@" \
		"${binds[@]}" -b -- systemd.firstboot=off systemd.unit=basic.target \
		</dev/null >"$TMP/boot.log" 2>&1 &
	NSPID=$!
	for _ in $(seq $((HANG_S * 10))); do
		kill -0 "$NSPID" 2>/dev/null || break
		find_leader && break
		sleep 0.1
	done
	if [ -z "$LEADER" ]; then
		container_stop
		skip "systemd-nspawn cannot run a container here: $(grep -v '^$' "$TMP/boot.log" | tail -3 | tr '\n' ' ')"
	fi
	state=
	for _ in $(seq "$HANG_S"); do
		state=$(cin systemctl is-system-running 2>"$TMP/state.err")
		case "$state" in running|degraded) break ;; esac
		kill -0 "$NSPID" 2>/dev/null || break
		sleep 1
	done
	case "$state" in
	running|degraded) pass "systemd booted in the container (pid $LEADER on the host, $state)" ;;
	*)
		echo "--- boot log:"; tail -30 "$TMP/boot.log"; cat "$TMP/state.err"
		fail "systemd in the container did not finish booting within $HANG_S s (state '$state')"
		finish; exit ;;
	esac
}

# nspawn_install: the built units with the binaries' paths pointed at a
# copy, and the configuration in the container's /etc (the built-in path is
# under the prefix, which may be read-only in the container); the user
# rtschedd (its uid in RUID).
nspawn_install() {
	cin mkdir -p "$OPT/sbin" "$OPT/bin" /etc/systemd/system/$UNIT.d /etc/sysusers.d
	cin install -m 755 "$top_builddir/rtschedd" "$OPT/sbin/rtschedd"
	cin install -m 755 "$top_builddir/rtschedctl" "$OPT/bin/rtschedctl"
	sed -E -e "s|^(ExecStart=)[^ ]*/rtschedd\$|\\1$OPT/sbin/rtschedd --config /etc/rtschedd.conf|" \
		-e "s|^(ExecReload=\\+?)[^ ]*/rtschedctl|\\1$OPT/bin/rtschedctl|" \
		"$top_builddir/systemd/rtschedd.service" | cin sh -c "cat >/etc/systemd/system/$UNIT"
	cin cp "$top_builddir/systemd/rtschedd.socket" /etc/systemd/system/rtschedd.socket
	cin cp "$top_srcdir/systemd/sysusers.d/rtschedd.conf" /etc/sysusers.d/rtschedd.conf
	grep -q "^ExecStart=$OPT/sbin/rtschedd --config" < <(cin cat /etc/systemd/system/$UNIT) &&
		pass "unit installed with ExecStart=$OPT/sbin/rtschedd --config /etc/rtschedd.conf" || fail "ExecStart not rewritten"
	cin systemd-sysusers /etc/sysusers.d/rtschedd.conf >/dev/null 2>&1
	RUID=$(cin id -u rtschedd)
	[ -n "$RUID" ] && pass "systemd-sysusers created the rtschedd user (uid $RUID)" || fail "no rtschedd user"
}
