#!/bin/bash
# tests/ctl.sh: rtschedctl's command line against a stand-in daemon
# (tests/ctl-server.py): the request each command and option sends, what it
# prints of the replies (table, JSON, histogram, report), its usage errors
# (exit 64, one line, nothing sent) and its other exit codes. The commands'
# effects on a real daemon are the other tests' (register.sh, jitter.sh...).
. "$(dirname "$0")/lib.sh"

SOCK="$TMP/ctl.sock"
LOG="$TMP/requests"
REP="$TMP/replies"
: >"$LOG"
echo OK >"$REP"
python3 "$top_srcdir/tests/ctl-server.py" "$SOCK" "$LOG" "$REP" &
SRV=$!
srv_stop() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; true; }
at_exit srv_stop
wait_for test -S "$SOCK" || { echo "the stand-in daemon did not start"; exit 1; }

# reply MSG...: the stand-in's next replies, one message each
reply() { printf '%s\n' "$@" >"$REP"; }
# ctl ARGS...: rtschedctl on the stand-in; RQ is the request it sent (empty: none)
ctl() { : >"$LOG"; run "$RTSCHEDCTL" --socket "$SOCK" "$@"; RQ=$(cat "$LOG"); }
# expect_req WANT DESC
expect_req() { [ "$RQ" = "$1" ] && pass "$2: sends '$1'" || fail "$2: sent '$RQ', want '$1'"; }
# usage ARGS... -- NEEDLE: a usage error, one line naming NEEDLE, nothing sent
usage() {
	local args=() needle
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	needle=$2
	ctl "${args[@]}"
	if [ "$RC" -eq 64 ] && [ -z "$RQ" ] && [ "$(lines "$ERR")" -eq 1 ] && [[ "$ERR" == *"$needle"* ]]; then
		pass "rtschedctl ${args[*]:0:4}: usage error naming '$needle' (exit 64, nothing sent)"
	else
		fail "rtschedctl ${args[*]:0:4}: exit $RC, sent '$RQ', stderr '$ERR' (want 64, nothing, '$needle')"
	fi
}

# --- requests ---------------------------------------------------------------
reply "OK tid=5 policy=fifo priority=10"
ctl register --tid 5 --role audio --policy fifo --priority 10 --nice -3 --cpus 0-1
expect_rc 0 "register"
expect_req "v=1 op=register tid=5 role=audio policy=fifo priority=10 nice=-3 cpus=0-1" "register with every option"
expect_in "$OUT" "policy               fifo" "register prints the reply's fields, one per line"
ctl register --pid 7 --json
expect_req "v=1 op=register pid=7" "register --pid (--json after the command)"
[ "$OUT" = '{"tid":5,"policy":"fifo","priority":10}' ] && pass "--json: the reply as an object, numbers as numbers" ||
	fail "register --json printed: $OUT"
ctl unregister --tid 5
expect_req "v=1 op=unregister tid=5" "unregister --tid"
ctl unregister --pid 7
expect_req "v=1 op=unregister pid=7" "unregister --pid"
ctl reload
expect_req "v=1 op=reload" "reload"
ctl status
expect_req "v=1 op=status" "status"
expect_in "$OUT" "tid                  5" "status prints the reply's fields"
ctl version
expect_req "v=1 op=version" "version"
expect_in "$(echo "$OUT" | head -1)" "rtschedctl " "version prints rtschedctl's own version first"
ctl --json version
[ "${OUT:0:1}" = "{" ] && pass "--json version: only the daemon's object" || fail "--json version printed: $OUT"
ctl metrics
expect_req "v=1 op=metrics" "metrics"
reply "ROW line=%23%20HELP%20x" "ROW line=x%201" "OK rows=2"
ctl metrics
[ "$OUT" = $'# HELP x\nx 1' ] && pass "metrics prints the exposition lines as they are" || fail "metrics printed: $OUT"

