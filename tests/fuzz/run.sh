#!/bin/bash
# tests/fuzz/run.sh: `make fuzz`. Runs each built libFuzzer target
# (tests/fuzz/fuzz-*, from ./configure --enable-fuzzing) for a bounded time,
# starting from the seed corpus in tests/fuzz/corpus/<target>, and prints per
# target the run time, executions, executions per second and corpus size.
# Fails if any target crashes, leaks, hits undefined behaviour, times out on
# one input or runs out of memory; the input that did it is kept.
#
#   tests/fuzz/run.sh [TARGET...]     e.g. tests/fuzz/run.sh protocol config
#
# FUZZ_SECONDS   time per target (default 60)
# FUZZ_OUT       where the grown corpora, logs and crash inputs go
#                (default $top_builddir/tests/fuzz/out; the corpora are kept
#                between runs, so later runs start further)
# FUZZ_ARGS      more libFuzzer options, e.g. "-jobs=2" or "-dict=..."
# Replay one crash input: tests/fuzz/fuzz-TARGET FILE
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
SECONDS_PER=${FUZZ_SECONDS:-60}
OUT=${FUZZ_OUT:-$top_builddir/tests/fuzz/out}
SEEDS="$top_srcdir/tests/fuzz/corpus"

# Sanitizer reports must end the run; the targets are built with
# -fno-sanitize-recover=all, these say the same at run time.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0:symbolize=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"
# The config, limits and request targets write their input to files in a
# private directory under TMPDIR; a tmpfs doubles their speed.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	export TMPDIR=/dev/shm
fi

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(cd "$top_builddir/tests/fuzz" 2>/dev/null &&
		for f in fuzz-*; do [ -f "$f" ] && [ -x "$f" ] && echo "${f#fuzz-}"; done)
fi
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets in $top_builddir/tests/fuzz; build them with" \
		"./configure CC=clang --enable-fuzzing && make" >&2
	exit 1
fi

failed=""
printf '%-10s %8s %12s %9s %8s  %s\n' target seconds executions exec/s corpus result
for t in $targets; do
	bin="$top_builddir/tests/fuzz/fuzz-$t"
	work="$OUT/$t"
	mkdir -p "$work/corpus"
	if [ ! -x "$bin" ]; then
		printf '%-10s %8s %12s %9s %8s  %s\n' "$t" - - - - "not built"
		failed="$failed $t"
		continue
	fi
	seeds="$SEEDS/$t"
	[ -d "$seeds" ] || seeds=""
	rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
	start=$(date +%s)
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak that
	# grows without bound is a failure even before LeakSanitizer sees it.
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$SECONDS_PER" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/" ${FUZZ_ARGS:-} \
		"$work/corpus" $seeds >"$work/log" 2>&1
	rc=$?
	elapsed=$(( $(date +%s) - start ))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
	# libFuzzer's own count: seeds and grown inputs, after it dropped duplicates
	corpus=$(grep -o 'corp: [0-9]*' "$work/log" | tail -n 1 | cut -d' ' -f2)
	if [ "$rc" -eq 0 ] && ! grep -q 'ERROR: \(AddressSanitizer\|LeakSanitizer\|libFuzzer\)\|runtime error:' "$work/log"; then
		result=ok
	else
		result="FAILED (exit $rc)"
		failed="$failed $t"
	fi
	printf '%-10s %8s %12s %9s %8s  %s\n' "$t" "$elapsed" "${execs:--}" "${rate:--}" "${corpus:--}" "$result"
done

if [ -n "$failed" ]; then
	for t in $failed; do
		[ -f "$OUT/$t/log" ] || continue
		echo
		echo "=== fuzz-$t: $OUT/$t/log (last 60 lines)"
		tail -n 60 "$OUT/$t/log"
		for a in "$OUT/$t"/crash-* "$OUT/$t"/leak-* "$OUT/$t"/timeout-* "$OUT/$t"/oom-*; do
			[ -f "$a" ] && echo "input kept: $a (replay: $top_builddir/tests/fuzz/fuzz-$t $a)"
		done
	done
	echo
	echo "fuzz: FAILED:$failed"
	exit 1
fi
echo "fuzz: all targets clean"
