# bench/lib.sh: helpers for bench/run.sh (sourced, not run): the machine
# header, starting and always stopping background processes, cyclictest and
# histogram percentiles, and gnuplot.

# Everything started in the background, so the EXIT trap can stop it.
BG_PIDS=()

# Start a command in the background and remember it: bg_start VAR cmd...
# (the pid lands in VAR).
bg_start() {
	local var=$1
	shift
	"$@" &
	BG_PIDS+=($!)
	printf -v "$var" '%s' "$!"
}

# Stop one background process (TERM, then KILL after 3 s) and reap it.
bg_stop() {
	local pid=$1
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 30); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# Stop everything bg_start started that still runs (the EXIT trap).
bg_stop_all() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null && bg_stop "$p"
	done
	return 0
}

# Wait up to $2 seconds (default 5) for a socket or file to appear.
wait_for() {
	local path=$1 tries=$(( ${2:-5} * 10 ))
	for _ in $(seq "$tries"); do
		[ -e "$path" ] && return 0
		sleep 0.1
	done
	return 1
}

# The preemption model: debugfs if readable, else the kernel config's
# default for PREEMPT_DYNAMIC and any preempt= on the command line.
preempt_model() {
	local dyn="" def="" arg
	if [ -r /sys/kernel/debug/sched/preempt ]; then
		echo "$(grep -o '([a-z]*)' /sys/kernel/debug/sched/preempt | tr -d '()') (from debugfs)"
		return
	fi
	if [ -r /proc/config.gz ]; then
		zcat /proc/config.gz | grep -q '^CONFIG_PREEMPT_DYNAMIC=y' && dyn=PREEMPT_DYNAMIC
		def=$(zcat /proc/config.gz | sed -n 's/^CONFIG_PREEMPT_\(NONE\|VOLUNTARY\|LAZY\|RT\)=y$/\1/p;s/^CONFIG_PREEMPT=y$/FULL/p' | head -1)
	fi
	arg=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^preempt=//p' | head -1)
	if [ -n "$arg" ]; then
		echo "$arg (preempt= on the command line${dyn:+, $dyn})"
	elif [ -n "$def" ]; then
		echo "$(echo "$def" | tr 'A-Z' 'a-z') (${dyn:+$dyn, }build default; no preempt= on the command line)"
	else
		uname -v | grep -o 'PREEMPT[_A-Z]*' | head -1
	fi
}

# One line saying what the machine is; every section prints it.
machine_line() {
	local model virt hz idle cs
	model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
	virt="bare metal"
	grep -qw hypervisor /proc/cpuinfo && virt="virtual machine"
	hz=$(zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p')
	idle=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo "?")
	cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo "?")
	printf '%s CPUs (%s, %s), %s GiB; %s; kernel %s, preemption %s, HZ %s, clocksource %s, cpuidle %s, sched_rt_runtime_us %s' \
		"$(nproc)" "$model" "$virt" "$(awk '/MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)" \
		"$(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}")" "$(uname -r)" "$(preempt_model)" \
		"${hz:-?}" "$cs" "$idle" "$(cat /proc/sys/kernel/sched_rt_runtime_us)"
}

# The machine in a few words, for plot titles.
machine_short() {
	local virt=""
	grep -qw hypervisor /proc/cpuinfo && virt=", VM"
	printf '%s CPUs%s, kernel %s, preemption %s' "$(nproc)" "$virt" "$(uname -r)" "$(preempt_model | cut -d' ' -f1)"
}

# Section title, the machine and the load at its start.
section() {
	echo
	echo "=== $1"
	echo "ran on: $MACHINE"
	echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	# what the hypervisor (or interrupts) took from a real-time thread just now
	[ -x "$B/bench-strategies" ] &&
		echo "CPU time lost at start: $("$B/bench-strategies" --lost --fifo 10 --cpu "$(( $(nproc) - 1 ))" 2>&1)"
}

# Percentiles of a cyclictest -h histogram (1 us buckets; cyclictest
# truncates to whole us): prints "samples p50 p90 p99 p999 max overflows".
cyc_pct() {
	awk '
		/^# Total:/ { total = $3 + 0 }
		/^# Max Latencies:/ { max = $4 + 0 }
		/^# Histogram Overflows:/ { ovf = $4 + 0 }
		/^[0-9]+[ \t]+[0-9]+/ { n++; b[n] = $1 + 0; c[n] = $2 + 0; sum += $2 }
		END {
			all = sum + ovf
			split("50 90 99 99.9", qs, " ")
			printf "%d", all
			for (i = 1; i <= 4; i++) {
				k = int(qs[i] / 100 * all); if (k < qs[i] / 100 * all) k++; if (k < 1) k = 1
				acc = 0; v = max
				for (j = 1; j <= n; j++) { acc += c[j]; if (acc >= k) { v = b[j]; break } }
				printf " %s", v
			}
			printf " %d %d\n", max, ovf
		}' "$1"
}

