#!/bin/bash
# tests/prometheus-rules.sh: the Prometheus alert rules and the Grafana
# dashboard rtschedd ships (conf/prometheus, conf/grafana), without a
# Prometheus server (tests/prometheus.sh runs one):
#   1. promtool check rules, and promtool test rules: the rules' own unit
#      tests (conf/prometheus/rtschedd-alerts.test.yml);
#   2. a real rtschedd's metrics file (a probe with a budget, the watchdog
#      on) passes promtool check metrics, and every rtschedd_ metric the
#      rules, their tests and the dashboard name is one it writes (a
#      histogram's _bucket, _sum and _count are its family's); the
#      dashboard is JSON with a query per panel.
# Needs root (the daemon runs real-time probes) and prometheus (promtool), jq.
. "$(dirname "$0")/lib.sh"
need_root
for t in promtool jq; do
	command -v "$t" >/dev/null || fail "$t is missing (apt-get install prometheus jq)"
done
[ "$FAILS" -eq 0 ] || { finish; exit 1; }
RULES="$top_srcdir/conf/prometheus/rtschedd-alerts.yml"
RTESTS="$top_srcdir/conf/prometheus/rtschedd-alerts.test.yml"
DASH="$top_srcdir/conf/grafana/rtschedd-dashboard.json"

# --- 1. the rules and their unit tests --------------------------------------------
run promtool check rules "$RULES"
expect_rc 0 "promtool check rules: $(echo "$OUT" | grep -o 'SUCCESS.*')"
# promtool resolves rule_files against the test file's directory
run promtool test rules "$RTESTS"
expect_rc 0 "promtool test rules: the alerts' unit tests ($(grep -c 'alertname:' "$RTESTS") evaluations)"
[ "$RC" -eq 0 ] || echo "$OUT" | sed 's/^/  | /'

# --- 2. what they name is what rtschedd writes --------------------------------------
CONF="$TMP/prom.conf"
cat >"$CONF" <<EOF
[daemon]
metrics-file = $TMP/rtschedd.prom
metrics-interval = 1
[probe p]
cpu = $LASTCPU
period-us = 1000
budget-us = 500
EOF
daemon_start "$CONF"
wait_for test -s "$TMP/rtschedd.prom" || fail "no metrics file written"
run promtool check metrics <"$TMP/rtschedd.prom"
expect_rc 0 "promtool check metrics: the file rtschedd writes is valid exposition text"
[ -z "$ERR$OUT" ] || echo "$ERR$OUT" | sed 's/^/  | /'
FAMILIES=$(sed -n 's/^# TYPE \(rtschedd_[a-z_]*\) .*/\1/p' "$TMP/rtschedd.prom" | sort -u)
daemon_stop
# every name a family has: itself, and a histogram's three series
NAMES=$(for f in $FAMILIES; do echo "$f"; echo "${f}_bucket"; echo "${f}_sum"; echo "${f}_count"; done | sort -u)
for m in rtschedd_budget_misses_total rtschedd_budget_seconds rtschedd_late_wakeups_total \
	rtschedd_late_delay_seconds_total rtschedd_late_first_total rtschedd_watchdog_trips_total \
	rtschedd_metrics_written_timestamp_seconds rtschedd_metrics_interval_seconds; do
	echo "$FAMILIES" | grep -qx "$m" || fail "the metrics file has no family $m"
done
jq -e '.panels | length > 0 and all(.targets | length > 0)' "$DASH" >/dev/null &&
	pass "the dashboard is JSON with $(jq '.panels | length' "$DASH") panels, each with a query" ||
	fail "the dashboard: not JSON, or a panel without a query"
# the dashboard's queries (panels, the instance variable) and the rules'
# expressions and input series
USED=$( { jq -r '.. | objects | (.expr?, .query?.query?, .definition?) // empty' "$DASH"
	grep -h -E '^\s*(expr|- series):' "$RULES" "$RTESTS"; } | grep -o 'rtschedd_[a-z_]*' | sort -u)
[ -n "$USED" ] || fail "no rtschedd_ metric found in the rules or the dashboard"
UNKNOWN=$(comm -23 <(echo "$USED") <(echo "$NAMES"))
[ -z "$UNKNOWN" ] && pass "the rules, their tests and the dashboard name only metrics rtschedd writes ($(echo "$USED" | wc -l) names)" ||
	fail "named but never written by rtschedd: $(echo "$UNKNOWN" | tr '\n' ' ')"
finish
