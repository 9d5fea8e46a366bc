#!/bin/bash
# tests/bpf.sh: the BPF wake-up observer (src/daemon/observe/bpf) on the real
# kernel, through tests/bpfobs-tool, which loads it, drops CAP_BPF,
# CAP_PERFMON and CAP_SYS_ADMIN, and only then watches threads (through the
# mmapped maps), as rtschedd will.
#   1. cyclictest (SCHED_OTHER, fixed loop count, -h): its measuring thread's
#      timer-lateness count is at most cyclictest's cycles and at least half
#      of them (a loop whose deadline has already passed does not sleep, so
#      it has no timer wake-up to observe), and the p50 is within a factor of
#      10 of cyclictest's own histogram's; the wake-up latency never exceeds
#      the timer lateness it is part of (p50 vs p50). Part 4 checks the
#      agreement of rtschedd's rows with bounds measured under load; the
#      issue's target (p50 and p99 within 10% or 5 us) is judged by `make
#      bench` (section 8), not here.
#   2. privileges: with no capability loading fails with EPERM naming
#      CAP_BPF; as user nobody with only CAP_BPF + CAP_PERFMON it loads,
#      and with culprit tracking (-c) it still reads the late wake-ups'
#      records after dropping both (a mmapped ring buffer, no bpf()).
#   3. a GStreamer streaming thread (audiotestsrc, is-live, sync) gets a
#      timer-lateness histogram; then the same pipeline started under
#      rtschedd, whose [rule] with thread-name = audiotestsrc0:s (the
#      kernel's 15-character cut) makes the thread FIFO 15 (as the kernel
#      reports it: task-helper query) and
#      whose `rtschedctl --json jitter` shows its bpf-timer row growing.
#   4. rtschedd itself: a cyclictest thread registered from outside with
#      `rtschedctl register --tid` before its first cycle gets bpf-timer and
#      bpf-wakeup rows whose count grows; read while cyclictest is stopped,
#      the bpf-timer row has at most cyclictest's cycles and within 5% (+1)
#      of them, and a p50 within 25% or 10 us of cyclictest's own (why
#      those bounds: at the check); in list, metrics and --histogram; an
#      unmanaged cyclictest running alongside never appears.
#   5. rtschedd started without CAP_BPF/CAP_PERFMON/CAP_SYS_ADMIN runs on
#      (schedstat rows), and both `rtschedctl check` and `rtschedd --check`
#      report bpf-no-caps. A build without BPF (configure --disable-bpf)
#      runs only this part and expects bpf-not-built instead.
# No timing thresholds: every comparison is against what cyclictest saw of
# the same wake-ups. Needs root, rt-tests, gstreamer1.0-tools and
# gstreamer1.0-plugins-base; anything missing is a failure, not a skip.
. "$(dirname "$0")/lib.sh"
need_root
TOOL="$top_builddir/tests/bpfobs-tool"
LOOPS=5000

# field NAME LINE: the value of NAME=value in a report line
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
# cyclictest -h output: "cycles p50_us" by nearest rank over the histogram
# and its overflows (cyclictest truncates to whole us)
cyc_p50() {
	awk '
		/^# Histogram Overflows:/ { ovf = $4 + 0 }
		/^[0-9]+[ \t]+[0-9]+/ { n++; b[n] = $1 + 0; c[n] = $2 + 0; sum += $2 }
		END {
			all = sum + ovf; k = int(all / 2); if (k < all / 2) k++; if (k < 1) k = 1
			acc = 0; v = -1
			for (j = 1; j <= n; j++) { acc += c[j]; if (acc >= k) { v = b[j]; break } }
			print all, v
		}' "$1"
}

for t in cyclictest gst-launch-1.0 setpriv jq; do
	command -v "$t" >/dev/null || fail "$t is missing (apt-get install rt-tests gstreamer1.0-tools gstreamer1.0-plugins-base util-linux jq)"
