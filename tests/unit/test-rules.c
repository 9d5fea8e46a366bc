/* test-rules.c: rules that find threads by themselves (core/rules.c), on
 * real threads of child processes the test starts with the names it wants,
 * and a real registry whose kernel writes are recorded instead of made
 * (sched-record.h): a thread a rule matches is applied with the rule's
 * spec, by name given (a COMM event) or read; renamed away it is restored;
 * the more specific rule wins; a matched thread is not written again unless
 * forced (reload); an explicit registration and the daemon's own threads
 * are never touched; a rule that cannot apply is remembered with its
 * reason; a process's threads all at once; and the /proc scan, which also
 * gives back what a rule managed once its rule is gone. Runs as any user. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/rules.h"
#include "daemon/sys/proc.h"
#include "sched-record.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static struct config *c;
static sd_event *ev;
static struct registry *r;

/* What the rules act through: the registry and a config, no rate limit. */
#define CTX(cfg) (&(struct rules_ctx){ .registry = r, .config = (cfg) })

#define RULES \
	"[daemon]\nmax-priority = 80\nprocess-events = no\n" \
	"[rule demo]\nthread-name = rt-*\npolicy = fifo\npriority = 20\n" \
	"[rule precise]\nprocess-name = test-rules-kid\nthread-name = rt-precise\npolicy = rr\npriority = 30\n"

/* A child process whose threads have the names asked: its main thread is
 * named test-rules-kid; the tids come back through a pipe; it lives until
 * kid_stop(). */
#define KID_MAX 8
struct kid {
	pid_t pid;
	pid_t tid[KID_MAX];
	int n;
	int ctl[2];
};

struct kid_arg {
	int fd;        /* the read end of the parent's pipe: EOF means exit */
	pid_t tid;
	sem_t up;
};

