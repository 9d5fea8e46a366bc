/* test-privs.c: least privilege (daemon/privs.c), each case in a child
 * process of its own (it changes the process for good), judged by what the
 * kernel then reports in /proc/self/status: as any user, the check for
 * CAP_SYS_NICE and the fix it logs (for a service, for a login), and a drop
 * that leaves nothing and sets no-new-privs; as root, the drop to exactly
 * CAP_SYS_NICE in every set (bounding too, ambient cleared), CAP_SYS_PTRACE
 * kept only for exe = rules, and the switch to `user =` keeping
 * CAP_SYS_NICE but not the means of switching. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/privs.h"
#include "unit-util.h"

static char dir[PATH_MAX];

static void setup(void)
{
	unit_tmpdir(dir, "test-privs");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* The fields of /proc/self/status the test judges by, one line each,
 * "Uid: ... Gid: ... Groups: ... CapInh: ... CapPrm: ... CapEff: ...
 * CapBnd: ... CapAmb: ... NoNewPrivs: ...", into out. */
static void status_of_self(char *out, size_t len)
{
	static const char *const keys[] = { "Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:",
					    "CapBnd:", "CapAmb:", "NoNewPrivs:" };
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	size_t off = 0;

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0 && off < len) {
				for (char *p = line; *p; p++)
					if (*p == '\t')
						*p = ' ';
				off += (size_t)snprintf(out + off, len - off, "%s", line);
			}
	if (f)
		fclose(f);
}

/* Run fn in a child with stderr into a file; its result (what fn wrote to
 * the pipe, then the child's status, then the log) into out. */
struct outcome {
	int ret;              /* what fn returned */
	char status[1024];    /* /proc/self/status after it */
	char extra[512];      /* fn's own report */
	char log[4096];
};

static void in_child(int (*fn)(char *extra, size_t len), struct outcome *o)
{
	char logpath[PATH_MAX + 16];
	int p[2], st, fd;
	pid_t child;
	ssize_t n;

	memset(o, 0, sizeof(*o));
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	ck_assert_int_eq(pipe(p), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct outcome r;
		memset(&r, 0, sizeof(r));
		close(p[0]);
		fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(2);
		r.ret = fn(r.extra, sizeof(r.extra));
		status_of_self(r.status, sizeof(r.status));
		fflush(stderr);
		if (write(p[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], o, sizeof(*o)), (ssize_t)sizeof(*o));
	close(p[0]);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	fd = open(logpath, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, o->log, sizeof(o->log) - 1);
	o->log[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* The status line starting with key, e.g. "CapEff:". */
static const char *field(const struct outcome *o, const char *key)
{
	static char v[128];
	const char *p = strstr(o->status, key);

	ck_assert_msg(p, "no %s in %s", key, o->status);
	p += strlen(key);
	while (*p == ' ')
		p++;
	snprintf(v, sizeof(v), "%.*s", (int)strcspn(p, "\n"), p);
	return v;
}

/* A capability mask as /proc shows it. */
static const char *mask(unsigned long long m)
{
	static char v[2][32];
	static int k;

	k ^= 1;
	snprintf(v[k], sizeof(v[k]), "%016llx", m);
	return v[k];
}

static struct config *cfg;

/* Remove CAP_SYS_NICE from the effective set (the daemon started without it). */
static void lose_sys_nice(void)
{
	cap_t c = cap_get_proc();
	cap_value_t v = CAP_SYS_NICE;

	cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_CLEAR);
	cap_set_proc(c);
	cap_free(c);
}

static int check_nice(char *extra, size_t len)
{
	return privs_check_nice(cfg);
}

static int check_nice_without(char *extra, size_t len)
{
	lose_sys_nice();
	return privs_check_nice(cfg);
}

static int drop(char *extra, size_t len)
{
	int r = privs_drop(cfg, true);
	char *d = privs_describe();

	snprintf(extra, len, "%s", d ? d : "(null)");
	free(d);
	return r;
}

static int drop_from_ambient(char *extra, size_t len)
{
	cap_t c = cap_get_proc();
	cap_value_t v = CAP_SYS_NICE;

	/* an ambient capability needs it inheritable too */
	cap_set_flag(c, CAP_INHERITABLE, 1, &v, CAP_SET);
	cap_set_proc(c);
	cap_free(c);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_NICE, 0, 0) < 0)
		return -1000;
	return drop(extra, len);
}

