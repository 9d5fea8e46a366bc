/* test-grant.c: the grant decision (grant.h) against configurations made
 * from text: request resolution, [daemon] max-priority, the privileged
 * (root, admin-group) path, per-user limits from [user NAME], [user *] and
 * the built-in defaults, widening by [group NAME], policies, CPUs, the nice
 * floor, max-threads, rtprio-cap from limits.conf and RLIMIT_RTPRIO, and the
 * per-uid rate limit. Every refusal is checked for its code and for the
 * message naming the rule and the fix.
 *
 * Subjects are the system's nobody (uid 65534, group nogroup) and daemon
 * (uid 1), which Debian and Fedora both have; nobody's group is matched
 * through its primary gid, so no /etc/group membership list is needed. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/core/grant.h"
#include "daemon/sys/subid.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/proc.h"
#include "shared/protocol.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static struct config *c;
static uid_t nobody_uid, daemon_uid;
static gid_t nogroup_gid, daemon_gid;

static void setup(void)
{
	struct passwd *pw = getpwnam("nobody");
	struct group *gr = getgrnam("nogroup");

	ck_assert_msg(pw && gr, "the tests need user nobody and group nogroup");
	ck_assert_uint_eq(pw->pw_gid, gr->gr_gid);
	nobody_uid = pw->pw_uid;
	nogroup_gid = gr->gr_gid;
	pw = getpwnam("daemon");
	ck_assert_msg(pw, "the tests need user daemon");
	ck_assert_uint_ne(pw->pw_gid, nogroup_gid);
	daemon_uid = pw->pw_uid;
	daemon_gid = pw->pw_gid;
	unit_tmpdir(dir, "test-grant");
	c = NULL;
}

static void teardown(void)
{
	config_free(c);
	c = NULL;
	unit_rmdir(dir);
}

static void load(const char *text)
{
	config_free(c);
	c = unit_config(dir, text);
}

static void subject_nobody(struct grant_subject *s)
{
	grant_subject_init(s, c, nobody_uid, nogroup_gid, getpid());
	ck_assert_str_eq(s->user, "nobody");
}

static struct grant_request req_policy(int policy, int priority)
{
	struct grant_request q;

	memset(&q, 0, sizeof(q));
	q.has_policy = true;
	q.policy = policy;
	q.has_priority = true;
	q.priority = priority;
	return q;
}

/* The decision of a register of q by s for this process (grant_decide());
 * the code (0: granted), spec, cap and msg ("msg; fix") filled. */
static int decide(const struct grant_subject *s, const struct grant_request *q, struct sched_spec *spec,
		  size_t held, size_t adding, struct grant_cap *cap, char *msg, size_t len)
{
	struct grant_ask a = { .path = GRANT_PATH_REGISTER, .subj = s, .req = q, .target = getpid(), .held = held,
			       .adding = adding };
	struct grant_decision d;
	int e = grant_decide(c, &a, &d);

	ck_assert_int_eq(d.code, e);
	ck_assert_int_eq(d.verdict, e > 0 ? GRANT_REFUSE : e < 0 ? GRANT_FAIL : GRANT_ALLOW);
	grant_decision_text(&d, msg, len);
	*spec = d.spec;
	*cap = d.cap;
	return e;
}

/* The decision must be `code` and msg must hold every needle (up to 3). */
static void expect(const struct grant_subject *s, const struct grant_request *q, int code, const char *n1,
		   const char *n2, const char *n3)
{
	const char *needles[] = { n1, n2, n3 };
	struct sched_spec spec;
	struct grant_cap cap;
	char msg[1024];
	int e = decide(s, q, &spec, 0, 1, &cap, msg, sizeof(msg));

	ck_assert_msg(e == code, "code %d, expected %d: %s", e, code, msg);
	for (size_t i = 0; i < 3; i++)
		if (needles[i])
			ck_assert_msg(strstr(msg, needles[i]), "'%s' not in: %s", needles[i], msg);
}

START_TEST(test_resolve)
{
	struct grant_request q;
	struct sched_spec spec;
	char msg[512];

	load("[daemon]\npolicy = fifo\npriority = 12\n"
	     "[rule audio]\npolicy = rr\npriority = 40\ncpus = 1\n"
	     "[rule bg]\npolicy = batch\nnice = 5\n");
	/* no role: the [daemon] default */
	memset(&q, 0, sizeof(q));
	ck_assert_int_eq(grant_resolve(c, &q, &spec), 0);
	ck_assert_int_eq(spec.policy, SCHED_FIFO);
	ck_assert_int_eq(spec.priority, 12);
	ck_assert(!spec.has_cpus);
	/* a role: its spec */
	snprintf(q.role, sizeof(q.role), "audio");
	ck_assert_int_eq(grant_resolve(c, &q, &spec), 0);
	ck_assert_int_eq(spec.policy, SCHED_RR);
	ck_assert_int_eq(spec.priority, 40);
	ck_assert(spec.has_cpus && CPU_ISSET(1, &spec.cpus) && CPU_COUNT(&spec.cpus) == 1);
	/* explicit settings win over the role's */
	q.has_priority = true;
	q.priority = 30;
	q.has_cpus = true;
	CPU_ZERO(&q.cpus);
	CPU_SET(0, &q.cpus);
	ck_assert_int_eq(grant_resolve(c, &q, &spec), 0);
	ck_assert_int_eq(spec.priority, 30);
	ck_assert(CPU_ISSET(0, &spec.cpus) && !CPU_ISSET(1, &spec.cpus));
	/* leaving real time drops the priority ... */
	memset(&q, 0, sizeof(q));
	snprintf(q.role, sizeof(q.role), "audio");
	q.has_policy = true;
	q.policy = SCHED_OTHER;
	ck_assert_int_eq(grant_resolve(c, &q, &spec), 0);
	ck_assert_int_eq(spec.policy, SCHED_OTHER);
	ck_assert_int_eq(spec.priority, 0);
	/* ... and entering it from a role without one takes the default's */
	snprintf(q.role, sizeof(q.role), "bg");
	q.policy = SCHED_FIFO;
	ck_assert_int_eq(grant_resolve(c, &q, &spec), 0);
	ck_assert_int_eq(spec.policy, SCHED_FIFO);
	ck_assert_int_eq(spec.priority, 12);
	/* a role that is not configured */
	snprintf(q.role, sizeof(q.role), "video");
	ck_assert_int_eq(grant_resolve(c, &q, &spec), REFUSE_UNKNOWN_ROLE);
	{
		struct grant_subject root;
		struct grant_cap cap;
		grant_subject_init(&root, c, 0, 0, getpid());
		ck_assert_int_eq(decide(&root, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), REFUSE_UNKNOWN_ROLE);
		ck_assert_msg(strstr(msg, "no rule 'video'") && strstr(msg, "add [rule video]"), "%s", msg);
	}
}
END_TEST

