/* rtschedctl.c: the command-line client of rtschedd. Each command is one
 * request; output is a readable table or, with --json, JSON.
 * Exit codes: 0 success, 1 the daemon refused, 2 cannot reach the daemon,
 * 64 usage error. */
#include "autoconfig.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/client.h"
#include "shared/escape.h"
#include "shared/protocol.h"
#include "shared/report.h"

enum { EXIT_REFUSED = 1, EXIT_UNREACHABLE = 2, EXIT_USAGE = 64 };

static bool json;
static bool first_row = true;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rtschedctl [--socket PATH] [--json] COMMAND [OPTIONS]\n"
		"Commands:\n"
		"  register (--tid TID | --pid PID) [--role NAME] [--policy P] [--priority N]\n"
		"           [--nice N] [--cpus LIST]      give a thread or process its scheduling\n"
		"  unregister (--tid TID | --pid PID)      give back what it had before\n"
		"  list [--all]                             the managed threads (--all: and the last refused\n"
		"                                           or restored ones that still exist)\n"
		"  status                                   the daemon's state\n"
		"  reload                                   reload the configuration\n"
		"  version                                  versions of rtschedctl and rtschedd\n"
		"  jitter [--histogram [KIND:]NAME|TID] [--reset]  observed wake-up latency per thread and probe\n"
		"  metrics                                  the Prometheus text exposition\n"
		"  check [--pid PID | --user USER] [--policy P] [--priority N] [--cpus LIST]\n"
		"                                           why a thread can or cannot be real-time,\n"
		"                                           each finding with its fix (exit 1 on errors)\n"
		"Exit codes: 0 success, 1 refused by rtschedd, 2 rtschedd unreachable, 64 usage.\n");
}

__attribute__((format(printf, 1, 2), noreturn))
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rtschedctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see rtschedctl --help\n", stderr);
	exit(EXIT_USAGE);
}

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
					    "watchdog_trips", "cap", "clamped_from", "has_limits", "rtprio_soft",
					    "rtprio_hard", "rtkit_calls", "rtkit_grants", "rtkit_refusals", "state_left_s",
					    "unmanaged" };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (strcmp(k, nums[i]) == 0)
			return true;
	return false;
}

/* A value from the daemon as JSON: it may hold a thread's name, any bytes. */
static void json_string(const char *s)
{
	escape_json(stdout, s);
}

/* A value from the daemon for the terminal (escape.h), NULL as "-"; eight
 * can be in use at once, for one printf. */
static const char *tv(const char *v)
{
	static char ring[8][4 * PROTO_MSG_MAX + 1];
	static unsigned next;

	if (!v)
		return "-";
	return escape_text(ring[next++ % 8], sizeof(ring[0]), v);
}

static void json_object(const struct proto_msg *m)
{
	putchar('{');
	for (size_t i = 0; i < m->n; i++) {
		if (i)
			putchar(',');
		json_string(m->f[i].key);
		putchar(':');
		if (numeric_key(m->f[i].key) && m->f[i].value[0] && strspn(m->f[i].value, "-0123456789") == strlen(m->f[i].value))
			fputs(m->f[i].value, stdout);
		else
			json_string(m->f[i].value);
	}
	putchar('}');
}

/* One ROW of a --json list: the objects of an array the caller opens and closes. */
static int json_row(const struct proto_msg *m)
{
	printf("%s", first_row ? "" : ",");
	json_object(m);
	first_row = false;
	return 0;
}

/* list: one table row per ROW message. */
static const char *ns_str(const char *v, char *buf, size_t len);