# list: a table, --all, JSON array, the count of the others
reply "ROW tid=11 pid=10 comm=worker policy=fifo priority=50 nice=0 cpus=0-1 rule=audio source=thread owner=0 state=applied" \
	"ROW tid=12 pid=10 comm=w2 policy=rr priority=5 state=demoted state_left_s=30 bpf_timer_p99_ns=1500000" \
	"ROW tid=13 pid=10 comm=w3 policy=fifo priority=7 rule=a-rule-name-longer-than-its-column source=rule owner=0 state=applied" \
	"OK rows=3 unmanaged=3"
ctl list
expect_req "v=1 op=list" "list"
expect_in "$(echo "$OUT" | head -1)" "TID PID COMM" "list: a header"
expect_in "$(echo "$OUT" | grep '^11 ' | tr -s ' ')" "worker fifo 50" "list: a row per thread"
# each column as wide as its widest cell: a long rule name shifts no other column
col() { echo "$OUT" | grep "$1" | head -1 | awk -v w="$2" '{ print index($0, w) }'; }
[ "$(col '^TID' SOURCE)" = "$(col '^11 ' thread)" ] && [ "$(col '^TID' SOURCE)" = "$(col '^13 ' 'rule ')" ] &&
	[ "$(col '^TID' STATE)" = "$(col '^13 ' applied)" ] && [ "$(col '^TID' POLICY)" = "$(col '^12 ' rr)" ] &&
	pass "list: the columns line up with a rule name longer than the header's" || fail "list: columns misaligned: $OUT"
expect_in "$(echo "$OUT" | grep '^12 ')" "demoted:30s" "list: a demoted thread with its cooldown"
expect_in "$(echo "$OUT" | grep '^12 ')" "1.50ms" "list: the BPF p99 as a figure"
expect_in "$ERR" "(3 more not managed" "list: says how many more --all would show"
ctl list --all
expect_req "v=1 op=list all=1" "list --all"
ctl --json list
[ "$(echo "$OUT" | jq -c '[.[].tid]')" = "[11,12,13]" ] && pass "--json list: an array of rows" || fail "--json list: $OUT"
reply "OK rows=0"
ctl list
[ "$OUT" = "no managed threads" ] && pass "list with no rows says so" || fail "empty list printed: $OUT"
ctl --json list
[ "$OUT" = "[]" ] && pass "--json list with no rows: []" || fail "empty --json list printed: $OUT"

# jitter: rows, --reset, --histogram as bars or JSON
reply "ROW kind=timer name=w tid=11 policy=fifo priority=50 cpus=0 period_ns=1000000 samples=9 p99_ns=62700" \
	"OK rows=1 preempt=none cpu_dma_latency=off"
ctl jitter
expect_req "v=1 op=jitter" "jitter"
expect_in "$(echo "$OUT" | grep '^timer')" "1.00ms" "jitter: a row with its period"
expect_in "$OUT" "measured under: preemption none" "jitter: and under what"
ctl --json jitter
[ "$(echo "$OUT" | jq -r '.[0].name')" = "w" ] && pass "--json jitter: an array" || fail "--json jitter: $OUT"
ctl jitter --reset
expect_req "v=1 op=jitter-reset" "jitter --reset"
reply "ROW kind=timer name=w lo_ns=10000 hi_ns=11000 count=3" "ROW kind=timer name=w lo_ns=52000 hi_ns=53000 count=1" "OK rows=2"
ctl jitter --histogram timer:w
expect_req "v=1 op=jitter histogram=timer:w" "jitter --histogram"
expect_in "$OUT" "wake-up lateness of w, 4 samples" "histogram: a title with the count"
expect_in "$OUT" "10 - 20       us |" "histogram: 1-2-5 bins"
ctl --json jitter --histogram w
[ "$(echo "$OUT" | jq -c '[.[].count]')" = "[3,1]" ] && pass "--json jitter --histogram: the buckets" ||
	fail "--json histogram: $OUT"

# check: the report as rtschedd --check prints it; an error finding exits 1
reply "ROW code=rlimit-rtprio-zero severity=error message=RLIMIT_RTPRIO%20is%200 fix=set%20LimitRTPRIO" \
	"OK pid=42 comm=olad user=nobody"