/* A priority the policy cannot take, and [daemon] max-priority: these hold
 * for everyone, root included. */
START_TEST(test_ranges_and_max_priority)
{
	struct grant_subject root;
	struct grant_request q;

	load("[daemon]\nmax-priority = 50\n");
	grant_subject_init(&root, c, 0, 0, getpid());
	ck_assert(root.privileged);
	q = req_policy(SCHED_FIFO, 0);
	expect(&root, &q, REFUSE_BAD_PRIORITY, "priority 0 is not valid for fifo", "use 1..99", NULL);
	q = req_policy(SCHED_OTHER, 5);
	expect(&root, &q, REFUSE_BAD_PRIORITY, "priority 5 is not valid for other", "use 0..0", NULL);
	q = req_policy(SCHED_FIFO, 50);
	expect(&root, &q, 0, NULL, NULL, NULL);
	q = req_policy(SCHED_FIFO, 51);
	expect(&root, &q, REFUSE_ABOVE_MAX, "priority 51 (requested) is above max-priority 50 in [daemon]",
	       "ask for 50 or less", "raise max-priority in [daemon]");
	/* a role's priority is named by the role */
	load("[daemon]\nmax-priority = 50\n[rule hot]\npolicy = fifo\npriority = 40\n");
	grant_subject_init(&root, c, 0, 0, getpid());
	q = req_policy(SCHED_FIFO, 60);
	q.has_priority = false;
	snprintf(q.role, sizeof(q.role), "hot");
	expect(&root, &q, 0, NULL, NULL, NULL);
	load("[daemon]\nmax-priority = 50\n[rule hot]\npolicy = fifo\npriority = 50\n");
	c->max_priority = 45;   /* as if lowered on the command line after validation */
	expect(&root, &q, REFUSE_ABOVE_MAX, "priority 50 (hot) is above max-priority 45", NULL, NULL);
}
END_TEST

/* root and admin-group members skip the per-user limits. */
START_TEST(test_admin_path)
{
	struct grant_subject s;
	struct grant_request q = req_policy(SCHED_FIFO, 70);
	struct sched_spec spec;
	struct grant_cap cap;
	char msg[512];

	load("[daemon]\nmax-priority = 80\n");
	subject_nobody(&s);
	ck_assert(!s.privileged);
	expect(&s, &q, REFUSE_POLICY, NULL, NULL, NULL);

	load("[daemon]\nmax-priority = 80\nadmin-group = nogroup\n");
	subject_nobody(&s);
	ck_assert(s.privileged);
	q.has_cpus = true;
	CPU_ZERO(&q.cpus);
	CPU_SET(1, &q.cpus);
	ck_assert_int_eq(decide(&s, &q, &spec, 1000, 1, &cap, msg, sizeof(msg)), 0);  /* no quota either */
	ck_assert(!cap.applies);
	ck_assert_int_eq(spec.priority, 70);
	q = req_policy(SCHED_FIFO, 81);
	expect(&s, &q, REFUSE_ABOVE_MAX, "max-priority 80 in [daemon]", NULL, NULL);
	/* a member by its primary gid only: an unknown uid with that gid */
	grant_subject_init(&s, c, 4242424, nogroup_gid, 1);
	ck_assert(s.privileged);
	grant_subject_init(&s, c, daemon_uid, daemon_gid, 1);
	ck_assert(!s.privileged);
	ck_assert_str_eq(s.user, "daemon");
	/* the one primary gid that would make it privileged (control.c's tally) */
	ck_assert_uint_eq(s.admin_gid, nogroup_gid);
	grant_subject_init(&s, c, daemon_uid, s.admin_gid, 1);
	ck_assert(s.privileged);
	/* root is privileged whatever admin-group says, and needs no name lookup */
	grant_subject_init(&s, c, 0, 12345, 1);
	ck_assert(s.privileged);
	ck_assert_str_eq(s.user, "root");
}
END_TEST

