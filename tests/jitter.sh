#!/bin/bash
# tests/jitter.sh: observed wake-up latency. A worker using librtsched's timer
# hands its histogram to rtschedd; a daemon probe measures a FIFO thread on
# CPU 0; registered threads get BPF (or schedstat) rows. Counts are checked exactly
# against what the worker itself recorded; no timing thresholds.
. "$(dirname "$0")/lib.sh"
need_root
WORKER="$top_builddir/tests/timer-worker"

CONF="$TMP/j.conf"
cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
metrics-file = $TMP/rtschedd.prom
metrics-interval = 1
cpu-dma-latency = 0
[probe lat0]
cpu = 0
policy = fifo
priority = 10
period-us = 1000
strategy = sleep
EOC
daemon_start "$CONF"
export RTSCHED_SOCKET="$SOCK"

# the probe: a FIFO 10 thread on CPU 0, as the kernel reports it
jq_probe() { "$RTSCHEDCTL" --socket "$SOCK" --json jitter | jq -r "$1"; }
wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq '.[] | select(.name == \"lat0\") | .samples')\" -gt 10 ]" &&
	pass "probe lat0 is measuring" || fail "probe has no samples"
PT=$(jq_probe '.[] | select(.name == "lat0") | .tid')
expect_sched "$PT" "policy=fifo priority=10 cpus=0" "probe thread runs SCHED_FIFO 10 on CPU 0"
[ "$(jq_probe '.[] | select(.name == "lat0") | .kind')" = probe ] && pass "row kind probe" || fail "kind"

# a timer worker: exactly N wake-ups reach the daemon
coproc W { "$WORKER" 1000 sleep 500; }
read -r -t "$HANG_S" line <&"${W[0]}"; WT=${line#attached tid }
read -r -t "$HANG_S" done <&"${W[0]}"
expect_in "$done" "done count=500" "worker recorded 500 wake-ups"
S=$(jq_probe ".[] | select(.tid == $WT and .kind == \"timer\") | .samples")
[ "$S" = 500 ] && pass "rtschedctl jitter shows 500 samples for the worker (500 periods of 1 ms)" || fail "samples $S"
[ "$(jq_probe ".[] | select(.tid == $WT) | .period_ns")" = 1000000 ] && pass "period reported" || fail "period"
missing=
for k in p50_ns p90_ns p99_ns p999_ns max_ns mean_ns stddev_ns overruns p99_pct; do
	v=$(jq_probe ".[] | select(.tid == $WT and .kind == \"timer\") | .$k")
	[[ "$v" =~ ^[0-9.]+$ ]] || missing="$missing $k=${v:-none}"
done
[ -z "$missing" ] && pass "row carries p50..p99.9, max, mean, stddev, overruns, p99 as % of period" ||
	fail "row fields missing or not numbers:$missing"
ctl jitter --histogram "$WT"
expect_in "$OUT" "500 samples" "--histogram draws the worker's distribution"

# reset: counting starts again
ctl jitter --reset
[ "$(jq_probe ".[] | select(.tid == $WT) | .samples")" = 0 ] && pass "--reset zeroes the view" || fail "after reset"
exec {W[1]}>&-; wait "$W_PID" 2>/dev/null

# overruns: the worker stalls 25 ms once at 1 ms period
coproc W { "$WORKER" 1000 sleep 300 100 25; }
read -r -t "$HANG_S" line <&"${W[0]}"; WT=${line#attached tid }
read -r -t "$HANG_S" done <&"${W[0]}"
own=$(echo "$done" | sed 's/.*overruns=\([0-9]*\).*/\1/')
O=$(jq_probe ".[] | select(.tid == $WT) | .overruns")
[ "$O" = "$own" ] && [ "$O" -ge 20 ] && pass "a 25 ms stall counted as $O overruns, as the worker saw" || fail "overruns $O, worker $own"
[ "$(jq_probe ".[] | select(.tid == $WT) | .samples")" = 300 ] && pass "overruns are not samples: 300 wake-ups" || fail "samples"
exec {W[1]}>&-; wait "$W_PID" 2>/dev/null
wait_for sh -c "! '$RTSCHEDCTL' --socket '$SOCK' --json jitter | jq -e '.[] | select(.tid == $WT)'" &&
	pass "the exited worker's row is gone" || fail "exited worker still listed"

# rows for registered threads (the BPF observer's, or schedstat where it is
# unavailable: `rtschedctl status` says which), and PM QoS while one is real-time
helper_start
T=$(spawn reg1)
ctl register --tid "$T"
KINDS=$(jq_probe "[.[] | select(.tid == $T) | .kind] | join(\",\")")
case "$("$RTSCHEDCTL" --socket "$SOCK" status | sed -n 's/^observer *//p')" in
bpf*) WANT="bpf-timer,bpf-wakeup" ;;
*) WANT=schedstat ;;
esac
[ "$KINDS" = "$WANT" ] && pass "registered thread has rows $WANT" || fail "registered thread's rows: '$KINDS', want $WANT"
ctl --json jitter
expect_in "$("$RTSCHEDCTL" --socket "$SOCK" jitter)" "cpu_dma_latency held at 0 us" "PM QoS held while a real-time thread is managed"
ctl unregister --tid "$T"
expect_in "$("$RTSCHEDCTL" --socket "$SOCK" jitter)" "released" "PM QoS released when none is"
helper_stop

# Prometheus: from the socket and the textfile, both valid for promtool
ctl metrics
echo "$OUT" >"$TMP/metrics.txt"
expect_in "$OUT" 'rtschedd_wakeup_latency_seconds_bucket{thread="lat0"' "metrics has the probe's histogram"
expect_in "$OUT" 'le="+Inf"' "cumulative buckets end with +Inf"
wait_for test -s "$TMP/rtschedd.prom" && pass "metrics-file written" || fail "no metrics file"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics.txt" && pass "promtool accepts rtschedctl metrics" || fail "promtool: rtschedctl metrics"
	promtool check metrics <"$TMP/rtschedd.prom" && pass "promtool accepts the textfile" || fail "promtool: textfile"
else
	fail "promtool not installed (Debian package prometheus)"
fi
"$RTSCHEDCTL" --socket "$SOCK" --json jitter | jq -e 'type == "array"' >/dev/null && pass "jitter --json parses" || fail "json"
daemon_stop
finish
