/* rtschedctl.c: the command-line client of rtschedd. Each command is one
 * request; output is a readable table or, with --json, JSON.
 * Exit codes: 0 success, 1 the daemon refused, 2 cannot reach the daemon,
 * 64 usage error. */
#include "autoconfig.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/client.h"
#include "../common/protocol.h"

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
		"  list                                     the managed threads\n"
		"  status                                   the daemon's state\n"
		"  reload                                   reload the configuration\n"
		"  version                                  versions of rtschedctl and rtschedd\n"
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
					    "match_rules", "scan_tasks", "scan_us" };
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (strcmp(k, nums[i]) == 0)
			return true;
	return false;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
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

/* list: one table row per ROW message. */
static int on_list(void *ud, const struct proto_msg *m)
{
	const char *cols[] = { "tid", "pid", "comm", "policy", "priority", "nice", "cpus", "rule", "source", "owner" };
	const int width[] = { 7, 7, 16, 6, 4, 4, 10, 12, 7, 5 };

	if (strcmp(m->head, "ROW") != 0)
		return 0;
	if (json) {
		printf("%s", first_row ? "" : ",");
		json_object(m);
		first_row = false;
		return 0;
	}
	if (first_row) {
		printf("%-7s %-7s %-16s %-6s %-4s %-4s %-10s %-12s %-7s %s\n", "TID", "PID", "COMM", "POLICY",
		       "PRIO", "NICE", "CPUS", "RULE", "SOURCE", "OWNER");
		first_row = false;
	}
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		const char *v = proto_get(m, cols[i]);
		printf(i + 1 < sizeof(cols) / sizeof(cols[0]) ? "%-*s " : "%-*s\n", width[i], v ? v : "-");
	}
	return 0;
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
		printf("%-20s %s\n", m->f[i].key, m->f[i].value);
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
			printf("}\n");
		} else {
			fprintf(stderr, "rtschedctl: refused: %s\n", m->rest);
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
	const char *socket = NULL, *cmd;
	int (*handler)(void *, const struct proto_msg *) = on_fields;
	struct proto_buf b;
	int opt, fd, r;

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

	proto_begin(&b, "v=1");
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
			default: usage_error("unknown option '%s' for %s", argv[optind - 1], cmd);
			}
			if (!reg && opt != 't' && opt != 'p')
				usage_error("unregister takes only --tid or --pid");
			proto_add(&b, key, optarg);
		}
		if (!target)
			usage_error("%s needs --tid TID or --pid PID", cmd);
	} else if (strcmp(cmd, "list") == 0 || strcmp(cmd, "status") == 0 || strcmp(cmd, "reload") == 0 ||
		   strcmp(cmd, "version") == 0) {
		while ((opt = getopt_long(argc, argv, "", cmdopts + 7, NULL)) != -1) {
			if (opt != 'j')
				usage_error("%s takes no options", cmd);
			json = true;
		}
		if (cmd[0] == 'l')
			handler = on_list;
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
	if (fd < 0) {
		fprintf(stderr, "rtschedctl: cannot connect to %s: %s; is rtschedd running?\n",
			client_socket_path(socket), strerror(-fd));
		return EXIT_UNREACHABLE;
	}
	if (handler == on_list && json)
		printf("[");
	r = client_call(fd, b.data, b.len, on_any, (void *)handler, NULL);
	close(fd);
	if (handler == on_list && json)
		printf("]\n");
	if (handler == on_list && !json && first_row && r == 0)
		printf("no managed threads\n");
	if (r == 0)
		return 0;
	if (r == -ETIMEDOUT || r == -ECONNRESET || r == -EPROTO || r == -EPIPE) {
		fprintf(stderr, "rtschedctl: %s: %s\n", client_socket_path(socket), strerror(-r));
		return EXIT_UNREACHABLE;
	}
	return EXIT_REFUSED;
}
