/* main.c: rtschedd's command line (the flags of OLA's olad plus the daemon's
 * own), then the daemon. Usage errors exit 64 with one line saying what to
 * type instead. */
#include "autoconfig.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdnoreturn.h>

#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/daemon.h"
#include "daemon/diag/diag.h"
#include "daemon/watchdog/safety.h"
#include "daemon/core/rlimit.h"
#include "daemon/cpu/cpucheck.h"
#include "daemon/irq/irqcheck.h"
#include "daemon/observe/bpfcheck.h"

#define DEFAULT_CONFIG SYSCONFDIR "/rtschedd.conf"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rtschedd [OPTION]...\n"
		"Give real-time scheduling to registered media and lighting threads.\n\n"
		"  --scheduler-policy POLICY   default policy: fifo, rr, other, batch or idle\n"
		"  --scheduler-priority N      default priority (1..99 for fifo and rr, 0 otherwise);\n"
		"                              give both flags or neither\n"
		"  -c, --config PATH           configuration file (default %s,\n"
		"                              plus drop-ins in PATH's .d directory)\n"
		"  -s, --socket PATH           control socket (default from the configuration)\n"
		"  -t, --test-config           check the configuration, print it and exit (0 or 1)\n"
		"  --check [--pid PID | --user USER] [--json]\n"
		"                              diagnose why threads can or cannot be real-time and\n"
		"                              print each finding with its fix; exit 1 on errors\n"
		"  -l, --log-level LEVEL       err, warning, notice, info or debug\n"
		"  -V, --version               print the version and exit\n"
		"  -h, --help                  print this help and exit\n\n"
		"The daemon runs in the foreground. Exit codes: 0 success, 1 invalid\n"
		"configuration, 64 usage error, 71 system error. See rtschedd(8).\n",
		DEFAULT_CONFIG);
}

/* One line on stderr, then exit 64. */
__attribute__((format(printf, 1, 2)))
static noreturn void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rtschedd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

/* --scheduler-policy/--scheduler-priority, checked the way olad checks them. */
static void parse_sched_flags(const char *pol_s, const char *prio_s, struct overrides *o)
{
	int lo, hi;
	long prio;
	char *end;

	if (!pol_s && !prio_s)
		return;
	if (!prio_s)
		usage_error("--scheduler-policy needs --scheduler-priority too; type e.g. "
			    "--scheduler-policy %s --scheduler-priority 10", pol_s);
	if (!pol_s)
		usage_error("--scheduler-priority needs --scheduler-policy too; type e.g. "
			    "--scheduler-policy fifo --scheduler-priority %s", prio_s);
	o->policy = policy_from_string(pol_s);
	if (o->policy < 0)
		usage_error("unknown --scheduler-policy '%s'; use one of %s", pol_s, policy_names());
	if (policy_priority_range(o->policy, &lo, &hi) < 0)
		usage_error("the kernel does not support policy %s", pol_s);
	errno = 0;
	prio = strtol(prio_s, &end, 10);
	if (end == prio_s || *end)
		usage_error("--scheduler-priority '%s' is not a number; use --scheduler-priority N "
			    "with N in %d..%d for %s", prio_s, lo, hi, policy_to_string(o->policy));
	if (errno || prio < lo || prio > hi) {
		if (lo == 0)
			usage_error("--scheduler-priority %s is out of range for %s; use "
				    "--scheduler-priority 0 (set niceness with 'nice =' in the config)",
				    prio_s, policy_to_string(o->policy));
		usage_error("--scheduler-priority %s is out of range for %s; use a value in %d..%d",
			    prio_s, policy_to_string(o->policy), lo, hi);
	}
	o->priority = (int)prio;
	o->has_sched = true;
}

/* rtschedd --check: the diagnosis of this machine (and a process or a
 * user) for the default policy; exit 1 when a finding is an error. */