static void *kid_thread(void *arg)
{
	struct kid_arg *a = arg;
	char b;

	a->tid = gettid();
	sem_post(&a->up);
	/* until the parent closes its end */
	while (read(a->fd, &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void kid_start(struct kid *k, const char *const *names, int n, bool rttime_zero)
{
	int up[2];

	memset(k, 0, sizeof(*k));
	ck_assert_int_le(n, KID_MAX);
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(k->ctl), 0);
	k->n = n;
	k->pid = fork();
	ck_assert_int_ge(k->pid, 0);
	if (k->pid == 0) {
		static struct kid_arg a[KID_MAX];
		struct rlimit zero = { 0, 0 };
		pid_t tids[KID_MAX];
		pthread_t th;

		close(up[0]);
		close(k->ctl[1]);
		prctl(PR_SET_NAME, "test-rules-kid");
		if (rttime_zero && setrlimit(RLIMIT_RTTIME, &zero) < 0)
			_exit(1);
		for (int i = 0; i < n; i++) {
			a[i].fd = k->ctl[0];
			sem_init(&a[i].up, 0, 0);
			if (pthread_create(&th, NULL, kid_thread, &a[i]) != 0)
				_exit(1);
			pthread_setname_np(th, names[i]);
			while (sem_wait(&a[i].up) < 0)
				;
			tids[i] = a[i].tid;
		}
		/* the names are set: tell the tids */
		if (write(up[1], tids, sizeof(pid_t) * (size_t)n) != (ssize_t)(sizeof(pid_t) * (size_t)n))
			_exit(1);
		struct kid_arg self = { .fd = k->ctl[0] };
		sem_init(&self.up, 0, 0);
		kid_thread(&self);
		_exit(0);
	}
	close(up[1]);
	close(k->ctl[0]);
	ck_assert_int_eq(read(up[0], k->tid, sizeof(pid_t) * (size_t)n), (ssize_t)(sizeof(pid_t) * (size_t)n));
	close(up[0]);
	/* each thread has its name by now (set before the tids were sent) */
	for (int i = 0; i < n; i++) {
		char comm[32];
		ck_assert_int_eq(proc_read_comm(k->pid, k->tid[i], comm, sizeof(comm)), 0);
		ck_assert_str_eq(comm, names[i]);
	}
}

static void kid_stop(struct kid *k)
{
	int st;

	close(k->ctl[1]);
	ck_assert_int_eq(waitpid(k->pid, &st, 0), k->pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void setup(void)
{
	sched_record_check_wrapped();
	sched_record_reset();
	unit_tmpdir(dir, "test-rules");
	c = unit_config(dir, RULES);
	ck_assert_int_ge(sd_event_new(&ev), 0);
	ck_assert_int_eq(registry_new(&r, ev), 0);
}

static void teardown(void)
{
	registry_free(r, false);
	r = NULL;
	sd_event_unref(ev);
	config_free(c);
	unit_rmdir(dir);
}

static void assert_rule(pid_t tid, const char *rule, int policy, int priority)
{
	const struct reg_thread *t = registry_find(r, tid);
	const struct sched_write *w = sched_record_last(tid);

	ck_assert_msg(t, "tid %d is not managed", (int)tid);
	ck_assert_int_eq(t->source, REG_SOURCE_RULE);
	ck_assert_str_eq(t->req.role, rule);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(w->s.policy, policy);
	ck_assert_int_eq(w->s.priority, priority);
}

/* Matched by the name a COMM event gives, or by the name read; renamed
 * away, restored (its original written back); the more specific rule wins. */
START_TEST(test_match_and_restore)
{
	const char *names[] = { "rt-a", "plain", "rt-precise" };
	struct task_sched orig;
	struct kid k;

	kid_start(&k, names, 3, false);
	ck_assert_int_eq(task_sched_read(k.tid[0], &orig), 0);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, false);
	assert_rule(k.tid[0], "demo", SCHED_FIFO, 20);
	rules_on_task(CTX(c), k.tid[1], k.pid, NULL, false);
	ck_assert_ptr_null(registry_find(r, k.tid[1]));
	ck_assert_uint_eq(sched_record_count(k.tid[1]), 0);
	/* two keys beat one (and the file order) */
	rules_on_task(CTX(c), k.tid[2], k.pid, NULL, false);
	assert_rule(k.tid[2], "precise", SCHED_RR, 30);
	/* the name from the event is the one used, not /proc's */
	rules_on_task(CTX(c), k.tid[1], k.pid, "rt-renamed", false);
	assert_rule(k.tid[1], "demo", SCHED_FIFO, 20);
	/* renamed so nothing matches: restored, and remembered as restored */
	rules_on_task(CTX(c), k.tid[0], k.pid, "nothing", false);
	ck_assert_ptr_null(registry_find(r, k.tid[0]));
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 2);
	ck_assert_int_eq(sched_record_last(k.tid[0])->s.policy, orig.policy);
	ck_assert_int_eq(sched_record_last(k.tid[0])->s.priority, orig.priority);
	ck_assert_int_eq(registry_recent(r, 0)->tid, k.tid[0]);
	ck_assert_int_eq(registry_recent(r, 0)->code, 0);
	/* matched again: applied again */
	rules_on_task(CTX(c), k.tid[0], k.pid, "rt-back", false);
	assert_rule(k.tid[0], "demo", SCHED_FIFO, 20);
	kid_stop(&k);
}
END_TEST

/* A thread already under its rule is not written again, unless forced (a
 * reload); one that another rule wins now moves to it. */
START_TEST(test_force)
{
	const char *names[] = { "rt-a" };
	struct config *c2;
	struct kid k;

	kid_start(&k, names, 1, false);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, false);
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 1);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, false);
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 1);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, true);
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 2);
	/* a new config where another rule wins for it */
	c2 = unit_config(dir, RULES "[rule exact]\nprocess-name = test-rules-kid\nthread-name = rt-a\npolicy = rr\n"
				    "priority = 7\n");
	rules_on_task(CTX(c2), k.tid[0], k.pid, NULL, false);
	assert_rule(k.tid[0], "exact", SCHED_RR, 7);
	registry_remove_thread(r, registry_find(r, k.tid[0]), false);
	config_free(c2);
	kid_stop(&k);
}
END_TEST

/* An explicit registration wins over any rule; the daemon's own threads
 * are never a rule's, whatever their name. */
START_TEST(test_left_alone)
{
	const char *names[] = { "rt-a" };
	struct sched_spec s;
	struct reg_thread *t;
	struct grant_request req;
	struct worker wk;
	struct kid k;
	char msg[256];

	kid_start(&k, names, 1, false);
	memset(&s, 0, sizeof(s));
	s.policy = SCHED_BATCH;
	memset(&req, 0, sizeof(req));
	ck_assert_int_eq(registry_add_thread(r, k.tid[0], k.pid, 0, REG_SOURCE_THREAD, &req, &s, NULL, &t, msg,
					     sizeof(msg)), 0);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, true);
	rules_on_task(CTX(c), k.tid[0], k.pid, "nothing", true);
	ck_assert_ptr_eq(registry_find(r, k.tid[0]), t);
	ck_assert_int_eq(t->source, REG_SOURCE_THREAD);
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 1);
	registry_remove_thread(r, t, false);
	kid_stop(&k);

	worker_start(&wk);
	ck_assert_int_eq(pthread_setname_np(wk.th, "rt-own"), 0);
	rules_on_task(CTX(c), wk.tid, getpid(), NULL, true);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	ck_assert_uint_eq(sched_record_count(wk.tid), 0);
	worker_stop(&wk);
}
END_TEST