done
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
NOCAPS=(setpriv --bounding-set=-bpf,-perfmon,-sys_admin)
# start_nocaps CONF: rtschedd without any capability that could load BPF
start_nocaps() {
	SOCK="$TMP/control"; DLOG="$TMP/daemon.log"
	"${NOCAPS[@]}" "$RTSCHEDD" --config "$1" --socket "$SOCK" >>"$DLOG" 2>&1 &
	DPID=$!
	wait_for "$RTSCHEDCTL" --socket "$SOCK" version || { echo "daemon did not start:"; cat "$DLOG"; exit 1; }
}
CONF="$TMP/bpf.conf"
printf '[daemon]\nrate-limit = 0\n' >"$CONF"

if [ ! -x "$TOOL" ]; then
	# --- built without BPF: the daemon runs and says why ----------------------
	run "$RTSCHEDD" --config "$CONF" --check
	expect_in "$OUT" "bpf-not-built" "rtschedd --check: bpf-not-built"
	daemon_start "$CONF"
	ctl status
	expect_in "$OUT" "built without BPF" "the daemon runs without the observer and says why"
	ctl check
	expect_in "$OUT" "bpf-not-built" "rtschedctl check: bpf-not-built"
	daemon_stop
	finish
	exit
fi

# --- 1. cyclictest --------------------------------------------------------------
timeout 300 "$TOOL" -d -o "$TMP/rep" -x -- \
	cyclictest -q -m --policy=other -i 1000 -l "$LOOPS" -h 100000 >"$TMP/ct" 2>"$TMP/ct.err"
RC=$?
[ "$RC" -eq 0 ] && pass "bpfobs-tool loaded, dropped its capabilities and ran cyclictest" ||
	fail "bpfobs-tool exit $RC: $(cat "$TMP/ct.err")"
REP=$(cat "$TMP/rep")
echo "$REP" | sed 's/^/  | /'
expect_in "$REP" "caps_held bpf=0 perfmon=0 sys_admin=0" "CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN gone before any watch"
expect_in "$REP" "child exit=0" "cyclictest ran to its end"
[ "$(echo "$REP" | grep -c '^watch ')" = 1 ] && pass "one thread watched: cyclictest's measuring thread" ||
	fail "watched: $(echo "$REP" | grep '^watch ')"
TIMER=$(echo "$REP" | grep '^hist .*kind=timer')
WAKE=$(echo "$REP" | grep '^hist .*kind=wakeup')
read -r CYCLES CP50 < <(cyc_p50 "$TMP/ct")
N=$(field count "$TIMER")
LOST=$(field lost "$TIMER")
echo "  cyclictest: $CYCLES cycles, p50 $CP50 us; observer: $N timer samples (+$LOST lost), p50 $(field p50_ns "$TIMER") ns"
[ "$CYCLES" = "$LOOPS" ] && pass "cyclictest counted $LOOPS cycles" || fail "cyclictest cycles: $CYCLES"
if [ -n "$N" ] && [ "$N" -le "$CYCLES" ] && [ $((N * 2)) -ge "$CYCLES" ]; then
	pass "timer samples $N: at most cyclictest's $CYCLES cycles, at least half ($(( (CYCLES - N) * 1000 / CYCLES )) per mille fewer)"
else
	fail "timer samples ${N:-none} (lost $LOST) vs $CYCLES cycles"
fi
P50=$(field p50_ns "$TIMER")
if [ -n "$P50" ] && awk -v o="$P50" -v c="$CP50" 'BEGIN { o /= 1000; if (c < 1) c = 1; if (o < 1) o = 1; exit !(o <= 10 * c && c <= 10 * o) }'; then
	pass "timer-lateness p50 $P50 ns within a factor of 10 of cyclictest's $CP50 us"
else
	fail "timer-lateness p50 ${P50:-none} ns vs cyclictest's $CP50 us"