static int on_list(void *ud, const struct proto_msg *m)
{
	const char *cols[] = { "tid", "pid", "comm", "policy", "priority", "nice", "cpus", "rule", "source", "owner" };
	const int width[] = { 7, 7, 16, 6, 4, 4, 10, 12, 7, 5 };
	char b[32];

	if (strcmp(m->head, "OK") == 0 && !json) {
		long n;
		if (proto_get_long(m, "unmanaged", 1, 1L << 30, &n) == 0)
			fprintf(stderr, "(%ld more not managed: refused or restored; rtschedctl list --all shows them)\n",
				n);
		return 0;
	}
	if (strcmp(m->head, "ROW") != 0)
		return 0;
	if (json)
		return json_row(m);
	if (first_row) {
		printf("%-7s %-7s %-16s %-6s %-4s %-4s %-10s %-12s %-7s %-5s %-12s %-9s %8s %8s\n", "TID", "PID", "COMM",
		       "POLICY", "PRIO", "NICE", "CPUS", "RULE", "SOURCE", "OWNER", "STATE", "OBSERVED", "TIMER99",
		       "WAKE99");
		first_row = false;
	}
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		printf("%-*s ", width[i], tv(proto_get(m, cols[i])));
	/* applied, demoted by the watchdog with the cooldown left, refused
	 * with the code (--json has the message), or restored */
	const char *state = proto_get(m, "state");
	if (state && strcmp(state, "demoted") == 0) {
		snprintf(b, sizeof(b), "demoted:%ss", tv(proto_get(m, "state_left_s") ?: "?"));
		printf("%-12s ", b);
	} else if (state && strcmp(state, "refused") == 0) {
		snprintf(b, sizeof(b), "refused:%s", tv(proto_get(m, "state_code") ?: "?"));
		printf("%-12s ", b);
	} else {
		printf("%-12s ", tv(state));
	}
	/* the BPF observer's p99s since registration: timer lateness, wake-up latency */
	printf("%-9s", tv(proto_get(m, "observed")));
	printf(" %8s", ns_str(proto_get(m, "bpf_timer_p99_ns"), b, sizeof(b)));
	printf(" %8s\n", ns_str(proto_get(m, "bpf_wakeup_p99_ns"), b, sizeof(b)));
	return 0;
}

/* Nanoseconds as a short human figure. */
static const char *ns_str(const char *v, char *buf, size_t len)
{
	if (!v || !*v || strcmp(v, "-1") == 0)
		return "-";
	double ns = strtod(v, NULL);
	if (ns >= 1e6)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.1fus", ns / 1e3);
	return buf;
}

/* jitter: one row per source. */
static int on_jitter(void *ud, const struct proto_msg *m)
{
	static const char *const cols[] = { "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns",
					    "stddev_ns" };
	char b[32];
	const char *v;

	if (strcmp(m->head, "ROW") == 0) {
		if (json)
			return json_row(m);
		if (first_row) {
			printf("%-10s %-15s %-7s %-6s %-4s %-6s %-8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %5s %6s\n",
			       "KIND", "NAME", "TID", "POLICY", "PRIO", "CPUS", "PERIOD", "SAMPLES", "MIN", "P50", "P90",
			       "P99", "P99.9", "MAX", "MEAN", "STDDEV", "OVERR", "P99%");
			first_row = false;
		}
		printf("%-10s %-15s %-7s %-6s %-4s %-6s %-8s %8s", tv(proto_get(m, "kind")), tv(proto_get(m, "name")),
		       tv(proto_get(m, "tid")), tv(proto_get(m, "policy")), tv(proto_get(m, "priority")),
		       tv(proto_get(m, "cpus")),
		       strcmp(proto_get(m, "period_ns") ?: "0", "0") ? ns_str(proto_get(m, "period_ns"), b, sizeof(b)) : "-",
		       tv(proto_get(m, "samples") ?: "0"));
		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
			printf(" %8s", ns_str(proto_get(m, cols[i]), b, sizeof(b)));
		v = proto_get(m, "overruns");
		printf(" %5s %6s\n", tv(v), tv(proto_get(m, "p99_pct")));
		return 0;
	}
	if (strcmp(m->head, "OK") == 0 && !json) {
		if (first_row)
			printf("no jitter sources: use rtsched_timer in a worker, a [probe NAME], or register a thread\n");
		printf("measured under: preemption %s, /dev/cpu_dma_latency %s; bpf-timer rows: timer expiry to "
		       "running, bpf-wakeup rows: wake-up to running (BPF, from outside); schedstat rows (no BPF): "
		       "the mean run-queue wait per run since registration\n", tv(proto_get(m, "preempt") ?: "?"),
		       tv(proto_get(m, "cpu_dma_latency") ?: "?"));
	}
	return 0;
}

/* jitter --histogram: the buckets, folded into 1-2-5 bins, drawn as bars. */
struct bins {
	double edge[40];
	unsigned long long n[40];
	int count;
	char name[64];
	char kind[16];
};