/* A match that cannot be applied (RLIMIT_RTTIME 0: the kernel would kill a
 * real-time task) is not managed, and `list --all` can say why. */
START_TEST(test_refused)
{
	const char *names[] = { "rt-a" };
	const struct reg_recent *rec;
	struct kid k;

	kid_start(&k, names, 1, true);
	rules_on_task(CTX(c), k.tid[0], k.pid, NULL, false);
	ck_assert_ptr_null(registry_find(r, k.tid[0]));
	ck_assert_uint_eq(sched_record_count(k.tid[0]), 0);
	rec = registry_recent(r, 0);
	ck_assert_ptr_nonnull(rec);
	ck_assert_int_eq(rec->tid, k.tid[0]);
	ck_assert_int_eq(rec->code, REFUSE_RTTIME_ZERO);
	ck_assert_str_eq(rec->rule, "demo");
	ck_assert_int_eq(rec->source, REG_SOURCE_RULE);
	ck_assert_msg(strstr(rec->why, "RLIMIT_RTTIME"), "%s", rec->why);
	kid_stop(&k);
}
END_TEST

/* All threads of a process (an exec, or its main thread renamed). */
START_TEST(test_process)
{
	const char *names[] = { "rt-1", "other", "rt-2" };
	struct kid k;

	kid_start(&k, names, 3, false);
	rules_on_process(CTX(c), k.pid);
	assert_rule(k.tid[0], "demo", SCHED_FIFO, 20);
	assert_rule(k.tid[2], "demo", SCHED_FIFO, 20);
	ck_assert_ptr_null(registry_find(r, k.tid[1]));
	ck_assert_ptr_null(registry_find(r, k.pid));   /* test-rules-kid matches nothing */
	ck_assert_uint_eq(registry_n_threads(r), 2);
	kid_stop(&k);
}
END_TEST

/* The /proc scan finds them; with the rule gone from the config, what it
 * managed goes back (also a thread the scan cannot see: it exited); with a
 * rule left that matches nothing by itself (a role), and with no rules at
 * all, too. */
START_TEST(test_scan)
{
	const char *names[] = { "rt-1", "rt-precise" }, *gone_names[] = { "rt-gone" };
	struct config *norules, *nodemo, *role;
	struct kid k, gone;
	size_t seen;

	kid_start(&gone, gone_names, 1, false);
	rules_on_task(CTX(c), gone.tid[0], gone.pid, NULL, false);
	assert_rule(gone.tid[0], "demo", SCHED_FIFO, 20);
	kid_stop(&gone);
	kid_start(&k, names, 2, false);
	seen = rules_scan(CTX(c), false);
	ck_assert_uint_ge(seen, 3);
	assert_rule(k.tid[0], "demo", SCHED_FIFO, 20);
	assert_rule(k.tid[1], "precise", SCHED_RR, 30);
	/* this process's own threads are never taken, whatever they match */
	REGISTRY_FOREACH_THREAD(t, r)
		ck_assert_int_ne(t->pid, getpid());
	nodemo = unit_config(dir, "[daemon]\nprocess-events = no\n"
				  "[rule precise]\nprocess-name = test-rules-kid\nthread-name = rt-precise\n"
				  "policy = rr\npriority = 30\n");
	rules_scan(CTX(nodemo), false);
	ck_assert_ptr_null(registry_find(r, k.tid[0]));
	ck_assert_ptr_null(registry_find(r, gone.tid[0]));
	assert_rule(k.tid[1], "precise", SCHED_RR, 30);
	role = unit_config(dir, "[daemon]\nprocess-events = no\n[rule precise]\npolicy = rr\npriority = 30\n");
	ck_assert_uint_eq(rules_scan(CTX(role), false), 0);
	ck_assert_ptr_null(registry_find(r, k.tid[1]));
	config_free(role);
	rules_on_task(CTX(nodemo), k.tid[1], k.pid, NULL, false);
	assert_rule(k.tid[1], "precise", SCHED_RR, 30);
	norules = unit_config(dir, "[daemon]\nprocess-events = no\n");
	ck_assert_uint_eq(rules_scan(CTX(norules), false), 0);   /* nothing to look at */
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_uint_eq(sched_record_count(k.tid[1]), 4);   /* applied, restored, twice */
	config_free(nodemo);
	config_free(norules);
	kid_stop(&k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rules");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_match_and_restore);
	tcase_add_test(tc, test_force);
	tcase_add_test(tc, test_left_alone);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_process);
	tcase_add_test(tc, test_scan);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
