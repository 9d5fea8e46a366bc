/* registry.c: managed threads and processes (see registry.h). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/diag/diag.h"
#include "daemon/sys/proc.h"
#include "daemon/core/registry.h"
#include "daemon/core/registry_int.h"
#include "daemon/sys/clock.h"
#include "shared/cleanup.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* Tell the observer (the state journal) what changed. */
void registry_notify(struct registry *r, int ev, struct reg_thread *t, struct reg_process *p)
{
	if (r->observer)
		r->observer(r->observer_ud, ev, t, p);
}

void registry_set_observer(struct registry *r, registry_observer fn, void *ud)
{
	r->observer = fn;
	r->observer_ud = ud;
}

void registry_set_admit(struct registry *r, registry_admit_fn fn, void *ud)
{
	r->admit = fn;
	r->admit_ud = ud;
}

static int open_pidfd(struct registry *r, pid_t id, bool thread);
static int on_threads_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata);

int registry_new(struct registry **ret, sd_event *e)
{
	struct registry *r = calloc(1, sizeof(*r));
	int rr;

	if (!r)
		return -ENOMEM;
	r->exit_ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->exit_ep < 0) {
		rr = -errno;
		free(r);
		return rr;
	}
	if ((rr = sd_event_add_io(e, &r->exit_src, r->exit_ep, EPOLLIN, on_threads_exit, r)) < 0) {
		close(r->exit_ep);
		free(r);
		return rr;
	}
	r->event = sd_event_ref(e);
	r->thread_pidfd = -1;
	/* does this kernel give thread pidfds? ask once, on our own thread */
	int fd = open_pidfd(r, gettid(), true);
	if (fd >= 0)
		close(fd);
	*ret = r;
	return 0;
}

size_t registry_count_owner(struct registry *r, uid_t account)
{
	size_t n = 0;

	for (struct reg_thread *t = r->threads; t; t = tnode(t)->next)
		n += t->account == account && !t->exempt;
	return n;
}

void registry_set_account(struct reg_thread *t, uid_t account, bool exempt)
{
	t->account = account;
	t->exempt = exempt;
}

void registry_set_process_account(struct reg_process *p, uid_t account)
{
	p->account = account;
	for (struct reg_thread *t = pnode(p)->reg->threads; t; t = tnode(t)->next)
		if (t->proc == p)
			t->account = account;
}

/* A pidfd that becomes readable when the thread (or, for a process, the
 * whole process) exits. -1 where the kernel can't give one per thread. */
static int open_pidfd(struct registry *r, pid_t id, bool thread)
{
	int fd;

	if (thread && r->thread_pidfd == 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, id, thread ? PIDFD_THREAD : 0);
	if (thread && r->thread_pidfd < 0) {
		/* EINVAL: no PIDFD_THREAD; ENOSYS: no pidfd_open at all (Linux <
		 * 5.3, or a seccomp filter or valgrind that does not pass it) */
		r->thread_pidfd = fd >= 0 || (errno != EINVAL && errno != ENOSYS);
		if (!r->thread_pidfd)
			log_info("kernel has no PIDFD_THREAD (Linux < 6.9): thread exits are noticed "
				 "through the process events connector and task list rescans");
	}
	return fd;
}

/* Watch t's pidfd for its exit; without a pidfd (or if the epoll set
 * refuses it) the connector and rescans notice the exit instead. */
static void exit_watch(struct registry *r, struct reg_thread *t)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = t };

	if (tnode(t)->pidfd >= 0 && epoll_ctl(r->exit_ep, EPOLL_CTL_ADD, tnode(t)->pidfd, &ev) < 0) {
		close(tnode(t)->pidfd);
		tnode(t)->pidfd = -1;
	}
}

/* Stop watching t's exit and close its pidfd (taken out of the set first:
 * a copy of the fd in a child would keep the registration alive). */
static void exit_unwatch(struct registry *r, struct reg_thread *t)
{
	if (tnode(t)->pidfd < 0)
		return;
	epoll_ctl(r->exit_ep, EPOLL_CTL_DEL, tnode(t)->pidfd, NULL);
	close(tnode(t)->pidfd);
	tnode(t)->pidfd = -1;
}

/* Unlink from the hash and the list and free; the caller restored or not. */
static void thread_free(struct registry *r, struct reg_thread *t)
{
	struct reg_thread **pp = &r->buckets[reg_bucket(t->tid)];

	while (*pp && *pp != t)
		pp = &tnode(*pp)->hnext;
	if (*pp)
		*pp = tnode(t)->hnext;
	if (tnode(t)->prev)
		tnode(tnode(t)->prev)->next = tnode(t)->next;
	else
		r->threads = tnode(t)->next;
	if (tnode(t)->next)
		tnode(tnode(t)->next)->prev = tnode(t)->prev;
	if (t->proc)
		t->proc->n_threads--;
	registry_notify(r, REG_EV_THREAD_GONE, t, NULL);
	exit_unwatch(r, t);
	r->n_threads--;
	r->n_exec_watched -= exec_watched(t);
	free(tnode(t));
}

/* Whether t's pidfd answers for the thread itself (a thread pidfd), so one
 * poll says whether it still runs. */
static bool pidfd_answers(const struct reg_thread *t)
{
	return tnode(t)->pidfd >= 0 && registry_thread_pidfds(tnode(t)->reg);
}

/* Is tid still the thread we pinned? A thread pidfd answers with one poll:
 * while it is not readable the thread lives, so its tid cannot have been
 * reused. Without one, compare the start time in /proc. */