/* Without CAP_SYS_NICE: false, and the fix for how it was started. */
START_TEST(test_check_nice)
{
	struct outcome o;

	cfg = unit_config(dir, "[daemon]\npolicy = fifo\npriority = 17\n");
	unsetenv("INVOCATION_ID");
	in_child(check_nice_without, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_msg(strstr(o.log, "rtschedd has no CAP_SYS_NICE: it can only change threads of its own user"),
		      "%s", o.log);
	ck_assert_msg(strstr(o.log, "fix: run rtschedd as root, or add the line '") &&
		      strstr(o.log, " - rtprio 17' to /etc/security/limits.d/rtschedd.conf"), "%s", o.log);
	setenv("INVOCATION_ID", "0123456789abcdef", 1);
	in_child(check_nice_without, &o);
	unsetenv("INVOCATION_ID");
	ck_assert_msg(strstr(o.log, "fix: run 'systemctl edit rtschedd.service'") &&
		      strstr(o.log, "AmbientCapabilities=CAP_SYS_NICE") && strstr(o.log, "LimitRTPRIO=17"), "%s", o.log);
	config_free(cfg);
	/* a default that is not real-time needs no fix */
	cfg = unit_config(dir, "[daemon]\npolicy = other\npriority = 0\n");
	in_child(check_nice_without, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_ptr_null(strstr(o.log, "fix:"));
	/* with it: true, nothing said (only root has it here) */
	if (geteuid() == 0) {
		in_child(check_nice, &o);
		ck_assert_int_eq(o.ret, 1);
		ck_assert_str_eq(o.log, "");
	}
	config_free(cfg);
}
END_TEST

/* Any user: the drop leaves no capability anywhere and sets no-new-privs. */
START_TEST(test_drop_unprivileged)
{
	struct outcome o;
	pid_t child;
	int st;

	if (geteuid() == 0) {
		/* the same as nobody: in a child that becomes nobody first */
		ck_assert_int_eq(chmod(dir, 0777), 0);
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0) {
			if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
			    setresuid(65534, 65534, 65534) < 0)
				_exit(2);
			cfg = unit_config(dir, "[daemon]\n");
			in_child(drop, &o);
			_exit(o.ret == 0 && strcmp(field(&o, "CapEff:"), mask(0)) == 0 &&
			      strcmp(field(&o, "CapPrm:"), mask(0)) == 0 && strcmp(field(&o, "CapAmb:"), mask(0)) == 0 &&
			      strcmp(field(&o, "NoNewPrivs:"), "1") == 0 ? 0 : 1);
		}
		ck_assert_int_eq(waitpid(child, &st, 0), child);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "as nobody: exit %d", WEXITSTATUS(st));
		return;
	}
	cfg = unit_config(dir, "[daemon]\n");
	in_child(drop, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_str_eq(field(&o, "CapEff:"), mask(0));
	ck_assert_str_eq(field(&o, "CapPrm:"), mask(0));
	ck_assert_str_eq(field(&o, "CapAmb:"), mask(0));
	ck_assert_str_eq(field(&o, "NoNewPrivs:"), "1");
	ck_assert_str_eq(o.extra, "=");
	config_free(cfg);
}
END_TEST

