#!/bin/bash
# tests/lib-conn.sh: librtsched keeps one connection per process. Many
# registrations go over one socket (counted in /proc/PID/fd, by strace's
# connect() calls and by ss on the daemon's side); after the daemon restarts
# or crashes the next call succeeds; a fork()ed child opens its own
# connection and is authorized as itself; a descriptor closed behind the
# library's back is never written to. Scheduling is always checked with what
# the kernel reports (sched_getscheduler in the helper, tests/task-helper
# query, chrt).
. "$(dirname "$0")/lib.sh"
need_root
CH="$top_builddir/tests/lib-conn-helper"

CONF="$TMP/conn.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
[rule bench-a]
policy = fifo
priority = 10
[rule bench-b]
policy = fifo
priority = 11
[user nobody]
max-priority = 20
policies = fifo,other
max-threads = 8
EOC
daemon_start "$CONF"

# conn_start [USER]: the helper on fds 5 (commands) and 6 (answers).
conn_start() {
	cin="$TMP/conn.in"; cout="$TMP/conn.out"
	rm -f "$cin" "$cout"; mkfifo "$cin" "$cout"; chmod 666 "$cin" "$cout"
	if [ -n "${1:-}" ]; then
		RTSCHED_SOCKET="$SOCK" setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups "$CH" <"$cin" >"$cout" &
	else
		RTSCHED_SOCKET="$SOCK" "$CH" <"$cin" >"$cout" &
	fi
	CPID=$!
	exec 5>"$cin" 6<"$cout"
}
conn_stop() {
	[ -n "${CPID:-}" ] || return 0
	echo quit >&5 2>/dev/null
	exec 5>&- 6<&-
	wait "$CPID" 2>/dev/null
	CPID=
}
at_exit conn_stop
# c CMD...: one command, its answer in CR
c() {
	echo "$*" >&5
	if ! read -r -t 20 CR <&6; then CR="(no answer)"; fi
}
# socks PID: the socket inodes among PID's descriptors, space-separated
socks() { ls -l "/proc/$1/fd" 2>/dev/null | grep -o 'socket:\[[0-9]*\]' | tr -d 'socket:[]' | sort | xargs; }
# daemon_conns: connections the daemon holds on its control socket (ss)
daemon_conns() { ss -xp 2>/dev/null | grep -F "$SOCK " | grep -c "pid=$DPID,"; }

# --- (a) many registrations, one connection ---------------------------------
conn_start
[ -z "$(socks "$CPID")" ] && pass "no socket before the first request" || fail "sockets before any request: $(socks "$CPID")"
c reg bench-a 1
expect_in "$CR" "ok 1" "first registration"
S1=$(socks "$CPID")
[ -n "$S1" ] && [ "$(echo "$S1" | wc -w)" = 1 ] && pass "the first request left one socket open (inode $S1)" ||
	fail "after the first request the helper holds sockets '$S1', want exactly one"
c alt bench-a bench-b 500
expect_in "$CR" "ok 500" "500 registrations alternating FIFO 10/11, the kernel checked after each"
S2=$(socks "$CPID")
[ "$S2" = "$S1" ] && pass "after 500 more the helper still holds that one socket ($S2)" ||
	fail "sockets after 500 registrations: '$S2', want '$S1'"
[ "$(daemon_conns)" = 1 ] && pass "ss: the daemon holds one connection" || fail "ss: the daemon holds $(daemon_conns) connections, want 1: $(ss -xp | grep -F "$SOCK ")"
H=$CPID
expect_sched "$H" "policy=fifo priority=11" "the kernel reports the last grant (FIFO 11) for the helper"

# the same seen from the system calls: one connect() for 200 registrations
# (LeakSanitizer cannot stop a traced process's threads to scan it, so it
# is off for this one run of the helper; the others are scanned)
if command -v strace >/dev/null; then
	printf 'alt bench-a bench-b 200\nquit\n' | RTSCHED_SOCKET="$SOCK" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
		timeout "$HANG_S" strace -f -qq -e trace=connect,socket -o "$TMP/strace" "$CH" >"$TMP/strace.out"
	expect_in "$(cat "$TMP/strace.out")" "ok 200" "200 registrations under strace"
	n=$(grep -c 'connect(' "$TMP/strace")
	[ "$n" = 1 ] && pass "strace: one connect() for 200 registrations" || fail "strace: $n connect() calls for 200 registrations: $(cat "$TMP/strace")"
else
	echo "SKIP: strace missing, connect() not counted"
fi