bool registry_same_thread(const struct reg_thread *t)
{
	struct proc_stat st;

	if (pidfd_answers(t)) {
		struct pollfd p = { .fd = tnode(t)->pidfd, .events = POLLIN };
		return poll(&p, 1, 0) == 0;
	}
	return proc_read_stat(t->tid, &st) == 0 && st.starttime == t->starttime;
}

bool registry_known_start(struct registry *r, pid_t tid, uint64_t *starttime)
{
	struct reg_thread *t = registry_find(r, tid);

	if (!t || !t->starttime || !pidfd_answers(t) || !registry_same_thread(t))
		return false;
	*starttime = t->starttime;
	return true;
}

/* Within one reapply pass, t's process's rlimits, read once per process
 * (the pass takes a few ms; threads come grouped by process): 0 or -errno. */
static int pass_limits(struct registry *r, const struct reg_thread *t, struct proc_rlimits *l)
{
	if (r->limits_pid != t->pid) {
		r->limits_pid = t->pid;
		r->limits_err = proc_read_limits(t->pid, &r->limits);
	}
	*l = r->limits;
	return r->limits_err;
}

/* Whether the task tid names now began after written_ns (CLOCK_BOOTTIME),
 * so that no write made before then can have reached it. /proc's start
 * time is the kernel's, truncated to clock ticks: a start in a later tick
 * than written_ns is surely later; one in the same tick may be either. */
static bool started_after(pid_t tid, uint64_t written_ns)
{
	struct proc_stat st;
	long hz = sysconf(_SC_CLK_TCK);

	return hz > 0 && proc_read_stat(tid, &st) == 0 && st.starttime > clock_ticks_of(written_ns, hz);
}

/* The check after a write found that tid names another thread now: the one
 * written to exited, and its id went to a new thread, which the write may
 * have reached. What the grant gave must not stay with it: like rtkit, set
 * it back to SCHED_OTHER, nice 0, if it still shows what was written (a
 * thread that set itself otherwise since is left as it is). A thread that
 * began after the write returned (written_ns) is left alone: the write
 * reached the old one or no one, and a policy equal to the grant's is the
 * new thread's own (inherited, or set by a privileged process), which
 * would otherwise be taken from it. */
static void thread_unwrite(pid_t tid, const struct task_sched *written, uint64_t written_ns)
{
	struct task_sched now, plain;
	const char *what = "";
	int r;

	if (!policy_is_realtime(written->policy) && written->nice >= 0)
		return; /* nothing above what any thread may set itself */
	if (task_sched_read(tid, &now) < 0 || now.policy != written->policy || now.priority != written->priority ||
	    (!policy_is_realtime(now.policy) && now.nice != written->nice))
		return;
	if (started_after(tid, written_ns))
		return;
	plain = now;
	plain.policy = SCHED_OTHER;
	plain.priority = 0;
	plain.nice = 0;
	plain.reset_on_fork = false;
	r = task_sched_write(tid, &plain, false, &what);
	if (r < 0 && r != -ESRCH)
		log_errno(LOG_LEVEL_WARNING, r, "tid %d went to another thread during a grant: setting it back to "
			  "SCHED_OTHER: %s", (int)tid, what);
	else if (r == 0)
		log_warnx("tid %d went to another thread during a grant: set back to SCHED_OTHER, nice 0", (int)tid);
}

/* Apply a spec to a pinned thread and read back what the kernel holds: 0,
 * or a refusal with msg. */
static int thread_apply(struct reg_thread *t, const struct sched_spec *spec, char *msg, size_t len)
{
	struct task_sched want = t->original;
	const char *what = "";
	uint64_t written_ns;
	char desc[128];
	int r;

	want.policy = spec->policy;
	want.priority = spec->priority;
	if (spec->policy == SCHED_OTHER || spec->policy == SCHED_BATCH)
		want.nice = spec->nice;
	want.reset_on_fork = spec->reset_on_fork;
	if (spec->has_cpus)
		want.cpus = spec->cpus;
	tnode(t)->reg->last_diag[0] = '\0';
	/* the grant decision's HOLD (grant_path_cooldown()): during a watchdog
	 * cooldown no managed thread becomes real-time, whatever the path (a
	 * reload, a rule match, a new thread of a process): it gets SCHED_OTHER
	 * now and what it asked for when the cooldown ends. The paths a caller
	 * waits on were refused before they came here. */
	t->demoted = false;
	if (policy_is_realtime(want.policy) &&
	    registry_held(tnode(t)->reg, t->account, t->pid, t->source == REG_SOURCE_RULE ? t->req.role : NULL)) {
		t->demoted_from = registry_policy_of(&want);
		t->demoted = true;
		want.policy = SCHED_OTHER;
		want.priority = 0;
	}
	if (!registry_same_thread(t)) {
		snprintf(msg, len, "tid %d is no longer the thread that was registered (it exited; the id may be reused)",
			 (int)t->tid);
		return REFUSE_STALE_THREAD;
	}
	/* the watchdog knows the thread by its start time (thread_add() read
	 * it first for a real-time policy) from before the write */
	if (policy_is_realtime(want.policy))
		registry_notify(tnode(t)->reg, REG_EV_THREAD_ARM, t, NULL);
	r = task_sched_write(t->tid, &want, spec->has_cpus || t->cpus_changed, &what);
	written_ns = clock_nsec(CLOCK_BOOTTIME);
	if (r < 0) {
		char why[512] = "";
		struct diag_target dt = { .pid = t->tid, .policy = want.policy, .priority = want.priority,
					  .cpus = spec->has_cpus ? &want.cpus : NULL };

		/* not just "Operation not permitted": the diagnosed cause and its fix */
		if (r != -ESRCH)
			diag_explain(NULL, &dt, what, r, why, sizeof(why), tnode(t)->reg->last_diag);
		task_sched_format(&want, desc, sizeof(desc));
		snprintf(msg, len, "%s(tid %d, %s) failed: %s%s%s", what, (int)t->tid, desc, strerror(-r),
			 why[0] ? "; " : "", why);
		return r == -ESRCH ? REFUSE_NO_SUCH_THREAD : REFUSE_APPLY_FAILED;
	}
	t->cpus_changed = spec->has_cpus;
	if (!registry_same_thread(t)) {
		thread_unwrite(t->tid, &want, written_ns);
		snprintf(msg, len, "tid %d exited while its scheduling was being set", (int)t->tid);
		return REFUSE_STALE_THREAD;
	}
	r = task_sched_read(t->tid, &t->applied);
	if (r < 0) {
		snprintf(msg, len, "reading back tid %d failed: %s", (int)t->tid, strerror(-r));
		return r == -ESRCH ? REFUSE_NO_SUCH_THREAD : REFUSE_APPLY_FAILED;
	}
	return 0;
}

