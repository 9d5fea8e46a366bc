#!/bin/bash
# tests/timerlat.sh: rtla timerlat and `rtschedctl why` name the same
# culprit for the same injected noise. It needs the kernel's timerlat
# tracer, which neither this project's host kernel nor Debian 12's stock
# 6.1 kernel has (CONFIG_TIMERLAT_TRACER is not set); Debian 12's rt flavour
# has it, so it runs in that kernel under qemu:
#
#   make check-kernels KERNEL_VERSION=6.1.0-56-rt-amd64 KERNEL_TESTS=timerlat KERNEL_HOST=no
#
# Elsewhere it skips, saying why. With a SCHED_FIFO 50 spinner in 5 ms
# bursts every 20 ms on the last CPU, one after the other:
#   1. rtla timerlat top (its measuring kernel thread at SCHED_FIFO 10 on
#      that CPU) with -a THRESHOLD (Debian 12's rtla 6.1: stop at the first
#      latency above it and save the trace) and the osnoise noise events;
#      its culprit: the thread_noise (or irq/softirq noise) event on that
#      CPU with the longest duration in the trace;
#   2. a cyclictest thread at SCHED_FIFO 10 on that CPU, registered with a
#      [rule] whose budget-us is the same threshold; `rtschedctl why`'s top
#      culprit.
# Both must name the spinner. Debian 12's rtla has no auto-analysis (-a
# there only stops and saves the trace; rtla's analysis came in Linux 6.3),
# so the trace's noise events stand in for it.
# Needs root, rtla (Debian package rtla), rt-tests, jq, util-linux (chrt).
. "$(dirname "$0")/lib.sh"
need_root
[ "$NCPU" -ge 2 ] || skip "needs two CPUs"
TR=/sys/kernel/tracing
[ -e "$TR/available_tracers" ] || mount -t tracefs nodev "$TR" 2>/dev/null
grep -qw timerlat "$TR/available_tracers" 2>/dev/null ||
	skip "kernel $(uname -r) has no timerlat tracer (CONFIG_TIMERLAT_TRACER); run it in Debian 12's rt flavour: make check-kernels KERNEL_VERSION=6.1.0-56-rt-amd64 KERNEL_TESTS=timerlat KERNEL_HOST=no"
for t in rtla cyclictest jq chrt; do
	command -v "$t" >/dev/null || fail "$t is missing (apt-get install rtla rt-tests jq util-linux)"
done
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
SPIN="$top_builddir/tests/spin-helper"
CPU=$LASTCPU
THR_US=${TIMERLAT_THRESHOLD_US:-2000}
SP=
spin_stop() { [ -z "$SP" ] || { kill "$SP" 2>/dev/null; wait "$SP" 2>/dev/null; }; SP=; }
at_exit spin_stop
spin_start() {
	"$SPIN" --cpu "$CPU" --name spinner --mode duty --busy-ms 5 --period-ms 20 --seconds "$HANG_S" >"$TMP/spin.out" &
	SP=$!
	wait_for grep -q '^tid ' "$TMP/spin.out"
	SPT=$(sed -n 's/^tid \([0-9]*\) .*/\1/p' "$TMP/spin.out")
	chrt -f -p 50 "$SPT" || fail "chrt -f -p 50 $SPT"
}

# --- 1. rtla timerlat -------------------------------------------------------------------
spin_start
run timeout 300 rtla timerlat top -c "$CPU" -P f:10 -p 1000 -a "$THR_US" -q -d 120s -t="$TMP/timerlat.txt" \
	-e osnoise:thread_noise -e osnoise:irq_noise -e osnoise:softirq_noise
spin_stop
echo "$OUT" | tail -8 | sed 's/^/  | rtla: /'
[ -s "$TMP/timerlat.txt" ] && pass "rtla timerlat stopped at a latency above $THR_US us and saved its trace" ||
	fail "rtla timerlat saved no trace (exit $RC): $ERR"
# the longest noise event on the CPU: "... [00C] ... thread_noise: spinner:123 start ... duration N ns"
RTLA_TOP=$(awk -v cpu="$(printf '[%03d]' "$CPU")" '
	index($0, cpu) && /(thread|irq|softirq)_noise:/ {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /_noise:$/) { who = $(i + 1) }
			if ($i == "duration") d = $(i + 1) + 0
		}
		if (d > best) { best = d; top = who }
	}
	END { print top, best }' "$TMP/timerlat.txt")
echo "  | rtla's longest noise on CPU $CPU: $RTLA_TOP ns"
RTLA_NAME=${RTLA_TOP%%:*}

# --- 2. rtschedctl why ----------------------------------------------------------------------
cat >"$TMP/tl.conf" <<EOF
[daemon]
rate-limit = 0
watchdog = no
[rule lat]
policy = fifo
priority = 10
cpus = $CPU
budget-us = $THR_US
EOF
daemon_start "$TMP/tl.conf"
cyclictest -q -m -a"$CPU" -p10 -i1000 -D 300 >/dev/null 2>&1 &
CT=$!
at_exit_ct() { kill "$CT" 2>/dev/null; wait "$CT" 2>/dev/null; }
at_exit at_exit_ct
wait_for sh -c "[ \$(ls /proc/$CT/task | wc -l) -ge 2 ]"
CTT=$(ls /proc/"$CT"/task | grep -vx "$CT" | head -1)
ctl register --tid "$CTT" --role lat
expect_rc 0 "cyclictest's thread $CTT registered with budget-us = $THR_US"
spin_start
wait_for sh -c "[ \"\$('$RTSCHEDCTL' --socket '$SOCK' --json why $CTT | jq '.thread.explained')\" -ge 5 ]"
spin_stop
"$RTSCHEDCTL" --socket "$SOCK" --json why "$CTT" >"$TMP/why.json"
jq -r '.culprits[]? | "  | why: \(.kind) \(.name): \(.share_pct)%, led \(.first) of the late wake-ups"' "$TMP/why.json"
WHY_NAME=$(jq -r '.culprits[0].comm // .culprits[0].name' "$TMP/why.json")
[ "$RTLA_NAME" = spinner ] && pass "rtla timerlat's trace names the spinner" || fail "rtla's culprit: '$RTLA_TOP'"
[ "$WHY_NAME" = spinner ] && pass "rtschedctl why names the spinner first ($(jq -r '.culprits[0].share_pct' "$TMP/why.json")% of the delay)" ||
	fail "why's top culprit: $WHY_NAME"
[ -n "$RTLA_NAME" ] && [ "$RTLA_NAME" = "$WHY_NAME" ] && pass "both name the same culprit: $WHY_NAME" ||
	fail "rtla: '$RTLA_NAME', why: '$WHY_NAME'"
finish
