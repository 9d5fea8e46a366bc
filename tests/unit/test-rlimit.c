/* test-rlimit.c: a rule's grant of RLIMIT_RTPRIO and RLIMIT_RTTIME
 * (daemon/core/rlimit.c) on real child processes of the test's own uid,
 * judged by what /proc/PID/limits then says: a soft limit raised up to the
 * hard one (which needs no CAP_SYS_RESOURCE), never a limit lowered, the
 * process refused when it is not the owner's or gone, or runs a set-user-ID
 * program (as root only; the raising cases
 * need CAP_SYS_RESOURCE or a hard RLIMIT_RTPRIO of 20, else they are
 * skipped: not on this project's VM); and the diagnosis,
 * rlimit-grant and rlimit-grant-no-cap, only where a rule has the key. The
 * raise of a hard limit needs CAP_SYS_RESOURCE: that case runs only where
 * the test holds it (tests/rlimit.sh in the qemu guest covers the daemon). */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/core/rlimit.h"
#include "daemon/sys/proc.h"
#include "unit-util.h"

static char dir[PATH_MAX];

static void setup(void)
{
	unit_tmpdir(dir, "test-rlimit");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* A child that sets its limits to these and waits to be killed. */
/* A child with those limits, its real uid ruid ((uid_t)-1: ours), paused
 * until reaped. */
static pid_t child_as(rlim_t ps, rlim_t ph, rlim_t ts, rlim_t th, uid_t ruid)
{
	int p[2];
	char c;

	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit a = { ps, ph }, b = { ts, th };
		if (setrlimit(RLIMIT_RTPRIO, &a) < 0 || setrlimit(RLIMIT_RTTIME, &b) < 0 ||
		    setresuid(ruid, (uid_t)-1, (uid_t)-1) < 0)
			_exit(1);
		close(p[0]);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static pid_t child(rlim_t ps, rlim_t ph, rlim_t ts, rlim_t th)
{
	return child_as(ps, ph, ts, th, (uid_t)-1);
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static struct proc_rlimits limits(pid_t pid)
{
	struct proc_rlimits l;

	ck_assert_int_eq(proc_read_limits(pid, &l), 0);
	return l;
}

/* Soft limits go up to what was asked, the hard ones stay where they are
 * higher; a limit already higher is not touched, and nothing is said raised. */
START_TEST(test_raise_soft)
{
	struct rlimit_change ch;
	pid_t pid = child(0, 20, 1000, 500000);

	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 10, 200000, &ch), 0);
	ck_assert(ch.raised);
	struct proc_rlimits l = limits(pid);
	ck_assert_uint_eq(l.rtprio_soft, 10);
	ck_assert_uint_eq(l.rtprio_hard, 20);
	ck_assert_uint_eq(l.rttime_soft, 200000);
	ck_assert_uint_eq(l.rttime_hard, 500000);
	ck_assert_uint_eq(ch.rtprio_soft, 0);
	ck_assert_uint_eq(ch.rtprio_soft_new, 10);
	char text[160];
	rlimit_change_text(&ch, text, sizeof(text));
	ck_assert_str_eq(text, "RLIMIT_RTPRIO 0:20 -> 10:20, RLIMIT_RTTIME 1000:500000 -> 200000:500000 us");

	/* again, or lower: nothing lowered, nothing raised */
	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 5, -1, &ch), 0);
	ck_assert(!ch.raised);
	l = limits(pid);
	ck_assert_uint_eq(l.rtprio_soft, 10);
	ck_assert_uint_eq(l.rttime_soft, 200000);
	reap(pid);

	/* unlimited stays unlimited */
	pid = child(RLIM_INFINITY, RLIM_INFINITY, RLIM_INFINITY, RLIM_INFINITY);
	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 10, 200000, &ch), 0);
	ck_assert(!ch.raised);
	l = limits(pid);
	ck_assert(l.rtprio_soft == RLIM_INFINITY && l.rttime_hard == RLIM_INFINITY);
	reap(pid);
}
END_TEST

/* Not the owner's any more (as after a setuid exec), or gone: nothing done. */
START_TEST(test_refused)
{
	struct rlimit_change ch;
	pid_t pid = child(0, 0, RLIM_INFINITY, RLIM_INFINITY);

	ck_assert_int_eq(rlimit_grant(pid, geteuid() + 1, 10, -1, &ch), -ESRCH);
	ck_assert(!ch.raised);
	ck_assert_uint_eq(limits(pid).rtprio_soft, 0);
	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 0, -1, &ch), -EINVAL);
	reap(pid);
	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 10, -1, &ch), -ESRCH);
}
END_TEST

