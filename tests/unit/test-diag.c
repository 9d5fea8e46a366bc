/* test-diag.c: the diagnosis module against fake /proc, /sys and /etc
 * trees (tests/fixtures/diag): the kernel command line parsers, every
 * finding code with its severity and fix, diag_explain() for each cause,
 * and the report printers.  Each finding test starts from the healthy
 * fixtures/diag/base and changes only the files its case needs. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "daemon/diag/diag.h"

#define BASE TOP_SRCDIR "/tests/fixtures/diag/base"

/* Each test's tree lives in its own directory under top, which main()
 * removes whatever happened: check skips the teardown of a failed test. */
static char top[64];          /* /tmp/rtschedd-test-diag.XXXXXX */
static char root[96];         /* top/N */
static char p_proc[PATH_MAX + 16], p_sys[PATH_MAX + 16], p_conf[PATH_MAX + 64],
	    p_ldir[PATH_MAX + 64], p_units[3 * PATH_MAX], p_boot[PATH_MAX + 16];
static struct diag_env env;
static struct diag_report rep;

/* mkdir -p of the directory part of path. */
static void mkdirs(const char *path)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
}

/* Write a file of the fake tree (rel to its root), printf-style. */
__attribute__((format(printf, 2, 3)))
static void put(const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX * 2];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(fclose(f), 0);
}

/* Remove a file of the fake tree. */
static void del(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_msg(unlink(path) == 0, "cannot remove %s", path);
}

/* Replace one line (starting with key) of a file of the fake tree. */
static void set_line(const char *rel, const char *key, const char *line)
{
	char path[PATH_MAX * 2], buf[16384], out[16384];
	size_t o = 0, k = strlen(key);
	FILE *f;
	size_t n;
	bool done = false;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (char *p = buf; *p;) {
		size_t len = strcspn(p, "\n");

		if (!done && strncmp(p, key, k) == 0) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s\n", line);
			done = true;
		} else {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s\n", (int)len, p);
		}
		p += len + (p[len] == '\n');
	}
	ck_assert_msg(done, "no line %s in %s", key, rel);
	put(rel, "%s", out);
}

static int self_pct;   /* the target's self_rt_pct */

static void setup(void)
{
	char cmd[PATH_MAX * 2];

	snprintf(root, sizeof(root), "%s/XXXXXX", top);
	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "cp -R '%s/.' '%s' && mkdir -p '%s/etc/security/limits.d' "
		 "'%s/etc/systemd/system' '%s/run/systemd/system'", BASE, root, root, root, root);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(p_proc, sizeof(p_proc), "%s/proc", root);
	snprintf(p_sys, sizeof(p_sys), "%s/sys", root);
	snprintf(p_conf, sizeof(p_conf), "%s/etc/security/limits.conf", root);
	snprintf(p_ldir, sizeof(p_ldir), "%s/etc/security/limits.d", root);
	snprintf(p_units, sizeof(p_units), "%s/etc/systemd/system:%s/run/systemd/system:%s/lib/systemd/system",
		 root, root, root);
	snprintf(p_boot, sizeof(p_boot), "%s/boot", root);
	env = (struct diag_env){ .proc = p_proc, .sys = p_sys, .limits_conf = p_conf,
				 .limits_dir = p_ldir, .unit_path = p_units, .boot = p_boot };
	diag_report_init(&rep);
	self_pct = 0;
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	diag_report_free(&rep);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* Run the diagnosis into rep; cpus is a list or NULL. */
static void run(pid_t pid, const char *user, int policy, int prio, const cpu_set_t *cpus)
{
	struct diag_target t = { .pid = pid, .user = user, .policy = policy, .priority = prio, .cpus = cpus,
				 .self_rt_pct = self_pct };
	int r;

	diag_report_free(&rep);
	r = diag_run(&env, &t, &rep);
	ck_assert_msg(r == 0, "diag_run: %s", strerror(-r));
}

static const struct diag_finding *find(const char *code)
{
	for (size_t i = 0; i < rep.n; i++)
		if (strcmp(rep.v[i].code, code) == 0)
			return &rep.v[i];
	return NULL;
}

/* All findings, for failure messages. */
static const char *dump(void)
{
	static char buf[65536];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	diag_print_text(&rep, f);
	fclose(f);
	snprintf(buf, sizeof(buf), "%s", text);
	free(text);
	return buf;
}

/* The finding must be there with this severity, its message holding m and
 * its fix holding x (either may be NULL; x "" means no fix). */
static const struct diag_finding *expect(const char *code, enum diag_severity sev, const char *m, const char *x)
{
	const struct diag_finding *f = find(code);

	ck_assert_msg(f != NULL, "no %s in:\n%s", code, dump());
	ck_assert_msg(f->severity == sev, "%s is %s, want %s", code, diag_severity_name(f->severity),
		      diag_severity_name(sev));
	if (m)
		ck_assert_msg(strstr(f->message, m), "%s: '%s' not in message: %s", code, m, f->message);
	if (x && !*x)
		ck_assert_msg(f->fix[0] == '\0', "%s has a fix: %s", code, f->fix);
	else if (x)
		ck_assert_msg(strstr(f->fix, x), "%s: '%s' not in fix: %s", code, x, f->fix);
	return f;
}

static void expect_none(const char *code)
{
	ck_assert_msg(find(code) == NULL, "unexpected %s in:\n%s", code, dump());
}

static cpu_set_t *cpus_of(const char *list)
{
	static cpu_set_t s;
	int c;

	CPU_ZERO(&s);
	for (const char *p = list; *p; p++)
		if (sscanf(p, "%d", &c) == 1 && (p == list || p[-1] == ',')) /* single CPUs only */
			CPU_SET(c, &s);
	return &s;
}

/* ------------------------------------------------------------ parsers --- */