# Pooled percentiles of "lo hi count" bucket lines on stdin (values in
# units of $1 per µs; a bucket counts as its midpoint): prints
# "samples,p50,p90,p99,p999,max" in µs.
pool_pct() {
	sort -n -k1,1 | awk -v unit="$1" '
		$3 > 0 { n++; lo[n] = $1; hi[n] = $2; c[n] = $3; all += $3 }
		END {
			split("50 90 99 99.9", qs, " ")
			printf "%d", all
			for (i = 1; i <= 4; i++) {
				k = qs[i] / 100 * all; k = (k == int(k)) ? k : int(k) + 1; if (k < 1) k = 1
				acc = 0
				for (j = 1; j <= n; j++) { acc += c[j]; if (acc >= k) break }
				printf ",%.1f", (lo[j] + hi[j]) / 2 / unit
			}
			printf ",%.1f\n", hi[n] / unit
		}'
}

# The policy and priority of a running cyclictest measurement thread (its
# highest-numbered task), as the kernel reports it.
cyc_policy() {
	local pid=$1 tid
	tid=$(ls "/proc/$pid/task" 2>/dev/null | sort -n | tail -1)
	[ -n "$tid" ] || { echo "?"; return; }
	chrt -p "$tid" 2>/dev/null | awk -F': ' '/policy/ { p = $2 } /priority/ { q = $2 } END { sub(/\|.*/, "", p); print p " " q }'
}

# quiet_setup: an fd (QFD) on a FIFO nobody writes, so quiet_sleep can wait
# with a bash builtin. quiet_sleep SECONDS: wait without starting a process
# (a fork and exec on the measured CPU is latency the measurement would see).
quiet_setup() {
	rm -f "$TMP/quiet.fifo"
	mkfifo "$TMP/quiet.fifo"
	exec {QFD}<>"$TMP/quiet.fifo"
}
quiet_sleep() {
	read -r -t "$1" -u "$QFD" _ || true
}

# rt_policy_of PID: the policy and priority of PID's highest-numbered task
# into RT_POLICY ("fifo 10"), read from /proc/PID/task/TID/stat with bash
# builtins only (no process started; see quiet_sleep). "?" if it is gone.
rt_policy_of() {
	local t last="" line f
	RT_POLICY="?"
	for t in /proc/"$1"/task/*; do
		[ -e "$t" ] || continue
		if [ -z "$last" ] || [ "${t##*/}" -gt "${last##*/}" ]; then last=$t; fi
	done
	[ -n "$last" ] && read -r line <"$last/stat" 2>/dev/null || return 0
	# the fields after "comm) ": field 3 is f[0], rt_priority (40) f[37], policy (41) f[38]
	read -r -a f <<<"${line##*) }"
	case ${f[38]} in
	0) RT_POLICY="other 0" ;; 1) RT_POLICY="fifo ${f[37]}" ;; 2) RT_POLICY="rr ${f[37]}" ;;
	3) RT_POLICY="batch 0" ;; 5) RT_POLICY="idle 0" ;; *) RT_POLICY="policy${f[38]} ${f[37]}" ;;
	esac
}

# Run gnuplot on a script from stdin, writing $RESULTS/$1.png.
plot() {
	local name=$1
	{
		echo "set terminal pngcairo size 1000,560 font 'DejaVu Sans,10' noenhanced"
		echo "set output '$RESULTS/$name.png'"
		echo "set datafile separator ','"
		echo "set key noenhanced"
		cat
	} | gnuplot 2>"$TMP/gnuplot-$name.err" && echo "plot: $RESULTS/$name.png" ||
		{ broken "plot $name failed"; cat "$TMP/gnuplot-$name.err"; }
}

# A section that could not produce its figures (a program failed, a table
# or plot is missing): said at once, listed at the end, and `make bench`
# exits 1. A missed target is not a break: its verdict line says so.
BROKEN=()
broken() {
	echo "BROKEN: $*"
	BROKEN+=("section ${SECTION:-?}: $*")
}

# A part of a section that cannot run here (a tool or program missing): said
# with why; with BENCH_STRICT=1 (tests/all.sh: every tool the README installs
# is there) it is a break too.
skipped() {
	echo "SKIPPED: $*"
	[ "${BENCH_STRICT:-0}" = 1 ] && BROKEN+=("section ${SECTION:-?}: skipped: $*")
	return 0
}

# bench_run SECS PROGRAM ARGS...: a benchmark program bounded in time; a
# non-zero exit (or the timeout) breaks the section. Returns its status.
bench_run() {
	local secs=$1 rc=0
	shift
	timeout -k 5 "$secs" "$@" || rc=$?
	[ "$rc" = 0 ] || broken "$(basename "$1") exited $rc$([ "$rc" = 124 ] && echo " (timed out after $secs s)")"
	return "$rc"
}

# expect FILE...: the files a section must have written (tables, plots).
expect() {
	local f
	for f in "$@"; do
		[ -s "$RESULTS/$f" ] || broken "it wrote no $f"
	done
}

# Is a benchmark program built? Says how to build it if not.
have() {
	[ -x "$B/$1" ] && return 0
	skipped "$B/$1 is not built (make $(basename "$B")/$1, or add it to BENCH_BINS)"
	return 1
}

# "x / y" with one decimal, or "n/a".
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "" && a + 0 >= 0) printf "%.1fx", a / b; else printf "n/a" }'
}