/* Put back what the thread had, if it is still the same thread. */
static void thread_restore(struct reg_thread *t)
{
	const char *what = "";
	int r;

	if (!registry_same_thread(t))
		return;
	r = task_sched_write(t->tid, &t->original, t->cpus_changed, &what);
	if (r < 0 && r != -ESRCH)
		log_errno(LOG_LEVEL_WARNING, r, "restoring tid %d: %s", (int)t->tid, what);
}

/* Whether now, a task's scheduling, is what t's grant gave and t did not
 * have: the same policy, at no more than the grant (a program may lower
 * itself, never raise itself back, nor clear reset-on-fork), above what t had. */
static bool sched_from_grant(const struct reg_thread *t, const struct task_sched *now)
{
	const struct task_sched *a = &t->applied, *o = &t->original;

	if (now->policy != a->policy || (a->reset_on_fork && !now->reset_on_fork))
		return false;
	if (policy_is_realtime(a->policy))
		return now->priority <= a->priority && (o->policy != a->policy || now->priority > o->priority);
	return now->nice >= a->nice && now->nice < o->nice;
}

/* t, a user's thread that is not its process's main thread, is gone: did
 * it exec? The kernel's de_thread gives the thread that execs its process's
 * pid (and the old main thread's start time) and kills the others, and the
 * new program keeps the thread's scheduling (reset-on-fork acts at fork
 * only). No exit of the old tid is reported, and nothing else tells the
 * two apart: so the pid, the same process (start time) with no entry of
 * its own, running what t's grant gave, is taken for t's program. */
static bool exec_took_over(struct registry *r, const struct reg_thread *t)
{
	struct task_sched now;
	struct proc_stat st;

	if (!exec_watched(t) || t->tid == t->pid || !tnode(t)->pstart || registry_find(r, t->pid))
		return false;
	if (proc_read_stat(t->pid, &st) < 0 || st.starttime != tnode(t)->pstart)
		return false;
	return task_sched_read(t->pid, &now) == 0 && sched_from_grant(t, &now);
}

/* The start time of the process of t, a thread exec_took_over() may have to
 * look at: read after the apply, off the path to the policy (a process
 * that ended meanwhile leaves 0: no check). */
static void pin_process(struct reg_thread *t)
{
	struct proc_stat st;

	if (!exec_watched(t) || t->tid == t->pid || tnode(t)->pstart)
		return;
	if (t->proc)
		tnode(t)->pstart = t->proc->starttime;
	else if (proc_read_stat(t->pid, &st) == 0)
		tnode(t)->pstart = st.starttime;
}

/* Drop an entry that never made it into the registry: its pidfd, itself. */
static void tnode_discard(struct reg_tnode *n)
{
	if (n->pidfd >= 0)
		close(n->pidfd);
	free(n);
}
DEFINE_POINTER_CLEANUP(struct reg_tnode *, tnode_discard)

/* Manage tid, or re-apply to it if managed. With `saved` (a previous
 * rtschedd's record) the thread must still have the recorded start time and
 * its recorded original settings are kept instead of read: what the kernel
 * holds now is what the previous daemon set. */