fi
[ "$(field early "$TIMER")" = 0 ] && pass "no sample before its timer's expiry" || fail "early samples: $TIMER"
[ "$(field count "$WAKE")" -gt 0 ] 2>/dev/null && [ "$(field p50_ns "$WAKE")" -le "$P50" ] &&
	pass "wake-up latency recorded, p50 $(field p50_ns "$WAKE") ns <= timer lateness p50" ||
	fail "wake-up histogram: $WAKE"
expect_in "$REP" " races=0 " "one writer per histogram (no seqlock overlap in the kernel)"

# --- 2. privileges -----------------------------------------------------------------
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
run "${NOBODY[@]}" --inh-caps=-all "$TOOL" -s 0.1 1
[ "$RC" -eq 1 ] && expect_in "$ERR" "Operation not permitted" "without capabilities: EPERM" ||
	fail "without capabilities: exit $RC, $ERR"
expect_in "$ERR" "CAP_BPF" "the reason names CAP_BPF"
# 20 timer sleeps of one thread (a Python loop: not built with the
# sanitizers, so nothing traced by the tool's ptrace runs LeakSanitizer). Not
# one: the observer's programs do not see every wake-up the kernel traces
# (on this project's VM, 1992 to 1999 of 2001 sched_waking events perf stat
# counted for one sleeping thread, no recursion miss, no lost count), so a
# test resting on a single sample fails now and then; at least half of the
# sleeps must give their timer sample, as section 1 asks of cyclictest's cycles
SLEEPS=20
run "${NOBODY[@]}" --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon "$TOOL" -d -m -x -- \
	python3 -c "import time
for _ in range($SLEEPS): time.sleep(0.02)"
expect_rc 0 "as nobody with only CAP_BPF + CAP_PERFMON: loads, drops them, watches"
expect_in "$OUT" "caps_held bpf=0 perfmon=0 sys_admin=0" "nobody's capabilities dropped before watching"
H=$(echo "$OUT" | grep '^hist .*kind=timer')
N=$(field count "$H")
[ -n "$N" ] && [ "$N" -le "$SLEEPS" ] && [ $((N * 2)) -ge "$SLEEPS" ] &&
	pass "$SLEEPS sleeps woke by their timer: $N sample(s) (+$(field lost "$H") lost), p50 $(field p50_ns "$H") ns late" ||
	fail "timer samples for $SLEEPS sleeps: ${N:-none}: $OUT"
# culprit tracking, capabilities dropped: every wake-up of three 50 ms
# sleeps is later than 1 ns, so each is a record read from the ring buffer
run "${NOBODY[@]}" --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon "$TOOL" -d -c 1 -m -x -- \
	sh -c 'sleep 0.05; sleep 0.05; sleep 0.05'
L=$(echo "$OUT" | grep '^late ' | head -1)
echo "  | $L"
expect_in "$OUT" "caps_held bpf=0 perfmon=0 sys_admin=0" "culprit tracking: capabilities dropped before watching"
[ "$(field records "$L")" -ge 1 ] 2>/dev/null && [ "$(field records "$L")" -eq $(( $(field timer "$L") + $(field wakeup "$L") - $(field dropped "$L") )) ] &&
	pass "late wake-ups' records read without capabilities: $(field records "$L"), one per late wake-up counted" ||
	fail "records after the drop: $L"

