/* test-proc.c: the /proc parsers of daemon/sys/proc.h and their edge
 * cases (the text as the kernel writes it, and what it never writes), and
 * the readers on the fixture tree of tests/fixtures/diag and on this
 * process's own /proc. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/sys/proc.h"
#include "unit-util.h"

#define FIXTURE_PROC TOP_SRCDIR "/tests/fixtures/diag/base/proc"

/* ------------------------------------------------------------ parsers --- */

START_TEST(test_parse_stat)
{
	/* a comm with spaces and parentheses, a negative nice */
	const char *line = "4242 (a) b (c) R 1 4240 4240 0 -1 4194368 120 0 0 0 1500 25 0 0 -51 0 3 0 987654 "
			   "10000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 50 1 0 0 0 0 0 0 0 0 0 0 0\n";
	struct proc_stat st;
#define TAIL " R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 " \
	     "31 32 33 34 35 36 %d %d 0 0\n"
	char buf[512];

	ck_assert_int_eq(proc_parse_stat(line, &st), 0);
	ck_assert_int_eq(st.tid, 4242);
	ck_assert_str_eq(st.comm, "a) b (c");
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.ppid, 1);
	ck_assert_uint_eq(st.flags, 4194368);
	ck_assert_int_eq(st.nice, 0);
	ck_assert_uint_eq(st.cputime, 1525);
	ck_assert_uint_eq(st.starttime, 987654);
	ck_assert_int_eq(st.processor, 1);
	ck_assert_int_eq(st.rt_priority, 50);
	ck_assert_int_eq(st.policy, SCHED_FIFO);
	/* the last ')' closes comm */
	snprintf(buf, sizeof(buf), "77 (a) (b)c)%s", "");
	ck_assert_int_eq(proc_parse_stat(buf, &st), -EINVAL);
	snprintf(buf, sizeof(buf), "77 (a) (b) c)");
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), TAIL, 42, 1);
	ck_assert_int_eq(proc_parse_stat(buf, &st), 0);
	ck_assert_str_eq(st.comm, "a) (b) c");
	ck_assert_int_eq(st.rt_priority, 42);
	ck_assert_int_eq(st.policy, SCHED_FIFO);
	/* out of range, short, malformed */
	snprintf(buf, sizeof(buf), "77 (x)");
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), TAIL, 0, 5000);
	ck_assert_int_eq(proc_parse_stat(buf, &st), -EINVAL);
	snprintf(buf, sizeof(buf), "77 (x)");
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), TAIL, -1, 0);
	ck_assert_int_eq(proc_parse_stat(buf, &st), -EINVAL);
	snprintf(buf, sizeof(buf), "x77 (x)");
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), TAIL, 0, 0);
	ck_assert_int_eq(proc_parse_stat(buf, &st), -EINVAL);
#undef TAIL
	/* a kernel thread: parent kthreadd, PF_KTHREAD, PF_NO_SETAFFINITY, nice -20 (a kworker/NH) */
	ck_assert_int_eq(proc_parse_stat("24 (kworker/1:0H-ev) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 0 "
					 "-20 1 0 24 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 1 0 0 17 "
					 "1 0 0 0 0 0 0 0 0 0 0 0 0 0\n", &st), 0);
	ck_assert_int_eq(st.ppid, 2);
	ck_assert_int_eq(st.nice, -20);
	ck_assert(st.flags & PROC_PF_KTHREAD);
	ck_assert(st.flags & PROC_PF_NO_SETAFFINITY);
	ck_assert_int_eq(proc_parse_stat("77 (x) R 1 2 3\n", &st), -EINVAL);
	ck_assert_int_eq(proc_parse_stat("4242 x R", &st), -EINVAL);
	ck_assert_int_eq(proc_parse_stat("no parenthesis", &st), -EINVAL);
	ck_assert_int_eq(proc_parse_stat("1 (a-comm-longer-than-16) R", &st), -EINVAL);
	ck_assert_int_eq(proc_parse_stat("", &st), -EINVAL);
}
END_TEST

