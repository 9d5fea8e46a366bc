/*
 * diag-query.c - run the diagnosis module from a script (tests/diag.sh)
 *
 * usage: diag-query [OPTION]... (--self | --pid PID | --user USER | --system)
 *   --json                 print the report as JSON (default: text)
 *   --policy P --priority N --cpus LIST   the request to diagnose
 *   --user USER            with --pid: whose limits.conf grant to compare
 *   --apply                set --cpus (sched_setaffinity) and the policy
 *                          (sched_setscheduler) on --pid and, if the kernel
 *                          refuses, print diag_explain()'s line
 *   --explain ERRNO        print diag_explain()'s line for --pid and ERRNO
 *   --what CALL            the call --explain is about (sched_setaffinity)
 *   --proc DIR --sys DIR --cgroup DIR --cmdline FILE --unit-path PATH
 *   --limits-conf FILE --limits-dir DIR      fake trees instead of the real
 *   --seccomp-deny-rt      first install a seccomp filter that fails
 *                          sched_setscheduler and sched_setattr with EPERM
 *   --sleep SECONDS        then only sleep: a filtered target for a test
 * Exit: 0 no error finding (or applied), 1 error findings (or refused),
 * 2 usage, 3 the diagnosis failed.
 */
#include "autoconfig.h"

#include <errno.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/diag/diag.h"

/* Fail sched_setscheduler and sched_setattr with EPERM, as systemd's
 * RestrictRealtime=yes does for real-time policies.  No architecture check:
 * the filter only ever denies, so a foreign syscall table cannot widen it. */
static int deny_rt(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setscheduler, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setattr, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return -errno;
	return 0;
}

/* Say how to call it, then exit 2. */
static void usage(void)
{
	fputs("usage: diag-query [--json] [--policy P --priority N] [--cpus LIST] [--apply | --explain ERRNO]\n"
	      "       [--proc D --sys D --cgroup D --cmdline F --unit-path P --limits-conf F --limits-dir D]\n"
	      "       [--seccomp-deny-rt [--sleep S]] (--self | --pid PID | --user USER | --system)\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "self", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' }, { "user", required_argument, NULL, 'u' },
		{ "system", no_argument, NULL, 'S' }, { "policy", required_argument, NULL, 'P' },
		{ "priority", required_argument, NULL, 'n' }, { "cpus", required_argument, NULL, 'c' },
		{ "apply", no_argument, NULL, 'a' }, { "explain", required_argument, NULL, 'e' },
		{ "what", required_argument, NULL, 'w' }, { "proc", required_argument, NULL, 1 },
		{ "sys", required_argument, NULL, 2 }, { "cgroup", required_argument, NULL, 3 },
		{ "cmdline", required_argument, NULL, 4 }, { "unit-path", required_argument, NULL, 5 },
		{ "limits-conf", required_argument, NULL, 6 }, { "limits-dir", required_argument, NULL, 7 },
		{ "seccomp-deny-rt", no_argument, NULL, 8 }, { "sleep", required_argument, NULL, 9 },
		{ NULL, 0, NULL, 0 },
	};
	struct diag_env env = { 0 };
	struct diag_target t = { .policy = -1 };
	struct diag_report rep;
	cpu_set_t cpus;
	const char *what = NULL;
	bool json = false, apply = false, have_target = false, seccomp = false;
	int explain = 0, sleep_s = -1, o, r;
	char line[1024];

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json = true; break;
		case 's': t.pid = getpid(); have_target = true; break;
		case 'p': t.pid = atoi(optarg); have_target = true; break;
		case 'u': t.user = optarg; have_target = true; break;
		case 'S': have_target = true; break;
		case 'P':
			if ((t.policy = policy_from_string(optarg)) < 0)
				usage();
			break;
		case 'n': t.priority = atoi(optarg); break;
		case 'c':
			if (cpulist_parse(optarg, &cpus, NULL) < 0)
				usage();
			t.cpus = &cpus;
			break;
		case 'a': apply = true; break;
		case 'e': explain = atoi(optarg); break;
		case 'w': what = optarg; break;
		case 1: env.proc = optarg; break;
		case 2: env.sys = optarg; break;
		case 3: env.cgroup = optarg; break;
		case 4: env.cmdline = optarg; break;
		case 5: env.unit_path = optarg; break;
		case 6: env.limits_conf = optarg; break;
		case 7: env.limits_dir = optarg; break;
		case 8: seccomp = true; break;
		case 9: sleep_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (seccomp && (r = deny_rt()) < 0) {
		fprintf(stderr, "diag-query: seccomp: %s\n", strerror(-r));
		return 3;
	}
	if (sleep_s >= 0) {
		sleep((unsigned)sleep_s);
		return 0;
	}
	if (!have_target || optind != argc)
		usage();
	if (apply) {
		struct sched_param sp = { .sched_priority = t.priority };

		if (t.pid <= 0 || (t.policy < 0 && !t.cpus))
			usage();
		/* the daemon's order: the affinity first, then the policy */
		if (t.cpus && sched_setaffinity(t.pid, sizeof(cpus), &cpus) < 0) {
			explain = errno;
			what = "sched_setaffinity";
		} else if (t.policy >= 0 && sched_setscheduler(t.pid, t.policy, &sp) < 0) {
			explain = errno;
		} else {
			printf("applied to %d\n", (int)t.pid);
			return 0;
		}
	}
	if (explain) {
		char code[DIAG_CODE_MAX];
		r = diag_explain(&env, &t, what, explain, line, sizeof(line), code);
		printf("%s: %s; %s%s%s%s\n", apply ? "apply failed" : "explain", strerror(explain), line,
		       code[0] ? " [" : "", code, code[0] ? "]" : "");
		return r == 0 ? 1 : r == -ENOENT ? 1 : 3;
	}
	r = diag_run(&env, &t, &rep);
	if (r < 0) {
		fprintf(stderr, "diag-query: %s\n", strerror(-r));
		diag_report_free(&rep);
		return 3;
	}
	if (json)
		diag_print_json(&rep, stdout);
	else
		diag_print_text(&rep, stdout);
	r = diag_report_worst(&rep) == DIAG_ERROR;
	diag_report_free(&rep);
	return fflush(stdout) == 0 ? r : 3;
}