/* A set-user-ID program (real uid 65534, effective uid ours, root's as
 * make check runs) is never raised, capability or not: the limit would
 * outlive its drop back to the user who started it. */
START_TEST(test_setuid)
{
	struct rlimit_change ch;
	pid_t pid = child_as(0, 0, RLIM_INFINITY, RLIM_INFINITY, 65534);

	ck_assert_int_eq(rlimit_grant(pid, geteuid(), 10, 200000, &ch), -EACCES);
	ck_assert(!ch.raised);
	ck_assert_uint_eq(limits(pid).rtprio_soft, 0);
	ck_assert_uint_eq(limits(pid).rtprio_hard, 0);
	reap(pid);
}
END_TEST

/* The hard limit: only with CAP_SYS_RESOURCE; without it prlimit's EPERM,
 * and the limit unchanged. */
START_TEST(test_hard)
{
	struct rlimit_change ch;
	pid_t pid = child(0, 0, RLIM_INFINITY, RLIM_INFINITY);
	int r = rlimit_grant(pid, geteuid(), 10, -1, &ch);
	struct proc_rlimits l = limits(pid);

	if (rlimit_capable()) {
		ck_assert_int_eq(r, 0);
		ck_assert(l.rtprio_soft == 10 && l.rtprio_hard == 10);
	} else {
		ck_assert_int_eq(r, -EPERM);
		ck_assert(!ch.raised);
		ck_assert(l.rtprio_soft == 0 && l.rtprio_hard == 0);
	}
	reap(pid);
}
END_TEST

/* The findings: none without the key; ok or error by the capability, the
 * error with the unit's fix. */
START_TEST(test_check)
{
	struct config *c = unit_config(dir, "[rule a]\nprocess-name = a\npolicy = fifo\npriority = 10\n");
	struct diag_report rep;

	diag_report_init(&rep);
	ck_assert_int_eq(rlimit_check_add(&rep, c, false, true), 0);
	ck_assert_uint_eq(rep.n, 0);
	config_free(c);
	c = unit_config(dir, "[rule a]\nprocess-name = a\npolicy = fifo\npriority = 10\nreset-on-fork = no\n"
			"grant-rlimit = yes\n[rule b]\nprocess-name = b\npolicy = rr\npriority = 5\n"
			"reset-on-fork = no\ngrant-rlimit = yes\ngrant-rttime-us = 100000\n");
	ck_assert_uint_eq(c->n_rlimit_rules, 2);
	ck_assert_int_eq(c->rules[1].grant_rttime_us, 100000);
	ck_assert_int_eq(rlimit_check_add(&rep, c, true, true), 0);
	ck_assert_int_eq(rlimit_check_add(&rep, c, false, false), 0);
	ck_assert_uint_eq(rep.n, 2);
	ck_assert_str_eq(rep.v[0].code, "rlimit-grant");
	ck_assert_int_eq(rep.v[0].severity, DIAG_OK);
	ck_assert_ptr_nonnull(strstr(rep.v[0].message, "[rule a], [rule b]"));
	ck_assert_str_eq(rep.v[1].code, "rlimit-grant-no-cap");
	ck_assert_int_eq(rep.v[1].severity, DIAG_ERROR);
	ck_assert_ptr_nonnull(strstr(rep.v[1].message, "this process has no CAP_SYS_RESOURCE"));
	ck_assert_ptr_nonnull(strstr(rep.v[1].fix, "AmbientCapabilities=CAP_SYS_RESOURCE"));
	diag_report_free(&rep);
	config_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rlimit");
	TCase *tc = tcase_create("rlimit");

	tcase_add_checked_fixture(tc, setup, teardown);
	struct rlimit own;
	getrlimit(RLIMIT_RTPRIO, &own);
	/* the children set a hard RLIMIT_RTPRIO of 20 themselves */
	if (rlimit_capable() || own.rlim_max >= 20)
		tcase_add_test(tc, test_raise_soft);
	else
		unit_skip("test_raise_soft: needs CAP_SYS_RESOURCE or a hard RLIMIT_RTPRIO of 20 at least");
	tcase_add_test(tc, test_refused);
	if (geteuid() == 0)
		tcase_add_test(tc, test_setuid);
	else
		unit_skip("test_setuid: needs root (a child with real uid 65534 and effective uid 0)");
	tcase_add_test(tc, test_hard);
	tcase_add_test(tc, test_check);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