/* `user =` naming no user: refused, nothing changed. */
START_TEST(test_drop_no_such_user)
{
	struct outcome o;

	cfg = unit_config(dir, "[daemon]\nuser = nobody\n");
	snprintf(cfg->run_user, sizeof(cfg->run_user), "rtsched-no-such-user");
	in_child(drop, &o);
	ck_assert_int_eq(o.ret, -ENOENT);
	ck_assert_msg(strstr(o.log, "user = rtsched-no-such-user: no such user"), "%s", o.log);
	ck_assert_str_eq(field(&o, "NoNewPrivs:"), "0");
	config_free(cfg);
}
END_TEST

/* Root (main): CAP_SYS_NICE alone, in every set, the ambient one cleared. */
START_TEST(test_drop_root)
{
	const unsigned long long nice = 1ULL << CAP_SYS_NICE, ptrace = 1ULL << CAP_SYS_PTRACE;
	struct outcome o;

	cfg = unit_config(dir, "[daemon]\n");
	in_child(drop_from_ambient, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_str_eq(field(&o, "CapEff:"), mask(nice));
	ck_assert_str_eq(field(&o, "CapPrm:"), mask(nice));
	ck_assert_str_eq(field(&o, "CapBnd:"), mask(nice));
	ck_assert_str_eq(field(&o, "CapInh:"), mask(0));
	ck_assert_str_eq(field(&o, "CapAmb:"), mask(0));
	ck_assert_str_eq(field(&o, "NoNewPrivs:"), "1");
	ck_assert_msg(strncmp(field(&o, "Uid:"), "0 0 0 0", 7) == 0, "%s", o.status);
	ck_assert_str_eq(o.extra, "cap_sys_nice=ep");
	ck_assert_msg(strstr(o.log, "capabilities: cap_sys_nice=ep"), "%s", o.log);
	config_free(cfg);
	/* exe = rules read other users' /proc/PID/exe: CAP_SYS_PTRACE too */
	cfg = unit_config(dir, "[rule x]\nexe = /usr/bin/*\npolicy = fifo\npriority = 5\n");
	in_child(drop, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_str_eq(field(&o, "CapEff:"), mask(nice | ptrace));
	ck_assert_str_eq(field(&o, "CapBnd:"), mask(nice | ptrace));
	config_free(cfg);
}
END_TEST

/* Root (main), `user = nobody`: that user's ids and no groups, still
 * CAP_SYS_NICE, and no way back (SETUID, SETGID, SETPCAP gone). */
START_TEST(test_drop_to_user)
{
	const unsigned long long nice = 1ULL << CAP_SYS_NICE;
	struct outcome o;

	cfg = unit_config(dir, "[daemon]\nuser = nobody\n");
	in_child(drop, &o);
	ck_assert_int_eq(o.ret, 0);
	ck_assert_msg(strncmp(field(&o, "Uid:"), "65534 65534 65534 65534", 23) == 0, "%s", o.status);
	ck_assert_msg(strncmp(field(&o, "Gid:"), "65534 65534 65534 65534", 23) == 0, "%s", o.status);
	ck_assert_str_eq(field(&o, "Groups:"), "");
	ck_assert_str_eq(field(&o, "CapEff:"), mask(nice));
	ck_assert_str_eq(field(&o, "CapPrm:"), mask(nice));
	ck_assert_str_eq(field(&o, "CapBnd:"), mask(nice));
	ck_assert_str_eq(field(&o, "NoNewPrivs:"), "1");
	ck_assert_msg(strstr(o.log, "running as user nobody"), "%s", o.log);
	config_free(cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("privs");
	TCase *tc = tcase_create("privs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_check_nice);
	tcase_add_test(tc, test_drop_unprivileged);
	tcase_add_test(tc, test_drop_no_such_user);
	if (geteuid() == 0) {
		tcase_add_test(tc, test_drop_root);
		tcase_add_test(tc, test_drop_to_user);
	} else {
		unit_skip("test_drop_root, test_drop_to_user: need root, to have capabilities to drop");
	}
	suite_add_tcase(s, tc);
	return unit_run(s);
}
