/* rtschedctl.c: the command-line client of rtschedd. Each command is one
 * request; output is a readable table or, with --json, JSON.
 * Exit codes: 0 success, 1 the daemon refused, 2 cannot reach the daemon,
 * 64 usage error; `run` (which execs the program, whose status it then is)
 * 126 the program cannot be executed, 127 it was not found, 69 the preload
 * library is missing, 77 the daemon refuses its --rule to the user. */
#include "autoconfig.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/json.h"
#include "ctl/why.h"
#include "shared/client.h"
#include "shared/escape.h"
#include "shared/protocol.h"
#include "shared/report.h"

enum {
	EXIT_REFUSED = 1,
	EXIT_UNREACHABLE = 2,
	EXIT_USAGE = 64,
	EXIT_NO_PRELOAD = 69,   /* run: EX_UNAVAILABLE */
	EXIT_RULE_REFUSED = 77, /* run: EX_NOPERM, the daemon refuses --rule to the user */
	EXIT_CANNOT_EXEC = 126, /* run: as a shell says it */
	EXIT_NOT_FOUND = 127,
};

static bool json;
static bool first_row = true;

/* One option of a command: --NAME, with a value named ARG in --help, or a
 * flag (arg NULL). With a field, the value (a flag's "1") goes into the
 * request as FIELD=VALUE, in the order given; the handler reads any option
 * with opt(). */
struct ctl_opt {
	const char *name;
	const char *arg;
	const char *field;
};

#define CTL_OPTS_MAX 16

struct ctl_cmd;

/* The command being run: its row, the request (op=NAME and the options'
 * fields) and each option's value ("" for a flag; NULL if not given). */
struct ctl {
	const struct ctl_cmd *cmd;
	const char *socket;
	struct proto_buf req;
	const char *val[CTL_OPTS_MAX];
	const char *operand; /* the operand, NULL if not given */
	int argc;   /* the operands after the options (run's program and its arguments) */
	char **argv;
};

/* A command: a row of the table below. run() sends the request and prints
 * the reply, and returns the exit status; a usage error exits 64 before
 * anything is sent. */
struct ctl_cmd {
	const char *name;
	const char *synopsis; /* its options in --help ("\n" continues the line) */
	const char *help;     /* what it does, in --help ("\n" for more lines) */
	const struct ctl_opt *opts; /* ends with { NULL }; --json is every command's */
	int (*run)(struct ctl *c);
	const char *operand; /* the request's field for its one operand (why's thread); NULL: none */
};

static const struct ctl_cmd *const commands[];

/* The value of option NAME of the command being run, NULL if not given. */
static const char *opt(const struct ctl *c, const char *name)
{
	for (size_t i = 0; c->cmd->opts[i].name; i++)
		if (strcmp(c->cmd->opts[i].name, name) == 0)
			return c->val[i];
	return NULL;
}

/* Lines of LEFT (a command and its options) with HELP beside the last one
 * that leaves room, as --help shows a command. */
static void usage_row(FILE *f, const char *left, const char *help)
{
	const int col = 41;
	const char *nl;
	int len;

	for (;;) {
		nl = strchr(left, '\n');
		len = nl ? (int)(nl - left) : (int)strlen(left);
		if (nl) {
			fprintf(f, "  %.*s\n", len, left);
			left = nl + 1;
			continue;
		}
		break;
	}
	if (len < col)
		fprintf(f, "  %-*.*s ", col - 1, len, left);
	else
		fprintf(f, "  %.*s\n  %*s", len, left, col, "");
	for (;;) {
		nl = strchr(help, '\n');
		fprintf(f, "%.*s\n", nl ? (int)(nl - help) : (int)strlen(help), help);
		if (!nl)
			break;
		help = nl + 1;
		fprintf(f, "  %*s", col, "");
	}
}