ctl check --pid 42 --policy fifo --priority 10 --cpus 1
expect_req "v=1 op=check pid=42 policy=fifo priority=10 cpus=1" "check with its options"
expect_rc 1 "check with an error finding"
expect_in "$OUT" "rlimit-rtprio-zero" "check prints the finding"
expect_in "$OUT" "set LimitRTPRIO" "and its fix"
ctl check --user nobody --json
expect_req "v=1 op=check user=nobody" "check --user"
[ "$(echo "$OUT" | jq -r '.findings[0].code' 2>/dev/null)" = "rlimit-rtprio-zero" ] &&
	pass "check --json: the report as JSON" || fail "check --json: $OUT"
reply "OK pid=42"
ctl check
expect_rc 0 "check without findings"

# why: the thread, its culprits, the worst case's timeline, the last ones, a verdict
reply "ROW row=thread tid=11 pid=10 name=worker rule=audio policy=fifo priority=50 cpus=1 wakeups=1000 late=4 threshold_ns=200000 budget_ns=200000 explained=4 dropped=0 delay_ns=4000000 worst_ns=2100000 worst_cpu=1 worst_when=12:00:01 worst_from=timer" \
	"ROW row=culprit rank=1 kind=task name=spinner%20(pid%2042,%20fifo%2050) share_pct=96.5 total_ns=3860000 worst_ns=2000000 late=4 first=4" \
	"ROW row=culprit rank=2 kind=softirq name=softirq%20TIMER share_pct=3.5 total_ns=140000 worst_ns=60000 late=2 first=0" \
	"ROW row=timeline offset_ns=0 ns=2000000 name=spinner%20(pid%2042,%20fifo%2050)" \
	"ROW row=recent when=12:00:01 delay_ns=2100000 cpu=1 top=spinner top_ns=2000000" \
	"OK verdict=96%25%20of%20the%20delay:%20spinner"
ctl why worker
expect_rc 0 "why"
expect_req "v=1 op=why thread=worker" "why NAME"
expect_in "$OUT" "worker (tid 11, pid 10, rule audio), fifo 50 on CPU 1" "why: the thread"
expect_in "$OUT" "late: 4 of 1000 wake-ups later than 200.0us" "why: how many were late"
expect_in "$(echo "$OUT" | grep '^spinner')" "task        96.5%" "why: a culprit row with its kind and share"
expect_in "$OUT" "the worst late wake-up, from its start:" "why: the timeline"
expect_in "$OUT" "verdict: 96% of the delay: spinner" "why: the verdict last"
ctl why 11 --json
expect_req "v=1 op=why thread=11" "why TID (--json after the operand)"
[ "$(echo "$OUT" | jq -c '[.thread.tid, .culprits[0].share_pct, .culprits[1].name, (.timeline | length), .recent[0].top, .verdict]')" = \
	'[11,96.5,"softirq TIMER",1,"spinner","96% of the delay: spinner"]' ] &&
	pass "why --json: thread, culprits, timeline, recent and verdict in one object, numbers as numbers" || fail "why --json: $OUT"
# names are a thread's own (or another user's, a culprit's): a C1 control
# (U+009B, CSI in UTF-8) or an ESC in one must not reach the terminal raw
reply "ROW row=thread tid=11 pid=10 name=w%C2%9B2J rule=audio policy=fifo priority=50 cpus=1 wakeups=10 late=1 threshold_ns=200000 budget_ns=200000 explained=1 dropped=0 delay_ns=1000 worst_ns=1000 worst_cpu=1 worst_when=12:00:01 worst_from=timer" \
	"ROW row=culprit rank=1 kind=task name=x%1B%5B31m share_pct=100 total_ns=1000 worst_ns=1000 late=1 first=1" \
	"OK verdict=x"
ctl why 11
if printf '%s' "$OUT" | LC_ALL=C grep -q "$(printf '\x9b')\|$(printf '\x1b')"; then
	fail "why: a name's control bytes reach the terminal raw: $(printf '%s' "$OUT" | od -c | head -3)"