/* Without any [user] section: nothing real-time, no nice below 0. */
START_TEST(test_builtin_limits)
{
	struct grant_subject s;
	struct grant_limits l;
	struct grant_request q;

	load("[daemon]\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 0);
	ck_assert_int_eq(l.max_threads, 32);
	ck_assert_int_eq(l.min_nice, 0);
	ck_assert(!l.has_cpus);
	ck_assert_str_eq(l.policies_from, "built-in default");
	q = req_policy(SCHED_FIFO, 10);
	expect(&s, &q, REFUSE_POLICY, "policy fifo (requested) is not allowed for user nobody by built-in default",
	       "(policies = other,batch,idle)", "add fifo to policies in a [user] or [group] section");
	q = req_policy(SCHED_BATCH, 0);
	expect(&s, &q, 0, NULL, NULL, NULL);
	q.has_nice = true;
	q.nice = -1;
	expect(&s, &q, REFUSE_NICE, "nice -1 (requested) is below min-nice 0 for user nobody set by built-in default",
	       "ask for 0 or more", NULL);
	q.nice = 0;
	expect(&s, &q, 0, NULL, NULL, NULL);
	/* the default role's policy is named as "the [daemon] default" */
	memset(&q, 0, sizeof(q));
	expect(&s, &q, REFUSE_POLICY, "policy fifo (the [daemon] default)", NULL, NULL);
	/* a uid without a passwd entry is named by its number, not by "" */
	grant_subject_init(&s, c, 4243, 4243, getpid());
	ck_assert_msg(s.user[0] == '\0' && !s.subordinate, "uid 4243 (the tests' uid without an entry) is %s",
		      s.user);
	q = req_policy(SCHED_FIFO, 10);
	expect(&s, &q, REFUSE_POLICY, "policy fifo (requested) is not allowed for uid 4243 by built-in default",
	       NULL, NULL);
}
END_TEST

/* [user NAME] replaces [user *] whole; [user *] applies to every other user. */
START_TEST(test_user_sections)
{
	struct grant_subject s;
	struct grant_limits l;
	struct grant_request q;

	load("[user *]\nmax-priority = 30\npolicies = fifo,other\nmax-threads = 4\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 30);
	ck_assert_str_eq(l.prio_from, "[user *]");
	q = req_policy(SCHED_FIFO, 30);
	expect(&s, &q, 0, NULL, NULL, NULL);
	q = req_policy(SCHED_FIFO, 31);
	expect(&s, &q, REFUSE_PRIORITY, "priority 31 (requested) is above max-priority 30 for user nobody set by [user *]",
	       "ask for 30 or less", "raise max-priority there");
	q = req_policy(SCHED_RR, 10);
	expect(&s, &q, REFUSE_POLICY, "policy rr (requested) is not allowed for user nobody by [user *]",
	       "(policies = other,fifo)", NULL);

	load("[user *]\nmax-priority = 30\npolicies = fifo,other\nmax-threads = 4\n"
	     "[user nobody]\nmax-priority = 10\npolicies = rr\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 10);
	ck_assert_str_eq(l.prio_from, "[user nobody]");
	ck_assert_uint_eq(l.policies, 1u << SCHED_RR);
	/* not merged with [user *]: max-threads is the built-in one */
	ck_assert_int_eq(l.max_threads, 32);
	ck_assert_str_eq(l.threads_from, "built-in default");
	q = req_policy(SCHED_RR, 11);
	expect(&s, &q, REFUSE_PRIORITY, "above max-priority 10 for user nobody set by [user nobody]", NULL, NULL);
	q = req_policy(SCHED_FIFO, 5);
	expect(&s, &q, REFUSE_POLICY, "by [user nobody] (policies = rr)", NULL, NULL);
	/* another user still gets [user *] */
	grant_subject_init(&s, c, daemon_uid, daemon_gid, 1);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 30);
	ck_assert_int_eq(l.max_threads, 4);
}
END_TEST

/* A [group] the user is in widens, key by key, and never narrows. */
START_TEST(test_group_widens)
{
	struct grant_subject s;
	struct grant_limits l;
	struct grant_request q;

	load("[user nobody]\nmax-priority = 10\npolicies = fifo\nmax-threads = 2\nmin-nice = 0\ncpus = 0\n"
	     "[group nogroup]\nmax-priority = 30\npolicies = rr\nmax-threads = 1\nmin-nice = -5\ncpus = 1\n"
	     "[group daemon]\nmax-priority = 90\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 30);
	ck_assert_str_eq(l.prio_from, "[group nogroup]");
	ck_assert_uint_eq(l.policies, 1u << SCHED_FIFO | 1u << SCHED_RR);
	ck_assert_str_eq(l.policies_from, "[group nogroup]");
	ck_assert_int_eq(l.max_threads, 2);             /* the group's 1 is not more generous */
	ck_assert_str_eq(l.threads_from, "[user nobody]");
	ck_assert_int_eq(l.min_nice, -5);
	ck_assert_str_eq(l.nice_from, "[group nogroup]");
	ck_assert(l.has_cpus && CPU_ISSET(0, &l.cpus) && CPU_ISSET(1, &l.cpus));
	q = req_policy(SCHED_RR, 30);
	expect(&s, &q, 0, NULL, NULL, NULL);
	q = req_policy(SCHED_RR, 31);
	expect(&s, &q, REFUSE_PRIORITY, "set by [group nogroup]", "[group] section", NULL);

	/* a group cannot put a CPU limit on a user who had none */
	load("[user nobody]\nmax-priority = 10\npolicies = fifo\n"
	     "[group nogroup]\ncpus = 1\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert(!l.has_cpus);
	ck_assert_int_eq(l.max_priority, 10);
	/* a group the user is not in does nothing */
	load("[user nobody]\nmax-priority = 10\npolicies = fifo\n[group daemon]\nmax-priority = 60\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 10);
	/* with no [user] section at all the group widens the built-in defaults */
	load("[group nogroup]\nmax-priority = 20\npolicies = fifo\n");
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 20);
	expect(&s, &q, 0, NULL, NULL, NULL);
}
END_TEST

START_TEST(test_cpus)
{
	struct grant_subject s;
	struct grant_request q;

	load("[user *]\nmax-priority = 20\npolicies = fifo,other\ncpus = 0\n"
	     "[rule pinned]\npolicy = fifo\npriority = 10\ncpus = 0-1\n");
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 10);
	expect(&s, &q, 0, NULL, NULL, NULL);            /* no cpus asked: the affinity is left alone */
	q.has_cpus = true;
	CPU_ZERO(&q.cpus);
	CPU_SET(0, &q.cpus);
	expect(&s, &q, 0, NULL, NULL, NULL);
	CPU_SET(1, &q.cpus);
	CPU_SET(3, &q.cpus);
	expect(&s, &q, REFUSE_CPUS, "CPU 1,3 (requested) is outside the CPUs 0 allowed for user nobody by [user *]",
	       NULL, NULL);
	memset(&q, 0, sizeof(q));
	snprintf(q.role, sizeof(q.role), "pinned");
	expect(&s, &q, REFUSE_CPUS, "CPU 1 (pinned) is outside", NULL, NULL);
}
END_TEST

/* min-nice, and the floor a front end (rtkit's min-nice-level) sets instead. */
START_TEST(test_nice_floor)
{
	struct grant_subject s;
	struct grant_request q;

	load("[user *]\nmin-nice = -5\n[rule loud]\npolicy = other\nnice = -10\n");
	subject_nobody(&s);
	q = req_policy(SCHED_OTHER, 0);
	q.has_nice = true;
	q.nice = -5;
	expect(&s, &q, 0, NULL, NULL, NULL);
	q.nice = -6;
	expect(&s, &q, REFUSE_NICE, "nice -6 (requested) is below min-nice -5 for user nobody set by [user *]",
	       "ask for -5 or more", "or lower min-nice there");
	memset(&q, 0, sizeof(q));
	snprintf(q.role, sizeof(q.role), "loud");
	expect(&s, &q, REFUSE_NICE, "nice -10 (loud)", NULL, NULL);
	/* the front end's floor ([rtkit] min-nice-level) narrows min-nice, never
	 * widens it: a bus caller gets no more than a socket client (issue 23) */
	s.has_nice_floor = true;
	s.nice_floor = -11;
	expect(&s, &q, REFUSE_NICE, "nice -10 (loud) is below min-nice -5 for user nobody set by [user *]", NULL,
	       NULL);
	s.nice_floor = -2;
	q = req_policy(SCHED_OTHER, 0);
	q.has_nice = true;
	q.nice = -3;
	expect(&s, &q, REFUSE_NICE, "below min-nice -2 for user nobody set by [rtkit] min-nice-level", NULL, NULL);
	q.nice = -2;
	expect(&s, &q, 0, NULL, NULL, NULL);
}
END_TEST

/* session = active: a section counts only while the user sits at the
 * machine (sd-login); nobody never has a seat session, so [user *] is left
 * out and the built-in defaults refuse, saying why (issue 23). */
START_TEST(test_session)
{
	struct grant_subject s;
	struct grant_request q;
	struct grant_limits l;

	load("[user *]\nsession = active\nmax-priority = 20\npolicies = fifo,other\nmin-nice = -15\n"
	     "[group nogroup]\nmax-threads = 50\n");
	subject_nobody(&s);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 0);
	ck_assert_int_eq(l.min_nice, 0);
	ck_assert_int_eq(l.max_threads, 50);  /* the group, which asks for no session, counts */
	ck_assert_str_eq(l.skipped, "[user *]");
	q = req_policy(SCHED_FIFO, 10);
	expect(&s, &q, REFUSE_POLICY, "[user *] not counted: session = active there, and user nobody has no "
	       "active session on a local seat", NULL, NULL);
	/* without it, [user *] applies as before */
	load("[user *]\nmax-priority = 20\npolicies = fifo,other\n");
	expect(&s, &q, 0, NULL, NULL, NULL);
}
END_TEST

/* The owner of a subordinate uid (subid.h), as libsubid reads /etc/subuid:
 * root only (main), in a child with a mount namespace of its own where a
 * file of the test's lies over /etc/subuid. What the child found comes
 * back through a pipe: {uid asked, subid_owner()'s result, the owner}. */
struct subid_answer {
	uid_t uid;
	int r;
	uid_t owner;
};

START_TEST(test_subid)
{
	static const uid_t ask[] = { 100000, 165535, 165536, 200009, 200010, 300005, 1 };
	struct subid_answer got[sizeof(ask) / sizeof(ask[0])];
	char path[PATH_MAX + 32];
	int fds[2], st;
	uid_t nobody = getpwnam("nobody")->pw_uid;
	FILE *f;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/subuid", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	/* a name, a uid in digits, a line shadow skips, a range of root's */
	fputs("nobody:100000:65536\nbroken line\n1234:200000:10\n0:300000:10\n", f);
	fclose(f);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(path, "/etc/subuid", "none", MS_BIND, NULL) < 0)
			_exit(2);
		for (size_t i = 0; i < sizeof(ask) / sizeof(ask[0]); i++) {
			struct subid_answer a = { ask[i], 0, (uid_t)-1 };

			a.r = subid_owner(ask[i], &a.owner);
			if (write(fds[1], &a, sizeof(a)) != (ssize_t)sizeof(a))
				_exit(3);
		}
		_exit(0);
	}
	close(fds[1]);
	for (size_t i = 0; i < sizeof(ask) / sizeof(ask[0]); i++)
		ck_assert_int_eq(read(fds[0], &got[i], sizeof(got[i])), (ssize_t)sizeof(got[i]));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child could not lay the file over /etc/subuid");
	ck_assert_int_eq(got[0].r, 0);
	ck_assert_uint_eq(got[0].owner, nobody);
	ck_assert_int_eq(got[1].r, 0);
	ck_assert_uint_eq(got[1].owner, nobody);
	ck_assert_int_eq(got[2].r, -ENOENT);
	ck_assert_int_eq(got[3].r, 0);
	ck_assert_uint_eq(got[3].owner, 1234);
	ck_assert_int_eq(got[4].r, -ENOENT);
	ck_assert_int_eq(got[5].r, -ENOENT);   /* root's only */
	ck_assert_int_eq(got[6].r, -ENOENT);
}
END_TEST

