#!/bin/bash
# bench/run.sh: `make bench`. Starts rtschedd on a private socket with a
# benchmark config (rate limit off) and runs each benchmark, printing its
# table and the machine it ran on. BENCH_QUICK=1 for a short run.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (CAP_SYS_NICE)"; exit 1; }
N=${BENCH_N:-$([ "${BENCH_QUICK:-0}" = 1 ] && echo 2000 || echo 20000)}
TMP=$(mktemp -d /tmp/rtschedd-bench.XXXXXX)
RESULTS="$top_builddir/bench/results"
mkdir -p "$RESULTS"
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; rm -rf "$TMP"' EXIT

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
echo "preemption: $(cat /sys/kernel/debug/sched/preempt 2>/dev/null || uname -v | grep -o 'PREEMPT[_A-Z]*' | head -1)"
cat >"$TMP/bench.conf" <<EOC
[daemon]
rate-limit = 0
log-level = warning
[rule bench-a]
policy = fifo
priority = 10
[rule bench-b]
policy = fifo
priority = 11
[rule bench-m]
thread-name = bench-m-*
policy = fifo
priority = 12
EOC
"$top_builddir/rtschedd" --config "$TMP/bench.conf" --socket "$TMP/control" &
DPID=$!
for _ in $(seq 50); do [ -S "$TMP/control" ] && break; sleep 0.1; done

echo
"$top_builddir/bench/bench-hist" | tee "$RESULTS/hist.txt"
echo
RTSCHED_SOCKET="$TMP/control" "$top_builddir/bench/bench-register" "$N" | tee "$RESULTS/register.txt"

echo
M=$([ "${BENCH_QUICK:-0}" = 1 ] && echo 300 || echo 2000)
{ "$top_builddir/bench/bench-match" rename "$M"; "$top_builddir/bench/bench-match" create "$M" | tail -1; } | tee "$RESULTS/match.txt"

echo
# start-up scan: a second daemon starts while 10,000 threads exist
coproc HOLD { "$top_builddir/bench/bench-match" hold 10000; }
read -r _ <&"${HOLD[0]}"
"$top_builddir/rtschedd" --config "$TMP/bench.conf" --socket "$TMP/control2" &
D2=$!
for _ in $(seq 100); do [ -S "$TMP/control2" ] && break; sleep 0.1; done
"$top_builddir/rtschedctl" --socket "$TMP/control2" --json status |
	jq -r '"start-up scan: \(.scan_tasks) tasks in \(.scan_us / 1000) ms (\(.scan_us * 1000 / .scan_tasks | floor) ns per task)"' |
	tee -a "$RESULTS/match.txt"
kill $D2; wait $D2 2>/dev/null
exec {HOLD[1]}>&-
wait $HOLD_PID 2>/dev/null