static int on_hist(void *ud, const struct proto_msg *m)
{
	struct bins *b = ud;
	long lo, cnt;

	if (strcmp(m->head, "ROW") != 0 || proto_get_long(m, "lo_ns", 0, 1L << 62, &lo) < 0 ||
	    proto_get_long(m, "count", 0, 1L << 62, &cnt) < 0)
		return 0;
	snprintf(b->name, sizeof(b->name), "%s", proto_get(m, "name") ?: "");
	snprintf(b->kind, sizeof(b->kind), "%s", proto_get(m, "kind") ?: "");
	for (int i = b->count - 1; i >= 0; i--)
		if (lo >= b->edge[i]) {
			b->n[i] += (unsigned long long)cnt;
			break;
		}
	return 0;
}

static void draw_hist(struct bins *b)
{
	unsigned long long max = 0, total = 0;
	int first = -1, last = -1;
	char lo[32], hi[32];

	for (int i = 0; i < b->count; i++) {
		total += b->n[i];
		if (b->n[i] > max)
			max = b->n[i];
		if (b->n[i] && first < 0)
			first = i;
		if (b->n[i])
			last = i;
	}
	if (!total) {
		printf("no samples\n");
		return;
	}
	printf("%s of %s, %llu samples\n", !strcmp(b->kind, "bpf-timer") ? "timer lateness (BPF)" :
	       !strcmp(b->kind, "bpf-wakeup") ? "wake-up latency (BPF)" : "wake-up lateness", tv(b->name), total);
	for (int i = first; i <= last; i++) {
		int w = (int)(50.0 * (double)b->n[i] / (double)max + 0.5);
		snprintf(lo, sizeof(lo), "%g", b->edge[i] / 1e3);
		snprintf(hi, sizeof(hi), "%g", i + 1 < b->count ? b->edge[i + 1] / 1e3 : 1e10);
		printf("%8s - %-8s us |%.*s%*s %llu\n", lo, hi, w,
		       "##################################################", 50 - w, "", b->n[i]);
	}
}

/* Other commands: the final OK's fields, one per line (or a JSON object). */
static int on_fields(void *ud, const struct proto_msg *m)
{
	if (strcmp(m->head, "OK") != 0)
		return 0;
	if (json) {
		json_object(m);
		putchar('\n');
		return 0;
	}
	for (size_t i = 0; i < m->n; i++)
		printf("%-20s %s\n", tv(m->f[i].key), tv(m->f[i].value));
	return 0;
}

static struct diag_report report;

/* check: rebuild the daemon's report to print it as rtschedd --check does. */
static int on_check(void *ud, const struct proto_msg *m)
{
	struct diag_report *r = ud;
	long n;

	if (strcmp(m->head, "ERR") == 0) {
		fprintf(stderr, "rtschedctl: refused: %s\n", tv(m->rest));
		return 0;
	}
	if (strcmp(m->head, "ROW") == 0) {
		int sev = diag_severity_from_name(proto_get(m, "severity") ?: "");
		diag_report_add(r, proto_get(m, "code") ?: "?", sev < 0 ? DIAG_INFO : (enum diag_severity)sev,
				proto_get(m, "message") ?: "", proto_get(m, "fix") ?: "");
		return 0;
	}
	if (proto_get_long(m, "pid", 0, INT32_MAX, &n) == 0)
		r->pid = (pid_t)n;
	snprintf(r->comm, sizeof(r->comm), "%s", proto_get(m, "comm") ?: "");
	snprintf(r->unit, sizeof(r->unit), "%s", proto_get(m, "unit") ?: "");
	snprintf(r->user, sizeof(r->user), "%s", proto_get(m, "user") ?: "");
	r->has_limits = proto_get_long(m, "has_limits", 0, 1, &n) == 0 && n;
	if (proto_get_long(m, "rtprio_soft", -2, 1L << 30, &n) == 0)
		r->rtprio_soft = n;
	if (proto_get_long(m, "rtprio_hard", -2, 1L << 30, &n) == 0)
		r->rtprio_hard = n;
	snprintf(r->soft_src, sizeof(r->soft_src), "%s", proto_get(m, "soft_src") ?: "");
	snprintf(r->hard_src, sizeof(r->hard_src), "%s", proto_get(m, "hard_src") ?: "");
	return 0;
}

/* metrics: the exposition lines, as they are. */
static int on_metrics(void *ud, const struct proto_msg *m)
{
	const char *l = proto_get(m, "line");

	if (strcmp(m->head, "ROW") == 0 && l)
		printf("%s\n", tv(l));
	return 0;
}

/* jitter --histogram --json: every ROW as an object. */
static int on_raw(void *ud, const struct proto_msg *m)
{
	if (strcmp(m->head, "ROW") == 0) {
		printf("%s", first_row ? "[" : ",");
		json_object(m);
		first_row = false;
	} else if (strcmp(m->head, "OK") == 0) {
		printf("%s\n", first_row ? "[]" : "]");
	}
	return 0;
}