# --- 3. GStreamer ------------------------------------------------------------------
gst-launch-1.0 -q audiotestsrc is-live=true ! audioconvert ! fakesink sync=true >/dev/null 2>&1 &
GST=$!
at_exit_gst() { kill "$GST" 2>/dev/null; wait "$GST" 2>/dev/null; }
at_exit at_exit_gst
ST=""
for _ in $(seq 100); do
	ST=$(grep -l '^audiotestsrc' /proc/"$GST"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
	[ -n "$ST" ] && break
	sleep 0.1
done
if [ -z "$ST" ]; then
	fail "no audiotestsrc streaming thread in gst-launch-1.0 ($(cat /proc/"$GST"/task/*/comm 2>/dev/null | tr '\n' ' '))"
else
	run "$TOOL" -d -s 3 "$ST"
	H=$(echo "$OUT" | grep '^hist .*kind=timer')
	echo "  | $H"
	[ "$RC" -eq 0 ] && [ "$(field count "$H")" -gt 0 ] 2>/dev/null &&
		pass "GStreamer's streaming thread $ST ($(cat /proc/"$GST"/task/"$ST"/comm)) has a timer-lateness histogram" ||
		fail "GStreamer streaming thread: exit $RC, $OUT $ERR"
fi
at_exit_gst

# --- 3b. the same pipeline in rtschedd, found by a thread-name rule ---------------------
# The application as users run it: rtschedd runs first, the pipeline starts
# afterwards, and a [rule] finds its streaming thread by name (the kernel
# cuts audiotestsrc0:src to 15 characters) and makes it FIFO 15 (not the
# default 10, so the kernel's report tells the rule's work from a
# registration's); the observer then shows its timer lateness.
GCONF="$TMP/gst.conf"
printf '[daemon]\nrate-limit = 0\n[rule gst-src]\nthread-name = audiotestsrc0:s\npolicy = fifo\npriority = 15\n' >"$GCONF"
daemon_start "$GCONF"
gst-launch-1.0 -q audiotestsrc is-live=true ! audioconvert ! fakesink sync=true >/dev/null 2>&1 &
GST=$!
ST=""
for _ in $(seq 100); do
	ST=$(grep -lx 'audiotestsrc0:s' /proc/"$GST"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
	[ -n "$ST" ] && break
	sleep 0.1
done
# gst_samples: the bpf-timer row's sample count for the streaming thread ("" if none)
gst_samples() {
	"$RTSCHEDCTL" --socket "$SOCK" --json jitter | jq -r ".[] | select(.tid == $ST and .kind == \"bpf-timer\") | .samples"
}
if [ -z "$ST" ]; then
	fail "rtschedd: no audiotestsrc0:s thread in gst-launch-1.0 ($(cat /proc/"$GST"/task/*/comm 2>/dev/null | tr '\n' ' '))"
else
	wait_for sh -c "'$HELPER' query $ST | grep -q 'policy=fifo priority=15'"
	expect_sched "$ST" "policy=fifo priority=15" "rule gst-src made GStreamer's streaming thread $ST FIFO 15 (the kernel's report)"
	wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq '.[] | select(.tid == $ST and .kind == \"bpf-timer\") | .samples')\" -gt 0 ]"
	G1=$(gst_samples)
	wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq '.[] | select(.tid == $ST and .kind == \"bpf-timer\") | .samples')\" -gt ${G1:-0} ]"
	G2=$(gst_samples)
	ROW=$("$RTSCHEDCTL" --socket "$SOCK" --json jitter | jq -c ".[] | select(.tid == $ST and .kind == \"bpf-timer\") | {rule, policy, priority, samples, p50_ns, p99_ns}")
	echo "  | $ROW"
	[ -n "$G1" ] && [ "${G2:-0}" -gt "$G1" ] 2>/dev/null &&
		pass "rtschedctl jitter: a bpf-timer row for the streaming thread, samples growing ($G1 then $G2)" ||
		fail "no growing bpf-timer row for the streaming thread $ST: '$G1' then '$G2'; jitter: $("$RTSCHEDCTL" --socket "$SOCK" --json jitter)"
	expect_in "$ROW" '"rule":"gst-src"' "the row names the rule that matched the thread"
fi
at_exit_gst
daemon_stop

# --- 4. rtschedd: a cyclictest registered from outside --------------------------------
jit() { "$RTSCHEDCTL" --socket "$SOCK" --json jitter; }
daemon_start "$CONF"
ctl status
expect_in "$(echo "$OUT" | grep '^observer')" "bpf, 0 of 64 threads" "the daemon loaded the observer"
PIDD=$DPID
expect_in "$(grep -E '^Cap(Eff|Prm)' /proc/"$PIDD"/status | tr '\n' ' ')" "CapEff:	0000000000800000" \
	"after start only CAP_SYS_NICE is left (CAP_BPF, CAP_PERFMON dropped)"
