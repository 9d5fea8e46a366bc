#!/bin/bash
# tests/prometheus.sh: the fleet view, for real. rtschedd writes its
# metrics-file into a textfile directory; Debian's prometheus-node-exporter
# (textfile collector only) serves it; Debian's prometheus scrapes that
# every second with rtschedd's shipped alert rules
# (conf/prometheus/rtschedd-alerts.yml). Everything listens on 127.0.0.1
# only, on ports free at the start, keeps its data under the test's
# temporary directory, and is stopped at the end.
#   1. A [probe] with budget-us = 200 on the last CPU and a SCHED_FIFO 50
#      spinner in 2 ms bursts on the same CPU: through Prometheus's HTTP API,
#      the probe's budget misses and the spinner as the culprit that led
#      them, and the alert RtscheddBudgetMissed firing for the probe.
#   2. rtschedd stopped: its file stays and ages, and RtscheddDown fires.
# Needs root, prometheus, prometheus-node-exporter, curl, jq, python3 (a
# free port), util-linux (chrt).
. "$(dirname "$0")/lib.sh"
need_root
for t in prometheus prometheus-node-exporter curl jq python3 chrt; do
	command -v "$t" >/dev/null ||
		fail "$t is missing (apt-get install prometheus prometheus-node-exporter curl jq python3 util-linux)"
done
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
SPIN="$top_builddir/tests/spin-helper"
RULES="$top_srcdir/conf/prometheus/rtschedd-alerts.yml"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NE_PORT=$(free_port)
PROM_PORT=$(free_port)
mkdir -p "$TMP/textfile" "$TMP/tsdb"
chmod 755 "$TMP/textfile"

# --- rtschedd, node_exporter, prometheus ----------------------------------------------
cat >"$TMP/rtschedd.conf" <<EOF
[daemon]
metrics-file = $TMP/textfile/rtschedd.prom
metrics-interval = 1
[probe p]
cpu = $LASTCPU
period-us = 1000
budget-us = 200
EOF
daemon_start "$TMP/rtschedd.conf"
wait_for test -s "$TMP/textfile/rtschedd.prom" || fail "rtschedd wrote no metrics file"
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TMP/textfile" >"$TMP/node-exporter.log" 2>&1 &
NE=$!
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prometheus.log" 2>&1 &
PROM=$!
stop_all() {
	kill "$PROM" "$NE" "${SP:-}" 2>/dev/null
	wait "$PROM" "$NE" 2>/dev/null
}
at_exit stop_all
API="http://127.0.0.1:$PROM_PORT/api/v1"
# q PROMQL: the query's result vector, as JSON
q() { curl -sf --max-time 5 -G "$API/query" --data-urlencode "query=$1" | jq -c '.data.result'; }
# firing ALERT: the labels of ALERT's firing alerts, one JSON object a line
firing() { curl -sf --max-time 5 "$API/alerts" | jq -c --arg a "$1" '.data.alerts[] | select(.labels.alertname == $a and .state == "firing") | .labels'; }
wait_for sh -c "curl -sf --max-time 5 '$API/query?query=up' | jq -e '.data.result[] | select(.value[1] == \"1\")'" &&
	pass "prometheus on 127.0.0.1:$PROM_PORT scrapes node_exporter on 127.0.0.1:$NE_PORT (up == 1)" ||
	{ fail "prometheus or node_exporter did not come up"; tail -5 "$TMP/prometheus.log" "$TMP/node-exporter.log"; finish; exit 1; }
# listening sockets on a port, from the kernel's tables: local addresses in
# hex (0100007F is 127.0.0.1), "LISTEN" is state 0A. A read of /proc/net/tcp
# is not atomic: while other tests open and close sockets a line can be
# skipped, so an empty answer is read again (a wrong address never is)
listeners() {
	awk -v p="$(printf '%04X' "$1")" 'FNR > 1 && $4 == "0A" { split($2, a, ":"); if (a[2] == p) print a[1] }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u | tr '\n' ' '
}
for port in "$NE_PORT" "$PROM_PORT"; do
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		L=$(listeners "$port")
		[ -z "$L" ] || break
		sleep 0.2
	done
	[ "$L" = "0100007F " ] && pass "port $port listens on 127.0.0.1 only" || fail "port $port listens on: $L"
done
wait_for sh -c "curl -sf --max-time 5 '$API/rules' | jq -e '[.data.groups[].rules[].name] | index(\"RtscheddDown\")'" &&
	pass "prometheus loaded the shipped rules" || fail "rules not loaded: $(curl -s "$API/rules")"

# --- 1. an injected budget miss -------------------------------------------------------
"$SPIN" --cpu "$LASTCPU" --name spinner --mode duty --busy-ms 2 --period-ms 10 --seconds "$HANG_S" >"$TMP/spin.out" &
SP=$!
wait_for grep -q '^tid ' "$TMP/spin.out"
chrt -f -p 50 "$(sed -n 's/^tid \([0-9]*\) .*/\1/p' "$TMP/spin.out")" || fail "chrt -f -p 50 on the spinner"
wait_for sh -c "[ -n \"\$(curl -sf --max-time 5 '$API/alerts' | jq -c '.data.alerts[] | select(.labels.alertname == \"RtscheddBudgetMissed\" and .state == \"firing\" and .labels.thread == \"p\")')\" ]"
A=$(firing RtscheddBudgetMissed | grep '"thread":"p"' | head -1)
[ -n "$A" ] && pass "RtscheddBudgetMissed fires for the probe: $A" || fail "RtscheddBudgetMissed did not fire: $(curl -s "$API/alerts")"
expect_in "$A" "\"instance\":\"127.0.0.1:$NE_PORT\"" "... with the node's instance label"
M=$(q 'rtschedd_budget_misses_total{thread="p"}' | jq -r '.[0].value[1]')
[ "${M:-0}" -gt 5 ] 2>/dev/null && pass "rtschedd_budget_misses_total through the API: $M" || fail "budget misses through the API: $M"
C=$(q 'topk(1, rtschedd_late_first_total{thread="p"})' | jq -r '.[0].metric.culprit')
expect_in "$C" "spinner (tid" "rtschedd_late_first_total through the API: the spinner led the most late wake-ups"
kill "$SP"
wait "$SP" 2>/dev/null
SP=

# --- 2. rtschedd down -------------------------------------------------------------------
daemon_stop
[ -s "$TMP/textfile/rtschedd.prom" ] && pass "the stopped daemon's metrics file stays (and ages)" ||
	fail "the metrics file went with the daemon"
wait_for sh -c "curl -sf --max-time 5 '$API/alerts' | jq -e '.data.alerts[] | select(.labels.alertname == \"RtscheddDown\" and .state == \"firing\")'"
D=$(firing RtscheddDown | head -1)
[ -n "$D" ] && pass "RtscheddDown fires once the file stops being rewritten: $D" || fail "RtscheddDown did not fire"
finish