START_TEST(test_cmdline)
{
	char v[32];
	cpu_set_t s;

	ck_assert_int_eq(diag_cmdline_param("ro isolcpus=1 quiet isolcpus=domain,2-3\n", "isolcpus", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "domain,2-3");
	ck_assert_int_eq(diag_cmdline_param("ro quiet -- isolcpus=1", "isolcpus", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(diag_cmdline_param("xisolcpus=1 isolcpus", "isolcpus", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(diag_cmdline_param("a=\"b c\" nohz_full=\"1,2\"", "nohz_full", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "1,2");
	ck_assert_int_eq(diag_cmdline_param("a=\"b c\"", "a", v, sizeof(v)), 0);
	ck_assert_str_eq(v, "b c");
	ck_assert_int_eq(diag_cmdline_param("preempt=full", "preempt", v, 4), -ENOSPC);
	ck_assert_int_eq(diag_cmdline_param("", "preempt", v, sizeof(v)), -ENOENT);
	ck_assert_int_eq(diag_parse_cpu_param("domain,managed_irq,2-3,5", &s), 0);
	ck_assert_int_eq(CPU_COUNT(&s), 3);
	ck_assert(CPU_ISSET(2, &s) && CPU_ISSET(3, &s) && CPU_ISSET(5, &s));
	ck_assert_int_eq(diag_parse_cpu_param("nohz,domain", &s), 0);
	ck_assert_int_eq(CPU_COUNT(&s), 0);
	ck_assert_int_eq(diag_parse_cpu_param("1-", &s), -EINVAL);
}
END_TEST


/* ---------------------------------------------------- the checking process --- */

START_TEST(test_base_is_healthy)
{
	run(0, NULL, -1, 0, NULL);
	ck_assert_msg(diag_report_worst(&rep) < DIAG_WARNING, "base has problems:\n%s", dump());
	expect("cap-sys-nice", DIAG_OK, "rtschedd (pid 100)", "");
	expect("rt-throttling", DIAG_INFO, "950000 of every 1000000", NULL);
	expect("preempt-model", DIAG_INFO, "PREEMPT_DYNAMIC", "preempt=full");
	expect("cpu-isolated", DIAG_INFO, "no CPU is isolated", "isolcpus=");
	expect("cpu-nohz-full", DIAG_INFO, "no CPU is nohz_full", "");
	/* arguments after " -- " go to init, not the kernel */
	ck_assert_ptr_null(strstr(find("cpu-isolated")->message, "isolcpus=3"));
	ck_assert_int_eq(rep.pid, 0);
	ck_assert(!rep.has_limits);
}
END_TEST

START_TEST(test_no_cap_sys_nice)
{
	set_line("proc/self/status", "CapEff:", "CapEff:\t0000000000000000");
	run(0, NULL, -1, 0, NULL);
	expect("no-cap-sys-nice", DIAG_ERROR, "has no CAP_SYS_NICE",
	       "systemctl edit rtschedd.service, add the lines [Service] and AmbientCapabilities=CAP_SYS_NICE");
	expect_none("cap-sys-nice");
	/* outside a unit the fix is about the binary */
	put("proc/self/cgroup", "0::/user.slice\n");
	run(0, NULL, -1, 0, NULL);
	expect("no-cap-sys-nice", DIAG_ERROR, NULL, "setcap cap_sys_nice+ep");
	/* without CAP_SYS_NICE (bit 23) in the bounding set setcap cannot help */
	set_line("proc/self/status", "CapBnd:", "CapBnd:\t000001ffff7fffff");
	run(0, NULL, -1, 0, NULL);
	expect("no-cap-sys-nice", DIAG_ERROR, NULL, "not in its bounding set (CapBnd 000001ffff7fffff)");
	ck_assert_ptr_null(strstr(find("no-cap-sys-nice")->fix, "setcap cap"));
}
END_TEST

START_TEST(test_self_restrict_realtime)
{
	/* the vendor unit says yes, an /etc drop-in says no: no */
	put("lib/systemd/system/rtschedd.service", "[Service]\nExecStart=/x\nRestrictRealtime=yes\n");
	put("etc/systemd/system/rtschedd.service.d/50-rt.conf", "[Service]\nRestrictRealtime=no\n");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-restrict-realtime");
	/* a later drop-in (by name) turns it on again; a [Unit] line does not count */
	put("run/systemd/system/rtschedd.service.d/60-harden.conf",
	    "[Unit]\nRestrictRealtime=no\n\n[Service]\n# hardening\nRestrictRealtime = true\n");
	run(0, NULL, -1, 0, NULL);
	expect("self-restrict-realtime", DIAG_ERROR, "60-harden.conf:6", "RestrictRealtime=no");
	/* drop-ins apply in file-name order, whatever their directory;
	 * sections other than [Service] do not count */
	put("etc/systemd/system/rtschedd.service.d/90-late.conf", "[Service]\nRestrictRealtime=no\n"
	    "[Install]\nRestrictRealtime=yes\n");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-restrict-realtime");
	del("etc/systemd/system/rtschedd.service.d/90-late.conf");
	/* the same name in a directory of higher precedence wins */
	put("etc/systemd/system/rtschedd.service.d/60-harden.conf", "[Service]\nRestrictRealtime=\n");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-restrict-realtime");
	/* a unit file in /etc hides the one in /lib */
	del("etc/systemd/system/rtschedd.service.d/60-harden.conf");
	del("etc/systemd/system/rtschedd.service.d/50-rt.conf");
	del("run/systemd/system/rtschedd.service.d/60-harden.conf");
	put("etc/systemd/system/rtschedd.service", "[Service]\nExecStart=/y\n");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-restrict-realtime");
	del("etc/systemd/system/rtschedd.service");
	run(0, NULL, -1, 0, NULL);
	expect("self-restrict-realtime", DIAG_ERROR, "rtschedd.service:3", NULL);
}
END_TEST

START_TEST(test_self_seccomp_filter)
{
	/* from a unit that does not set RestrictRealtime=yes: a note */
	set_line("proc/self/status", "Seccomp:", "Seccomp:\t2");
	run(0, NULL, -1, 0, NULL);
	expect("self-seccomp-filter", DIAG_INFO, "rtschedd.service does not make refuse", "@resources");
	/* of unknown origin: a warning */
	put("proc/self/cgroup", "0::/\n");
	run(0, NULL, -1, 0, NULL);
	expect("self-seccomp-filter", DIAG_WARNING, "unknown origin", "container's seccomp profile");
	set_line("proc/self/status", "Seccomp:", "Seccomp:\t0");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-seccomp-filter");
}
END_TEST

/* ------------------------------------------------------------ limits.conf --- */

START_TEST(test_limits_grant)
{
	put("etc/security/limits.d/50-rt.conf", "# rt\n@nogroup  -  rtprio  40\n");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-grant", DIAG_INFO, "soft 40 (", NULL);
	const struct diag_finding *f = find("limits-grant");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(strstr(f->message, "hard 40 (") && strstr(f->message, "50-rt.conf:2"), "%s", dump());
	ck_assert(rep.has_limits);
	ck_assert_int_eq(rep.rtprio_soft, 40);
	ck_assert_int_eq(rep.rtprio_hard, 40);
	ck_assert_ptr_nonnull(strstr(rep.soft_src, "/etc/security/limits.d/50-rt.conf:2"));
	ck_assert_ptr_nonnull(strstr(rep.hard_src, "50-rt.conf:2"));
	ck_assert_str_eq(rep.user, "nobody");
	expect_none("limits-grant-none");
	/* the text report carries both and the file:line */
	ck_assert_ptr_nonnull(strstr(dump(), "limits.conf rtprio for nobody: soft 40 ("));
	/* a request above the grant */
	run(0, "nobody", SCHED_FIFO, 60, NULL);
	expect("limits-grant-low", DIAG_WARNING, "below the requested priority 60", "50-rt.conf:2 to 60");
	/* hard only: sessions must raise the soft limit themselves */
	put("etc/security/limits.d/50-rt.conf", "nobody hard rtprio 30\n");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-grant", DIAG_INFO, "soft unset, hard 30", NULL);
	ck_assert_ptr_nonnull(strstr(find("limits-grant")->message, "setrlimit"));
	ck_assert_int_eq(rep.rtprio_soft, -2);
	ck_assert_str_eq(rep.soft_src, "");
}
END_TEST

START_TEST(test_limits_grant_none)
{
	run(0, "nobody", -1, 0, NULL);
	expect("limits-grant-none", DIAG_WARNING, "grants nobody an rtprio",
	       "echo 'nobody - rtprio 50' >> ");
	ck_assert_ptr_nonnull(strstr(find("limits-grant-none")->fix, "/etc/security/limits.d/95-realtime.conf"));
	expect_none("limits-grant");
	/* the requested priority goes into the fix line */
	run(0, "nobody", SCHED_RR, 33, NULL);
	expect("limits-grant-none", DIAG_WARNING, NULL, "'nobody - rtprio 33'");
	/* an explicit 0: change that line */
	put("etc/security/limits.d/10-zero.conf", "nobody - rtprio 0\n");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-grant-none", DIAG_WARNING, "rtprio 0 (", "change the line");
	ck_assert_ptr_nonnull(strstr(find("limits-grant-none")->fix, "10-zero.conf:1"));
	/* without CAP_SYS_NICE nobody else can help: an error */
	set_line("proc/self/status", "CapEff:", "CapEff:\t0000000000000000");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-grant-none", DIAG_ERROR, NULL, NULL);
	/* root has CAP_SYS_NICE: no complaint */
	run(0, "root", -1, 0, NULL);
	expect_none("limits-grant-none");
}
END_TEST

START_TEST(test_limits_exempt_unreadable)
{
	put("etc/security/limits.d/05-exempt.conf", "nobody -\n");
	put("etc/security/limits.d/50-rt.conf", "nobody - rtprio 40\n");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-exempt", DIAG_INFO, "05-exempt.conf:1", NULL);
	expect_none("limits-grant");
	ck_assert(!rep.has_limits);
	del("etc/security/limits.conf");
	run(0, "nobody", -1, 0, NULL);
	expect("limits-unreadable", DIAG_ERROR, "fails every login session", "ls -l");
}
END_TEST

/* --------------------------------------------------------------- the target --- */

START_TEST(test_rtprio_zero_not_pam)
{
	put("etc/security/limits.d/50-rt.conf", "@nogroup - rtprio 40\n");
	run(4242, NULL, -1, 0, NULL);
	ck_assert_str_eq(rep.user, "nobody");
	ck_assert_str_eq(rep.comm, "player");
	ck_assert_int_eq(rep.pid, 4242);
	expect("rtprio-zero-not-pam", DIAG_WARNING, "RLIMIT_RTPRIO 0 (hard 0) although limits.conf grants "
	       "nobody rtprio 40", "prlimit --pid 4242 --rtprio=40:40");
	expect("rtprio-zero-not-pam", DIAG_WARNING, "50-rt.conf:1", "runuser -l nobody");
	expect("rtprio-zero-not-pam", DIAG_WARNING, "not started through a PAM login session", NULL);
	expect_none("rtprio-zero");
	expect_none("limits-grant-blocked");
	/* nobody with CAP_SYS_NICE to help: an error */
	set_line("proc/self/status", "CapEff:", "CapEff:\t0000000000000000");
	run(4242, NULL, -1, 0, NULL);
	expect("rtprio-zero-not-pam", DIAG_ERROR, NULL, NULL);
}
END_TEST

START_TEST(test_limits_grant_blocked)
{
	put("etc/security/limits.d/50-rt.conf", "@nogroup - rtprio 40\n");
	/* a container: CAP_SYS_RESOURCE (bit 24) not in pid 1's bounding set */
	set_line("proc/1/status", "CapBnd:", "CapBnd:\t000001fffeffffff");
	run(4242, NULL, -1, 0, NULL);
	expect("limits-grant-blocked", DIAG_WARNING, "CAP_SYS_RESOURCE is not in the bounding set of pid 1 (init)",
	       "docker run --ulimit rtprio=40:40");
	expect("limits-grant-blocked", DIAG_WARNING, "keep the hard limit 0 they inherit", NULL);
	expect("rtprio-zero-not-pam", DIAG_WARNING, "a PAM session could not apply it either",
	       "give pid 1 CAP_SYS_RESOURCE or RLIMIT_RTPRIO 40");
	ck_assert_ptr_null(strstr(find("rtprio-zero-not-pam")->fix, "prlimit"));
	/* not blocked when pid 1's hard limit already reaches the grant */
	set_line("proc/1/limits", "Max realtime priority", "Max realtime priority     40                   40");
	run(4242, NULL, -1, 0, NULL);
	expect_none("limits-grant-blocked");
	expect("rtprio-zero-not-pam", DIAG_WARNING, NULL, "prlimit --pid 4242 --rtprio=40:40");
}
END_TEST

START_TEST(test_rtprio_service)
{
	put("etc/security/limits.d/50-rt.conf", "nobody - rtprio 40\n");
	put("proc/4242/cgroup", "1:name=systemd:/system.slice/player.service\n0::/system.slice/player.service\n");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	ck_assert_str_eq(rep.unit, "player.service");
	expect("rtprio-zero-not-pam", DIAG_WARNING, "services never get limits.conf",
	       "systemctl edit player.service, add the lines [Service] and LimitRTPRIO=40, then systemctl "
	       "restart player.service");
	/* a user service */
	put("proc/4242/cgroup", "0::/user.slice/user-65534.slice/user@65534.service/app.slice/player.service\n");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio-zero-not-pam", DIAG_WARNING, NULL, "systemctl --user edit player.service");
	/* a login session: limits.conf changed after the login */
	put("proc/4242/cgroup", "0::/user.slice/user-65534.slice/session-4.scope\n");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio-zero-not-pam", DIAG_WARNING, "login session session-4.scope", "prlimit --pid 4242");
	/* nothing granted, in a service: rtprio-zero with the unit fix */
	del("etc/security/limits.d/50-rt.conf");
	put("proc/4242/cgroup", "0::/system.slice/player.service\n");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio-zero", DIAG_WARNING, "below the requested priority", "LimitRTPRIO=20");
	expect_none("rtprio-zero-not-pam");
}
END_TEST

START_TEST(test_rtprio_levels)
{
	/* nothing granted anywhere */
	run(4242, NULL, -1, 0, NULL);
	expect("rtprio-zero", DIAG_WARNING, "soft 0, hard 0", "prlimit --pid 4242 --rtprio=50:50");
	expect("limits-grant-none", DIAG_WARNING, NULL, NULL);
	/* too low for the request */
	set_line("proc/4242/limits", "Max realtime priority", "Max realtime priority     10                   10");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio-low", DIAG_WARNING, "soft 10, hard 10, below the requested priority", "--rtprio=20:20");
	/* enough */
	run(4242, NULL, SCHED_FIFO, 10, NULL);
	expect("rtprio", DIAG_OK, "up to 10 itself", "");
	/* the hard limit would do: raise the soft one */
	set_line("proc/4242/limits", "Max realtime priority", "Max realtime priority     0                    50");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio-soft-low", DIAG_WARNING, "hard 50", "setrlimit(RLIMIT_RTPRIO, {50, 50})");
	/* CAP_SYS_NICE of the target makes the limit moot */
	set_line("proc/4242/status", "CapEff:", "CapEff:\t0000000000800000");
	run(4242, NULL, SCHED_FIFO, 20, NULL);
	expect("rtprio", DIAG_OK, "has CAP_SYS_NICE", NULL);
	expect_none("rtprio-soft-low");
}
END_TEST

START_TEST(test_rttime)
{
	run(4242, NULL, -1, 0, NULL);
	expect("rttime-unlimited", DIAG_INFO, "no RLIMIT_RTTIME", "prlimit --pid 4242 --rttime=200000:250000");
	put("proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	run(4242, NULL, -1, 0, NULL);
	expect("rttime-unlimited", DIAG_WARNING, "disabled here", NULL);
	set_line("proc/4242/limits", "Max realtime timeout", "Max realtime timeout      0                    0                    us");
	run(4242, NULL, -1, 0, NULL);
	expect("rttime-zero", DIAG_ERROR, "RLIMIT_RTTIME 0", "--rttime=unlimited:unlimited");
	put("proc/4242/cgroup", "0::/system.slice/player.service\n");
	run(4242, NULL, -1, 0, NULL);
	expect("rttime-zero", DIAG_ERROR, NULL, "LimitRTTIME=infinity");
	set_line("proc/4242/limits", "Max realtime timeout", "Max realtime timeout      200000               unlimited            us");
	run(4242, NULL, -1, 0, NULL);
	expect("rttime", DIAG_OK, "soft 200000 µs, hard unlimited", "");
}
END_TEST

START_TEST(test_restrict_realtime)
{
	put("proc/4242/cgroup", "0::/system.slice/player@hall.service\n");
	put("lib/systemd/system/player@.service", "[Service]\nExecStart=/usr/bin/player %%i\nRestrictRealtime=yes\n");
	run(4242, NULL, -1, 0, NULL);
	expect("restrict-realtime", DIAG_WARNING, "player@.service:3",
	       "systemctl edit player@hall.service, add the lines [Service] and RestrictRealtime=no");
	expect("restrict-realtime", DIAG_WARNING, "rtschedd can still make its threads real-time", NULL);
	/* the instance's own drop-in overrides the template */
	put("etc/systemd/system/player@hall.service.d/rt.conf", "[Service]\nRestrictRealtime=off\n");
	run(4242, NULL, -1, 0, NULL);
	expect_none("restrict-realtime");
	/* a seccomp filter from a unit that does not say RestrictRealtime */
	set_line("proc/4242/status", "Seccomp:", "Seccomp:\t2");
	run(4242, NULL, -1, 0, NULL);
	expect("seccomp-filter", DIAG_INFO, "do not set RestrictRealtime=yes",
	       "systemctl show -p RestrictRealtime -p SystemCallFilter player@hall.service");
	/* and from no unit at all */
	put("proc/4242/cgroup", "0::/docker/abc\n");
	run(4242, NULL, -1, 0, NULL);
	expect("seccomp-filter", DIAG_INFO, "Seccomp: 2", "container runtime");
	set_line("proc/4242/status", "Seccomp:", "Seccomp:\t0");
	run(4242, NULL, -1, 0, NULL);
	expect_none("seccomp-filter");
}
END_TEST

START_TEST(test_rt_group_budget)
{
	char want[PATH_MAX * 3];

	run(4242, NULL, -1, 0, NULL);
	expect("rt-group-budget", DIAG_OK, "cpu cgroup /user.slice with an RT budget of 50000", "");
	/* a container two levels deep with nothing: its parent gets what the
	 * root has left after system.slice (100000) and user.slice (50000) */
	put("proc/4242/cgroup", "12:cpu,cpuacct:/machine/ctr\n0::/machine/ctr\n");
	put("sys/fs/cgroup/cpu,cpuacct/machine/cpu.rt_runtime_us", "0\n");
	put("sys/fs/cgroup/cpu,cpuacct/machine/cpu.rt_period_us", "1000000\n");
	put("sys/fs/cgroup/cpu,cpuacct/machine/ctr/cpu.rt_runtime_us", "0\n");
	put("sys/fs/cgroup/cpu,cpuacct/machine/ctr/cpu.rt_period_us", "500000\n");
	run(4242, NULL, -1, 0, NULL);
	/* free = ratio(950000) - ratio(100000) - ratio(50000) of 1 << 20; per level (free * period) >> 20,
	 * rounded down to 1000 */
	snprintf(want, sizeof(want), "echo 800000 > %s/sys/fs/cgroup/cpu,cpuacct/machine/cpu.rt_runtime_us && "
		 "echo 400000 > %s/sys/fs/cgroup/cpu,cpuacct/machine/ctr/cpu.rt_runtime_us", root, root);
	expect("rt-group-budget-zero", DIAG_ERROR, "cpu cgroup /machine/ctr (cgroup v1", want);
	expect("rt-group-budget-zero", DIAG_ERROR, "EPERM", "docker run --cpu-rt-runtime");
	/* nothing left to give */
	put("sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us", "900000\n");
	run(4242, NULL, -1, 0, NULL);
	expect("rt-group-budget-zero", DIAG_ERROR, NULL, "is all given to its other child groups");
	/* cgroup v2 has no RT budget: no finding */
	put("proc/4242/cgroup", "0::/machine/ctr\n");
	run(4242, NULL, -1, 0, NULL);
	expect_none("rt-group-budget-zero");
	expect_none("rt-group-budget");
}
END_TEST

/* rtschedd's own group (/system.slice: 100000 of every 1000000 µs) against
 * what its own real-time threads may take (watchdog audit M4). */
START_TEST(test_self_rt_budget)
{
	char want[PATH_MAX * 2];

	run(0, NULL, -1, 0, NULL);
	expect_none("self-rt-group-budget");
	expect_none("self-rt-group-budget-small");
	self_pct = 10;
	run(0, NULL, -1, 0, NULL);
	expect("self-rt-group-budget", DIAG_OK, "cpu cgroup /system.slice with an RT budget of 100000 of every "
	       "1000000 µs, at least the 10%", "");
	self_pct = 15;
	run(0, NULL, -1, 0, NULL);
	expect_none("self-rt-group-budget");
	snprintf(want, sizeof(want), "echo 150000 > %s/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us "
		 "(its parent groups'", root);
	expect("self-rt-group-budget-small", DIAG_WARNING, "budget of 100000 of every 1000000 µs is less than the 15%",
	       want);
	expect("self-rt-group-budget-small", DIAG_WARNING, "the FIFO 99 watchdog too", NULL);
	/* a share that is no round number of µs: the fix rounds up */
	put("sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_period_us", "333333\n");
	self_pct = 40;   /* 133333.2 µs */
	run(0, NULL, -1, 0, NULL);
	snprintf(want, sizeof(want), "echo 134000 > %s/sys/fs/cgroup/cpu,cpuacct/system.slice/cpu.rt_runtime_us", root);
	expect("self-rt-group-budget-small", DIAG_WARNING, "of every 333333 µs is less than the 40%", want);
	/* the root group's budget is kernel.sched_rt_runtime_us' (rt-throttling) */
	put("proc/self/cgroup", "12:cpu,cpuacct:/\n0::/\n");
	run(0, NULL, -1, 0, NULL);
	expect_none("self-rt-group-budget");
	expect_none("self-rt-group-budget-small");
}
END_TEST

START_TEST(test_timer_slack)
{
	run(4242, NULL, -1, 0, NULL);
	expect("timer-slack", DIAG_INFO, "default timer slack of 50000 ns", "PR_SET_TIMERSLACK");
	put("proc/4242/timerslack_ns", "200000\n");
	run(4242, NULL, -1, 0, NULL);
	expect("timer-slack", DIAG_WARNING, "200000 ns", "/4242/timerslack_ns");
	put("proc/4242/timerslack_ns", "1\n");
	run(4242, NULL, SCHED_OTHER, 0, NULL);
	expect("timer-slack", DIAG_OK, "1 ns", "");
	/* real-time threads have no slack: requested, or already */
	put("proc/4242/timerslack_ns", "200000\n");
	run(4242, NULL, SCHED_FIFO, 10, NULL);
	expect_none("timer-slack");
	put("proc/4242/stat", "4242 (player) S 1 4242 4242 0 -1 4194560 500 0 0 0 10 5 0 0 -11 0 2 0 123456 "
	    "10000000 500 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 2 10 1 0 0 0\n");
	run(4242, NULL, -1, 0, NULL);
	expect_none("timer-slack");
}
END_TEST

/* ----------------------------------------------------------- the kernel --- */

START_TEST(test_rt_throttling)
{
	put("proc/sys/kernel/sched_rt_runtime_us", "-1\n");
	run(0, NULL, -1, 0, NULL);
	expect("rt-throttling-disabled", DIAG_WARNING, "RT throttling is off",
	       "sysctl -w kernel.sched_rt_runtime_us=950000");
	expect_none("rt-throttling");
	put("proc/sys/kernel/sched_rt_runtime_us", "1000000\n");
	run(0, NULL, -1, 0, NULL);
	expect("rt-throttling-disabled", DIAG_WARNING, "1000000, period 1000000", NULL);
	put("proc/sys/kernel/sched_rt_runtime_us", "0\n");
	run(0, NULL, -1, 0, NULL);
	expect("rt-runtime-zero", DIAG_ERROR, "is 0", "sysctl -w kernel.sched_rt_runtime_us=950000");
	put("proc/sys/kernel/sched_rt_runtime_us", "500000\n");
	run(0, NULL, -1, 0, NULL);
	expect("rt-throttling", DIAG_INFO, "(50%)", "sched_rt_runtime_us=-1");
	del("proc/sys/kernel/sched_rt_runtime_us");
	run(0, NULL, -1, 0, NULL);
	expect("check-failed", DIAG_INFO, "kernel.sched_rt_runtime_us", "");
}
END_TEST

/* Write a file of the fake tree gzip-compressed, as /proc/config.gz is. */
static void put_gz(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	gzFile f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdirs(path);
	ck_assert_ptr_nonnull(f = gzopen(path, "wb"));
	ck_assert_int_eq(gzputs(f, text), (int)strlen(text));
	ck_assert_int_eq(gzclose(f), Z_OK);
}

START_TEST(test_preempt_model)
{
	put("sys/kernel/debug/sched/preempt", "none (voluntary) full lazy\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_WARNING, "preemption model voluntary", "preempt=full");
	put("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "preemption model full", "");
	del("sys/kernel/debug/sched/preempt");
	put("proc/cmdline", "ro preempt=full quiet\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "booted with preempt=full", "");
	put("proc/sys/kernel/version", "#1 SMP PREEMPT Tue Jan 1\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "CONFIG_PREEMPT", "");
	put("proc/sys/kernel/version", "#1 SMP Debian 5.10\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_WARNING, "preemption model voluntary or none", "linux-image-rt-amd64");
	/* a PREEMPT_DYNAMIC kernel without debugfs or preempt=: the build's
	 * default, from /boot/config-RELEASE or else /proc/config.gz (gzip) */
	put("proc/cmdline", "ro quiet\n");
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.0\n");
	put("proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
	put_gz("proc/config.gz", "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n"
	       "CONFIG_PREEMPT_DYNAMIC=y\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_WARNING, "preemption model none (the default of this PREEMPT_DYNAMIC kernel, "
	       "from", "echo full >");
	ck_assert_ptr_nonnull(strstr(find("preempt-model")->message, "/proc/config.gz"));
	put("boot/config-6.1.0-28-amd64", "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_WARNING, "preemption model voluntary", "boot with preempt=full");
	ck_assert_ptr_nonnull(strstr(find("preempt-model")->message, "/boot/config-6.1.0-28-amd64"));
	put("boot/config-6.1.0-28-amd64", "CONFIG_PREEMPT=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "preemption model full", "");
	put("proc/cmdline", "ro preempt=none quiet\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_WARNING, "booted with preempt=none", "preempt=full");
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "PREEMPT_RT kernel", "");
	put("proc/sys/kernel/version", "#1 SMP\n");
	put("sys/kernel/realtime", "1\n");
	run(0, NULL, -1, 0, NULL);
	expect("preempt-model", DIAG_INFO, "PREEMPT_RT kernel: fully preemptible", "");
}
END_TEST

/* diag_preempt_model() must say ret and word, and check's preempt-model
 * finding, from the same tree, must hold finding: the two agree. */
static void expect_model(int ret, const char *word, const char *finding)
{
	const struct diag_finding *f;
	char m[32];

	ck_assert_int_eq(diag_preempt_model(&env, m, sizeof(m)), ret);
	ck_assert_str_eq(m, word);
	run(0, NULL, -1, 0, NULL);
	f = find("preempt-model");
	ck_assert_msg(f && strstr(f->message, finding), "%s: no '%s' in:\n%s", word, finding, dump());
}

/* The one detector, as jitter's reply uses it: the same sources in the same
 * order as the preempt-model finding, told as one word. */
START_TEST(test_preempt_model_word)
{
	char m[32];

	/* base: PREEMPT_DYNAMIC, and neither debugfs, preempt= nor a config tells the mode */
	expect_model(-ENOENT, "dynamic", "its mode is the build's default");
	put("proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
	put("boot/config-6.1.0-28-amd64", "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
	expect_model(0, "voluntary", "preemption model voluntary (the default of this PREEMPT_DYNAMIC");
	put("proc/cmdline", "ro preempt=lazy quiet\n");
	expect_model(0, "lazy", "preemption model lazy (PREEMPT_DYNAMIC kernel booted with preempt=lazy)");
	put("sys/kernel/debug/sched/preempt", "(none) voluntary full lazy\n");
	expect_model(0, "none", "preemption model none (debugfs");
	put("sys/kernel/debug/sched/preempt", "none voluntary (full) lazy\n");
	expect_model(0, "full", "preemption model full (debugfs");
	/* a word cut to fit */
	ck_assert_int_eq(diag_preempt_model(&env, m, 3), -ENOSPC);
	ck_assert_str_eq(m, "fu");
	/* not PREEMPT_DYNAMIC: preempt= is not read, the build's config is */
	del("sys/kernel/debug/sched/preempt");
	put("proc/sys/kernel/version", "#1 SMP PREEMPT Tue Jan 1\n");
	expect_model(0, "voluntary", "preemption model voluntary (built in, from");
	del("boot/config-6.1.0-28-amd64");
	expect_model(0, "full", "preemptible kernel (CONFIG_PREEMPT");
	put("proc/sys/kernel/version", "#1 SMP Debian 5.10\n");
	expect_model(-ENOENT, "voluntary or none", "preemption model voluntary or none");
	put("proc/sys/kernel/version", "#1 SMP PREEMPT_RT Debian 6.1\n");
	expect_model(0, "rt", "PREEMPT_RT kernel (");
	put("proc/sys/kernel/version", "#1 SMP\n");
	put("sys/kernel/realtime", "1\n");
	expect_model(0, "rt", "PREEMPT_RT kernel: fully preemptible");
}
END_TEST

/* isolcpus= is suggested with nohz_full= only where the kernel has NO_HZ_FULL */
START_TEST(test_isolated_fix_nohz)
{
	run(0, NULL, -1, 0, NULL);
	expect("cpu-isolated", DIAG_INFO, "no CPU is isolated", "nohz_full=N");
	del("sys/devices/system/cpu/nohz_full");
	run(0, NULL, -1, 0, NULL);
	expect("cpu-isolated", DIAG_INFO, "no CPU is isolated", "no CONFIG_NO_HZ_FULL, so no nohz_full=");
	ck_assert_ptr_null(strstr(find("cpu-isolated")->fix, "nohz_full=N"));
}
END_TEST

START_TEST(test_cpu_offline)
{
	run(0, NULL, -1, 0, cpus_of("2,7"));
	expect("cpu-offline", DIAG_WARNING, "CPUs 7 are not online (online: 0-3)", "cpu7/online");
	run(0, NULL, -1, 0, cpus_of("7"));
	expect("cpu-offline", DIAG_ERROR, "EINVAL", "choose CPUs from 0-3");
	run(0, NULL, -1, 0, cpus_of("3"));
	expect_none("cpu-offline");
}
END_TEST

START_TEST(test_cpu_outside_cpuset)
{
	char want[PATH_MAX * 2];

	put("proc/4242/cgroup", "11:cpuset:/rt\n0::/\n");
	put("sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus", "2-3\n");
	put("sys/fs/cgroup/cpuset/rt/cpuset.cpus", "2-3\n");
	run(4242, NULL, -1, 0, cpus_of("0,1"));
	snprintf(want, sizeof(want), "echo 0-3 > %s/sys/fs/cgroup/cpuset/rt/cpuset.cpus", root);
	expect("cpu-outside-cpuset", DIAG_ERROR, "all outside pid 4242's cpuset 2-3", want);
	run(4242, NULL, -1, 0, cpus_of("1,2"));
	snprintf(want, sizeof(want), "echo 1-3 > %s/sys/fs/cgroup/cpuset/rt/cpuset.cpus", root);
	expect("cpu-outside-cpuset", DIAG_WARNING, "CPUs 1 are outside", want);
	/* an offline CPU is cpu-offline's, not this one's */
	run(4242, NULL, -1, 0, cpus_of("2,7"));
	expect_none("cpu-outside-cpuset");
	/* cgroup v2: the nearest ancestor with cpuset.cpus.effective */
	put("proc/4242/cgroup", "0::/machine.slice/ctr.scope/inner\n");
	put("sys/fs/cgroup/unified/cgroup.controllers", "cpuset cpu\n");
	put("sys/fs/cgroup/unified/machine.slice/ctr.scope/cpuset.cpus.effective", "1\n");
	run(4242, NULL, -1, 0, cpus_of("3"));
	expect("cpu-outside-cpuset", DIAG_ERROR, "ctr.scope/cpuset.cpus.effective", "ctr.scope/cpuset.cpus ");
}
END_TEST

START_TEST(test_cpu_isolated_nohz)
{
	put("sys/devices/system/cpu/isolated", "2-3\n");
	put("sys/devices/system/cpu/nohz_full", "2-3\n");
	put("proc/cmdline", "ro isolcpus=domain,2-3 nohz_full=2-3\n");
	run(0, NULL, -1, 0, cpus_of("2,3"));
	expect("cpu-isolated", DIAG_WARNING, "does not balance", "single isolated CPU");
	expect("cpu-isolated", DIAG_WARNING, "isolcpus=domain,2-3", NULL);
	expect("cpu-nohz-full", DIAG_INFO, "tick stops", "");
	run(0, NULL, -1, 0, cpus_of("2"));
	expect("cpu-isolated", DIAG_INFO, "no other task is balanced there", "");
	/* the target's own affinity counts when no CPUs are requested */
	run(4242, NULL, -1, 0, NULL);
	expect("cpu-isolated", DIAG_WARNING, "CPUs 0-3 in use", NULL);
	set_line("proc/4242/status", "Cpus_allowed_list:", "Cpus_allowed_list:\t0-1");
	run(4242, NULL, -1, 0, NULL);
	expect("cpu-isolated", DIAG_INFO, "are not", "pin the real-time threads to the isolated CPUs");
	expect("cpu-nohz-full", DIAG_INFO, "are not", "nohz_full CPUs");
	/* nohz_full= asked for, but the kernel cannot */
	del("sys/devices/system/cpu/nohz_full");
	run(0, NULL, -1, 0, NULL);
	expect("cpu-nohz-full", DIAG_WARNING, "no CONFIG_NO_HZ_FULL", "CONFIG_NO_HZ_FULL");
}
END_TEST

START_TEST(test_run_errors)
{
	struct diag_target t = { .pid = 999, .policy = -1 };

	ck_assert_int_eq(diag_run(&env, &t, &rep), -ESRCH);
	diag_report_free(&rep);
	t = (struct diag_target){ .user = "no-such-user-rtsd", .policy = -1 };
	ck_assert_int_eq(diag_run(&env, &t, &rep), -ENOENT);
	diag_report_free(&rep);
	/* a broken status file is an error, not a guess */
	put("proc/4242/status", "Name:\tx\n");
	t = (struct diag_target){ .pid = 4242, .policy = -1 };
	ck_assert_int_eq(diag_run(&env, &t, &rep), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------ diag_explain --- */

static char code[DIAG_CODE_MAX];

/* diag_explain() for pid 4242; returns its result, the line in buf, the
 * finding code in `code`. */
static int explain(int policy, int prio, const cpu_set_t *cpus, const char *what, int err, char *buf, size_t len)
{
	struct diag_target t = { .pid = 4242, .policy = policy, .priority = prio, .cpus = cpus };

	return diag_explain(&env, &t, what, err, buf, len, code);
}

START_TEST(test_explain_eperm)
{
	char buf[1024];

	/* the cgroup budget comes first, even with CAP_SYS_NICE */
	put("sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.rt_runtime_us", "0\n");
	set_line("proc/self/status", "Seccomp:", "Seccomp:\t2");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "cpu cgroup /user.slice whose cpu.rt_runtime_us is 0") &&
		      strstr(buf, "fix: echo 850000 > "), "%s", buf);
	ck_assert_str_eq(code, "rt-group-budget-zero");
	/* then a seccomp filter on the caller: RestrictRealtime= named if found */
	put("sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.rt_runtime_us", "50000\n");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, -EPERM, buf, sizeof(buf)), -ENOENT);
	ck_assert_msg(strstr(buf, "no known cause") && strstr(buf, "SystemCallFilter= of rtschedd.service"),
		      "%s", buf);
	ck_assert_str_eq(code, "");
	put("proc/self/cgroup", "0::/\n");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, -EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "seccomp filter of unknown origin (Seccomp: 2 in /proc/100/status)"), "%s", buf);
	ck_assert_str_eq(code, "self-seccomp-filter");
	put("proc/self/cgroup", "0::/system.slice/rtschedd.service\n");
	put("etc/systemd/system/rtschedd.service.d/x.conf", "[Service]\nRestrictRealtime=yes\n");
	ck_assert_int_eq(explain(SCHED_RR, 20, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "RestrictRealtime=yes") && strstr(buf, "x.conf:2") &&
		      strstr(buf, "systemctl edit rtschedd.service"), "%s", buf);
	ck_assert_str_eq(code, "self-restrict-realtime");
	/* then, without CAP_SYS_NICE, the owner and the target's RLIMIT_RTPRIO */
	del("etc/systemd/system/rtschedd.service.d/x.conf");
	set_line("proc/self/status", "Seccomp:", "Seccomp:\t0");
	set_line("proc/self/status", "CapEff:", "CapEff:\t0000000000000000");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "belongs to uid 65534, not to its uid 0"), "%s", buf);
	ck_assert_str_eq(code, "no-cap-sys-nice");
	set_line("proc/self/status", "Uid:", "Uid:\t65534\t65534\t65534\t65534");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "up to its RLIMIT_RTPRIO 0 (hard 0), below 20") &&
		      strstr(buf, "prlimit --pid 4242 --rtprio=20:20") &&
		      strstr(buf, "AmbientCapabilities=CAP_SYS_NICE"), "%s", buf);
	ck_assert_str_eq(code, "rtprio-zero");
	/* nothing found */
	set_line("proc/self/status", "CapEff:", "CapEff:\t0000000000800000");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, sizeof(buf)), -ENOENT);
	ck_assert_msg(strstr(buf, "no known cause"), "%s", buf);
	/* leaving SCHED_IDLE or lowering nice */
	ck_assert_int_eq(explain(SCHED_OTHER, 0, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "RLIMIT_NICE"), "%s", buf);
	/* too small a buffer is said, not hidden */
	put("sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.rt_runtime_us", "0\n");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, 40), -ENOSPC);
	ck_assert_uint_eq(strlen(buf), 39);
}
END_TEST

START_TEST(test_explain_affinity)
{
	char buf[1024];

	ck_assert_int_eq(explain(-1, 0, cpus_of("6,7"), "sched_setaffinity", EINVAL, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "none of CPUs 6-7 is online (online: 0-3)"), "%s", buf);
	ck_assert_str_eq(code, "cpu-offline");
	put("proc/4242/cgroup", "11:cpuset:/rt\n0::/\n");
	put("sys/fs/cgroup/cpuset/rt/cpuset.effective_cpus", "2-3\n");
	ck_assert_int_eq(explain(-1, 0, cpus_of("0,1,7"), "sched_setaffinity", EINVAL, buf, sizeof(buf)), 0);
	ck_assert_msg(strstr(buf, "outside tid 4242's cpuset 2-3"), "%s", buf);
	ck_assert_str_eq(code, "cpu-outside-cpuset");
	ck_assert_int_eq(explain(-1, 0, cpus_of("1,2"), "sched_setaffinity", EINVAL, buf, sizeof(buf)), -ENOENT);
	ck_assert_str_eq(code, "");
	/* EINVAL of sched_setattr is not about CPUs */
	ck_assert_int_eq(explain(SCHED_FIFO, 20, cpus_of("7"), NULL, EINVAL, buf, sizeof(buf)), -ENOENT);
	/* a thread that is gone */
	del("proc/4242/status");
	ck_assert_int_eq(explain(SCHED_FIFO, 20, NULL, NULL, EPERM, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "tid 4242 has exited");
}
END_TEST

/* ------------------------------------------------------------- the report --- */

START_TEST(test_report_print)
{
	struct diag_report r;
	char *text = NULL;
	size_t len = 0;
	char long_msg[2000];
	FILE *f;

	diag_report_init(&r);
	ck_assert_int_eq(diag_report_add(&r, "b-info", DIAG_INFO, "say \"hi\"\n\ttab \x01\x1b\x7f caf\xc3\xa9 bad\xff", NULL), 0);
	ck_assert_int_eq(diag_report_add(&r, "a-err", DIAG_ERROR, "broken", "fix it"), 0);
	ck_assert_int_eq(diag_report_add(&r, "c-ok", DIAG_OK, "fine", ""), 0);
	memset(long_msg, 'x', sizeof(long_msg) - 1);
	long_msg[sizeof(long_msg) - 1] = '\0';
	ck_assert_int_eq(diag_report_add(&r, "d-warn", DIAG_WARNING, long_msg, NULL), 0);
	ck_assert_uint_eq(strlen(r.v[3].message), DIAG_TEXT_MAX - 1);
	ck_assert_str_eq(r.v[3].message + DIAG_TEXT_MAX - 4, "...");
	diag_report_sort(&r);
	ck_assert_str_eq(r.v[0].code, "a-err");
	ck_assert_str_eq(r.v[1].code, "d-warn");
	ck_assert_str_eq(r.v[2].code, "b-info");
	ck_assert_str_eq(r.v[3].code, "c-ok");
	ck_assert_int_eq(diag_report_worst(&r), DIAG_ERROR);
	r.pid = 7;
	snprintf(r.comm, sizeof(r.comm), "x");
	snprintf(r.user, sizeof(r.user), "alice");
	r.has_limits = true;
	r.rtprio_soft = 50;
	r.rtprio_hard = -1;
	snprintf(r.soft_src, sizeof(r.soft_src), "/etc/security/limits.d/a.conf:3");
	f = open_memstream(&text, &len);
	diag_print_json(&r, f);
	fclose(f);
	ck_assert_msg(strstr(text, "\"message\":\"say \\\"hi\\\"\\u000a\\u0009tab \\u0001\\u001b\\u007f caf\xc3\xa9 bad\\ufffd\""),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"limits\":{\"rtprio_soft\":50,\"rtprio_hard\":\"unlimited\","
			     "\"soft_source\":\"/etc/security/limits.d/a.conf:3\",\"hard_source\":null}"), "%s", text);
	ck_assert_msg(strstr(text, "\"counts\":{\"error\":1,\"warning\":1,\"info\":1,\"ok\":1},\"worst\":\"error\"}"),
		      "%s", text);
	ck_assert_msg(strstr(text, "{\"code\":\"a-err\",\"severity\":\"error\",\"message\":\"broken\",\"fix\":\"fix it\"}"),
		      "%s", text);
	ck_assert_msg(strstr(text, "\"pid\":7,\"comm\":\"x\",\"unit\":null,\"user\":\"alice\""), "%s", text);
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	diag_print_text(&r, f);
	fclose(f);
	ck_assert_msg(strstr(text, "rtschedd check: pid 7 (x), user alice\n"), "%s", text);
	ck_assert_msg(strstr(text, "soft 50 (/etc/security/limits.d/a.conf:3), hard unlimited\n"), "%s", text);
	ck_assert_msg(strstr(text, "ERROR    a-err: broken\n         fix: fix it\n"), "%s", text);
	ck_assert_msg(strstr(text, "1 error, 1 warning, 1 info, 1 ok"), "%s", text);
	free(text);
	ck_assert_str_eq(diag_severity_name(DIAG_WARNING), "warning");
	ck_assert_int_eq(diag_severity_from_name("warning"), DIAG_WARNING);
	ck_assert_int_eq(diag_severity_from_name("fatal"), -EINVAL);
	diag_report_free(&r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_ptr_null(r.v);
}
END_TEST

/* The live system: whatever it finds, it must run and name the checker's capability. */
START_TEST(test_live_system)
{
	struct diag_target t = { .pid = getpid(), .policy = SCHED_FIFO, .priority = 10 };

	ck_assert_int_eq(diag_run(NULL, &t, &rep), 0);
	ck_assert_msg(find("cap-sys-nice") || find("no-cap-sys-nice"), "%s", dump());
	ck_assert(find("preempt-model") && find("cpu-isolated"));
	ck_assert_int_eq(rep.pid, getpid());
}
END_TEST

static Suite *diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *p = tcase_create("parsers"), *f = tcase_create("findings"), *e = tcase_create("explain"),
	      *r = tcase_create("report");

	tcase_add_test(p, test_cmdline);
	suite_add_tcase(s, p);

	tcase_add_checked_fixture(f, setup, teardown);
	tcase_add_test(f, test_base_is_healthy);
	tcase_add_test(f, test_no_cap_sys_nice);
	tcase_add_test(f, test_self_restrict_realtime);
	tcase_add_test(f, test_self_seccomp_filter);
	tcase_add_test(f, test_limits_grant);
	tcase_add_test(f, test_limits_grant_none);
	tcase_add_test(f, test_limits_exempt_unreadable);
	tcase_add_test(f, test_rtprio_zero_not_pam);
	tcase_add_test(f, test_limits_grant_blocked);
	tcase_add_test(f, test_rtprio_service);
	tcase_add_test(f, test_rtprio_levels);
	tcase_add_test(f, test_rttime);
	tcase_add_test(f, test_restrict_realtime);
	tcase_add_test(f, test_rt_group_budget);
	tcase_add_test(f, test_self_rt_budget);
	tcase_add_test(f, test_timer_slack);
	tcase_add_test(f, test_rt_throttling);
	tcase_add_test(f, test_preempt_model);
	tcase_add_test(f, test_preempt_model_word);
	tcase_add_test(f, test_isolated_fix_nohz);
	tcase_add_test(f, test_cpu_offline);
	tcase_add_test(f, test_cpu_outside_cpuset);
	tcase_add_test(f, test_cpu_isolated_nohz);
	tcase_add_test(f, test_run_errors);
	tcase_add_test(f, test_live_system);
	suite_add_tcase(s, f);

	tcase_add_checked_fixture(e, setup, teardown);
	tcase_add_test(e, test_explain_eperm);
	tcase_add_test(e, test_explain_affinity);
	suite_add_tcase(s, e);

	tcase_add_test(r, test_report_print);
	suite_add_tcase(s, r);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(diag_suite());
	char cmd[128];
	int failed;

	snprintf(top, sizeof(top), "/tmp/rtschedd-test-diag.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