START_TEST(test_quota)
{
	struct grant_subject s;
	struct grant_request q;
	struct sched_spec spec;
	struct grant_cap cap;
	char msg[512];

	load("[user *]\nmax-priority = 20\npolicies = fifo\nmax-threads = 3\n");
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 10);
	ck_assert_int_eq(decide(&s, &q, &spec, 2, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 3, &cap, msg, sizeof(msg)), 0);
	ck_assert_int_eq(decide(&s, &q, &spec, 3, 1, &cap, msg, sizeof(msg)), REFUSE_QUOTA);
	ck_assert_msg(strstr(msg, "user nobody holds 3 threads and may hold 3 (max-threads in [user *])"), "%s", msg);
	/* a process registration asks for all its threads at once */
	ck_assert_int_eq(decide(&s, &q, &spec, 1, 3, &cap, msg, sizeof(msg)), REFUSE_QUOTA);
	ck_assert_msg(strstr(msg, "holds 1 thread and"), "%s", msg);
	/* a re-check of what is held (adding 0) passes at the limit */
	ck_assert_int_eq(decide(&s, &q, &spec, 3, 0, &cap, msg, sizeof(msg)), 0);
}
END_TEST

/* rtprio-cap = limits-conf against a limits.conf of our own. */
START_TEST(test_rtprio_cap_limits_conf)
{
	static const char fmt[] =
		"[daemon]\nrtprio-cap = limits-conf\nover-cap = %s\nlimits-conf = %s/limits.conf\n"
		"limits-dir = %s/limits.d\n"
		"[user *]\nmax-priority = 60\npolicies = fifo,rr,other\n";
	char text[sizeof(fmt) + 3 * PATH_MAX], msg[1024], at[PATH_MAX + 64], fix[64];
	struct grant_subject s;
	struct grant_request q;
	struct sched_spec spec;
	struct grant_cap cap;
	char d[PATH_MAX + 16];

	snprintf(d, sizeof(d), "%s/limits.d", dir);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	unit_write(dir, "limits.conf", "# a comment\nnobody soft rtprio 15\nnobody hard rtprio 30\n");
	snprintf(text, sizeof(text), fmt, "refuse", dir, dir);
	load(text);
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 15);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert(cap.applies && !cap.clamped);
	ck_assert_int_eq(cap.cap, 15);
	snprintf(at, sizeof(at), "limits.conf soft rtprio at %s/limits.conf:2", dir);
	ck_assert_msg(strstr(cap.from, at), "%s", cap.from);
	q.priority = 16;
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), REFUSE_RTPRIO_CAP);
	ck_assert_msg(strstr(msg, "priority 16 is above the cap 15 from") && strstr(msg, at), "%s", msg);
	snprintf(fix, sizeof(fix), "'nobody - rtprio 16'");
	ck_assert_msg(strstr(msg, fix) && strstr(msg, "or ask for 15"), "%s", msg);
	/* not real-time: no cap */
	q = req_policy(SCHED_OTHER, 0);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert(!cap.applies);

	/* over-cap = clamp: granted, lowered to the cap, and said so */
	snprintf(text, sizeof(text), fmt, "clamp", dir, dir);
	load(text);
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 40);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert(cap.applies && cap.clamped);
	ck_assert_int_eq(cap.asked, 40);
	ck_assert_int_eq(spec.priority, 15);
	/* no rtprio line for the user: cap 0, which even clamp cannot grant */
	grant_subject_init(&s, c, daemon_uid, daemon_gid, 1);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), REFUSE_RTPRIO_CAP);
	ck_assert_msg(strstr(msg, "no rtprio line for user daemon") && strstr(msg, "'daemon - rtprio 40'"), "%s", msg);
	/* a limits.d drop-in counts */
	unit_write(d, "rt.conf", "daemon - rtprio 25\n");
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert_int_eq(spec.priority, 25);
	/* root: the cap does not apply */
	grant_subject_init(&s, c, 0, 0, 1);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), 0);
	ck_assert(!cap.applies);
	ck_assert_int_eq(spec.priority, 40);
}
END_TEST

/* rtprio-cap = rlimit: the target process's soft RLIMIT_RTPRIO, read from
 * /proc/PID/limits (here our own, lowered to 0 for the test). */
