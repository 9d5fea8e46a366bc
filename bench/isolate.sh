# bench/isolate.sh: section 11 of bench/run.sh (sourced by it): load
# immunity (issue 29). A SCHED_FIFO 10 worker at 1 kHz on the last CPU
# (bench-isolate: librtsched's sleep timer), idle, under stress-ng --cpu N
# and under stress-ng --cpu N --sock 2 (loopback), four ways: the rule
# without the new keys, with resume-latency-us = 0, with isolate = yes, and
# with both; its own rtschedd is reloaded between them. Rows: p99, p99.9
# and max lateness, the CPU time everything else got meanwhile (what
# isolation costs elsewhere), and how long isolation took to apply and to
# release, seen from a process started before the registration.

# iso_conf VARIANT: the worker's rule for none, resume, isolate or both.
iso_conf() {
	{
		printf '[daemon]\nrate-limit = 0\nlog-level = warning\nwatchdog = no\n'
		printf '[rule bench-iso]\npolicy = fifo\npriority = 10\ncpus = %s\n' "$ISO_CPU"
		case $1 in resume|both) echo "resume-latency-us = 0" ;; esac
		case $1 in isolate|both) echo "isolate = yes" ;; esac
	} >"$TMP/iso.conf"
}

bench_isolate() {
	local csv=$RESULTS/isolate.csv n rounds load v r order ipid spid sentinel args secs
	local -x RTSCHED_SOCKET=$TMP/iso-control
	section "11. Load immunity: resume-latency-us and isolate = yes (issue 29)"
	have bench-isolate || return
	command -v stress-ng >/dev/null || { skipped "stress-ng missing (apt-get install stress-ng)"; return; }
	if [ ! -f /sys/fs/cgroup/cpuset/cpuset.cpus ] && ! grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		skipped "no cpuset controller here: isolate = yes has nothing to work with"
		return
	fi
	rm -f "$RESULTS/isolate-cpu.txt"
	n=$(q 1000 10000)
	rounds=$(q 1 2)
	ISO_CPU=$(( $(nproc) - 1 ))
	echo "A SCHED_FIFO 10 worker pinned to CPU $ISO_CPU by its rule waits for $n periods of 1 ms with librtsched's"
	echo "timer (clock_nanosleep to absolute deadlines), after what the rule asks for is in force, under three"
	echo "loads and four rules: none of the new keys, resume-latency-us = 0, isolate = yes, both; $rounds round(s)"
	echo "in turn, the order rotated. Lateness = wake-up - deadline, µs (p99 and p99.9 the median over rounds,"
	echo "max the largest). others = CPUs everything else used meanwhile; apply/release = ms until a process"
	echo "started before the registration lost CPU $ISO_CPU, and had it back after the unregistration."
	echo "cpuidle: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)/$(cat /sys/devices/system/cpu/cpuidle/current_governor_ro 2>/dev/null)."
	echo
	# started with isolate = yes (no thread yet, nothing isolated): only a
	# configuration at start keeps the capability isolation needs
	iso_conf both
	bg_start ipid "$RTSCHEDD" --config "$TMP/iso.conf" --socket "$TMP/iso-control"
	wait_for "$TMP/iso-control" 5 || { broken "its rtschedd did not start"; return; }
	printf '%-22s %8s %6s %9s %9s %9s %9s %9s %9s %7s %7s\n' "load/rule" samples overr p50 p99 p99.9 max \
		"apply ms" "rel. ms" others worker%
	for load in idle cpu net; do
		secs=$(( rounds * 4 * (n / 1000 + 4) + 10 ))
		case $load in
		cpu) bg_start spid stress-ng --cpu "$(nproc)" --timeout "$secs" --quiet ;;
		net) bg_start spid stress-ng --cpu "$(nproc)" --sock 2 --sock-domain ipv4 --timeout "$secs" --quiet ;;
		*) spid= ;;
		esac
		[ -n "$spid" ] && sleep 1
		for r in $(seq "$rounds"); do
			order="none resume isolate both"
			[ $((r % 2)) = 0 ] && order="both isolate resume none"
			for v in $order; do
				iso_conf "$v"
				"$RTSCHEDCTL" --socket "$TMP/iso-control" reload >/dev/null ||
					{ broken "reload for $v failed"; continue; }
				sleep 600 & sentinel=$!
				args=()
				case $v in isolate|both) args+=(-i) ;; esac
				case $v in resume|both) args+=(-q) ;; esac
				bench_run $(( 30 + 2 * n / 1000 )) "$B/bench-isolate" -n "$n" \
					-r bench-iso -c "$ISO_CPU" -w "$sentinel" "${args[@]}" -l "$load/$v" -o "$csv" \
					-x "$RESULTS/isolate-cpu.txt" ||
					"$RTSCHEDCTL" --socket "$TMP/iso-control" status |
					grep -Ei 'isolat|resume|thread' | sed 's/^/after the failed run: /'
				kill "$sentinel" 2>/dev/null
				wait "$sentinel" 2>/dev/null
			done
		done
		[ -n "$spid" ] && bg_stop "$spid"
	done
	"$RTSCHEDCTL" --socket "$TMP/iso-control" status | grep -E '^(isolation|resume_latency)' | sed 's/^/rtschedd status: /'
	bg_stop "$ipid"
	[ -s "$csv" ] || return
	awk -F, -v ncpu="$(nproc)" -v cpu="$ISO_CPU" '
		NR == 1 { next }
		{ split($1, lv, "/"); k = lv[1] "," lv[2]; i = ++nr[k]
		  p99[k, i] = $5; p999[k, i] = $6; if ($7 > mx[k]) mx[k] = $7
		  if ($8 >= 0) { if ($8 > app) app = $8; if ($9 > rel) rel = $9; napp++ }
		  oth[k] += $10; wk[k] += $11 }
		function med(a, k, n,   x, y, z, v) { for (x = 1; x <= n; x++) v[x] = a[k, x]
			for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (v[y] < v[x]) { z = v[x]; v[x] = v[y]; v[y] = z }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
		function us(x) { return x >= 1000 ? sprintf("%.2f ms", x / 1000) : sprintf("%.0f µs", x) }
		END {
			split("idle cpu net", L, " "); split("none resume isolate both", V, " ")
			lt["idle"] = "idle"; lt["cpu"] = "stress-ng --cpu " ncpu; lt["net"] = "stress-ng --cpu " ncpu " --sock 2"
			vt["none"] = "FIFO 10 alone"; vt["resume"] = "resume-latency-us = 0"; vt["isolate"] = "isolate = yes"; vt["both"] = "both"
			print "| rule | load | p99 | p99.9 | max | CPUs others used |"
			print "|---|---|---|---|---|---|"
			for (j = 1; j <= 4; j++) for (i = 1; i <= 3; i++) {
				k = L[i] "," V[j]; if (!(k in nr)) continue
				m99[k] = med(p99, k, nr[k]); m999[k] = med(p999, k, nr[k])
				printf "| %s | %s | %s | %s | %s | %.2f of %d |\n", vt[V[j]], lt[L[i]], us(m99[k]), us(m999[k]), us(mx[k]), oth[k] / nr[k], ncpu
			}
			print ""
			print "| target | measured | verdict |"
			print "|---|---|---|"
			best = -1; worst = 0; bl = ""
			for (i = 1; i <= 3; i++) { k = L[i] ",both"; if (!(k in nr)) continue
				if (best < 0 || m999[k] < best) { best = m999[k]; bl = L[i] }; if (m999[k] > worst) { worst = m999[k]; wl = L[i] } }
			if (best > 0) {
				line = ""; for (i = 1; i <= 3; i++) { k = L[i] ",both"; if (k in nr) line = line sprintf("%s%s %s", line == "" ? "" : ", ", L[i], us(m999[k])) }
				printf "| with both, p99.9 in every condition within 1.2x of the best condition (%s) | %s; worst %.2fx (%s) | %s |\n", bl, line, worst / best, wl, worst <= 1.2 * best ? "met" : "NOT MET"
				ki = "idle,both"; kc = "cpu,both"; kn = "net,both"
				if ((ki in nr) && (kc in nr) && (kn in nr)) {
					lo = m999[kc] < m999[kn] ? m999[kc] : m999[kn]
					printf "| with both, idle p99.9 no worse than under load | idle %s, cpu %s, net %s | %s |\n", us(m999[ki]), us(m999[kc]), us(m999[kn]), m999[ki] <= lo ? "met" : (m999[ki] <= (m999[kc] > m999[kn] ? m999[kc] : m999[kn]) ? "met against one load, NOT MET against the other" : "NOT MET")
				}
			}
			if (napp)
				printf "| apply and release each within 200 ms (the slowest of %d, seen from outside) | apply %.1f ms, release %.1f ms | %s |\n", napp, app, rel, app <= 200 && rel <= 200 ? "met" : "NOT MET"
			for (i = 1; i <= 3; i++) { kn0 = L[i] ",none"; ki = L[i] ",isolate"
				if ((kn0 in nr) && (ki in nr)) printf "| what isolation costs elsewhere, %s | others used %.2f CPUs with isolate = yes, %.2f without | - |\n", lt[L[i]], oth[ki] / nr[ki], oth[kn0] / nr[kn0] }
		}' "$csv" >"$RESULTS/isolate.md"
	# what ran under the worker: the CPU's interrupts and softirqs while it
	# measured, the first round's, without the keys and with both
	if [ -s "$RESULTS/isolate-cpu.txt" ]; then
		{
			echo
			echo "What else ran on CPU $ISO_CPU while the worker measured (interrupts and softirqs taken there, largest first; the first round):"
			echo
			for load in idle cpu net; do
				for v in none both; do
					grep -m1 "^$load/$v: " "$RESULTS/isolate-cpu.txt" | sed 's/^/- /'
				done
			done
		} >>"$RESULTS/isolate.md"
	fi
	echo
	cat "$RESULTS/isolate.md"
	{
		echo
		echo "### Load immunity: resume-latency-us and isolate = yes, a FIFO 10 1 kHz thread on CPU $ISO_CPU"
		echo
		cat "$RESULTS/isolate.md"
		echo
		echo "$n periods per run, $rounds round(s); the worker uses librtsched's timer (clock_nanosleep to absolute deadlines) and registers with a rule pinning it to CPU $ISO_CPU. Per run in isolate.csv; plot: isolate.png."
	} >>"$SUMMARY"
	# plot: p99.9 by load, one bar per rule (medians over rounds)
	awk -F, 'NR > 1 { split($1, lv, "/"); k = lv[1] "," lv[2]; s[k] += $6; c[k]++ }
		END { print "load,none,resume,isolate,both"
			split("idle cpu net", L, " "); split("none resume isolate both", V, " ")
			for (i = 1; i <= 3; i++) { printf "%s", L[i]; for (j = 1; j <= 4; j++) { k = L[i] "," V[j]; printf ",%s", c[k] ? s[k] / c[k] : "" }; print "" } }' \
		"$csv" >"$RESULTS/isolate-plot.csv"
	plot isolate <<-EOF
	set title "p99.9 wake-up lateness of a FIFO 10 1 kHz thread on CPU $ISO_CPU, by load and rule\n$MSHORT" font ',10'
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set logscale y
	set ylabel "p99.9 lateness (µs, mean over rounds), log scale"
	set grid ytics
	set key top left
	plot for [c=2:5] '$RESULTS/isolate-plot.csv' using c:xtic(1) title columnheader(c)
	EOF
}
