/* json.c: rtschedctl's --json output: a reply message as one JSON object,
 * each value escaped, and the keys whose values are numbers (their list is
 * rtschedctl(1)'s, which tests/docs-check.py compares with nums[] below). */
#include "autoconfig.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/json.h"
#include "shared/escape.h"

/* Keys whose values are numbers in JSON. */
static bool numeric_key(const char *k)
{
	static const char *const nums[] = { "tid", "pid", "priority", "nice", "reset_on_fork", "owner", "since",
					    "threads", "processes", "clients", "grants", "refusals", "reloads",
					    "uptime_s", "proto", "rows", "config_files", "default_priority",
					    "max_priority", "connector_events", "connector_overruns", "rules",
					    "match_rules", "scan_tasks", "scan_us", "period_ns", "samples",
					    "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "p9999_ns", "max_ns",
					    "mean_ns", "stddev_ns", "overruns", "lo_ns", "hi_ns", "count",
					    "watchdog_threshold_ms", "watchdog_cooldown_s", "watchdog_cooldown_left_s",
					    "watchdog_trips", "watchdog_canary_late", "watchdog_canary_stall_ms", "cap",
					    "clamped_from", "has_limits", "rtprio_soft",
					    "rtprio_hard", "rtkit_calls", "rtkit_grants", "rtkit_refusals", "state_left_s",
					    "unmanaged", "late", "late_threshold_ns", "budget_ns", "budget_misses",
					    "share_pct", "total_ns", "worst_ns", "first", "rank", "cpu", "irq", "kprio",
					    "threshold_ns", "wakeups", "timer_wakeups", "late_timer", "late_wakeup",
					    "dropped", "explained", "delay_ns", "worst_cpu", "worst_woken_ns", "offset_ns",
					    "ns", "top_ns", "irq", "irqs", "kthreads", "irqs_avoided", "irq_sync_us",
					    "hotplug_apply_us", "original_priority", "isolation_apply_us",
					    "isolation_release_us" };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (strcmp(k, nums[i]) == 0)
			return true;
	return false;
}

/* A value from the daemon as JSON: it may hold a thread's name, any bytes. */
void json_string(const char *s)
{
	escape_json(stdout, s);
}

/* A number JSON takes as it is: digits, a '-' first, one '.' inside. */
static bool json_number(const char *v)
{
	size_t n = strspn(v, "-0123456789."), dots = 0;

	for (const char *p = v; *p; p++)
		dots += *p == '.';
	return *v && strpbrk(v, "0123456789") && n == strlen(v) && dots <= 1 && v[n - 1] != '.' && v[0] != '.' && !strchr(v + 1, '-');
}

static void json_value(const char *key, const char *value)
{
	if (numeric_key(key) && json_number(value))
		fputs(value, stdout);
	else
		json_string(value);
}

/* "culprit_3_share_pct": culprit 3's field share_pct; 0 if k is not one. */
static int culprit_field(const char *k, const char **field)
{
	char *end;
	long n;

	if (strncmp(k, "culprit_", 8) || !(k[8] >= '1' && k[8] <= '9'))
		return 0;
	n = strtol(k + 8, &end, 10);
	if (*end != '_' || n < 1 || n > 99)
		return 0;
	*field = end + 1;
	return (int)n;
}

/* A message as one object; culprit_N_FIELD keys become "culprits": an
 * array of objects, culprit N's fields in the Nth. */
void json_object(const struct proto_msg *m)
{
	const char *field;
	int maxc = 0, c;
	bool first = true;

	putchar('{');
	for (size_t i = 0; i < m->n; i++) {
		if ((c = culprit_field(m->f[i].key, &field))) {
			maxc = c > maxc ? c : maxc;
			continue;
		}
		printf("%s", first ? "" : ",");
		first = false;
		json_string(m->f[i].key);
		putchar(':');
		json_value(m->f[i].key, m->f[i].value);
	}
	if (maxc) {
		printf("%s\"culprits\":[", first ? "" : ",");
		for (int n = 1; n <= maxc; n++) {
			bool f1 = true;
			printf("%s{", n > 1 ? "," : "");
			for (size_t i = 0; i < m->n; i++) {
				if (culprit_field(m->f[i].key, &field) != n)
					continue;
				printf("%s", f1 ? "" : ",");
				f1 = false;
				json_string(field);
				putchar(':');
				json_value(field, m->f[i].value);
			}
			putchar('}');
		}
		putchar(']');
	}
	putchar('}');
}