START_TEST(test_rtprio_cap_rlimit)
{
	struct grant_subject s;
	struct grant_request q;
	struct sched_spec spec;
	struct grant_cap cap;
	struct rlimit old, rl;
	char msg[1024], needle[128];

	ck_assert_int_eq(getrlimit(RLIMIT_RTPRIO, &old), 0);
	rl = old;
	rl.rlim_cur = 0;
	ck_assert_int_eq(setrlimit(RLIMIT_RTPRIO, &rl), 0);
	load("[daemon]\nrtprio-cap = rlimit\nover-cap = clamp\n[user *]\nmax-priority = 60\npolicies = fifo\n");
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 5);
	ck_assert_int_eq(decide(&s, &q, &spec, 0, 1, &cap, msg, sizeof(msg)), REFUSE_RTPRIO_CAP);
	snprintf(needle, sizeof(needle), "above the cap 0 from RLIMIT_RTPRIO of pid %d (soft 0", (int)getpid());
	ck_assert_msg(strstr(msg, needle), "%s", msg);
	snprintf(needle, sizeof(needle), "prlimit --pid %d --rtprio=5", (int)getpid());
	ck_assert_msg(strstr(msg, needle) && strstr(msg, "LimitRTPRIO=5"), "%s", msg);
	/* a target that is gone: the cap cannot be read; a failure, not a
	 * refusal: -errno (the wire's "internal"), verdict FAIL */
	struct grant_ask a = { .path = GRANT_PATH_REGISTER, .subj = &s, .req = &q, .target = INT_MAX, .adding = 1 };
	struct grant_decision d;
	ck_assert_int_lt(grant_decide(c, &a, &d), 0);
	ck_assert_int_eq(d.verdict, GRANT_FAIL);
	ck_assert_msg(strstr(d.msg, "cannot read the rtprio cap (rtprio-cap)"), "%s", d.msg);
	ck_assert_int_eq(setrlimit(RLIMIT_RTPRIO, &old), 0);
}
END_TEST

/* The order of the checks: the first rule that refuses is the one named. */
START_TEST(test_first_refusal_named)
{
	struct grant_subject s;
	struct grant_request q;

	load("[user *]\nmax-priority = 10\npolicies = fifo\nmin-nice = 0\ncpus = 0\nmax-threads = 1\n");
	subject_nobody(&s);
	/* above [daemon] max-priority before the user's policies */
	q = req_policy(SCHED_RR, 90);
	expect(&s, &q, REFUSE_ABOVE_MAX, NULL, NULL, NULL);
	/* the policy before the priority */
	q = req_policy(SCHED_RR, 20);
	expect(&s, &q, REFUSE_POLICY, NULL, NULL, NULL);
	/* the priority before the CPUs */
	q = req_policy(SCHED_FIFO, 20);
	q.has_cpus = true;
	CPU_ZERO(&q.cpus);
	CPU_SET(1, &q.cpus);
	expect(&s, &q, REFUSE_PRIORITY, NULL, NULL, NULL);
}
END_TEST

START_TEST(test_owns)
{
	struct proc_status ps = { .tgid = 1, .uid = 1000, .euid = 1000, .gid = 1000 };

	ck_assert(grant_owns(1000, &ps));
	ck_assert(!grant_owns(1001, &ps));
	ps.euid = 0;    /* a setuid program its caller started */
	ck_assert(!grant_owns(1000, &ps));
	ck_assert(!grant_owns(0, &ps));
	ps.uid = 0;
	ps.euid = 1000;
	ck_assert(!grant_owns(1000, &ps));
}
END_TEST

/* Token buckets with explicit times: burst, refill, per uid, off at rate 0. */
START_TEST(test_ratelimit)
{
	struct ratelimit *rl;
	const uint64_t t0 = 1000000000;

	ck_assert_int_eq(ratelimit_new(&rl), 0);
	for (int i = 0; i < 3; i++)
		ck_assert(ratelimit_take(rl, 1000, t0, 2, 3));
	ck_assert(!ratelimit_take(rl, 1000, t0, 2, 3));
	ck_assert(ratelimit_take(rl, 1001, t0, 2, 3));       /* another uid has its own bucket */
	ck_assert(!ratelimit_take(rl, 1000, t0 + 499999, 2, 3));
	ck_assert(ratelimit_take(rl, 1000, t0 + 500000, 2, 3)); /* rate 2/s: one token per 0.5 s */
	ck_assert(!ratelimit_take(rl, 1000, t0 + 500000, 2, 3));
	/* a long pause refills to the burst, no more */
	for (int i = 0; i < 3; i++)
		ck_assert(ratelimit_take(rl, 1000, t0 + 3600000000ull, 2, 3));
	ck_assert(!ratelimit_take(rl, 1000, t0 + 3600000000ull, 2, 3));
	ck_assert(ratelimit_take(rl, 1000, t0, 0, 0));       /* rate 0: off */
	/* many uids: the table grows */
	for (uid_t u = 0; u < 100; u++)
		ck_assert(ratelimit_take(rl, 5000 + u, t0, 1, 1));
	for (uid_t u = 0; u < 100; u++)
		ck_assert(!ratelimit_take(rl, 5000 + u, t0, 1, 1));
	ratelimit_free(rl);
	ratelimit_free(NULL);
}
END_TEST

/* The counting take (the log's cap on refusal lines): what it refused is
 * told with the next token, once, per uid. */
START_TEST(test_ratelimit_counted)
{
	struct ratelimit *rl;
	const uint64_t t0 = 1000000000;
	unsigned long missed = 99;

	ck_assert_int_eq(ratelimit_new(&rl), 0);
	ck_assert(ratelimit_take_counted(rl, 7, t0, 1, 2, &missed));
	ck_assert_uint_eq(missed, 0);
	ck_assert(ratelimit_take_counted(rl, 7, t0, 1, 2, &missed));
	for (int i = 0; i < 5; i++) {
		ck_assert(!ratelimit_take_counted(rl, 7, t0 + 1000, 1, 2, &missed));
		ck_assert_uint_eq(missed, 0);
	}
	ck_assert(!ratelimit_take(rl, 7, t0 + 2000, 1, 2)); /* the plain take counts too */
	ck_assert(ratelimit_take_counted(rl, 8, t0, 1, 2, &missed)); /* another uid: its own count */
	ck_assert_uint_eq(missed, 0);
	ck_assert(ratelimit_take_counted(rl, 7, t0 + 1000000, 1, 2, &missed));
	ck_assert_uint_eq(missed, 6);
	ck_assert(ratelimit_take_counted(rl, 7, t0 + 2000000, 1, 2, &missed));
	ck_assert_uint_eq(missed, 0);   /* told once */
	ck_assert(ratelimit_take_counted(rl, 7, t0, 0, 0, &missed)); /* rate 0: off */
	ck_assert_uint_eq(missed, 0);
	ratelimit_free(rl);
}
END_TEST

/* A charge after the fact (a reply's rows): the bucket goes below empty and
 * the next take waits until it is paid back; ratelimit_wait() says how long.
 * No bucket, or rate 0: nothing. */