static int run_check(const struct config *c, pid_t pid, const char *user, bool json)
{
	struct diag_target t = { .pid = pid, .user = user, .policy = c->dflt.policy, .priority = c->dflt.priority,
				 .cpus = c->dflt.has_cpus ? &c->dflt.cpus : NULL,
				 .self_rt_pct = safety_self_share(c->loop_priority, c->loop_budget, c->watchdog) };
	struct diag_report rep;
	int r;

	struct diag_env env = { .limits_conf = c->limits_conf, .limits_dir = c->limits_dir };
	diag_report_init(&rep);
	r = diag_run(&env, &t, &rep);
	if (r == 0 && (r = bpfcheck_run(&rep, c->observe_threads)) == 0 &&
	    (r = bpfcheck_catcher_run(&rep, c->catch_refused)) == 0 &&
	    (r = cpucheck_run(NULL, c, NULL, NULL, &rep)) == 0 &&
	    (r = irqcheck_run(NULL, c, NULL, NULL, &rep)) == 0 &&
	    (r = rlimit_check_add(&rep, c, rlimit_capable(), false)) == 0)
		diag_report_sort(&rep);
	if (r < 0) {
		fprintf(stderr, "rtschedd: --check: %s%s\n", strerror(-r),
			r == -ESRCH ? " (no such process)" : r == -ENOENT ? " (no such user?)" : "");
		diag_report_free(&rep);
		return EXIT_OSERR;
	}
	if (json)
		diag_print_json(&rep, stdout);
	else
		diag_print_text(&rep, stdout);
	r = diag_report_worst(&rep) == DIAG_ERROR ? EXIT_CONFIG : EXIT_OK;
	diag_report_free(&rep);
	return r;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "scheduler-policy", required_argument, NULL, 'P' },
		{ "scheduler-priority", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "test-config", no_argument, NULL, 't' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "version", no_argument, NULL, 'V' },
		{ "check", no_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'I' },
		{ "user", required_argument, NULL, 'U' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct overrides o = { .log_level = -1 };
	bool flag_fault = false;
	const char *pol_s = NULL, *prio_s = NULL, *config_path = DEFAULT_CONFIG;
	bool config_given = false, test_only = false, check = false, json = false;
	const char *check_user = NULL;
	long check_pid = 0;
	struct config *c = NULL;
	struct daemon *d = NULL;
	int opt, r;

	/* Drop-in order and messages must not depend on the caller's locale. */
	setlocale(LC_ALL, "C");
#ifdef M_MMAP_THRESHOLD
	/* Buffers of 128 KiB and more (the watchdog's copy of the managed
	 * threads, rebuilt every 100 ms while they change; a `list` reply) are
	 * mapped and given back when freed. By default glibc raises this
	 * threshold at the first such free, after which they came from the heap,
	 * and the holes they left stayed resident: ~250 bytes per managed thread
	 * at 10,000 threads (bench-footprint). Setting it turns that off. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:s:tl:Vh", options, NULL)) != -1) {
		switch (opt) {
		case 'P': pol_s = optarg; break;
		case 'p': prio_s = optarg; break;
		case 'c': config_path = optarg; config_given = true; break;
		case 's':
			if (optarg[0] != '/' || strlen(optarg) >= CONFIG_SOCKET_MAX)
				usage_error("--socket '%s' must be an absolute path shorter than %zu bytes",
					    optarg, CONFIG_SOCKET_MAX);
			o.socket = optarg;
			break;
		case 't': test_only = true; break;
		case 'C': check = true; break;
		case 'J': json = true; break;
		case 'U': check_user = optarg; break;
		case 'I': {
			char *end;
			check_pid = strtol(optarg, &end, 10);
			if (*end || check_pid <= 0)
				usage_error("--pid '%s' is not a process id", optarg);
			break;
		}
		case 'l':
			o.log_level = log_level_from_string(optarg);
			if (o.log_level < 0)
				usage_error("unknown --log-level '%s'; use err, warning, notice, info or debug",
					    optarg);
			break;
		case 'V':
			printf("rtschedd %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case ':':
			usage_error("%s needs a value; see rtschedd --help", argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'; see rtschedd --help", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'; rtschedd takes only options, see rtschedd --help",
			    argv[optind]);
	parse_sched_flags(pol_s, prio_s, &o);
	if (!check && (check_pid || check_user || json))
		usage_error("--pid, --user and --json go with --check; type rtschedd --check --pid PID");

	log_init("rtschedd", o.log_level >= 0 ? o.log_level : LOG_LEVEL_INFO);
	r = daemon_load_config(config_path, config_given, &o, &c, &flag_fault);
	if (r < 0 && flag_fault) /* a flag conflicts with the config; the line is logged */
		return EXIT_USAGE;
	if (r < 0) {
		log_err("%s: configuration not valid%s", config_path,
			test_only ? "" : "; rtschedd did not start");
		return EXIT_CONFIG;
	}
	if (check) {
		r = run_check(c, (pid_t)check_pid, check_user, json);
		config_free(c);
		return r;
	}
	if (test_only) {
		config_print(c, stdout);
		config_free(c);
		return EXIT_OK;
	}
	r = daemon_new(&d, config_path, config_given, &o, c);
	if (r < 0)
		return EXIT_OSERR;
	r = daemon_run(d);
	daemon_free(d);
	return r;
}