# many threads at once: each reply reaches the thread that asked (the
# kernel is checked in each thread after each call); busy -> own connection
c threads 8 50
expect_in "$CR" "ok" "8 threads x 50 registrations at once, each thread's kernel view right after each call"
S3=$(socks "$CPID")
[ "$S3" = "$S1" ] && pass "afterwards only the kept socket is open" || fail "sockets after the threads: '$S3', want '$S1'"

# a descriptor closed behind the library's back and reused is not written to
c clobber
FD=${CR#ok }
expect_in "$CR" "ok" "the library's socket replaced by /dev/null behind its back (fd $FD)"
c reg bench-b 1
expect_in "$CR" "ok 1" "the next registration succeeds on a new connection"
[ "$(readlink "/proc/$CPID/fd/$FD")" = /dev/null ] && pass "fd $FD is still /dev/null: the library did not touch it" ||
	fail "fd $FD is now $(readlink "/proc/$CPID/fd/$FD")"
S4=$(socks "$CPID")
[ "$(echo "$S4" | wc -w)" = 1 ] && [ "$S4" != "$S1" ] && pass "one new socket ($S4)" || fail "sockets after clobber: '$S4'"
c disconnect
[ -z "$(socks "$CPID")" ] && pass "rtsched_disconnect closed it" || fail "after rtsched_disconnect: sockets '$(socks "$CPID")'"
c reg bench-a 1
expect_in "$CR" "ok 1" "and the next call connects again"

# --- (b) the daemon restarts ---------------------------------------------------
S1=$(socks "$CPID")
daemon_stop
expect_sched "$H" "policy=other priority=0" "a clean stop gave the helper its original scheduling back"
daemon_start "$CONF"
c reg bench-b 1
expect_in "$CR" "ok 1" "after a restart of the daemon the next call succeeds"
expect_sched "$H" "policy=fifo priority=11" "the kernel reports FIFO 11 from the new daemon"
S2=$(socks "$CPID")
[ "$(echo "$S2" | wc -w)" = 1 ] && [ "$S2" != "$S1" ] && pass "on a new connection ($S1 -> $S2), the old one closed" ||
	fail "sockets after the restart: '$S2' (before: '$S1')"
kill -KILL "$DPID"; wait "$DPID" 2>/dev/null; DPID=
daemon_start "$CONF"
c reg bench-a 1
expect_in "$CR" "ok 1" "after a crash (SIGKILL) and a new daemon the next call succeeds"
expect_sched "$H" "policy=fifo priority=10" "the kernel reports FIFO 10"
daemon_stop
c reg bench-a 1
expect_in "$CR" "err 0 2 cannot connect" "with no daemon, the call fails with ENOENT and says why"
daemon_start "$CONF"
conn_stop

# --- (c) fork: the child connects and is authorized as itself -------------------
# As nobody the daemon lets a process register only its own threads, judged
# by the connection's SO_PEERCRED: over the parent's connection the child's
# request would be refused as not-own-thread.
conn_start nobody
c reg bench-a 1
expect_in "$CR" "ok 1" "nobody registers itself"
P=$(socks "$CPID")
c fork bench-b
KID=$(echo "$CR" | awk '{ print $2 }')
expect_in "$CR" "child $KID ok" "the forked child registers itself (as nobody, own threads only)"
expect_in "$("$HELPER" query "$KID")" "policy=fifo priority=11" "the kernel reports FIFO 11 for the child ($KID)"
expect_in "$(chrt -p "$KID")" "SCHED_FIFO|SCHED_RESET_ON_FORK" "chrt -p agrees"
K=$(socks "$KID")
[ "$(echo "$K" | wc -w)" = 1 ] && [ "$K" != "$P" ] && pass "the child holds one socket of its own ($K), not the parent's ($P)" ||
	fail "the child's sockets: '$K' (parent: '$P')"
ctl --json list
[ "$(echo "$OUT" | jq -r ".[] | select(.tid == $KID) | .pid")" = "$KID" ] && pass "the daemon lists the child's thread under the child's pid" ||
	fail "list: $OUT"
expect_in "$("$HELPER" query "$CPID")" "policy=fifo priority=10" "the parent kept FIFO 10"
c release
c reg bench-b 1
expect_in "$CR" "ok 1" "the parent registers again after the child exited"
[ "$(socks "$CPID")" = "$P" ] && pass "over the same kept connection ($P)" || fail "parent's sockets: '$(socks "$CPID")', want '$P'"
expect_sched "$CPID" "policy=fifo priority=11" "the kernel reports FIFO 11 for the parent"
conn_stop
finish