START_TEST(test_ratelimit_charge)
{
	struct ratelimit *rl;
	const uint64_t t0 = 1000000000;

	ck_assert_int_eq(ratelimit_new(&rl), 0);
	ratelimit_charge(rl, 9, t0, 10, 20, 100);            /* no bucket yet: nothing */
	ck_assert(ratelimit_take(rl, 9, t0, 10, 20));
	ratelimit_charge(rl, 9, t0, 10, 20, 60);              /* 19 - 60 = -41 */
	ck_assert(!ratelimit_take(rl, 9, t0, 10, 20));
	ck_assert_uint_eq(ratelimit_wait(rl, 9, t0, 10), 4200001); /* 42 tokens at 10/s */
	ck_assert(!ratelimit_take(rl, 9, t0 + 4199999, 10, 20));
	ck_assert(ratelimit_take(rl, 9, t0 + 4200001, 10, 20));
	ratelimit_charge(rl, 9, t0, 0, 20, 1000);             /* rate 0: off */
	ck_assert(ratelimit_take(rl, 9, t0 + 4300001, 10, 20));
	ratelimit_free(rl);
}
END_TEST

/* Buckets full again go when the table needs room: 1,024 uids that each took
 * a token once, then ten seconds later another uid, leave two buckets, the
 * new one and the one still in debt (a charge it has not paid back), which
 * still refuses. */
START_TEST(test_ratelimit_evict)
{
	struct ratelimit *rl;
	const uint64_t t0 = 1000000000;

	ck_assert_int_eq(ratelimit_new(&rl), 0);
	for (uid_t u = 0; u < 1024; u++)
		ck_assert(ratelimit_take(rl, 100000 + u, t0, 1, 2));
	ratelimit_charge(rl, 100005, t0, 1, 2, 100);
	ck_assert_uint_eq(ratelimit_buckets(rl), 1024);
	ck_assert(ratelimit_take(rl, 7, t0 + 10000000, 1, 2));
	ck_assert_uint_eq(ratelimit_buckets(rl), 2);
	ck_assert(!ratelimit_take(rl, 100005, t0 + 10000000, 1, 2));
	ck_assert(ratelimit_take(rl, 100006, t0 + 10000000, 1, 2));   /* as new: full */
	ratelimit_free(rl);
}
END_TEST

/* The wire code of every refusal (ops_wire_error(), the one table): what
 * clients have seen since before the core had refusals of its own. A
 * failure (-errno), or anything outside the table, is internal. */
START_TEST(test_wire_codes)
{
	static const struct { int r; enum proto_error pe; } want[] = {
		{ REFUSE_UNKNOWN_ROLE, PE_UNKNOWN_ROLE }, { REFUSE_BAD_PRIORITY, PE_BAD_REQUEST },
		{ REFUSE_ABOVE_MAX, PE_ABOVE_MAX }, { REFUSE_POLICY, PE_POLICY_DENIED },
		{ REFUSE_NICE, PE_NICE_DENIED }, { REFUSE_PRIORITY, PE_PRIORITY_DENIED },
		{ REFUSE_CPUS, PE_CPU_DENIED }, { REFUSE_RTPRIO_CAP, PE_RTPRIO_CAP }, { REFUSE_QUOTA, PE_QUOTA },
		{ REFUSE_NO_SUCH_THREAD, PE_NO_SUCH_THREAD }, { REFUSE_STALE_THREAD, PE_STALE_THREAD },
		{ REFUSE_NOT_A_PROCESS, PE_BAD_REQUEST }, { REFUSE_NOT_OWN_THREAD, PE_NOT_OWN_THREAD },
		{ REFUSE_WATCHDOG_COOLDOWN, PE_WATCHDOG_COOLDOWN }, { REFUSE_DEADLINE, PE_UNSUPPORTED_TARGET },
		{ REFUSE_RTTIME_ZERO, PE_RTTIME_ZERO }, { REFUSE_APPLY_FAILED, PE_APPLY_FAILED },
		{ REFUSE_BAD_HISTOGRAM, PE_BAD_REQUEST }, { REFUSE_HISTOGRAM_LAYOUT, PE_VERSION },
		{ REFUSE_RATE_LIMITED, PE_RATE_LIMITED }, { REFUSE_RTTIME_OVER_MAX, PE_RTTIME_OVER_MAX },
		{ -ENOMEM, PE_INTERNAL }, { -EIO, PE_INTERNAL }, { REFUSE__MAX, PE_INTERNAL },
	};

	/* every refusal is in the list: a new one must get its code here too */
	ck_assert_int_eq(sizeof(want) / sizeof(want[0]), REFUSE__MAX - 1 + 3);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(ops_wire_error(want[i].r) == want[i].pe, "refusal %d: %s, want %s", want[i].r,
			      proto_error_code(ops_wire_error(want[i].r)), proto_error_code(want[i].pe));
}
END_TEST

/* Every path's decision of the same request by the same subject is the
 * same (code, spec, cap) when no cooldown runs: the paths differ in what
 * the cooldown does and nothing else. The requests cover a grant, a clamp,
 * and a refusal of each kind the limits make. */
START_TEST(test_decide_paths_agree)
{
	static const enum grant_path paths[] = { GRANT_PATH_REGISTER, GRANT_PATH_RTKIT, GRANT_PATH_CAUGHT,
						 GRANT_PATH_RULE, GRANT_PATH_PROCESS, GRANT_PATH_REAPPLY,
						 GRANT_PATH_ADOPT, GRANT_PATH_CHECK };
	struct grant_request qs[6];
	struct grant_subject s, root;
	struct proc_rlimits lim = { .rttime_soft = 100000, .rttime_hard = 100000 };

	load("[daemon]\nmax-priority = 80\n[rule audio]\npolicy = fifo\npriority = 40\n"
	     "[user *]\nmax-priority = 30\npolicies = fifo other\nmin-nice = -5\nmax-threads = 4\n");
	subject_nobody(&s);
	grant_subject_init(&root, c, 0, 0, getpid());
	qs[0] = req_policy(SCHED_FIFO, 20);          /* granted */
	qs[1] = req_policy(SCHED_FIFO, 50);          /* priority-denied for nobody, granted to root */
	qs[2] = req_policy(SCHED_RR, 10);            /* policy-denied */
	qs[3] = req_policy(SCHED_FIFO, 90);          /* above [daemon] max-priority for both */
	memset(&qs[4], 0, sizeof(qs[4]));
	snprintf(qs[4].role, sizeof(qs[4].role), "audio");   /* the rule's 40: denied for nobody */
	memset(&qs[5], 0, sizeof(qs[5]));
	qs[5].has_nice = true;
	qs[5].nice = -10;                            /* nice-denied */
	for (int who = 0; who < 2; who++)
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
			struct grant_decision first;
			for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
				struct grant_ask a = { .path = paths[k], .subj = who ? &root : &s, .req = &qs[i],
						       .target = getpid(), .limits = &lim, .held = 1, .adding = 1 };
				struct grant_decision d;

				grant_decide(c, &a, &d);
				ck_assert_int_ne(d.verdict, GRANT_UNDECIDED);
				if (k == 0) {
					first = d;
					continue;
				}
				ck_assert_msg(d.code == first.code && d.verdict == first.verdict,
					      "request %zu (%s): path %s decided %d, register %d", i, who ? "root" : "nobody",
					      grant_path_name(paths[k]), d.code, first.code);
				ck_assert_int_eq(d.spec.policy, first.spec.policy);
				ck_assert_int_eq(d.spec.priority, first.spec.priority);
				ck_assert_int_eq(d.spec.nice, first.spec.nice);
				ck_assert_str_eq(d.msg, first.msg);
				ck_assert_str_eq(d.fix, first.fix);
			}
			static const int want[2][6] = {
				{ 0, REFUSE_PRIORITY, REFUSE_POLICY, REFUSE_ABOVE_MAX, REFUSE_PRIORITY, REFUSE_NICE },
				{ 0, 0, 0, REFUSE_ABOVE_MAX, 0, 0 },
			};
			ck_assert_msg(first.code == want[who][i], "request %zu (%s): %d, want %d: %s", i,
				      who ? "root" : "nobody", first.code, want[who][i], first.msg);
			/* a refusal's message and fix are apart: no text to split */
			if (first.code > 0)
				ck_assert_msg(first.msg[0] && first.fix[0] && !strstr(first.msg, "; "), "%s | %s",
					      first.msg, first.fix);
		}
}
END_TEST

