#!/bin/bash
# tests/preload.sh: the preload library's own paths, without a daemon (audit
# of the grant paths, F5 and F6). tests/run-helper runs as nobody with
# RLIMIT_RTPRIO 0, so the kernel refuses its calls and the library asks the
# socket; tests/preload-spy.so, before the library in LD_PRELOAD, counts the
# NSS user look-ups and pthread_mutex_lock calls the process makes. The
# socket is served by tests/ctl-server.py, a stand-in for rtschedd, as uid
# 65533: neither root nor the caller, the case in which the library must
# know the daemon user's uid.
#  (a) a request makes no NSS look-up: the count with four refused calls
#      (each a connect the library checks) is the count without any; the
#      uid was looked up once, at load. Without the daemon user the
#      listener is not believed (nothing reaches it);
#  (b) with the spy saying the daemon user is uid 65533, the request
#      reaches the stand-in and its refusal comes back, again with no
#      look-up on the request;
#  (c) a socket of root's (socket activation): no look-up at all, not even
#      at load, and its server is believed;
#  (d) thread start and exit take no mutex: 4 x 1100 threads made and
#      ended at once lock nothing more than none (a plain mutex there
#      could hold a real-time thread's start behind a preempted holder).
. "$(dirname "$0")/lib.sh"
need_root
# the system's python3: one in root's home (pyenv) is not for other users to run
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "FAIL - $PY missing (apt-get install python3)"; exit 1; }
RH="$top_builddir/tests/run-helper"
PRELOAD="$top_builddir/src/preload/.libs/librtsched-preload.so"
SPY="$top_builddir/tests/.libs/preload-spy.so"
[ -x "$RH" ] && [ -r "$PRELOAD" ] && [ -r "$SPY" ] ||
	{ echo "FAIL - tests/run-helper, $PRELOAD or $SPY not built (make check builds them)"; exit 1; }

SRV_UID=65533
mkdir -m 755 "$TMP/srv" && chown "$SRV_UID:$SRV_UID" "$TMP/srv"
SOCK_SRV="$TMP/srv/control"
: >"$TMP/requests"
chmod 666 "$TMP/requests"
echo "ERR priority-denied the stand-in refuses everything" >"$TMP/replies"
setpriv --reuid=$SRV_UID --regid=$SRV_UID --clear-groups "$PY" "$top_srcdir/tests/ctl-server.py" \
	"$SOCK_SRV" "$TMP/requests" "$TMP/replies" &
SRV=$!
stop_srv() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }
at_exit stop_srv
wait_for test -S "$SOCK_SRV" || { echo "FAIL - the stand-in server did not start"; exit 1; }
# as rtschedd's own socket: anyone may connect (the check is the client's)
chmod 666 "$SOCK_SRV"

# spied NAME ARGS...: run-helper ARGS as nobody under the spy and the
# library; the spy's line in COUNT (getpw=N mutex=M), the helper's in OUT/ERR
spied() {
	local out="$TMP/spy.$1"
	shift
	: >"$out"
	chmod 666 "$out"
	run prlimit --rtprio=0:0 -- setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		env LD_PRELOAD="$SPY:$PRELOAD" RTSCHED_SOCKET="$SOCK_SRV" RTSCHED_SPY_OUT="$out" "$RH" "$@"
	COUNT=$(cat "$out")
}
# field TEXT KEY: KEY=value's value in TEXT
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# --- (a) no NSS look-up on a request ---------------------------------------------------------
spied base rlimit
BASE=$COUNT
[ -n "$BASE" ] && pass "(a) the spy reports ($BASE without a scheduling call)" || fail "(a) no report from the spy: $ERR"
spied req fifo:10 fifo:11 pthread:12 create:13
printf '%s\n' "$OUT" | grep -q '^fifo:10 rc=-1 errno=EPERM' && pass "(a) the kernel's EPERM comes back" ||
	fail "(a) fifo:10: $OUT"
expect_in "$ERR" "rtschedd did not answer" "(a) a listener that is not the daemon's user is not believed"
[ "$(field "$COUNT" getpw)" = "$(field "$BASE" getpw)" ] &&
	pass "(a) four refused calls, four connects checked: no user look-up ($COUNT; without them $BASE)" ||
	fail "(a) user look-ups on the request path: $COUNT, without a request $BASE"
[ ! -s "$TMP/requests" ] && pass "(a) nothing reached the listener" || fail "(a) requests sent: $(cat "$TMP/requests")"

# --- (b) the daemon user's listener, known from load time ----------------------------------------
export RTSCHED_SPY_DAEMON_UID=$SRV_UID
spied base-d rlimit
BASE=$COUNT
spied req-d fifo:10 fifo:11
unset RTSCHED_SPY_DAEMON_UID
[ "$(grep -c 'register' "$TMP/requests")" -eq 2 ] && pass "(b) both requests reached the daemon user's listener" ||
	fail "(b) requests: $(cat "$TMP/requests")"
expect_in "$(cat "$TMP/requests")" "source=preload" "(b) as the preload source"
expect_in "$ERR" "refused by rtschedd: priority-denied" "(b) its refusal comes back"
[ "$(field "$COUNT" getpw)" = "$(field "$BASE" getpw)" ] &&
	pass "(b) no user look-up on the request path ($COUNT; without a request $BASE)" ||
	fail "(b) user look-ups on the request path: $COUNT, without a request $BASE"

# --- (c) root's socket: no look-up at load either ---------------------------------------------
ROOT_SOCK="$TMP/root-control"
: >"$TMP/root-requests"
"$PY" "$top_srcdir/tests/ctl-server.py" "$ROOT_SOCK" "$TMP/root-requests" "$TMP/replies" &
RSRV=$!
stop_rsrv() { kill "$RSRV" 2>/dev/null; wait "$RSRV" 2>/dev/null; }
at_exit stop_rsrv
wait_for test -S "$ROOT_SOCK" || { echo "FAIL - the stand-in server did not start"; exit 1; }
chmod 666 "$ROOT_SOCK"
SOCK_SRV=$ROOT_SOCK spied root fifo:10
[ "$(field "$COUNT" getpw)" = 0 ] && pass "(c) a socket of root's: no user look-up at all ($COUNT)" ||
	fail "(c) user look-ups with root's socket: $COUNT"
[ "$(grep -c 'register' "$TMP/root-requests")" -eq 1 ] && pass "(c) root's listener is believed: the request reached it" ||
	fail "(c) requests: $(cat "$TMP/root-requests")"

# --- (d) no mutex at thread start and exit --------------------------------------------------------
spied base-t rlimit
BASE=$COUNT
spied churn churn:1100
printf '%s\n' "$OUT" | grep -q '^churn:1100 rc=0 ' && pass "(d) 4 x 1100 threads made and ended" || fail "(d) churn: $OUT $ERR"
[ "$(field "$COUNT" mutex)" = "$(field "$BASE" mutex)" ] &&
	pass "(d) thread start and exit lock no mutex ($COUNT; without threads $BASE)" ||
	fail "(d) mutex locks at thread start/exit: $COUNT, without threads $BASE"

finish