static int thread_add(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
		      const struct grant_request *req, const struct sched_spec *spec, struct reg_process *proc,
		      const struct reg_saved *saved, uint64_t pin, struct reg_thread **out, char *msg, size_t len)
{
	_cleanup_(tnode_discardp) struct reg_tnode *n = NULL;
	struct reg_thread *t = registry_find(r, tid);
	struct proc_stat st;
	bool stat_later;
	int e, rr;

	if (t && pin && t->starttime && t->starttime != pin) {
		snprintf(msg, len, "tid %d is no longer the thread that was checked (it exited; the id was reused)",
			 (int)tid);
		return REFUSE_STALE_THREAD;
	}
	if (t) {
		/* Asked again: the new request replaces the old, originals stay. */
		e = thread_apply(t, spec, msg, len);
		if (e != 0)
			return e;
		r->n_exec_watched -= exec_watched(t);
		t->req = *req;
		t->owner = owner;
		t->account = proc ? proc->account : owner;
		t->exempt = false;
		t->source = source;
		if (source != REG_SOURCE_PROCESS && t->proc) {
			t->proc->n_threads--; /* registered on its own now */
			t->proc = NULL;
		}
		r->n_exec_watched += exec_watched(t);
		pin_process(t);
		registry_notify(r, REG_EV_THREAD_SET, t, NULL);
		if (out)
			*out = t;
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	n->pidfd = -1;
	t = &n->t;
	tnode(t)->reg = r;
	t->tid = tid;
	t->pid = pid;
	t->owner = owner;
	t->account = proc ? proc->account : owner;
	t->req = *req;
	t->proc = proc;
	t->source = source;
	t->since_usec = clock_usec(CLOCK_REALTIME);
	/* The pidfd first: from here on the thread cannot vanish unnoticed. */
	tnode(t)->pidfd = open_pidfd(r, tid, true);
	if (r->admit)
		r->admit(r->admit_ud, tid);
	/* A thread pidfd pins the thread (registry_same_thread() polls it), so
	 * its start time, which only the journal needs then, is read after the
	 * policy is set: /proc/TID/stat costs ~7 µs here, on the path from a
	 * rename to the policy (issue 15). Without one, or to check a journal
	 * entry, first; and for a real-time policy, which the watchdog must
	 * know the thread by before the write (REG_EV_THREAD_ARM). */
	stat_later = !saved && !pin && pidfd_answers(t) && !policy_is_realtime(spec->policy);
	rr = stat_later ? 0 : proc_read_stat(tid, &st);
	if (rr == 0 && ((saved && st.starttime != saved->starttime) || (pin && st.starttime != pin)))
		rr = -ESTALE;
	if (rr == 0 && saved) {
		t->original = saved->original;
		t->cpus_changed = saved->cpus_changed;
	} else if (rr == 0) {
		rr = task_sched_read(tid, &t->original);
		if (rr == 0 && t->original.policy == SCHED_DEADLINE) {
			/* its runtime, deadline and period are a reservation the
			 * kernel admitted; replacing them is not ours to do */
			snprintf(msg, len, "tid %d runs SCHED_DEADLINE: rtschedd does not replace a deadline "
				 "reservation; set it back to another policy first (chrt -o -p 0 %d) or leave it "
				 "unmanaged", (int)tid, (int)tid);
			return REFUSE_DEADLINE;
		}
	}
	if (rr < 0) {
		snprintf(msg, len, "tid %d: %s", (int)tid, rr == -ESRCH ? "no such thread" :
			 rr == -ESTALE ? "a different thread now (start time changed)" : strerror(-rr));
		return rr == -ESRCH ? REFUSE_NO_SUCH_THREAD : rr == -ESTALE ? REFUSE_STALE_THREAD : rr;
	}
	if (!stat_later)
		t->starttime = st.starttime;
	e = thread_apply(t, spec, msg, len);
	if (e == 0 && stat_later && (rr = proc_read_stat(tid, &st)) < 0) {
		/* gone meanwhile (what it had goes back if it is still there) */
		thread_restore(t);
		snprintf(msg, len, "tid %d: %s", (int)tid, rr == -ESRCH ? "no such thread" : strerror(-rr));
		e = rr == -ESRCH ? REFUSE_NO_SUCH_THREAD : rr;
	}
	if (e != 0) {
		/* a re-adopted thread whose new settings fail gets its original back */
		if (saved && e == REFUSE_APPLY_FAILED)
			thread_restore(t);
		return e;
	}
	if (stat_later)
		t->starttime = st.starttime;
	pin_process(t);
	TAKE_PTR(n); /* the registry's from here on */
	/* watched from now on: an exit meanwhile left the pidfd readable */
	exit_watch(r, t);
	uint64_t run_ns;
	proc_read_schedstat(pid, tid, &run_ns, &tnode(t)->ss_delay0, &tnode(t)->ss_count0);
	tnode(t)->hnext = r->buckets[reg_bucket(tid)];
	r->buckets[reg_bucket(tid)] = t;
	tnode(t)->next = r->threads;
	if (tnode(t)->next)
		tnode(tnode(t)->next)->prev = t;
	r->threads = t;
	r->n_threads++;
	r->n_exec_watched += exec_watched(t);
	if (proc)
		proc->n_threads++;
	registry_notify(r, REG_EV_THREAD_SET, t, NULL);
	if (out)
		*out = t;
	return 0;
}

int registry_add_thread(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			const struct grant_request *req, const struct sched_spec *spec, struct reg_process *proc,
			struct reg_thread **out, char *msg, size_t len)
{
	return thread_add(r, tid, pid, owner, source, req, spec, proc, NULL, 0, out, msg, len);
}

int registry_add_thread_pinned(struct registry *r, pid_t tid, pid_t pid, uint64_t starttime, uid_t owner,
			       enum reg_source source, const struct grant_request *req, const struct sched_spec *spec,
			       struct reg_thread **out, char *msg, size_t len)
{
	return thread_add(r, tid, pid, owner, source, req, spec, NULL, NULL, starttime, out, msg, len);
}

int registry_adopt_thread(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			  const struct grant_request *req, const struct sched_spec *spec, struct reg_process *proc,
			  const struct reg_saved *saved, char *msg, size_t len)
{
	return thread_add(r, tid, pid, owner, source, req, spec, proc, saved, 0, NULL, msg, len);
}

/* tid's entry in the ring, as the thread it is now (its start time), or NULL. */
static struct reg_recent *recent_find(struct registry *r, pid_t tid, uint64_t starttime)
{
	for (size_t i = 0; i < r->n_recent; i++)
		if (r->recent[i].tid == tid && r->recent[i].starttime == starttime)
			return &r->recent[i];
	return NULL;
}

/* The ring slot for tid (e: its old entry, or NULL for a new one), filled
 * with who it is. */
static struct reg_recent *recent_fill(struct registry *r, struct reg_recent *e, pid_t tid, pid_t pid,
				      uint64_t starttime)
{
	if (!e) {
		e = &r->recent[r->recent_head];
		r->recent_head = (r->recent_head + 1) % REG_RECENT_MAX;
		if (r->n_recent < REG_RECENT_MAX)
			r->n_recent++;
	}
	memset(e, 0, sizeof(*e));
	e->tid = tid;
	e->pid = pid;
	e->starttime = starttime;
	e->when_usec = clock_usec(CLOCK_REALTIME);
	return e;
}

bool registry_note_refused(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			   const char *rule, int code, const char *why)
{
	struct proc_stat st;
	struct reg_recent *e;
	bool same;

	if (proc_read_stat(tid, &st) < 0)
		return false;   /* gone: nothing to explain */
	e = recent_find(r, tid, st.starttime);
	same = e && e->code == code && e->source == source && strcmp(e->rule, rule ? rule : "") == 0;
	e = recent_fill(r, e, tid, pid, st.starttime);
	e->owner = owner;
	e->source = source;
	e->code = code;
	snprintf(e->rule, sizeof(e->rule), "%s", rule ? rule : "");
	snprintf(e->why, sizeof(e->why), "%s", why);
	return same;
}

const char *registry_last_diag(struct registry *r)
{
	return r->last_diag;
}

const struct reg_recent *registry_recent(struct registry *r, size_t i)
{
	if (i >= r->n_recent)
		return NULL;
	return &r->recent[(r->recent_head + REG_RECENT_MAX - 1 - i) % REG_RECENT_MAX];
}

/* t's thread is gone, seen by its pidfd, its tid or an exec of its process:
 * it is dropped, and if it exec'd (exec_took_over()) the grant ends at the
 * exec as a main thread's does: its process's pid gets back what t had. */
static void thread_gone(struct registry *r, struct reg_thread *t)
{
	const char *what = "";
	int e;

	if (exec_took_over(r, t)) {
		struct reg_recent *rc = recent_fill(r, recent_find(r, t->tid, t->starttime), t->tid, t->pid,
						    t->starttime);
		rc->owner = t->owner;
		rc->source = t->source;
		snprintf(rc->rule, sizeof(rc->rule), "%s", t->req.role);
		log_notice("tid %d exec'd a program, which the kernel made pid %d with the thread's scheduling: "
			   "the registration ends at the exec and pid %d gets back what the thread had",
			   (int)t->tid, (int)t->pid, (int)t->pid);
		e = task_sched_write(t->pid, &t->original, t->cpus_changed, &what);
		if (e < 0 && e != -ESRCH)
			log_errno(LOG_LEVEL_WARNING, e, "restoring pid %d: %s", (int)t->pid, what);
	}
	thread_free(r, t);
}

void registry_remove_thread(struct registry *r, struct reg_thread *t, bool restore)
{
	if (restore && !registry_same_thread(t)) {
		thread_gone(r, t);   /* nothing to restore on its tid: it exited, or exec'd */
		return;
	}
	if (restore) {
		struct reg_recent *e = recent_fill(r, recent_find(r, t->tid, t->starttime), t->tid, t->pid, t->starttime);
		e->owner = t->owner;
		e->source = t->source;
		e->code = 0;
		snprintf(e->rule, sizeof(e->rule), "%s", t->req.role);
		thread_restore(t);
	}
	thread_free(r, t);
}

/* Some managed threads exited (their pidfds are readable). One batch per
 * call: the set is level-triggered, so a mass exit takes several loop
 * iterations and the control socket is served in between. thread_free()
 * frees only its own thread, so the rest of the batch stays valid. */
static int on_threads_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct registry *r = userdata;
	struct epoll_event ev[64];
	int n = epoll_wait(r->exit_ep, ev, 64, 0);

	for (int i = 0; i < n; i++) {
		struct reg_thread *t = ev[i].data.ptr;

		log_debug("tid %d exited", (int)t->tid);
		thread_gone(r, t);
	}
	return 0;
}