static void usage(FILE *f)
{
	char left[256];

	fprintf(f, "Usage: rtschedctl [--socket PATH] [--json] COMMAND [OPTIONS]\nCommands:\n");
	for (size_t i = 0; commands[i]; i++) {
		snprintf(left, sizeof(left), "%s%s%s", commands[i]->name, commands[i]->synopsis[0] ? " " : "",
			 commands[i]->synopsis);
		usage_row(f, left, commands[i]->help);
	}
	fprintf(f, "Exit codes: 0 success, 1 refused by rtschedd, 2 rtschedd unreachable, 64 usage;\n"
		   "run: the program's, or 126 cannot execute it, 127 not found, 69 no preload library,\n"
		   "77 --rule refused to the user.\n");
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

/* --json list and jitter: every ROW as an object of one array, closed by the OK. */
static int on_array(void *ud, const struct proto_msg *m)
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

/* list: one table row per ROW message, printed at the OK with each
 * column as wide as its widest cell (a long rule name or state shifts no
 * other column). */
static const char *ns_str(const char *v, char *buf, size_t len);

enum { LIST_COLS = 14 };
static const char *const list_head[LIST_COLS] = { "TID", "PID", "COMM", "POLICY", "PRIO", "NICE", "CPUS", "RULE",
						  "SOURCE", "OWNER", "STATE", "OBSERVED", "TIMER99", "WAKE99" };
static char **list_cells; /* LIST_COLS per row */
static size_t list_rows;

static void list_free(void)
{
	for (size_t i = 0; i < list_rows * LIST_COLS; i++)
		free(list_cells[i]);
	free(list_cells);
	list_cells = NULL;
	list_rows = 0;
}

static void list_print(void)
{
	size_t w[LIST_COLS];

	for (size_t j = 0; j < LIST_COLS; j++) {
		w[j] = strlen(list_head[j]);
		for (size_t i = 0; i < list_rows; i++)
			if (!list_cells[i * LIST_COLS + j]) {
				list_free(); /* a row cut short by ENOMEM: nothing printed */
				return;
			} else if (strlen(list_cells[i * LIST_COLS + j]) > w[j])
				w[j] = strlen(list_cells[i * LIST_COLS + j]);
	}
	for (size_t i = 0; list_rows && i <= list_rows; i++)
		for (size_t j = 0; j < LIST_COLS; j++) {
			const char *v = i ? list_cells[(i - 1) * LIST_COLS + j] : list_head[j];
			/* the figures right-aligned, the last column unpadded */
			if (j >= LIST_COLS - 2)
				printf(" %*s%s", (int)w[j], v, j == LIST_COLS - 1 ? "\n" : "");
			else
				printf("%s%-*s", j ? " " : "", (int)w[j], v);
		}
	list_free();
}

/* A copy of v as cell j of the last row (tv()'s buffers are reused). */
static int list_put(size_t j, const char *v)
{
	return (list_cells[(list_rows - 1) * LIST_COLS + j] = strdup(v)) ? 0 : -ENOMEM;
}

static int on_list(void *ud, const struct proto_msg *m)
{
	static const char *const cols[] = { "tid", "pid", "comm", "policy", "priority", "nice", "cpus", "rule", "source", "owner" };
	char b[64], **grown;
	int r = 0;

	if (strcmp(m->head, "OK") == 0) {
		long n;
		list_print();
		if (proto_get_long(m, "unmanaged", 1, 1L << 30, &n) == 0)
			fprintf(stderr, "(%ld more not managed: refused or restored; rtschedctl list --all shows them)\n",
				n);
		return 0;
	}
	if (strcmp(m->head, "ROW") != 0)
		return 0;
	first_row = false;
	if (!(grown = realloc(list_cells, (list_rows + 1) * LIST_COLS * sizeof(*grown))))
		return -ENOMEM;
	list_cells = grown;
	memset(&list_cells[list_rows * LIST_COLS], 0, LIST_COLS * sizeof(*grown));
	list_rows++; /* the row being filled (its cells NULL until put): list_free() frees what it has */
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]) && r == 0; i++)
		r = list_put(i, tv(proto_get(m, cols[i])));
	/* applied, demoted by the watchdog with the cooldown left, refused
	 * with the code (--json has the message), or restored */
	const char *state = proto_get(m, "state");
	if (state && strcmp(state, "demoted") == 0)
		snprintf(b, sizeof(b), "demoted:%ss", tv(proto_get(m, "state_left_s") ?: "?"));
	else if (state && (strcmp(state, "refused") == 0 || strcmp(state, "partial") == 0))
		snprintf(b, sizeof(b), "%s:%s", state, tv(proto_get(m, "state_code") ?: "?"));
	else
		snprintf(b, sizeof(b), "%s", tv(state));
	if (r == 0)
		r = list_put(10, b);
	/* the BPF observer's p99s since registration: timer lateness, wake-up latency */
	if (r == 0)
		r = list_put(11, tv(proto_get(m, "observed")));
	if (r == 0)
		r = list_put(12, ns_str(proto_get(m, "bpf_timer_p99_ns"), b, sizeof(b)));
	if (r == 0)
		r = list_put(13, ns_str(proto_get(m, "bpf_wakeup_p99_ns"), b, sizeof(b)));
	return r;
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
	if (strcmp(m->head, "OK") == 0) {
		if (first_row)
			printf("no jitter sources: use rtsched_timer in a worker, a [probe NAME], or register a thread\n");
		const char *rl = proto_get(m, "resume_latency"), *iso = proto_get(m, "isolated");
		printf("measured under: preemption %s, /dev/cpu_dma_latency %s%s%s%s%s%s; bpf-timer rows: timer expiry "
		       "to running, bpf-wakeup rows: wake-up to running (BPF, from outside); schedstat rows (no BPF): "
		       "the mean run-queue wait per run since registration\n", tv(proto_get(m, "preempt") ?: "?"),
		       tv(proto_get(m, "cpu_dma_latency") ?: "?"), rl && strcmp(rl, "off") ? ", resume latency " : "",
		       rl && strcmp(rl, "off") ? tv(rl) : "", iso ? ", CPU " : "", iso ? tv(iso) : "", iso ? " isolated" : "");
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

/* check: rebuild the daemon's report to print it as rtschedd --check does. */
static int on_check(void *ud, const struct proto_msg *m)
{
	struct diag_report *r = ud;
	long n;

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

/* A refusal (ERR): its code and message, and the diagnosis, JSON or text. */
static void print_refusal(const struct proto_msg *m)
{
	const char *sp = strchr(m->rest, ' '), *diag = proto_get(m, "diag");
	char code[32];

	if (!json) {
		fprintf(stderr, "rtschedctl: refused: %s\n", tv(m->rest));
		if (diag)
			fprintf(stderr, "rtschedctl: diagnosis: %s (rtschedctl check shows the whole report)\n", tv(diag));
		return;
	}
	snprintf(code, sizeof(code), "%.*s", sp ? (int)(sp - m->rest) : (int)strlen(m->rest), m->rest);
	printf("{\"error\":");
	json_string(code);
	printf(",\"message\":");
	json_string(sp ? sp + 1 : "");
	if (diag) {
		printf(",\"diag\":");
		json_string(diag);
	}
	printf("}\n");
}

/* A command's reply handler and its data; an ERR is printed for all. */
struct reply {
	int (*on_msg)(void *ud, const struct proto_msg *m);
	void *ud;
};

static int on_reply(void *ud, const struct proto_msg *m)
{
	const struct reply *x = ud;

	if (strcmp(m->head, "ERR") == 0) {
		print_refusal(m);
		return 0;
	}
	return x->on_msg(x->ud, m);
}

/* Send the command's request, hand each reply message to ON_MSG with UD;
 * the exit status: 0, EXIT_REFUSED (an ERR, printed) or EXIT_UNREACHABLE. */
static int exchange(const struct ctl *c, int (*on_msg)(void *ud, const struct proto_msg *m), void *ud)
{
	struct reply x = { on_msg, ud };
	int fd, r, perr = -1;

	fd = client_connect(c->socket);
	if (fd == -EPERM) {
		fprintf(stderr, "rtschedctl: %s is served by a process that is neither root, user %s nor you: "
			"not trusting its answers; remove the file and restart rtschedd, or use --socket\n",
			client_socket_path(c->socket), RTSCHED_DAEMON_USER);
		return EXIT_UNREACHABLE;
	}
	if (fd < 0) {
		fprintf(stderr, "rtschedctl: cannot connect to %s: %s; is rtschedd running?\n",
			client_socket_path(c->socket), strerror(-fd));
		return EXIT_UNREACHABLE;
	}
	r = client_call(fd, c->req.data, c->req.len, on_reply, &x, &perr);
	close(fd);
	if (r == 0)
		return 0;
	if (perr >= 0) /* the daemon answered ERR: already printed */
		return EXIT_REFUSED;
	fprintf(stderr, "rtschedctl: %s: %s\n", client_socket_path(c->socket), strerror(-r));
	return EXIT_UNREACHABLE;
}

/* register, unregister: a target is required. */
static int cmd_target(struct ctl *c)
{
	if (!opt(c, "tid") && !opt(c, "pid"))
		usage_error("%s needs --tid TID or --pid PID", c->cmd->name);
	return exchange(c, on_fields, NULL);
}

/* status, reload: the reply's fields. */
static int cmd_fields(struct ctl *c)
{
	return exchange(c, on_fields, NULL);
}

/* version: rtschedctl's own, then the daemon's fields. */
static int cmd_version(struct ctl *c)
{
	if (!json)
		printf("rtschedctl %s\n", PACKAGE_VERSION);
	return exchange(c, on_fields, NULL);
}

static int cmd_list(struct ctl *c)
{
	int r = exchange(c, json ? on_array : on_list, NULL);

	list_free(); /* rows of a reply that ended without its OK */
	if (r == 0 && !json && first_row)
		printf("no managed threads\n");
	return r;
}

static int cmd_metrics(struct ctl *c)
{
	return exchange(c, on_metrics, NULL);
}

/* jitter: the rows; --reset clears them instead; --histogram draws one. */
static int cmd_jitter(struct ctl *c)
{
	struct bins bins = { .count = 0 };
	int r;

	if (opt(c, "reset") && opt(c, "histogram"))
		usage_error("jitter takes --reset or --histogram, not both");
	if (opt(c, "reset")) {
		proto_begin(&c->req, PROTO_REQUEST_HEAD);
		proto_add(&c->req, "op", "jitter-reset");
		return exchange(c, on_fields, NULL);
	}
	if (json)
		return exchange(c, on_array, NULL);
	if (!opt(c, "histogram"))
		return exchange(c, on_jitter, NULL);
	/* 1-2-5 bins from 100 ns to 10 s */
	for (double dec = 100; dec < 1e10 && bins.count < 38; dec *= 10)
		for (int k = 0; k < 3; k++)
			bins.edge[bins.count++] = dec * (k == 0 ? 1 : k == 1 ? 2 : 5);
	bins.edge[0] = 0;
	r = exchange(c, on_hist, &bins);
	if (r == 0)
		draw_hist(&bins);
	return r;
}

/* check: the daemon's report, printed as rtschedd --check does; exit 1
 * when a finding is an error. */
static int cmd_check(struct ctl *c)
{
	struct diag_report report;
	int r;

	diag_report_init(&report);
	r = exchange(c, on_check, &report);
	if (r == 0) {
		if (json)
			diag_print_json(&report, stdout);
		else
			diag_print_text(&report, stdout);
		if (diag_report_worst(&report) == DIAG_ERROR)
			r = EXIT_REFUSED;
	}
	diag_report_free(&report);
	return r;
}

/* why TID|NAME: the thread's late wake-ups, their culprits, a verdict. */
static int cmd_why(struct ctl *c)
{
	struct why_state ws = { .json = json };

	if (!c->operand)
		usage_error("why needs the thread: a TID or a NAME (rtschedctl list shows them)");
	return exchange(c, why_on_msg, &ws);
}

/* The commands: to add one, a row here and its handler above (and its
 * entry in rtschedctl(1)). */
/* run's error that is not a usage error: say it and exit with status. */
static void run_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void run_fail(int status, const char *fmt, ...)
{
	va_list ap;

	fputs("rtschedctl: run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* The file execvp would run for name: name itself if it has a '/', else
 * the first executable one in $PATH (into buf). 0, or -errno: -ENOENT if
 * there is none, -EACCES if one exists but may not be executed. */
static int find_program(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;
	int r = -ENOENT;

	if (strchr(name, '/')) {
		if (snprintf(buf, len, "%s", name) >= (int)len)
			return -ENAMETOOLONG;
		return access(buf, X_OK) == 0 ? 0 : -errno;
	}
	for (p = path && *path ? path : "/usr/local/bin:/bin:/usr/bin"; p; p = *end ? end + 1 : NULL) {
		struct stat st;
		end = strchrnul(p, ':');
		/* an empty element is the current directory */
		if (snprintf(buf, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", name) >= (int)len)
			continue;
		if (stat(buf, &st) < 0 || S_ISDIR(st.st_mode))
			continue;
		if (access(buf, X_OK) == 0)
			return 0;
		r = -EACCES;
	}
	return r;
}

/* run --rule NAME, before anything is executed: the daemon's check of the
 * rule for this process (which becomes the program, with its user and its
 * limits). A refusal the program could do nothing about (no such rule,
 * the rule's policy, priority, CPUs or nice beyond the user's limits, its
 * RLIMIT_RTTIME 0) exits EXIT_RULE_REFUSED with the code and fix; a
 * passing one (the quota, the watchdog's cooldown) is the program's first
 * call's to say. A daemon that cannot be reached refuses nothing: the
 * program runs, and its calls get the kernel's answer. */
static bool refuses_rule(const char *code)
{
	switch (proto_error_from_code(code)) {
	case PE_UNKNOWN_ROLE: case PE_POLICY_DENIED: case PE_PRIORITY_DENIED: case PE_CPU_DENIED:
	case PE_NICE_DENIED: case PE_ABOVE_MAX: case PE_RTPRIO_CAP: case PE_RTTIME_ZERO:
		return true;
	default:
		return false;
	}
}

static void run_check_rule(struct ctl *c, const char *rule)
{
	struct diag_report rep;
	int r;

	proto_begin(&c->req, PROTO_REQUEST_HEAD);
	proto_add(&c->req, "op", "check");
	proto_add(&c->req, "role", rule);
	diag_report_init(&rep);
	r = exchange(c, on_check, &rep);
	if (r == EXIT_UNREACHABLE)
		fprintf(stderr, "rtschedctl: run: --rule %s not checked; the program runs, and its scheduling calls "
			"get the kernel's answer until rtschedd answers\n", rule);
	else if (r != 0) /* the check itself refused (its reason printed above): the calls will say more */
		fprintf(stderr, "rtschedctl: run: --rule %s not checked; the program runs\n", rule);
	for (size_t i = 0; r == 0 && i < rep.n; i++)
		if (rep.v[i].severity == DIAG_ERROR && refuses_rule(rep.v[i].code)) {
			fprintf(stderr, "rtschedctl: run: --rule %s: %s: %s; %s\n", rule, rep.v[i].code,
				rep.v[i].message, rep.v[i].fix);
			diag_report_free(&rep);
			exit(EXIT_RULE_REFUSED);
		}
	diag_report_free(&rep);
}

/* run: exec the program with the preload library, which turns its own
 * scheduling calls the kernel refuses into requests to rtschedd (see
 * src/preload/preload.c); with --rule, the daemon is asked first whether
 * the rule may be the user's (run_check_rule). */
static int cmd_run(struct ctl *c)
{
	const char *rule = opt(c, "rule"), *lib = getenv("RTSCHED_PRELOAD"), *old = getenv("LD_PRELOAD");
	char file[4096], *preload;
	struct stat st;
	int r;

	if (c->argc < 1)
		usage_error("run needs a program: rtschedctl run [--rule NAME] -- PROGRAM [ARGS...]");
	if (rule && (!*rule || strlen(rule) > 63 || strpbrk(rule, " =%\n")))
		usage_error("--rule must name a [rule NAME] of rtschedd.conf: 1..63 characters, no blanks, '=' or '%%'");
	if (!lib || !*lib)
		lib = PRELOAD_PATH;
	if (lib[0] != '/' || access(lib, R_OK) < 0)
		run_fail(EXIT_NO_PRELOAD, "the preload library %s cannot be read (%s); reinstall rtschedd, or set "
			 "RTSCHED_PRELOAD to the full path of librtsched-preload.so", lib,
			 lib[0] != '/' ? "not a full path" : strerror(errno));
	if ((r = find_program(c->argv[0], file, sizeof(file))) < 0)
		run_fail(r == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "%s: %s; %s", c->argv[0],
			 r == -ENOENT ? (strchr(c->argv[0], '/') ? "no such file" : "not found in $PATH") : strerror(-r),
			 r == -ENOENT ? "give the program's full path, or install it" : "make it executable (chmod +x)");
	if (rule)
		run_check_rule(c, rule);
	if (stat(file, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		fprintf(stderr, "rtschedctl: run: warning: %s is set-user-ID or set-group-ID: the loader ignores "
			"LD_PRELOAD for it, so its calls are not turned into requests to rtschedd; register its "
			"threads with a [rule] instead\n", file);
	/* after any LD_PRELOAD the caller set, as the issue asks: theirs stay first */
	if (old && *old && strstr(old, lib)) {
		preload = strdup(old);
	} else if (old && *old) {
		if (asprintf(&preload, "%s:%s", old, lib) < 0)
			preload = NULL;
	} else {
		preload = strdup(lib);
	}
	if (!preload || setenv("LD_PRELOAD", preload, 1) < 0 || (rule && setenv("RTSCHED_RUN_RULE", rule, 1) < 0) ||
	    (c->socket && setenv(PROTO_SOCKET_ENV, c->socket, 1) < 0))
		run_fail(EXIT_CANNOT_EXEC, "cannot set the environment: %s", strerror(errno));
	free(preload);
	if (!rule)
		unsetenv("RTSCHED_RUN_RULE"); /* not one inherited from an outer run */
	execv(file, c->argv);
	r = errno;
	run_fail(r == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC, "cannot execute %s: %s", file, strerror(r));
}

static const struct ctl_opt target_opts[] = {
	{ "tid", "TID", "tid" }, { "pid", "PID", "pid" }, { NULL },
};
static const struct ctl_opt no_opts[] = { { NULL } };

static const struct ctl_cmd cmd_register = {
	"register",
	"(--tid TID | --pid PID) [--role NAME] [--policy P] [--priority N]\n"
	"         [--nice N] [--cpus LIST]",
	"give a thread or process its scheduling",
	(const struct ctl_opt[]){
		{ "tid", "TID", "tid" }, { "pid", "PID", "pid" }, { "role", "NAME", "role" },
		{ "policy", "P", "policy" }, { "priority", "N", "priority" }, { "nice", "N", "nice" },
		{ "cpus", "LIST", "cpus" }, { NULL },
	},
	cmd_target,
};
static const struct ctl_cmd cmd_unregister = {
	"unregister", "(--tid TID | --pid PID)", "give back what it had before", target_opts, cmd_target,
};
static const struct ctl_cmd cmd_list_row = {
	"list", "[--all]",
	"the managed threads (--all: and the last refused\nor restored ones that still exist)",
	(const struct ctl_opt[]){ { "all", NULL, "all" }, { NULL } }, cmd_list,
};
static const struct ctl_cmd cmd_status = { "status", "", "the daemon's state", no_opts, cmd_fields };
static const struct ctl_cmd cmd_reload = { "reload", "", "reload the configuration", no_opts, cmd_fields };
static const struct ctl_cmd cmd_version_row = {
	"version", "", "versions of rtschedctl and rtschedd", no_opts, cmd_version,
};
static const struct ctl_cmd cmd_jitter_row = {
	"jitter", "[--histogram [KIND:]NAME|TID] [--reset]", "observed wake-up latency per thread and probe",
	(const struct ctl_opt[]){ { "histogram", "NAME", "histogram" }, { "reset", NULL, NULL }, { NULL } },
	cmd_jitter,
};
static const struct ctl_cmd cmd_metrics_row = {
	"metrics", "", "the Prometheus text exposition", no_opts, cmd_metrics,
};
static const struct ctl_cmd cmd_why_row = {
	"why", "TID|NAME", "what made a thread's or a probe's wake-ups late:\nits culprits, the worst case, a verdict",
	no_opts, cmd_why, "thread",
};
static const struct ctl_cmd cmd_check_row = {
	"check", "[--pid PID | --user USER] [--policy P] [--priority N] [--cpus LIST]",
	"why a thread can or cannot be real-time,\neach finding with its fix (exit 1 on errors)",
	(const struct ctl_opt[]){
		{ "pid", "PID", "pid" }, { "user", "USER", "user" }, { "policy", "P", "policy" },
		{ "priority", "N", "priority" }, { "cpus", "LIST", "cpus" }, { NULL },
	},
	cmd_check,
};
static const struct ctl_cmd cmd_run_row = {
	"run", "[--rule NAME] -- PROGRAM [ARGS...]",
	"run a program whose own real-time calls the\nkernel refuses: rtschedd grants them (preload)",
	(const struct ctl_opt[]){ { "rule", "NAME", NULL }, { NULL } },
	cmd_run,
};
static const struct ctl_cmd *const commands[] = {
	&cmd_register, &cmd_unregister, &cmd_list_row, &cmd_status, &cmd_reload, &cmd_version_row,
	&cmd_jitter_row, &cmd_metrics_row, &cmd_why_row, &cmd_check_row, &cmd_run_row, NULL,
};

/* "--a, --b or --json": the options of command C, for an error message. */
static void opt_names(const struct ctl_cmd *c, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; c->opts[i].name && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "--%s, ", c->opts[i].name);
	if (n < len)
		snprintf(buf + n, len - n, "--json");
}

/* The command's options (after its name, argv[0]) into c->val and the request. */
static void parse_cmd_opts(struct ctl *c, int argc, char **argv)
{
	enum { OPT_JSON = 1, OPT_ROW = 256 };
	struct option lo[CTL_OPTS_MAX + 2];
	const struct ctl_opt *o = c->cmd->opts;
	char names[256];
	size_t n;
	int k;

	for (n = 0; o[n].name; n++)
		lo[n] = (struct option){ o[n].name, o[n].arg ? required_argument : no_argument, NULL, OPT_ROW + (int)n };
	lo[n++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	lo[n] = (struct option){ 0 };
	/* 0, not 1: glibc starts afresh, permuting again (the global options stopped at the command);
	 * run's "+": its options end at the first operand (the program) or at "--" */
	optind = 0;
	while ((k = getopt_long(argc, argv, c->cmd == &cmd_run_row ? "+:" : ":", lo, NULL)) != -1) {
		if (k == OPT_JSON) {
			json = true;
		} else if (k == ':') {
			usage_error("%s needs a value", argv[optind - 1]);
		} else if (k < OPT_ROW) {
			opt_names(c->cmd, names, sizeof(names));
			usage_error("unknown option '%s' for %s (it takes %s)", argv[optind - 1], c->cmd->name, names);
		} else {
			k -= OPT_ROW;
			c->val[k] = optarg ? optarg : "";
			if (o[k].field)
				proto_add(&c->req, o[k].field, optarg ? optarg : "1");
		}
	}
	if (c->cmd->operand && optind < argc) {
		c->operand = argv[optind++];
		proto_add(&c->req, c->cmd->operand, c->operand);
	}
	/* only run takes more operands: the program and its arguments */
	if (optind < argc && c->cmd != &cmd_run_row)
		usage_error("unexpected argument '%s'", argv[optind]);
	c->argc = argc - optind;
	c->argv = argv + optind;
	if (c->req.overflow)
		usage_error("request too long");
}

int main(int argc, char **argv)
{
	static const struct option global[] = {
		{ "socket", required_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { "version", no_argument, NULL, 'V' }, { 0 },
	};
	struct ctl c = { .cmd = NULL };
	int o;

	opterr = 0; /* our own one-line messages */
	/* global options stop at the command name */
	while ((o = getopt_long(argc, argv, "+:s:jhV", global, NULL)) != -1) {
		switch (o) {
		case 's': c.socket = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rtschedctl %s\n", PACKAGE_VERSION); return 0;
		case ':': usage_error("%s needs a value", argv[optind - 1]);
		default: usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("no command given");
	for (size_t i = 0; commands[i] && !c.cmd; i++)
		if (strcmp(commands[i]->name, argv[optind]) == 0)
			c.cmd = commands[i];
	if (!c.cmd)
		usage_error("unknown command '%s'", argv[optind]);
	proto_begin(&c.req, PROTO_REQUEST_HEAD);
	proto_add(&c.req, "op", c.cmd->name);
	parse_cmd_opts(&c, argc - optind, argv + optind);
	return c.cmd->run(&c);
}