else
	expect_in "$OUT" 'w\xc2\x9b2J' "why: a name's C1 control prints as \\xNN"
	expect_in "$OUT" 'x\x1b[31m' "why: and an ESC too"
fi
reply "ERR no-such-thread no managed thread or probe named nosuch"
ctl why nosuch
expect_rc 1 "why of an unknown thread"
expect_in "$ERR" "refused: no-such-thread" "why: the refusal on stderr"
ctl --json why nosuch
[ "$(echo "$OUT" | jq -r .error)" = "no-such-thread" ] && pass "why --json: a refusal as JSON" || fail "why --json refusal: $OUT"

# refusals: exit 1, the code and message (and the diagnosis) on stderr or as JSON
reply "ERR not-own-thread diag=cap-sys-nice tid 5 is not yours"
ctl register --tid 5
expect_rc 1 "a refusal"
expect_in "$ERR" "rtschedctl: refused: not-own-thread tid 5 is not yours" "the refusal on stderr"
expect_in "$ERR" "diagnosis: cap-sys-nice" "with its diagnosis"
ctl --json register --tid 5
[ "$(echo "$OUT" | jq -c .)" = '{"error":"not-own-thread","message":"tid 5 is not yours","diag":"cap-sys-nice"}' ] &&
	pass "--json refusal: error, message, diag" || fail "--json refusal: $OUT"
ctl unregister --tid 5
expect_rc 1 "unregister refused"
reply "ERR no-such-thread no jitter source named nosuch"
ctl jitter --histogram nosuch
expect_rc 1 "a histogram of nothing"
expect_in "$ERR" "refused: no-such-thread no jitter source named nosuch" "says why"
ctl check --pid 1 --json
[ "$(echo "$OUT" | jq -r .error)" = "no-such-thread" ] && pass "check --json: a refusal as JSON" ||
	fail "check --json refusal: $OUT"
reply OK
ctl metrics --json
expect_req "v=1 op=metrics" "--json after metrics too"

# --- usage errors: exit 64, one line, nothing sent ------------------------
usage -- "no command given"
usage frobnicate -- "unknown command 'frobnicate'"
usage register --role audio -- "register needs --tid TID or --pid PID"
usage unregister -- "unregister needs --tid TID or --pid PID"
usage unregister --tid 5 --role audio -- "unknown option '--role' for unregister (it takes --tid, --pid, --json)"
usage register --tid 5 --bogus -- "unknown option '--bogus' for register"
usage register --tid -- "--tid needs a value"
usage --socket -- "--socket needs a value"
usage status --all -- "unknown option '--all' for status (it takes --json)"
usage reload --tid 5 -- "reload"
usage version extra -- "unexpected argument 'extra'"
usage list --tid 5 -- "list"
usage jitter --pid 5 -- "jitter"
usage check --tid 5 -- "check"
usage metrics --all -- "unknown option '--all' for metrics"
usage --bogus status -- "unknown option '--bogus'"
usage why -- "why needs the thread: a TID or a NAME"
usage why worker extra -- "unexpected argument 'extra'"
usage why --tid 5 worker -- "unknown option '--tid' for why (it takes --json)"
usage jitter --reset --histogram w -- "jitter takes --reset or --histogram, not both"
usage register --tid 5 --role "$(head -c 5000 /dev/zero | tr '\0' a)" -- "request too long"
usage run -- "run needs a program"
usage run --rule -- "needs a value"
usage run --tid 5 true -- "unknown option '--tid' for run"

# --- help, version, unreachable ---------------------------------------------
run "$RTSCHEDCTL" --help
expect_rc 0 "--help"
for c in register unregister list status reload version jitter metrics why check run; do
	echo "$OUT" | grep -q "^  $c\b" || fail "--help does not list $c"
done
pass "--help lists every command"
run "$RTSCHEDCTL" --version
expect_rc 0 "--version"
expect_in "$OUT" "rtschedctl " "--version prints rtschedctl's"
run "$RTSCHEDCTL" --socket "$TMP/nothing" status
expect_rc 2 "no daemon on the socket"
expect_in "$ERR" "cannot connect to $TMP/nothing" "says where it looked"

finish