/* The watchdog's cooldown: a real-time grant a caller waits for
 * (register, rtkit, caught, check) is refused with the cooldown's note; one
 * rtschedd makes itself (rule, new thread of a process, reapply, adoption)
 * is held: the same spec, verdict HOLD. A refusal by the limits still wins
 * on a held path; SCHED_OTHER is never held back. */
START_TEST(test_decide_cooldown)
{
	static const struct { enum grant_path p; enum grant_cooldown does; } paths[] = {
		{ GRANT_PATH_REGISTER, GRANT_COOLDOWN_REFUSE }, { GRANT_PATH_RTKIT, GRANT_COOLDOWN_REFUSE },
		{ GRANT_PATH_CAUGHT, GRANT_COOLDOWN_REFUSE }, { GRANT_PATH_CHECK, GRANT_COOLDOWN_REFUSE },
		{ GRANT_PATH_RULE, GRANT_COOLDOWN_HOLD }, { GRANT_PATH_PROCESS, GRANT_COOLDOWN_HOLD },
		{ GRANT_PATH_REAPPLY, GRANT_COOLDOWN_HOLD }, { GRANT_PATH_ADOPT, GRANT_COOLDOWN_HOLD },
	};
	struct proc_rlimits lim = { .rttime_soft = 100000, .rttime_hard = 100000 };
	struct grant_request rt, rt_high, other;
	struct grant_subject s;

	load("[user *]\nmax-priority = 30\npolicies = fifo other\n");
	subject_nobody(&s);
	rt = req_policy(SCHED_FIFO, 20);
	rt_high = req_policy(SCHED_FIFO, 50);
	other = req_policy(SCHED_OTHER, 0);
	for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		struct grant_ask a = { .path = paths[k].p, .subj = &s, .req = &rt, .target = getpid(), .limits = &lim,
				       .adding = 1, .cooldown = true, .cooldown_note = " (tid 7 of spin); resume in 9 s" };
		struct grant_decision d;

		ck_assert_int_eq(grant_path_cooldown(paths[k].p), paths[k].does);
		if (paths[k].does == GRANT_COOLDOWN_REFUSE) {
			ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_WATCHDOG_COOLDOWN);
			ck_assert_int_eq(d.verdict, GRANT_REFUSE);
			ck_assert_msg(strstr(d.msg, "the watchdog demoted a runaway real-time thread (tid 7 of spin); "
					       "resume in 9 s"), "%s", d.msg);
			ck_assert_msg(strstr(d.fix, "when the cooldown ends"), "%s", d.fix);
		} else {
			ck_assert_int_eq(grant_decide(c, &a, &d), 0);
			ck_assert_int_eq(d.verdict, GRANT_HOLD);
			ck_assert_int_eq(d.spec.policy, SCHED_FIFO);
			ck_assert_int_eq(d.spec.priority, 20);
			/* held, not exempt: the limits still refuse */
			a.req = &rt_high;
			ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_PRIORITY);
		}
		a.req = &other;
		ck_assert_int_eq(grant_decide(c, &a, &d), 0);
		ck_assert_int_eq(d.verdict, GRANT_ALLOW);
		a.req = &rt;
		a.cooldown = false;
		ck_assert_int_eq(grant_decide(c, &a, &d), 0);
		ck_assert_int_eq(d.verdict, GRANT_ALLOW);
	}
}
END_TEST

/* RLIMIT_RTTIME, judged in the decision for every path: soft 0 refuses a
 * real-time grant (the kernel would SIGKILL the process), with the soft
 * value it may raise itself to, or, at hard 0, a restart; not a SCHED_OTHER
 * one. Under rtkit's contract (rttime_max) a hard limit above the ceiling
 * or unlimited refuses first. Without limits given, the target's are read:
 * the test process's own soft limit lowered to 0 is seen. */