/* ERR messages: print the code and message, JSON or text. */
static int on_any(void *ud, const struct proto_msg *m)
{
	int (*inner)(void *, const struct proto_msg *) = ud;

	if (strcmp(m->head, "ERR") == 0) {
		if (json) {
			const char *sp = strchr(m->rest, ' ');
			char code[32];
			snprintf(code, sizeof(code), "%.*s", sp ? (int)(sp - m->rest) : (int)strlen(m->rest), m->rest);
			printf("{\"error\":");
			json_string(code);
			printf(",\"message\":");
			json_string(sp ? sp + 1 : "");
			if (proto_get(m, "diag")) {
				printf(",\"diag\":");
				json_string(proto_get(m, "diag"));
			}
			printf("}\n");
		} else {
			fprintf(stderr, "rtschedctl: refused: %s\n", tv(m->rest));
			if (proto_get(m, "diag"))
				fprintf(stderr, "rtschedctl: diagnosis: %s (rtschedctl check shows the whole report)\n",
					tv(proto_get(m, "diag")));
		}
		return 0;
	}
	return inner(NULL, m);
}

int main(int argc, char **argv)
{
	static const struct option global[] = {
		{ "socket", required_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { 0 },
	};
	static const struct option cmdopts[] = {
		{ "tid", required_argument, NULL, 't' }, { "pid", required_argument, NULL, 'p' },
		{ "role", required_argument, NULL, 'r' }, { "policy", required_argument, NULL, 'P' },
		{ "priority", required_argument, NULL, 'n' }, { "nice", required_argument, NULL, 'N' },
		{ "cpus", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' }, { 0 },
	};
	const char *socket = NULL, *cmd, *hist_of = NULL;
	bool checking = false;
	struct bins bins = { .count = 0 };
	int (*handler)(void *, const struct proto_msg *) = on_fields;
	struct proto_buf b;
	int opt, fd, r, perr = -1;

	opterr = 0; /* our own one-line messages */
	/* global options stop at the command name */
	while ((opt = getopt_long(argc, argv, "+s:jhV", global, NULL)) != -1) {
		switch (opt) {
		case 's': socket = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rtschedctl %s\n", PACKAGE_VERSION); return 0;
		default: usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("no command given");
	cmd = argv[optind];
	argv += optind;
	argc -= optind;
	optind = 1;

	proto_begin(&b, PROTO_REQUEST_HEAD);
	proto_add(&b, "op", cmd);
	if (strcmp(cmd, "register") == 0 || strcmp(cmd, "unregister") == 0) {
		bool reg = cmd[0] == 'r', target = false;
		while ((opt = getopt_long(argc, argv, "", cmdopts, NULL)) != -1) {
			const char *key = NULL;
			switch (opt) {
			case 't': key = "tid"; target = true; break;
			case 'p': key = "pid"; target = true; break;
			case 'r': key = "role"; break;
			case 'P': key = "policy"; break;
			case 'n': key = "priority"; break;
			case 'N': key = "nice"; break;
			case 'c': key = "cpus"; break;
			case 'j': json = true; continue;
			case ':': usage_error("%s needs a value", argv[optind - 1]);
			default: usage_error("unknown option '%s' for %s", argv[optind - 1], cmd);
			}
			if (!reg && opt != 't' && opt != 'p')
				usage_error("unregister takes only --tid or --pid");
			proto_add(&b, key, optarg);
		}
		if (!target)
			usage_error("%s needs --tid TID or --pid PID", cmd);
	} else if (strcmp(cmd, "jitter") == 0) {
		static const struct option jopts[] = {
			{ "histogram", required_argument, NULL, 'H' }, { "reset", no_argument, NULL, 'R' },
			{ "json", no_argument, NULL, 'j' }, { 0 },
		};
		bool reset = false;
		while ((opt = getopt_long(argc, argv, "", jopts, NULL)) != -1) {
			switch (opt) {
			case 'H': hist_of = optarg; break;
			case 'R': reset = true; break;
			case 'j': json = true; break;
			default: usage_error("unknown option '%s' for jitter", argv[optind - 1]);
			}
		}
		if (reset) {
			proto_begin(&b, PROTO_REQUEST_HEAD);
			proto_add(&b, "op", "jitter-reset");
		} else {
			handler = on_jitter;
			if (hist_of) {
				proto_add(&b, "histogram", hist_of);
				handler = NULL;
			}
		}
	} else if (strcmp(cmd, "check") == 0) {
		static const struct option copts[] = {
			{ "pid", required_argument, NULL, 'p' }, { "user", required_argument, NULL, 'u' },
			{ "policy", required_argument, NULL, 'P' }, { "priority", required_argument, NULL, 'n' },
			{ "cpus", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' }, { 0 },
		};
		while ((opt = getopt_long(argc, argv, "", copts, NULL)) != -1) {
			const char *key = NULL;
			switch (opt) {
			case 'p': key = "pid"; break;
			case 'u': key = "user"; break;
			case 'P': key = "policy"; break;
			case 'n': key = "priority"; break;
			case 'c': key = "cpus"; break;
			case 'j': json = true; continue;
			case ':': usage_error("%s needs a value", argv[optind - 1]);
			default: usage_error("unknown option '%s' for check", argv[optind - 1]);
			}
			proto_add(&b, key, optarg);
		}
		handler = NULL;
		checking = true;
	} else if (strcmp(cmd, "metrics") == 0) {
		handler = on_metrics;
	} else if (strcmp(cmd, "list") == 0) {
		static const struct option lopts[] = {
			{ "all", no_argument, NULL, 'a' }, { "json", no_argument, NULL, 'j' }, { 0 },
		};
		while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
			switch (opt) {
			case 'a': proto_add(&b, "all", "1"); break;
			case 'j': json = true; break;
			default: usage_error("unknown option '%s' for list", argv[optind - 1]);
			}
		}
		handler = on_list;
	} else if (strcmp(cmd, "status") == 0 || strcmp(cmd, "reload") == 0 || strcmp(cmd, "version") == 0) {
		while ((opt = getopt_long(argc, argv, "", cmdopts + 7, NULL)) != -1) {
			if (opt != 'j')
				usage_error("%s takes no options", cmd);
			json = true;
		}
		if (cmd[0] == 'v' && !json)
			printf("rtschedctl %s\n", PACKAGE_VERSION);
	} else {
		usage_error("unknown command '%s'", cmd);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (b.overflow)
		usage_error("request too long");

	fd = client_connect(socket);
	if (fd == -EPERM) {
		fprintf(stderr, "rtschedctl: %s is served by a process that is neither root, user %s nor you: "
			"not trusting its answers; remove the file and restart rtschedd, or use --socket\n",
			client_socket_path(socket), RTSCHED_DAEMON_USER);
		return EXIT_UNREACHABLE;
	}
	if (fd < 0) {
		fprintf(stderr, "rtschedctl: cannot connect to %s: %s; is rtschedd running?\n",
			client_socket_path(socket), strerror(-fd));
		return EXIT_UNREACHABLE;
	}
	bool array = json && (handler == on_list || handler == on_jitter);
	if (array)
		printf("[");
	if (checking) {
		diag_report_init(&report);
		r = client_call(fd, b.data, b.len, on_check, &report, &perr);
		if (r == 0) {
			if (json)
				diag_print_json(&report, stdout);
			else
				diag_print_text(&report, stdout);
			if (diag_report_worst(&report) == DIAG_ERROR)
				r = -EPERM, perr = PE_INTERNAL;
		}
		diag_report_free(&report);
	} else if (hist_of && !json) {
		/* 1-2-5 bins from 100 ns to 10 s */
		for (double dec = 100; dec < 1e10 && bins.count < 38; dec *= 10)
			for (int k = 0; k < 3; k++)
				bins.edge[bins.count++] = dec * (k == 0 ? 1 : k == 1 ? 2 : 5);
		bins.edge[0] = 0;
		r = client_call(fd, b.data, b.len, on_hist, &bins, &perr);
		if (r == 0)
			draw_hist(&bins);
	} else {
		r = client_call(fd, b.data, b.len, on_any, (void *)(handler ? handler : on_raw), &perr);
	}
	close(fd);
	if (array)
		printf("]\n");
	if (handler == on_list && !json && first_row && r == 0)
		printf("no managed threads\n");
	if (r == 0)
		return 0;
	if (perr >= 0) /* the daemon answered ERR: already printed */
		return EXIT_REFUSED;
	{
		fprintf(stderr, "rtschedctl: %s: %s\n", client_socket_path(socket), strerror(-r));
		return EXIT_UNREACHABLE;
	}
	return EXIT_REFUSED;
}
