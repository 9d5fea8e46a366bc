#!/bin/bash
# tests/kernels/mechanisms.sh: which mechanism rtschedd picks for each
# kernel-dependent path on the running kernel, as the daemon itself reports
# it. Starts a real rtschedd on a private socket, registers one thread (so a
# daemon without PIDFD_THREAD needs the connector) and prints "key: value"
# lines: kernel, thread_exit and new_threads from `rtschedctl status` (idle,
# then with the registration), and client_identity from the daemon's log
# (SO_PEERPIDFD, or the pidfd_open fallback it announces).
# Needs top_builddir/top_srcdir like the tests (it uses tests/lib.sh).
. "$(dirname "$0")/../lib.sh"
need_root

cat >"$TMP/m.conf" <<EOC
[daemon]
rate-limit = 0
watchdog = no
EOC
daemon_start "$TMP/m.conf"
field() { printf '%s\n' "$OUT" | sed -n "s/^$1  *//p"; }
echo "kernel: $(uname -r)"
ctl status
echo "new_threads (idle): $(field new_threads)"
helper_start
T=$(spawn mech)
ctl register --tid "$T" --policy other
[ "$RC" -eq 0 ] || echo "register failed: $ERR"
ctl status
echo "thread_exit: $(field thread_exit)"
echo "new_threads (one thread registered): $(field new_threads)"
helper_stop
daemon_stop
if grep -q "SO_PEERPIDFD" "$DLOG"; then
	echo "client_identity: pidfd_open(SO_PEERCRED pid) at accept + uid check ($(grep -o 'no SO_PEERPIDFD[^:]*' "$DLOG" | head -1))"
else
	echo "client_identity: SO_PEERPIDFD"
fi
