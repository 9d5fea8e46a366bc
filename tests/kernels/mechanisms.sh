#!/bin/bash
# tests/kernels/mechanisms.sh: which mechanism rtschedd picks for each
# kernel-dependent path on the running kernel, as the daemon itself reports
# it. Starts a real rtschedd on a private socket, registers one thread (so a
# daemon without PIDFD_THREAD needs the connector) and prints "key: value"
# lines: kernel, thread_exit and new_threads from `rtschedctl status` (idle,
# then with the registration), and client_identity from the daemon's log
# (SO_PEERPIDFD, or the pidfd_open fallback it announces); then what
# `rtschedd --check` says of the kernel features ("check:" lines) and
# whether the daemon's choices agree with it ("consistent:"/"INCONSISTENT:").
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
TE=$(field thread_exit)
echo "thread_exit: $TE"
echo "new_threads (one thread registered): $(field new_threads)"
helper_stop
daemon_stop
if grep -q "no SO_PEERPIDFD" "$DLOG"; then
	id="pidfd_open(SO_PEERCRED pid) at accept + uid check"
else
	id="SO_PEERPIDFD"
fi
echo "client_identity: $id"

# what `rtschedd --check` says of the kernel's features, and whether the
# daemon's own choices above agree with it
run "$RTSCHEDD" --check --json --config "$TMP/m.conf"
feat() { # feat NAME: "in use" or "missing"
	printf '%s\n' "$OUT" | jq -r --arg n "$1" '.findings[] | select(.code | startswith("kernel-feature")) |
		select(.message | test(": " + $n + " \\(")) | if .code == "kernel-feature" then "in use" else "missing" end'
}
printf '%s\n' "$OUT" | jq -r '.findings[] | select(.code | startswith("kernel-feature")) | "check: \(.message)"' | cut -c1-110
agree() { # agree WHAT FEATURE-STATE DAEMON-CHOICE-MATCHES(yes/no)
	if { [ "$2" = "in use" ] && [ "$3" = yes ]; } || { [ "$2" = missing ] && [ "$3" = no ]; }; then
		echo "consistent: $1 ($2)"
	else
		echo "INCONSISTENT: $1: --check says '$2', the daemon did otherwise"
	fi
}
yes_no() { [ "$1" = "$2" ] && echo yes || echo no; }
agree "PIDFD_THREAD vs thread_exit" "$(feat PIDFD_THREAD)" "$(yes_no "$TE" pidfd-thread)"
agree "SO_PEERPIDFD vs client_identity" "$(feat SO_PEERPIDFD)" "$(yes_no "$id" SO_PEERPIDFD)"