START_TEST(test_decide_rttime)
{
	struct grant_subject root;
	struct grant_request rt = req_policy(SCHED_FIFO, 10), other = req_policy(SCHED_OTHER, 0);
	struct proc_rlimits zero_soft = { .rttime_soft = 0, .rttime_hard = RLIM_INFINITY };
	struct proc_rlimits zero_both = { .rttime_soft = 0, .rttime_hard = 0 };
	struct proc_rlimits low_hard = { .rttime_soft = 0, .rttime_hard = 50000 };
	struct proc_rlimits unlimited = { .rttime_soft = RLIM_INFINITY, .rttime_hard = RLIM_INFINITY };
	struct proc_rlimits bounded = { .rttime_soft = 100000, .rttime_hard = 150000 };
	struct grant_decision d;
	struct rlimit old, rl;
	char needle[128];

	load("[daemon]\nmax-priority = 50\n");
	grant_subject_init(&root, c, 0, 0, getpid());
	struct grant_ask a = { .path = GRANT_PATH_RULE, .subj = &root, .req = &rt, .target = getpid(), .adding = 1 };
	a.limits = &zero_soft;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_RTTIME_ZERO);
	ck_assert_int_eq(d.rttime.verdict, RTTIME_ZERO);
	snprintf(needle, sizeof(needle), "RLIMIT_RTTIME of pid %d is 0", (int)getpid());
	ck_assert_msg(strstr(d.msg, needle), "%s", d.msg);
	snprintf(needle, sizeof(needle), "prlimit --pid %d --rttime=200000:unlimited", (int)getpid());
	ck_assert_msg(strstr(d.fix, needle), "%s", d.fix);
	a.limits = &low_hard;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_RTTIME_ZERO);
	snprintf(needle, sizeof(needle), "--rttime=50000:50000");
	ck_assert_msg(strstr(d.fix, needle), "%s", d.fix);
	a.limits = &zero_both;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_RTTIME_ZERO);
	ck_assert_msg(strstr(d.fix, "start it with a higher limit"), "%s", d.fix);
	a.req = &other;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	a.req = &rt;
	a.limits = &unlimited;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	ck_assert_int_eq(d.rttime.verdict, RTTIME_UNLIMITED);

	/* rtkit's contract: the hard limit at most rttime-usec-max */
	a.path = GRANT_PATH_RTKIT;
	a.rttime_max = 150000;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_RTTIME_OVER_MAX);
	ck_assert_msg(strstr(d.msg, "hard limit unlimited, above RTTimeUSecMax 150000 us"), "%s", d.msg);
	ck_assert_int_eq(ops_wire_error(d.code), PE_RTTIME_OVER_MAX);
	a.limits = &bounded;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	ck_assert_int_eq(d.rttime.verdict, RTTIME_BOUNDED);
	a.limits = &low_hard;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_RTTIME_ZERO);
	/* the contract must be shown to hold: a target that is gone is refused */
	a.limits = NULL;
	a.target = INT_MAX;
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_NO_SUCH_THREAD);
	a.rttime_max = 0;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);   /* nothing to show: the apply meets the kernel */

	/* read when not given: this process's own soft limit, lowered to 0 */
	a.target = getpid();
	ck_assert_int_eq(getrlimit(RLIMIT_RTTIME, &old), 0);
	rl = old;
	rl.rlim_cur = 0;
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &rl), 0);
	int e = grant_decide(c, &a, &d);
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &old), 0);
	ck_assert_int_eq(e, REFUSE_RTTIME_ZERO);
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
}
END_TEST

/* The quota counts what a grant adds: at or over max-threads, adding one
 * more is refused, adding nothing (a reload, a registration again, an
 * adoption of a process) is not; an exempt [rule] grant (user = / group =)
 * meets no [user] limits and no quota. */
START_TEST(test_decide_quota_and_exempt)
{
	struct grant_subject s;
	struct grant_request q;
	struct grant_decision d;

	load("[user *]\nmax-priority = 10\npolicies = fifo other\nmax-threads = 2\n");
	subject_nobody(&s);
	q = req_policy(SCHED_FIFO, 10);
	struct grant_ask a = { .path = GRANT_PATH_REGISTER, .subj = &s, .req = &q, .target = getpid(), .held = 2,
			       .adding = 1 };
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_QUOTA);
	ck_assert_msg(strstr(d.msg, "holds 2 threads and may hold 2") && strstr(d.fix, "max-threads"), "%s; %s",
		      d.msg, d.fix);
	a.held = 3;
	a.adding = 0;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	a.adding = 1;
	a.held = 1;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	q = req_policy(SCHED_FIFO, 20);
	ck_assert_int_eq(grant_decide(c, &a, &d), REFUSE_PRIORITY);
	a.path = GRANT_PATH_RULE;
	a.exempt = true;
	a.held = 10;
	ck_assert_int_eq(grant_decide(c, &a, &d), 0);
	ck_assert_int_eq(d.spec.priority, 20);
}
END_TEST

/* Zero means nothing decided: a zeroed decision is GRANT_UNDECIDED, a
 * zeroed wire code is PE_NONE (no refusal; never read from the wire). */
START_TEST(test_zero_is_undecided)
{
	struct grant_decision d;

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(d.verdict, GRANT_UNDECIDED);
	ck_assert_int_eq(PE_NONE, 0);
	ck_assert_int_ne(PE_BAD_REQUEST, 0);
	ck_assert_int_eq(proto_error_from_code("none"), -EINVAL);
	ck_assert_int_eq(proto_error_from_code("bad-request"), PE_BAD_REQUEST);
	ck_assert_int_eq(ops_wire_error(0), PE_INTERNAL);
}
END_TEST

/* rttime_judge(): one reading of RLIMIT_RTTIME for the grant and the
 * diagnosis. */
START_TEST(test_rttime_judge)
{
	struct rttime_judgement j;
	struct proc_rlimits l = { .rttime_soft = 0, .rttime_hard = 300000 };

	rttime_judge(NULL, 0, &j);
	ck_assert_int_eq(j.verdict, RTTIME_UNREAD);
	rttime_judge(&l, 0, &j);
	ck_assert_int_eq(j.verdict, RTTIME_ZERO);
	ck_assert_uint_eq(j.suggest_soft, RTTIME_SUGGEST_USEC);
	ck_assert_str_eq(j.hard, "300000");
	rttime_judge(&l, 200000, &j);
	ck_assert_int_eq(j.verdict, RTTIME_OVER_MAX);
	l.rttime_soft = RLIM_INFINITY;
	l.rttime_hard = RLIM_INFINITY;
	rttime_judge(&l, 0, &j);
	ck_assert_int_eq(j.verdict, RTTIME_UNLIMITED);
	ck_assert_str_eq(j.hard, "unlimited");
	l.rttime_soft = 1000;
	rttime_judge(&l, 0, &j);
	ck_assert_int_eq(j.verdict, RTTIME_BOUNDED);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("grant");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_ranges_and_max_priority);
	tcase_add_test(tc, test_admin_path);
	tcase_add_test(tc, test_builtin_limits);
	tcase_add_test(tc, test_user_sections);
	tcase_add_test(tc, test_group_widens);
	tcase_add_test(tc, test_cpus);
	tcase_add_test(tc, test_nice_floor);
	tcase_add_test(tc, test_quota);
	tcase_add_test(tc, test_session);
	if (geteuid() == 0 && access("/etc/subuid", F_OK) == 0)
		tcase_add_test(tc, test_subid);
	else
		unit_skip("test_subid: needs root and an /etc/subuid to lay a file of its own over");
	tcase_add_test(tc, test_rtprio_cap_limits_conf);
	tcase_add_test(tc, test_rtprio_cap_rlimit);
	tcase_add_test(tc, test_first_refusal_named);
	tcase_add_test(tc, test_owns);
	tcase_add_test(tc, test_ratelimit);
	tcase_add_test(tc, test_ratelimit_counted);
	tcase_add_test(tc, test_ratelimit_charge);
	tcase_add_test(tc, test_ratelimit_evict);
	tcase_add_test(tc, test_wire_codes);
	tcase_add_test(tc, test_decide_paths_agree);
	tcase_add_test(tc, test_decide_cooldown);
	tcase_add_test(tc, test_decide_rttime);
	tcase_add_test(tc, test_decide_quota_and_exempt);
	tcase_add_test(tc, test_zero_is_undecided);
	tcase_add_test(tc, test_rttime_judge);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