# both run until SIGINT, after the checks: cyclictest then prints its histogram.
# The measured one waits for the next full second before its first cycle
# (--secaligned: 0.1 to 1.1 s), so it is registered before it measures
# anything and both histograms start at the same wake-up; if the
# registration came late after all (its voluntary context switches moved
# while it should have been in that first sleep), it starts again.
nvcsw() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/"$CT"/task/"$1"/status 2>/dev/null; }
for attempt in 1 2 3 4 5; do
	cyclictest -q -m --policy=other -i 1000 -h 20000 --secaligned >"$TMP/ct2" 2>&1 &
	CT=$!
	wait_for sh -c "[ \$(ls /proc/$CT/task | wc -l) -ge 2 ]"
	CTT=$(ls /proc/"$CT"/task | grep -vx "$CT" | head -1)
	ctl register --tid "$CTT"
	V1=$(nvcsw "$CTT")
	sleep 0.05
	[ "$RC" -ne 0 ] || [ "$V1" = "$(nvcsw "$CTT")" ] && break
	echo "# attempt $attempt: cyclictest had begun its cycles before it was registered: again"
	kill "$CT"
	wait "$CT"
done
expect_rc 0 "cyclictest's measuring thread $CTT registered from outside before its first cycle (attempt $attempt)"
cyclictest -q --policy=other -i 1000 >/dev/null 2>&1 &
UCT=$!
at_exit_ct() { kill -CONT "$CT" 2>/dev/null; kill "$CT" "$UCT" 2>/dev/null; }
at_exit at_exit_ct
wait_for sh -c "[ \$(ls /proc/$UCT/task | wc -l) -ge 2 ]"
UTT=$(ls /proc/"$UCT"/task | grep -vx "$UCT" | head -1)
samples() { jit | jq -r ".[] | select(.tid == $CTT and .kind == \"$1\") | .samples"; }
wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq '.[] | select(.tid == $CTT and .kind == \"bpf-timer\") | .samples')\" -gt 0 ]"
S1=$(samples bpf-timer)
wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq '.[] | select(.tid == $CTT and .kind == \"bpf-timer\") | .samples')\" -gt ${S1:-0} ]"
S2=$(samples bpf-timer)
[ -n "$S1" ] && [ "${S2:-0}" -gt "$S1" ] && pass "bpf-timer samples grow: $S1 then $S2" || fail "bpf-timer samples: '$S1' then '$S2'"
[ "$(samples bpf-wakeup)" -gt 0 ] 2>/dev/null && pass "bpf-wakeup row has samples" || fail "bpf-wakeup: $(jit)"
[ -z "$(samples schedstat)" ] && pass "no schedstat row for an observed thread" || fail "schedstat row too"
L=$("$RTSCHEDCTL" --socket "$SOCK" --json list | jq -r ".[] | select(.tid == $CTT) | .observed")
[ "$L" = bpf ] && pass "list: observed=bpf" || fail "list: observed=$L"
ctl jitter --histogram "bpf-timer:$CTT"
expect_in "$OUT" "timer lateness (BPF) of cyclictest" "jitter --histogram bpf-timer:TID draws the BPF histogram"
ctl metrics
expect_in "$OUT" "tid=\"$CTT\",rule=\"default\",cpu=" "metrics: a series for the thread"
expect_in "$(echo "$OUT" | grep "tid=\"$CTT\"")" 'source="bpf-timer"' "metrics: labelled source=\"bpf-timer\""
for _ in 1 2 3; do
	[ -z "$(jit | jq ".[] | select(.tid == $UTT)")" ] || UNSEEN=no
	case "$("$RTSCHEDCTL" --socket "$SOCK" metrics)" in *"tid=\"$UTT\""*) UNSEEN=no ;; esac
	sleep 0.2