static int on_process_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct reg_process *p = userdata;

	log_debug("process %d exited", (int)p->pid);
	registry_remove_process(pnode(p)->reg, p, false);
	return 0;
}

/* Manage the threads of p that are not managed yet, at most `most` of them:
 * the grant counted the threads it approved from an earlier listing, and a
 * thread created since is not among them. *left is how many were left for
 * registry_process_more(). Returns how many failed. */
static int process_adopt(struct registry *r, struct reg_process *p, const struct sched_spec *spec,
			 size_t most, size_t *left, char *msg, size_t len)
{
	pid_t *tids = NULL;
	size_t n = 0;
	int failed = 0, e;

	*left = 0;
	if (proc_list_tasks(p->pid, &tids, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct reg_thread *t = registry_find(r, tids[i]);

		if (t && t->proc == p)
			continue;
		if (most == 0) {
			(*left)++;
			continue;
		}
		most--;
		if (t) /* registered on its own before: the process registration takes it over */
			registry_remove_thread(r, t, true);
		e = registry_add_thread(r, tids[i], p->pid, p->owner, REG_SOURCE_PROCESS, &p->req, spec, p, NULL, msg, len);
		if (e != 0 && e != REFUSE_NO_SUCH_THREAD && e != REFUSE_STALE_THREAD)
			failed++;
	}
	free(tids);
	return failed;
}

/* A new process entry (no threads yet), pinned by its start time. */
static int process_new(struct registry *r, pid_t pid, uint64_t starttime, struct reg_process **out)
{
	struct reg_pnode *n = calloc(1, sizeof(*n));
	struct reg_process *p = &n->p;

	if (!n)
		return -ENOMEM;
	pnode(p)->reg = r;
	p->pid = pid;
	p->starttime = starttime;
	pnode(p)->pidfd = open_pidfd(r, pid, false);
	if (pnode(p)->pidfd >= 0)
		sd_event_add_io(r->event, &pnode(p)->exit_src, pnode(p)->pidfd, EPOLLIN, on_process_exit, p);
	pnode(p)->next = r->procs;
	if (pnode(p)->next)
		pnode(pnode(p)->next)->prev = p;
	r->procs = p;
	r->n_procs++;
	*out = p;
	return 0;
}

int registry_adopt_process(struct registry *r, pid_t pid, uint64_t starttime, uid_t owner,
			   const struct grant_request *req, struct reg_process **out)
{
	struct proc_stat st;
	struct reg_process *p;
	int rr;

	if (proc_read_stat(pid, &st) < 0 || st.starttime != starttime)
		return -ESRCH;
	if (registry_find_process(r, pid))
		return -EEXIST;
	if ((rr = process_new(r, pid, starttime, &p)) < 0)
		return rr;
	p->owner = owner;
	p->account = owner;
	p->req = *req;
	registry_notify(r, REG_EV_PROC_SET, NULL, p);
	*out = p;
	return 0;
}

void registry_restore_saved(pid_t tid, const struct reg_saved *saved)
{
	struct proc_stat st;
	const char *what;

	if (proc_read_stat(tid, &st) == 0 && st.starttime == saved->starttime)
		task_sched_write(tid, &saved->original, saved->cpus_changed, &what);
}

int registry_add_process(struct registry *r, pid_t pid, uid_t owner, const struct grant_request *req,
			 const struct sched_spec *spec, struct reg_process **out, char *msg, size_t len)
{
	return registry_add_process_pinned(r, pid, 0, owner, req, spec, SIZE_MAX, NULL, out, msg, len);
}

int registry_add_process_pinned(struct registry *r, pid_t pid, uint64_t starttime, uid_t owner,
				const struct grant_request *req, const struct sched_spec *spec, size_t most,
				size_t *left, struct reg_process **out, char *msg, size_t len)
{
	struct reg_process *p = registry_find_process(r, pid);
	struct proc_stat st;
	size_t rest;
	int rr;

	if (left)
		*left = 0;

	if (p && starttime && p->starttime != starttime) {
		snprintf(msg, len, "pid %d is no longer the process that was checked (it exited; the id was reused)",
			 (int)pid);
		return REFUSE_STALE_THREAD;
	}
	if (!p) {
		if ((rr = proc_read_stat(pid, &st)) < 0) {
			snprintf(msg, len, "pid %d: %s", (int)pid, rr == -ESRCH ? "no such process" : strerror(-rr));
			return rr == -ESRCH ? REFUSE_NO_SUCH_THREAD : rr;
		}
		if (starttime && st.starttime != starttime) {
			snprintf(msg, len, "pid %d is no longer the process that was checked (it exited; the id was "
				 "reused)", (int)pid);
			return REFUSE_STALE_THREAD;
		}
		if ((rr = process_new(r, pid, st.starttime, &p)) < 0) {
			snprintf(msg, len, "out of memory");
			return rr;
		}
	} else {
		/* new settings for every thread already managed */
		for (struct reg_thread *t = r->threads; t; t = tnode(t)->next)
			if (t->proc == p && thread_apply(t, spec, msg, len) != 0)
				log_warnx("pid %d: %s", (int)pid, msg);
	}
	p->owner = owner;
	p->account = owner;
	p->req = *req;
	registry_notify(r, REG_EV_PROC_SET, NULL, p);
	msg[0] = '\0';
	if (process_adopt(r, p, spec, most, &rest, msg, len) > 0 && p->n_threads == 0) {
		registry_remove_process(r, p, true);
		return REFUSE_APPLY_FAILED;
	}
	if (left)
		*left = rest;
	if (out)
		*out = p;
	return 0;
}

void registry_remove_process(struct registry *r, struct reg_process *p, bool restore)
{
	struct reg_thread *t = r->threads, *next;

	for (; t; t = next) {
		next = tnode(t)->next;
		if (t->proc == p)
			registry_remove_thread(r, t, restore);
	}
	if (pnode(p)->prev)
		pnode(pnode(p)->prev)->next = pnode(p)->next;
	else
		r->procs = pnode(p)->next;
	if (pnode(p)->next)
		pnode(pnode(p)->next)->prev = pnode(p)->prev;
	sd_event_source_disable_unref(pnode(p)->exit_src);
	if (pnode(p)->pidfd >= 0)
		close(pnode(p)->pidfd);
	r->n_procs--;
	registry_notify(r, REG_EV_PROC_GONE, NULL, p);
	free(pnode(p));
}

bool registry_may_log_refusal(struct registry *r, uid_t account)
{
	unsigned long missed;

	if (!r->log_rl && ratelimit_new(&r->log_rl) < 0)
		return true;
	if (!ratelimit_take_counted(r->log_rl, account, clock_usec(CLOCK_MONOTONIC), REG_LOG_RATE, REG_LOG_BURST,
				    &missed))
		return false;
	if (missed)
		log_notice("%lu refusal%s for threads of uid %u went unlogged (at most %u at once, then %u a second, "
			   "per user); `rtschedctl list --all` shows the last %d threads refused or let go", missed,
			   missed == 1 ? "" : "s", (unsigned)account, REG_LOG_BURST, REG_LOG_RATE, REG_RECENT_MAX);
	return true;
}

/* Whether pid (or tid) runs as uid, real and effective, what it runs as in
 * *ps; true if it cannot be read (gone: its exit comes as such). */
static bool runs_as(uid_t uid, pid_t pid, struct proc_status *ps)
{
	return proc_read_status(pid, ps) < 0 || grant_owns(uid, ps);
}

/* What a user registered is its program's: one that exec'd a setuid
 * program (root's now, or another user's) is not, though its pid is. */
static void process_disowned(struct registry *r, struct reg_process *p, const struct proc_status *ps)
{
	log_notice("pid %d exec'd a program that runs as uid %u (effective %u), not as uid %u who registered "
		   "it: its registration ends and its threads get back what they had", (int)p->pid,
		   (unsigned)ps->uid, (unsigned)ps->euid, (unsigned)p->owner);
	registry_remove_process(r, p, true);
}

static void thread_disowned(struct registry *r, struct reg_thread *t, const struct proc_status *ps)
{
	log_notice("tid %d: its process exec'd a program that runs as uid %u (effective %u), not as uid %u who "
		   "registered it: restoring it", (int)t->tid, (unsigned)ps->uid, (unsigned)ps->euid,
		   (unsigned)t->owner);
	registry_remove_thread(r, t, true);
}

/* Manage tid, a new thread of registered process p, if the owner's limits
 * allow it; a refusal is noted, and logged unless `quiet_repeat` and it is
 * the one noted last time. True if p's registration ended instead (the new
 * thread runs as someone else: an exec whose event was missed) and p is freed. */
static bool process_new_thread(struct registry *r, const struct config *c, struct reg_process *p, pid_t tid,
			       bool quiet_repeat)
{
	pid_t pid = p->pid;
	struct grant_subject subj;
	struct grant_decision d;
	struct proc_status ps;
	char msg[1200];
	int e;

	if (p->owner != 0 && !runs_as(p->owner, tid, &ps)) {
		process_disowned(r, p, &ps);
		return true;
	}
	/* the owner's limits hold for threads the process creates later too */
	grant_subject_init(&subj, c, p->owner, (gid_t)-1, pid);
	struct grant_ask a = { .path = GRANT_PATH_PROCESS, .subj = &subj, .req = &p->req, .target = pid, .adding = 1 };
	registry_ask(r, &a);
	if ((e = grant_decide(c, &a, &d)) == REFUSE_UNKNOWN_ROLE)
		return false;   /* the role is gone: the reload that took it ends the registration */
	if (e != 0) {
		grant_decision_text(&d, msg, sizeof(msg));
		if ((!registry_note_refused(r, tid, pid, p->owner, REG_SOURCE_PROCESS, p->req.role, e, msg) ||
		     !quiet_repeat) && registry_may_log_refusal(r, subj.account))
			log_notice("new thread %d of registered process %d left alone: %s", (int)tid, (int)pid, msg);
		return false;
	}
	e = registry_add_thread(r, tid, pid, p->owner, REG_SOURCE_PROCESS, &p->req, &d.spec, p, NULL, msg, sizeof(msg));
	if (e != 0 && e != REFUSE_NO_SUCH_THREAD && e != REFUSE_STALE_THREAD) {
		if ((!registry_note_refused(r, tid, pid, p->owner, REG_SOURCE_PROCESS, p->req.role, e, msg) ||
		     !quiet_repeat) && registry_may_log_refusal(r, subj.account))
			log_warnx("new thread %d of registered process %d: %s", (int)tid, (int)pid, msg);
	}
	return false;
}

/* The threads of p not managed yet, each through process_new_thread(); true
 * if p's registration ended instead (p is freed). */
static bool process_more(struct registry *r, const struct config *c, struct reg_process *p, bool quiet_repeat)
{
	pid_t *tids = NULL;
	size_t n = 0;
	bool ended = false;

	if (proc_list_tasks(p->pid, &tids, &n) < 0)
		return false;
	for (size_t i = 0; i < n && !ended; i++)
		if (!registry_find(r, tids[i]))
			ended = process_new_thread(r, c, p, tids[i], quiet_repeat);
	free(tids);
	return ended;
}

bool registry_process_more(struct registry *r, const struct config *c, struct reg_process *p)
{
	return process_more(r, c, p, false);
}

void registry_on_new_thread(struct registry *r, const struct config *c, pid_t tid, pid_t pid)
{
	struct reg_process *p = registry_find_process(r, pid);

	if (p && !registry_find(r, tid))
		process_new_thread(r, c, p, tid, false);
}

void registry_on_exec(struct registry *r, pid_t pid)
{
	struct reg_process *p = registry_find_process(r, pid);
	struct reg_thread *t, *tn;
	struct proc_status ps;

	/* its other threads are gone (the kernel killed them, or one of them
	 * exec'd and is pid now), with no exit of their own reported: a user's
	 * that exec'd must not keep its grant unmanaged (thread_gone()) */
	for (t = r->n_exec_watched ? r->threads : NULL; t; t = tn) {
		tn = tnode(t)->next;
		if (t->pid == pid && t->tid != pid && !registry_same_thread(t))
			thread_gone(r, t);
	}
	/* the main thread keeps its tid through an exec */
	t = registry_find(r, pid);
	if (t && (t->proc || t->owner == 0))
		t = NULL;
	if ((!p || p->owner == 0) && !t)
		return;   /* every exec on the machine comes here: nothing of ours */
	if (proc_read_status(pid, &ps) < 0)
		return;   /* gone: its exit comes next */
	if (p && p->owner != 0 && !grant_owns(p->owner, &ps))
		process_disowned(r, p, &ps);
	if (t && !grant_owns(t->owner, &ps))
		thread_disowned(r, t, &ps);
}

void registry_on_exit(struct registry *r, pid_t tid)
{
	struct reg_thread *t = registry_find(r, tid);
	struct reg_process *p;

	if (t && !registry_same_thread(t))
		thread_gone(r, t);
	p = registry_find_process(r, tid);
	if (p && pnode(p)->pidfd < 0) {
		struct proc_stat st;
		if (proc_read_stat(tid, &st) < 0 || st.starttime != p->starttime)
			registry_remove_process(r, p, false);
	}
}

void registry_rescan(struct registry *r, const struct config *c)
{
	struct reg_thread *t, *tn;
	struct reg_process *p, *pn;
	struct proc_status ps;
	struct sched_spec spec;

	/* an exec whose event was lost (or never sent: no connector) ends a
	 * user's registration as registry_on_exec() would have */
	for (t = r->threads; t; t = tn) {
		tn = tnode(t)->next;
		if (!registry_same_thread(t))
			thread_gone(r, t);
		else if (t->tid == t->pid && !t->proc && t->owner != 0 && !runs_as(t->owner, t->pid, &ps))
			thread_disowned(r, t, &ps);
	}
	for (p = r->procs; p; p = pn) {
		pn = pnode(p)->next;
		if (p->owner != 0 && !runs_as(p->owner, p->pid, &ps)) {
			process_disowned(r, p, &ps);
			continue;
		}
		if (grant_resolve(c, &p->req, &spec) != 0) {
			if (p->n_threads == 0)
				registry_remove_process(r, p, false);
			continue;
		}
		/* threads the connector did not report, through the owner's limits
		 * like the ones it did; a thread managed already (registered on its
		 * own, too) is left as it is */
		process_more(r, c, p, true);
	}
}

size_t registry_repin(struct registry *r)
{
	size_t n = 0;

	REGISTRY_FOREACH_THREAD(t, r) {
		cpu_set_t now;
		char want[64];
		int e;

		if (!t->cpus_changed || sched_getaffinity(t->tid, sizeof(now), &now) < 0 ||
		    CPU_EQUAL(&now, &t->applied.cpus) || !registry_same_thread(t))
			continue;
		if ((e = task_cpus_write(t->tid, &t->applied.cpus)) < 0) {
			log_errno(LOG_LEVEL_WARNING, e, "tid %d: the kernel changed its CPUs; cannot set them again",
				  (int)t->tid);
			continue;
		}
		cpulist_format(&t->applied.cpus, want, sizeof(want));
		log_info("tid %d: the kernel changed its CPUs (a cpuset change); set again to %s", (int)t->tid, want);
		n++;
	}
	return n;
}

void registry_reapply(struct registry *r, const struct config *c)
{
	struct reg_thread *t, *tn;
	struct reg_process *p, *pn;
	struct sched_spec spec;
	char msg[1200];
	int e;

	for (p = r->procs; p; p = pn) {
		pn = pnode(p)->next;
		if (grant_resolve(c, &p->req, &spec) != 0) {
			log_notice("pid %d: no rule '%s' in the configuration; restoring its threads", (int)p->pid,
				   p->req.role);
			registry_remove_process(r, p, true);
		}
	}
	/* per pass, not per thread: the owner's group and the process's rlimits
	 * (a lookup in the user database and a read of /proc/PID/limits were
	 * two thirds of a reload of 10,000 threads) */
	uid_t owner = (uid_t)-1;
	gid_t owner_gid = (gid_t)-1;
	r->limits_pid = 0;
	for (t = r->threads; t; t = tn) {
		struct grant_subject subj;
		struct grant_decision d;
		struct proc_rlimits l;

		tn = tnode(t)->next;
		if (t->source == REG_SOURCE_RULE) /* matching is redone by the rules scan */
			continue;
		if (t->owner != owner) {
			struct account a;
			owner = t->owner;
			owner_gid = accounts_by_uid(t->owner, &a) == 0 ? a.gid : (gid_t)-1;
		}
		/* the owner's limits may have shrunk: decided again (adding nothing) */
		grant_subject_init(&subj, c, t->owner, owner_gid, t->pid);
		struct grant_ask a = { .path = GRANT_PATH_REAPPLY, .subj = &subj, .req = &t->req, .target = t->pid,
				       .limits = pass_limits(r, t, &l) == 0 ? &l : NULL };
		registry_ask(r, &a);
		e = grant_decide(c, &a, &d);
		if (e != 0)
			grant_decision_text(&d, msg, sizeof(msg));
		else
			e = thread_apply(t, &d.spec, msg, sizeof(msg));
		if (e != 0) {
			log_notice("tid %d: %s; restoring it", (int)t->tid, msg);
			registry_remove_thread(r, t, true);
		}
	}
}

void registry_free(struct registry *r, bool restore)
{
	if (!r)
		return;
	registry_set_observer(r, NULL, NULL);
	while (r->procs)
		registry_remove_process(r, r->procs, restore);
	while (r->threads)
		registry_remove_thread(r, r->threads, restore);
	sd_event_source_disable_unref(r->exit_src);
	close(r->exit_ep);
	sd_event_unref(r->event);
	free(r->holds);
	ratelimit_free(r->log_rl);
	free(r);
}
