/* why.c: how rtschedctl prints `why`'s reply: the thread, its culprits, the
 * worst late wake-up's timeline and the last late wake-ups, as text or as
 * one JSON object (why.h). */
#include "autoconfig.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/json.h"
#include "ctl/why.h"
#include "shared/escape.h"
#include "shared/protocol.h"

/* A name a thread gave itself, or a driver its interrupt, for the terminal
 * (escape_text(): C0, DEL, C1 controls and bytes that are not UTF-8 print as
 * \xNN, so no name drives it), padded to width bytes. */
static void put_name(const char *s, int width)
{
	static char buf[4 * PROTO_MSG_MAX + 1];

	printf("%-*s", width, escape_text(buf, sizeof(buf), s));
}

/* "1.23ms", "45.6us", "789ns" from a ns field. */
static const char *dur_str(const char *v, char *buf, size_t len)
{
	double ns = v ? strtod(v, NULL) : 0;

	if (!v || !*v)
		return "-";
	if (ns >= 1e6)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		snprintf(buf, len, "%.0fns", ns);
	return buf;
}

/* The thread row, as text. */
static void why_thread_text(const struct proto_msg *m)
{
	char a[32], b[32], c[32];
	const char *probe = proto_get(m, "probe"), *budget = proto_get(m, "budget_ns");

	put_name(proto_get(m, "name") ?: "?", 0);
	printf(" (tid %s", proto_get(m, "tid") ?: "?");
	if (probe) {
		printf(", probe ");
		put_name(probe, 0);
	} else {
		printf(", pid %s, rule ", proto_get(m, "pid") ?: "?");
		put_name(proto_get(m, "rule") ?: "?", 0);
	}
	printf("), %s %s on CPU %s\n", proto_get(m, "policy") ?: "?", proto_get(m, "priority") ?: "?",
	       proto_get(m, "cpus") ?: "?");
	printf("late: %s of %s wake-ups later than %s", proto_get(m, "late") ?: "0", proto_get(m, "wakeups") ?: "?",
	       dur_str(proto_get(m, "threshold_ns"), a, sizeof(a)));
	if (budget && strcmp(budget, "0"))
		printf(" (its budget: %s misses)", proto_get(m, "late") ?: "0");
	else
		printf(" (late-threshold-us: it has no budget)");
	printf("; %s worked out", proto_get(m, "explained") ?: "0");
	if (strcmp(proto_get(m, "dropped") ?: "0", "0"))
		printf(", %s not (they came faster than rtschedd read them)", proto_get(m, "dropped"));
	printf("\n");
	if (proto_get(m, "worst_ns"))
		printf("their delay: %s in all, the worst %s (%s, CPU %s, from its %s%s%s)\n",
		       dur_str(proto_get(m, "delay_ns"), a, sizeof(a)), dur_str(proto_get(m, "worst_ns"), b, sizeof(b)),
		       proto_get(m, "worst_when") ?: "?", proto_get(m, "worst_cpu") ?: "?",
		       !strcmp(proto_get(m, "worst_from") ?: "", "timer") ? "timer's expiry" : "wake-up",
		       proto_get(m, "worst_woken_ns") ? ", woken after " : "",
		       proto_get(m, "worst_woken_ns") ? dur_str(proto_get(m, "worst_woken_ns"), c, sizeof(c)) : "");
}

int why_on_msg(void *ud, const struct proto_msg *m)
{
	struct why_state *w = ud;
	const char *row = proto_get(m, "row") ?: "";
	char a[32], b[32];

	if (strcmp(m->head, "OK") == 0) {
		if (w->json) {
			printf("%s,\"verdict\":", w->section ? "]" : "");
			json_string(proto_get(m, "verdict") ?: "");
			printf("}\n");
		} else {
			printf("%sverdict: ", w->late ? "\n" : "");
			put_name(proto_get(m, "verdict") ?: "", 0);
			printf("\n");
		}
		return 0;
	}
	if (strcmp(m->head, "ROW") != 0)
		return 0;
	if (w->json) {
		if (!strcmp(row, "thread")) {
			printf("{\"thread\":");
		} else if (!w->section || strcmp(w->section, row)) {
			printf("%s,\"%s\":[", w->section ? "]" : "", !strcmp(row, "culprit") ? "culprits" : row);
			w->section = !strcmp(row, "culprit") ? "culprit" : !strcmp(row, "timeline") ? "timeline" : "recent";
		} else {
			putchar(',');
		}
		json_object(m);
		return 0;
	}
	if (!strcmp(row, "thread")) {
		why_thread_text(m);
		proto_get_long(m, "explained", 0, 1L << 62, &w->late);
	} else if (!strcmp(row, "culprit")) {
		if (!w->section || strcmp(w->section, "culprit")) {
			printf("\n%-52s %-10s %6s %9s %9s %6s %6s\n", "CULPRIT", "KIND", "SHARE", "TOTAL", "WORST", "LATE",
			       "FIRST");
			w->section = "culprit";
		}
		put_name(proto_get(m, "name") ?: "?", 52);
		printf(" %-10s %5s%% %9s %9s %6s %6s\n", proto_get(m, "kind") ?: "?", proto_get(m, "share_pct") ?: "?",
		       dur_str(proto_get(m, "total_ns"), a, sizeof(a)), dur_str(proto_get(m, "worst_ns"), b, sizeof(b)),
		       proto_get(m, "late") ?: "-", proto_get(m, "first") ?: "-");
	} else if (!strcmp(row, "timeline")) {
		if (!w->section || strcmp(w->section, "timeline")) {
			printf("\nthe worst late wake-up, from its start:\n");
			w->section = "timeline";
		}
		printf("  +%-9s %9s  ", dur_str(proto_get(m, "offset_ns"), a, sizeof(a)),
		       dur_str(proto_get(m, "ns"), b, sizeof(b)));
		put_name(proto_get(m, "name") ?: "?", 0);
		printf("\n");
	} else if (!strcmp(row, "recent")) {
		if (!w->section || strcmp(w->section, "recent")) {
			printf("\nthe last late wake-ups:\n");
			w->section = "recent";
		}
		printf("  %s  %9s  CPU %-3s ", proto_get(m, "when") ?: "?", dur_str(proto_get(m, "delay_ns"), a, sizeof(a)),
		       proto_get(m, "cpu") ?: "?");
		put_name(proto_get(m, "top") ?: "?", 0);
		printf(" %s\n", dur_str(proto_get(m, "top_ns"), b, sizeof(b)));
	}
	return 0;
}