START_TEST(test_parse_status)
{
	struct proc_status s;

	ck_assert_int_eq(proc_parse_status("Name:\tpw-data loop\nTgid:\t70\nPid:\t77\nUid:\t1000\t0\t0\t0\n"
					   "Gid:\t100\t100\t100\t100\nGroups:\t4 24 27 \n"
					   "CapEff:\t0000000000800000\nSeccomp:\t2\nCpus_allowed_list:\t1,3-4\n", &s), 0);
	ck_assert_str_eq(s.name, "pw-data loop");
	ck_assert_int_eq(s.tgid, 70);
	ck_assert_int_eq(s.pid, 77);
	ck_assert_uint_eq(s.uid, 1000);
	ck_assert_uint_eq(s.euid, 0);
	ck_assert_uint_eq(s.gid, 100);
	ck_assert_uint_eq(s.n_groups, 3);
	ck_assert(s.groups[0] == 4 && s.groups[1] == 24 && s.groups[2] == 27);
	ck_assert(s.have_capeff && !s.have_capbnd);
	ck_assert_uint_eq(s.capeff, 1u << 23);
	ck_assert_int_eq(s.seccomp, 2);
	ck_assert(s.have_cpus);
	ck_assert(CPU_ISSET(1, &s.cpus_allowed) && CPU_ISSET(4, &s.cpus_allowed) && !CPU_ISSET(2, &s.cpus_allowed));
	/* optional lines absent; an empty Groups line */
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5\nUid:\t0\t0\t0\t0\nGid:\t0\nGroups:\t \n", &s), 0);
	ck_assert_int_eq(s.seccomp, -1);
	ck_assert(!s.have_capeff && !s.have_cpus);
	ck_assert_str_eq(s.name, "");
	ck_assert_uint_eq(s.n_groups, 0);
	/* a long name is cut at the kernel's 16 */
	ck_assert_int_eq(proc_parse_status("Name:\t0123456789abcdefXYZ\nTgid:\t5\nPid:\t5\nUid:\t0\t0\t0\t0\n"
					   "Gid:\t0\n", &s), 0);
	ck_assert_str_eq(s.name, "0123456789abcdef");
	/* a malformed group ends the list, not the parse */
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5\nUid:\t0\t0\nGid:\t0\nGroups:\t1 x 3\n", &s), 0);
	ck_assert_uint_eq(s.n_groups, 1);
	/* required lines */
	ck_assert_int_eq(proc_parse_status("Name:\tx\nTgid:\t5\nUid:\t0\t0\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t0\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5x\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5\nUid:\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t99999999999\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPPid:\t5\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Pid:\t5\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t0\nPid:\t5\nUid:\t0\t0\nGid:\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("Tgid:\t5\nPid:\t5\nUid:\t0\t0\n", &s), -EINVAL);
	ck_assert_int_eq(proc_parse_status("", &s), -EINVAL);
}
END_TEST

static const char limits_text[] =
	"Limit                     Soft Limit           Hard Limit           Units     \n"
	"Max nice priority         0                    0                    \n"
	"Max realtime priority     40                   99                   \n"
	"Max realtime timeout      200000               unlimited            us        \n";

START_TEST(test_parse_limits)
{
	struct proc_rlimits l;
	char buf[1024];

	ck_assert_int_eq(proc_parse_limits(limits_text, &l), 0);
	ck_assert_uint_eq(l.rtprio_soft, 40);
	ck_assert_uint_eq(l.rtprio_hard, 99);
	ck_assert_uint_eq(l.rttime_soft, 200000);
	ck_assert(l.rttime_hard == RLIM_INFINITY);
	/* no final newline, tabs */
	ck_assert_int_eq(proc_parse_limits("Max realtime priority\t5\t6\nMax realtime timeout 1 2", &l), 0);
	ck_assert_uint_eq(l.rtprio_soft, 5);
	ck_assert_uint_eq(l.rttime_hard, 2);
	/* the largest rlim_t is RLIM_INFINITY; one more does not fit */
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 18446744073709551615 0\n"
					   "Max realtime timeout 0 0\n", &l), 0);
	ck_assert(l.rtprio_soft == RLIM_INFINITY);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 18446744073709551616 0\n"
					   "Max realtime timeout 0 0\n", &l), -ERANGE);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 99999999999999999999999 0\n"
					   "Max realtime timeout 0 0\n", &l), -ERANGE);
	/* malformed values */
	ck_assert_int_eq(proc_parse_limits("Max realtime priority -1 0\nMax realtime timeout 0 0\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 12x 0\nMax realtime timeout 0 0\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 1\nMax realtime timeout 0 0\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority unlimitedx 1\nMax realtime timeout 0 0\n", &l),
			 -EINVAL);
	/* missing rows, a row name that only starts the same, empty input */
	ck_assert_int_eq(proc_parse_limits("Max realtime priority 1 1\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("Max realtime priorityX 1 1\nMax realtime timeout 0 0\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits(" Max realtime priority 1 1\nMax realtime timeout 0 0\n", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("Max realtime priority2 5 5\nMax realtime priority 1 3\n"
					   "Max realtime timeout 0 0\n", &l), 0);
	ck_assert_uint_eq(l.rtprio_soft, 1);
	ck_assert_uint_eq(l.rtprio_hard, 3);
	ck_assert_int_eq(proc_parse_limits("", &l), -EINVAL);
	ck_assert_int_eq(proc_parse_limits("\n\n\n", &l), -EINVAL);
	/* the fixture file as the kernel writes it */
	snprintf(buf, sizeof(buf), "%s", limits_text);
	buf[strlen(buf) - 1] = '\0';
	ck_assert_int_eq(proc_parse_limits(buf, &l), 0);
}
END_TEST

START_TEST(test_parse_cgroup)
{
	struct proc_cgroup g;

	ck_assert_int_eq(proc_parse_cgroup("12:cpu,cpuacct:/system.slice/a.service\n4:cpuset:/rt\n"
					   "3:cpuacct:/x\n1:name=systemd:/system.slice/a.service\n"
					   "0::/system.slice/a.service\n", &g), 0);
	ck_assert(g.has_cpu_v1 && g.has_cpuset_v1 && g.has_systemd && g.has_unified);
	ck_assert_str_eq(g.cpu_v1, "/system.slice/a.service");
	ck_assert_str_eq(g.cpuset_v1, "/rt");
	ck_assert_str_eq(g.unified, "/system.slice/a.service");
	/* cpuacct and cpuset alone are not cpu */
	ck_assert_int_eq(proc_parse_cgroup("3:cpuacct,cpuset:/y\n0::/\n", &g), 0);
	ck_assert(!g.has_cpu_v1 && g.has_cpuset_v1 && g.has_unified);
	ck_assert_str_eq(g.unified, "/");
	/* pure cgroup v2; a path may hold colons */
	ck_assert_int_eq(proc_parse_cgroup("0::/a:b/c\n", &g), 0);
	ck_assert(!g.has_cpu_v1 && !g.has_systemd);
	ck_assert_str_eq(g.unified, "/a:b/c");
	ck_assert_int_eq(proc_parse_cgroup("", &g), 0);
	ck_assert(!g.has_unified);
	/* malformed */
	ck_assert_int_eq(proc_parse_cgroup("12cpu:/x\n", &g), -EINVAL);
	ck_assert_int_eq(proc_parse_cgroup(":cpu:/x\n", &g), -EINVAL);
	ck_assert_int_eq(proc_parse_cgroup("1:cpu:x\n", &g), -EINVAL);
	ck_assert_int_eq(proc_parse_cgroup("1:cpu:\n", &g), -EINVAL);
	{
		char big[2100];

		memset(big, 'a', sizeof(big));
		memcpy(big, "1:cpu:/", 7);
		big[sizeof(big) - 1] = '\0';
		ck_assert_int_eq(proc_parse_cgroup(big, &g), -ENAMETOOLONG);
		/* the longest path that fits, and one byte more */
		big[6 + sizeof(g.cpu_v1) - 1] = '\0';
		ck_assert_int_eq(proc_parse_cgroup(big, &g), 0);
		ck_assert_uint_eq(strlen(g.cpu_v1), sizeof(g.cpu_v1) - 1);
		big[6 + sizeof(g.cpu_v1) - 1] = 'a';
		big[6 + sizeof(g.cpu_v1)] = '\0';
		ck_assert_int_eq(proc_parse_cgroup(big, &g), -ENAMETOOLONG);
	}
}
END_TEST

START_TEST(test_unit_from_cgroup)
{
	char u[64];
	bool user = true;

	ck_assert_int_eq(proc_unit_from_cgroup("/system.slice/jackd.service", u, sizeof(u), &user), 0);
	ck_assert_str_eq(u, "jackd.service");
	ck_assert(!user);
	ck_assert_int_eq(proc_unit_from_cgroup("/user.slice/user-1000.slice/user@1000.service/session.slice/"
					       "pipewire.service", u, sizeof(u), &user), 0);
	ck_assert_str_eq(u, "pipewire.service");
	ck_assert(user);
	ck_assert_int_eq(proc_unit_from_cgroup("/user.slice/user-1000.slice/user@1000.service/init.scope",
					       u, sizeof(u), &user), 0);
	ck_assert_str_eq(u, "init.scope");
	ck_assert(user);
	ck_assert_int_eq(proc_unit_from_cgroup("/user.slice/user-1000.slice/user@1000.service", u, sizeof(u), &user), 0);
	ck_assert_str_eq(u, "user@1000.service");
	ck_assert(!user);
	ck_assert_int_eq(proc_unit_from_cgroup("/user.slice/user-1000.slice/session-3.scope", u, sizeof(u), &user), 0);
	ck_assert_str_eq(u, "session-3.scope");
	ck_assert_int_eq(proc_unit_from_cgroup("/system.slice/a.service/sub", u, sizeof(u), NULL), 0);
	ck_assert_str_eq(u, "a.service");
	ck_assert_int_eq(proc_unit_from_cgroup("/", u, sizeof(u), NULL), -ENOENT);
	ck_assert_int_eq(proc_unit_from_cgroup("/docker/abc", u, sizeof(u), NULL), -ENOENT);
	ck_assert_int_eq(proc_unit_from_cgroup("/.service", u, sizeof(u), NULL), -ENOENT);
	ck_assert_int_eq(proc_unit_from_cgroup("/a-very-long-name-of-a-unit.service", u, 8, NULL), -ENOSPC);
}
END_TEST


/* ------------------------------------------------------------ readers --- */

START_TEST(test_read_fixture)
{
	struct proc_status ps;
	struct proc_rlimits l;
	struct proc_cgroup g;
	struct proc_stat st;
	long long slack;
	char unit[64];

	ck_assert_int_eq(proc_read_status_at(FIXTURE_PROC, 4242, &ps), 0);
	ck_assert_str_eq(ps.name, "player");
	ck_assert_uint_eq(ps.uid, 65534);
	ck_assert_int_eq(proc_read_stat_at(FIXTURE_PROC, 4242, 0, &st), 0);
	ck_assert_str_eq(st.comm, "player (x) y");
	ck_assert_uint_eq(st.starttime, 123456);
	ck_assert_int_eq(proc_read_limits_at(FIXTURE_PROC, 4242, &l), 0);
	ck_assert_uint_eq(l.rtprio_soft, 0);
	ck_assert_int_eq(proc_read_timerslack_at(FIXTURE_PROC, 4242, &slack), 0);
	ck_assert_int_eq(slack, 50000);
	/* pid 0 is self */
	ck_assert_int_eq(proc_read_status_at(FIXTURE_PROC, 0, &ps), 0);
	ck_assert_str_eq(ps.name, "rtschedd");
	ck_assert_int_eq(proc_read_cgroup_at(FIXTURE_PROC, 0, &g), 0);
	ck_assert(g.has_unified && g.has_systemd && g.has_cpu_v1);
	ck_assert_int_eq(proc_unit_from_cgroup(g.unified, unit, sizeof(unit), NULL), 0);
	ck_assert_str_eq(unit, "rtschedd.service");
	/* a task that is not there; a file an old kernel lacks */
	ck_assert_int_eq(proc_read_status_at(FIXTURE_PROC, 999, &ps), -ESRCH);
	ck_assert_int_eq(proc_read_stat_at(FIXTURE_PROC, 4242, 4243, &st), -ESRCH);
	ck_assert_int_eq(proc_read_timerslack_at(FIXTURE_PROC, 1, &slack), -ENOENT);
}
END_TEST

START_TEST(test_read_self)
{
	struct proc_status ps;
	struct proc_stat st;
	struct proc_rlimits l;
	uint64_t run, delay, count;
	char comm[PROC_COMM_MAX + 1], name[4];
	pid_t *tids = NULL;
	size_t n = 0;
	gid_t groups[PROC_GROUPS_MAX];
	int ngroups;

	ck_assert_int_eq(proc_read_stat(getpid(), &st), 0);
	ck_assert_int_eq(st.tid, getpid());
	ck_assert_int_eq(st.state, 'R');
	ck_assert_int_eq(st.policy, sched_getscheduler(0) & ~SCHED_RESET_ON_FORK);
	ck_assert_int_ge(st.processor, 0);
	ck_assert_int_eq(proc_read_status(getpid(), &ps), 0);
	ck_assert_int_eq(ps.tgid, getpid());
	ck_assert_uint_eq(ps.uid, getuid());
	ck_assert_uint_eq(ps.euid, geteuid());
	ck_assert_uint_eq(ps.gid, getgid());
	ngroups = getgroups(PROC_GROUPS_MAX, groups);
	if (ngroups >= 0) {   /* -1: more than PROC_GROUPS_MAX, of which status keeps the first */
		ck_assert_uint_eq(ps.n_groups, (size_t)ngroups);
		for (int i = 0; i < ngroups; i++)
			ck_assert_uint_eq(ps.groups[i], groups[i]);
	}
	ck_assert_int_eq(proc_read_limits(getpid(), &l), 0);
	ck_assert_int_eq(proc_read_comm(getpid(), getpid(), comm, sizeof(comm)), 0);
	ck_assert_str_eq(comm, st.comm);
	ck_assert_int_eq(proc_read_comm(getpid(), 0, name, sizeof(name)), 0);
	ck_assert_uint_eq(strlen(name), strlen(st.comm) < 3 ? strlen(st.comm) : 3);
	ck_assert_int_eq(proc_read_schedstat(getpid(), getpid(), &run, &delay, &count), 0);
	ck_assert_int_eq(proc_list_tasks(getpid(), &tids, &n), 0);
	ck_assert_uint_ge(n, 1);
	free(tids);
	ck_assert_int_eq(proc_read_stat(0x3fffffff, &st), -ESRCH);
	ck_assert_int_eq(proc_read_comm(0x3fffffff, 0, comm, sizeof(comm)), -ESRCH);
}
END_TEST

/* proc_task_owner: membership of the thread group and the effective uid,
 * which the kernel gives a task's directories even when it is not dumpable
 * (a change of euid makes it so): the ownership check relies on both. */
START_TEST(test_task_owner)
{
	uid_t owner = (uid_t)-1;

	ck_assert_int_eq(proc_task_owner(getpid(), gettid(), &owner), 0);
	ck_assert_uint_eq(owner, geteuid());
	ck_assert_int_eq(proc_task_owner(getpid(), 0x3fffffff, &owner), -ESRCH);
	ck_assert_int_eq(proc_task_owner(getppid(), gettid(), &owner), -ESRCH);
	ck_assert_int_eq(proc_task_owner(0, gettid(), &owner), -ESRCH);

	/* the thread's status, by the same path */
	struct proc_status ps;
	ck_assert_int_eq(proc_read_task_status(getpid(), gettid(), &ps), 0);
	ck_assert_int_eq(ps.pid, gettid());
	ck_assert_uint_eq(ps.uid, getuid());
	ck_assert_uint_eq(ps.euid, geteuid());
	ck_assert_int_eq(proc_read_task_status(getpid(), 0x3fffffff, &ps), -ESRCH);
	ck_assert_int_eq(proc_read_task_status(0, gettid(), &ps), -ESRCH);
}
END_TEST

/* A child that lowers its RLIMIT_RTPRIO to prio and its RLIMIT_RTTIME to
 * 1234/5678 µs (soft below hard; lowering needs no privilege), then becomes
 * uid (-1: stays as it is), and waits for the pipe in *hold to close. */
static pid_t limited_child(uid_t uid, const struct rlimit *prio, int *hold)
{
	int p[2];
	pid_t c;

	ck_assert_int_eq(pipe(p), 0);
	c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		struct rlimit time = { 1234, 5678 };
		char b;

		close(p[1]);
		if (setrlimit(RLIMIT_RTPRIO, prio) < 0 || setrlimit(RLIMIT_RTTIME, &time) < 0)
			_exit(2);
		if (uid != (uid_t)-1 && (setgid(uid) < 0 || setuid(uid) < 0))
			_exit(3);
		while (read(p[0], &b, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	*hold = p[1];
	return c;
}

/* proc_read_limits and proc_pin_read_limits: by prlimit(2) where the
 * kernel allows it, else from /proc/PID/limits; each row as the child set
 * it and as the file has it. Another user's process (root without
 * CAP_SYS_RESOURCE is refused prlimit(2)) is read from the file. */
START_TEST(test_read_limits)
{
	uid_t uids[2] = { (uid_t)-1, 65534 };
	struct proc_pin pin = PROC_PIN_NONE;
	struct rlimit prio;

	/* soft below hard where the hard limit allows it */
	ck_assert_int_eq(getrlimit(RLIMIT_RTPRIO, &prio), 0);
	if (prio.rlim_max == RLIM_INFINITY || prio.rlim_max > 7)
		prio.rlim_max = 7;
	prio.rlim_cur = prio.rlim_max > 0 ? prio.rlim_max - 1 : 0;
	for (int i = 0; i < (getuid() == 0 ? 2 : 1); i++) {
		struct proc_rlimits l, file;
		int hold, status, tries = 0;
		pid_t c = limited_child(uids[i], &prio, &hold);

		/* until the child has set them and become uid */
		for (struct proc_status ps;; usleep(1000)) {
			ck_assert_int_eq(proc_read_limits_at("/proc", c, &file), 0);
			ck_assert_int_eq(proc_read_status(c, &ps), 0);
			if ((file.rttime_hard == 5678 && (uids[i] == (uid_t)-1 || ps.uid == uids[i])) || ++tries == 5000)
				break;
		}
		ck_assert_int_eq(proc_read_limits(c, &l), 0);
		ck_assert_uint_eq(l.rtprio_soft, prio.rlim_cur);
		ck_assert_uint_eq(l.rtprio_hard, prio.rlim_max);
		ck_assert_uint_eq(l.rttime_soft, 1234);
		ck_assert_uint_eq(l.rttime_hard, 5678);
		ck_assert(memcmp(&l, &file, sizeof(l)) == 0);
		/* the same through a pin (rtkit's callers) */
		ck_assert_int_eq(proc_pin_open(&pin, c), 0);
		memset(&l, 0, sizeof(l));
		ck_assert_int_eq(proc_pin_read_limits(&pin, c, &l, NULL, NULL), 0);
		ck_assert(memcmp(&l, &file, sizeof(l)) == 0);
		proc_pin_close(&pin);
		close(hold);
		ck_assert_int_eq(waitpid(c, &status, 0), c);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	ck_assert_int_eq(proc_read_limits(0x3fffffff, &(struct proc_rlimits){ 0 }), -ESRCH);
}
END_TEST

/* A pinned process: its threads' rlimits as /proc/PID/limits has them, read
 * afresh each time, and their owner as proc_task_owner() says; not another
 * process's thread; nothing once the process is gone (its descriptors name
 * that process, not the pid). */
START_TEST(test_pin)
{
	struct proc_pin pin = PROC_PIN_NONE;
	struct proc_rlimits l, want;
	struct rlimit old, rl;
	uid_t owner = (uid_t)-1;
	pid_t child;

	ck_assert_int_eq(proc_pin_read_limits(&pin, gettid(), &l, NULL, NULL), -ESRCH);   /* not open */
	ck_assert_int_eq(proc_pin_open(&pin, getpid()), 0);
	ck_assert_int_eq(proc_pin_read_limits(&pin, gettid(), &l, &owner, NULL), 0);
	ck_assert_int_eq(proc_read_limits(getpid(), &want), 0);
	ck_assert(memcmp(&l, &want, sizeof(l)) == 0);
	ck_assert_uint_eq(owner, geteuid());
	/* with the thread's start time, read through the same directory */
	uint64_t start = 0;
	struct proc_stat st;
	owner = (uid_t)-1;
	ck_assert_int_eq(proc_pin_read_limits(&pin, gettid(), &l, &owner, &start), 0);
	ck_assert_int_eq(proc_read_stat(gettid(), &st), 0);
	ck_assert_uint_eq(start, st.starttime);
	ck_assert_uint_eq(owner, geteuid());
	ck_assert(memcmp(&l, &want, sizeof(l)) == 0);
	ck_assert_int_eq(proc_pin_read_limits(&pin, getppid(), &l, &owner, &start), -ESRCH);
	/* afresh: a lowered soft RLIMIT_RTTIME shows at the next read */
	ck_assert_int_eq(getrlimit(RLIMIT_RTTIME, &old), 0);
	rl = old;
	rl.rlim_cur = old.rlim_max == RLIM_INFINITY || old.rlim_max > 12345 ? 12345 : old.rlim_max - 1;
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &rl), 0);
	ck_assert_int_eq(proc_pin_read_limits(&pin, gettid(), &l, NULL, NULL), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &old), 0);
	ck_assert_uint_eq(l.rttime_soft, rl.rlim_cur);
	ck_assert_int_eq(proc_pin_read_limits(&pin, getppid(), &l, NULL, NULL), -ESRCH);
	ck_assert_int_eq(proc_pin_read_limits(&pin, 0x3fffffff, &l, NULL, NULL), -ESRCH);
	proc_pin_close(&pin);
	ck_assert_int_eq(pin.dir_fd, -1);
	proc_pin_close(&pin);

	/* a child pinned, then gone and reaped */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_eq(proc_pin_open(&pin, child), 0);
	ck_assert_int_eq(proc_pin_read_limits(&pin, child, &l, &owner, NULL), 0);
	struct proc_status ps;
	ck_assert_int_eq(proc_pin_read_status(&pin, &ps), 0);
	ck_assert_int_eq(ps.tgid, child);
	ck_assert_uint_eq(ps.euid, geteuid());
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_int_eq(proc_pin_read_limits(&pin, child, &l, &owner, NULL), -ESRCH);
	ck_assert_int_eq(proc_pin_read_limits(&pin, child, &l, &owner, &start), -ESRCH);
	ck_assert_int_eq(proc_pin_read_status(&pin, &ps), -ESRCH);
	proc_pin_close(&pin);
	ck_assert_int_eq(proc_pin_read_status(&pin, &ps), -ESRCH);   /* not open */
}
END_TEST

/* The same of a process whose effective uid changed, so not dumpable: root
 * only (main). */
START_TEST(test_task_owner_not_dumpable)
{
	int pipefd[2];
	char c = 0;
	uid_t owner = (uid_t)-1;
	pid_t child;

	/* a child that takes effective uid 65534 (and so is not dumpable) */
	ck_assert_int_eq(pipe(pipefd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(pipefd[0]);
		if (setresuid((uid_t)-1, 65534, (uid_t)-1) < 0 || prctl(PR_GET_DUMPABLE) != 0)
			_exit(1);
		c = 1;
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	ck_assert_int_eq(proc_task_owner(child, child, &owner), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_uint_eq(owner, 65534);
}
END_TEST

/* /proc/interrupts: the header counts the CPUs, a line per irq, the
 * handlers' names after the counts, the chip and the hardware irq. */
START_TEST(test_parse_irq_name)
{
	static const char text[] =
		"           CPU0       CPU1       \n"
		" 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
		" 38:          0       5233 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
		"  1:          9          0  IO-APIC   1-edge      i8042, serio  \n"
		" 77:          9\n"
		"NMI:          0          0   Non-maskable interrupts\n"
		"LOC:     146222     156153   Local timer interrupts\n";
	char name[64];

	ck_assert_int_eq(proc_parse_irq_name(text, 38, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "virtio2-input.0");
	ck_assert_int_eq(proc_parse_irq_name(text, 24, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "ACPI:Ged");
	/* shared: every handler, trailing blanks gone */
	ck_assert_int_eq(proc_parse_irq_name(text, 1, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "i8042, serio");
	/* cut to the buffer */
	ck_assert_int_eq(proc_parse_irq_name(text, 38, name, 7), 0);
	ck_assert_str_eq(name, "virtio");
	ck_assert_int_eq(proc_parse_irq_name(text, 77, name, sizeof(name)), -EINVAL);
	ck_assert_int_eq(proc_parse_irq_name(text, 3, name, sizeof(name)), -ENOENT);
	ck_assert_int_eq(proc_parse_irq_name(text, -1, name, sizeof(name)), -EINVAL);
	ck_assert_int_eq(proc_parse_irq_name("", 1, name, sizeof(name)), -ENOENT);
	/* the real file: the first irq it lists has a name */
	FILE *f = fopen("/proc/interrupts", "re");
	char line[4096];
	int irq = -1;

	ck_assert_ptr_nonnull(f);
	while (irq < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, " %d:", &irq) != 1)
			irq = -1;
	fclose(f);
	ck_assert_int_ge(irq, 0);
	ck_assert_int_eq(proc_read_irq_name(irq, name, sizeof(name)), 0);
	ck_assert_int_gt((int)strlen(name), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proc");
	TCase *p = tcase_create("parsers"), *r = tcase_create("readers");

	tcase_add_test(p, test_parse_stat);
	tcase_add_test(p, test_parse_status);
	tcase_add_test(p, test_parse_limits);
	tcase_add_test(p, test_parse_cgroup);
	tcase_add_test(p, test_unit_from_cgroup);
	tcase_add_test(p, test_parse_irq_name);
	suite_add_tcase(s, p);
	tcase_add_test(r, test_read_fixture);
	tcase_add_test(r, test_read_self);
	tcase_add_test(r, test_task_owner);
	tcase_add_test(r, test_read_limits);
	tcase_add_test(r, test_pin);
	if (geteuid() == 0)
		tcase_add_test(r, test_task_owner_not_dumpable);
	else
		unit_skip("test_task_owner_not_dumpable: needs root, to change a child's effective uid");
	suite_add_tcase(s, r);
	return unit_run(s);
}