done
# The last reading while cyclictest is stopped, so both have seen the same
# wake-ups; then it ends and prints its histogram (an exited thread leaves
# the registry, so the reading must come first). Both signals go to the
# measuring thread's tid: the kernel gives a process's signal to the thread
# it was sent to when that thread can take it, so the FIFO thread stops at
# once and the SIGINT interrupts its next sleep; sent to the main thread
# (SCHED_OTHER, behind the load) they let it run 4 to 7 more cycles first.
# The one wake-up the stop delayed is cyclictest's only extra (+1).
kill -STOP "$CTT"
LAST=$(jit | jq -c ".[] | select(.tid == $CTT and .kind == \"bpf-timer\") | [.samples, .p50_ns]")
kill -CONT "$CT"
kill -INT "$CTT"
kill -INT "$UCT"
wait "$CT"; wait "$UCT"
read -r N P50 < <(echo "$LAST" | tr -d '[]' | tr ',' ' ')
read -r CYC CP50 < <(cyc_p50 "$TMP/ct2")
echo "  cyclictest: $CYC cycles, p50 $CP50 us; rtschedd while it was stopped: $N bpf-timer samples, p50 $P50 ns"
# Tolerances, measured with this window in 24 runs of this test on this
# 2-core VM (plain and ASan builds, each alone and under stress-ng --cpu 2,
# with other engineers' test suites and fuzzers running too; 639 to 1,966
# cycles): rtschedd counted 0 to 19 fewer timer wake-ups than cyclictest (at
# most 1.65%; the wake-up the stop delayed, switches the kernel did not
# trace, sleeps asked for a time already past), never more; its p50 was 0.3
# to 2.5 us (at most 10%) below cyclictest's (cyclictest reads its clock
# after the return to user space and truncates to whole us). The issue's 2%
# would be 1.2 times the worst count seen, so the bounds are 5% (+1) for
# the count and 25% or 10 us for the p50: 3 and 4 times the worst seen.
[ -n "$N" ] && [ "$N" -le "$CYC" ] && [ $(( (CYC - N - 1) * 100 )) -le $((5 * CYC)) ] &&
	pass "bpf-timer samples $N: at most cyclictest's $CYC cycles and within 5% (+1) of them" ||
	fail "bpf-timer samples ${N:-none} vs cyclictest's $CYC cycles (want at most, and within 5% + 1)"
awk -v o="${P50:-0}" -v c="$CP50" 'BEGIN { o /= 1000; d = o - c; if (d < 0) d = -d; exit !(o > 0 && (d <= 10 || d <= 0.25 * c)) }' &&
	pass "bpf-timer p50 $P50 ns within 25% or 10 us of cyclictest's $CP50 us" ||
	fail "bpf-timer p50 ${P50:-none} ns vs cyclictest's $CP50 us (want within 25% or 10 us)"
[ "${UNSEEN:-yes}" = yes ] && pass "the unmanaged cyclictest thread $UTT never appeared" ||
	fail "unmanaged tid $UTT appeared in jitter or metrics"
daemon_stop

# --- 5. no capability to load: the daemon runs on and says why ----------------------
run "${NOCAPS[@]}" "$RTSCHEDD" --config "$CONF" --check
expect_in "$OUT" "bpf-no-caps" "rtschedd --check without CAP_BPF: bpf-no-caps"
expect_in "$OUT" "CAP_BPF and CAP_PERFMON" "... with the fix"
start_nocaps "$CONF"
ctl status
expect_in "$(echo "$OUT" | grep '^observer')" "CAP_BPF" "the daemon runs without the observer and says why"
ctl check
expect_in "$OUT" "bpf-no-caps" "rtschedctl check: bpf-no-caps"
sleep 300 &
SL=$!
at_exit_sl() { kill "$SL" 2>/dev/null; }
at_exit at_exit_sl
ctl register --tid "$SL"
K=$(jit | jq -r ".[] | select(.tid == $SL) | .kind")
[ "$K" = schedstat ] && pass "without the observer: a schedstat row" || fail "rows for $SL: $K"
daemon_stop

finish
