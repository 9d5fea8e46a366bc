/* registry.h: the threads rtschedd manages. Each entry remembers what the
 * thread had before (restored when it leaves), what was asked (resolved again
 * on reload) and what the kernel reported after the change. A thread is
 * pinned by its start time so a reused tid is never touched. */
#ifndef RTSCHED_REGISTRY_H
#define RTSCHED_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/config/config.h"
#include "daemon/core/grant.h"
#include "daemon/core/refusal.h"
#include "daemon/core/task.h"

/* Who asked: a control-socket register (thread or process), a match rule,
 * a call on the rtkit bus service (src/daemon/rtkit), or a register sent by
 * the preload library of `rtschedctl run` for a call the kernel refused
 * (source=preload). The numbers are kept in the state journal: add at the end. */
enum reg_source { REG_SOURCE_THREAD, REG_SOURCE_PROCESS, REG_SOURCE_RULE, REG_SOURCE_RTKIT, REG_SOURCE_PRELOAD,
		  REG_SOURCE_CAUGHT };

struct reg_process;
struct proc_rlimits;

/* One per managed thread, so at 10,000 threads every byte counts 10,000
 * times: the fields are ordered so nothing is padded, what only a demoted
 * thread needs is 16 bytes, and the thread's exit is watched through the
 * registry's one epoll set (no event source of its own). What the rest of
 * the daemon reads of a thread it got from the registry; only the registry
 * writes it, and it is reached through registry_find() and the iterators
 * below. */
struct reg_thread {
	pid_t tid, pid;
	uint64_t starttime;
	uid_t owner;                  /* the uid it is managed for: the client's, or the thread's own (a rule) */
	uid_t account;                /* whose quota it counts against (grant.h): owner, or its subordinate range's owner */
	struct grant_request req;
	struct task_sched original;
	struct task_sched applied;
	bool cpus_changed;
	bool demoted;                 /* by the watchdog; demoted_from comes back after the cooldown */
	bool exempt;                  /* granted by a [rule] that names its users: outside every quota */
	enum reg_source source;
	uint64_t since_usec;          /* CLOCK_REALTIME */
	struct task_policy demoted_from; /* the promotion keeps the CPUs: policy, priority, nice only */
	struct reg_process *proc;
	/* the registry's own part (its links, the pidfd, the schedstat
	 * baseline) follows in memory: registry_int.h, for core/registry*.c only */
};

struct reg_process {
	pid_t pid;
	uint64_t starttime;
	uid_t owner;
	uid_t account;                /* as reg_thread's; its new threads get it */
	struct grant_request req;
	size_t n_threads;
	/* the registry's own part follows, as for struct reg_thread */
};

struct registry;

/* What a previous rtschedd recorded about a thread (the state journal). */
struct reg_saved {
	uint64_t starttime;
	struct task_sched original;
	bool cpus_changed;
};

/* A thread rtschedd does not manage (any more), and why: the grant for a
 * [rule] match or a registered process's new thread was refused, or it was
 * let go with its settings restored. The last REG_RECENT_MAX are kept, so
 * `list` can say why a thread a rule matched is not real-time. */
#define REG_RECENT_MAX 64
struct reg_recent {
	pid_t tid, pid;
	uint64_t starttime;
	uid_t owner;
	enum reg_source source;
	char rule[CONFIG_NAME_MAX];  /* "" for the default */
	int code;                    /* 0: restored; else the refusal (enum refusal) or -errno */
	char why[256];
	uint64_t when_usec;          /* CLOCK_REALTIME */
};

/* Changes, for the state journal; REG_EV_THREAD_ARM comes before the
 * kernel write that makes a thread real-time (a grant, or a promotion after
 * the watchdog's cooldown), with its tid and start time pinned: the
 * watchdog must be watching before the thread can starve the main loop. */
enum { REG_EV_THREAD_SET, REG_EV_THREAD_GONE, REG_EV_PROC_SET, REG_EV_PROC_GONE, REG_EV_THREAD_ARM };
typedef void (*registry_observer)(void *ud, int event, struct reg_thread *t, struct reg_process *p);
void registry_set_observer(struct registry *r, registry_observer fn, void *ud);

/* Called before a thread becomes managed, before its settings are read
 * (the isolation gives it back CPUs it took away, cpu/isolate.h). Its
 * failure is logged by it; the registration goes on. */
typedef int (*registry_admit_fn)(void *ud, pid_t tid);
void registry_set_admit(struct registry *r, registry_admit_fn fn, void *ud);

int registry_new(struct registry **ret, sd_event *e);
/* Free; restore every thread first when `restore`. NULL is fine. */
void registry_free(struct registry *r, bool restore);
/* The managed thread `tid`, or NULL. */
struct reg_thread *registry_find(struct registry *r, pid_t tid);
/* The registered process `pid`, or NULL. */
struct reg_process *registry_find_process(struct registry *r, pid_t pid);
/* The managed thread after t, the first for NULL; NULL past the last. */
struct reg_thread *registry_thread_next(struct registry *r, const struct reg_thread *t);
/* The registered process after p, the first for NULL; NULL past the last. */
struct reg_process *registry_process_next(struct registry *r, const struct reg_process *p);
/* Every managed thread, as t; its body must not remove t (a removal
 * starts the walk again, as dispatch_reset() does). */
#define REGISTRY_FOREACH_THREAD(t, r)                                                                            \
	for (struct reg_thread *t = registry_thread_next((r), NULL); t; t = registry_thread_next((r), t))
/* The same, for a body that may remove t (and only t): tn is the next. */
#define REGISTRY_FOREACH_THREAD_SAFE(t, tn, r)                                                                   \
	for (struct reg_thread *t = registry_thread_next((r), NULL), *tn = t ? registry_thread_next((r), t) : NULL; \
	     t; t = tn, tn = t ? registry_thread_next((r), t) : NULL)
/* Every registered process, as p. */
#define REGISTRY_FOREACH_PROCESS(p, r)                                                                           \
	for (struct reg_process *p = registry_process_next((r), NULL); p; p = registry_process_next((r), p))
/* Thread t's schedstat run-queue delay and count of runs when it was
 * registered or at the last registry_schedstat_rebase(). */
void registry_schedstat_base(const struct reg_thread *t, uint64_t *delay_ns, uint64_t *count);
/* Start every thread's schedstat figures again from now (a jitter reset). */
void registry_schedstat_rebase(struct registry *r);
size_t registry_n_threads(struct registry *r);
/* A managed thread's start time, when its thread pidfd says it still runs
 * (so tid names it, not a reuse): a pin without reading /proc/TID/stat.
 * False when tid is not managed or that cannot be known so cheaply. */
bool registry_known_start(struct registry *r, pid_t tid, uint64_t *starttime);
size_t registry_n_processes(struct registry *r);
/* Users' threads whose process's exec must be heard of (registry_on_exec):
 * main threads registered on their own (a set-user-ID program's ends the
 * registration) and threads that are not the main thread (one that execs
 * becomes it, with its grant). */
size_t registry_n_exec_watched(struct registry *r);
/* Threads counted against an account's quota (max-threads): its own and
 * its subordinate uids', but for those a [rule] naming its users granted. */
size_t registry_count_owner(struct registry *r, uid_t account);
/* Count t (or a process's threads, now and later) against `account`
 * instead of its owner; `exempt`: against no one. A new registration
 * starts counted against its owner. */
void registry_set_account(struct reg_thread *t, uid_t account, bool exempt);
void registry_set_process_account(struct reg_process *p, uid_t account);
/* Manage thread `tid` of process `pid` with `spec` (or re-apply to one already
 * managed). Returns 0, else a refusal (enum refusal) or -errno, with msg
 * filled. */
int registry_add_thread(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			const struct grant_request *req, const struct sched_spec *spec, struct reg_process *proc,
			struct reg_thread **out, char *msg, size_t len);
/* The same for a thread pinned before its checks: only if its start time is
 * still `starttime` (the tid not reused since it was checked). */
int registry_add_thread_pinned(struct registry *r, pid_t tid, pid_t pid, uint64_t starttime, uid_t owner,
			       enum reg_source source, const struct grant_request *req, const struct sched_spec *spec,
			       struct reg_thread **out, char *msg, size_t len);
/* Take over a thread a previous rtschedd managed: only if its start time is
 * still `saved->starttime`; its recorded originals are what will be restored.
 * Returns as registry_add_thread(). */
int registry_adopt_thread(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			  const struct grant_request *req, const struct sched_spec *spec, struct reg_process *proc,
			  const struct reg_saved *saved, char *msg, size_t len);
/* Manage process `pid` and all its threads, now and later. Returns as
 * registry_add_thread(). */
int registry_add_process(struct registry *r, pid_t pid, uid_t owner, const struct grant_request *req,
			 const struct sched_spec *spec, struct reg_process **out, char *msg, size_t len);
/* The same for a process pinned before its checks (see above), adopting at
 * most `most` threads it does not manage yet: the count the grant approved
 * (SIZE_MAX: no bound). *left (if not NULL) is how many more it found,
 * created after that count was taken; registry_process_more() decides them. */
int registry_add_process_pinned(struct registry *r, pid_t pid, uint64_t starttime, uid_t owner,
				const struct grant_request *req, const struct sched_spec *spec, size_t most,
				size_t *left, struct reg_process **out, char *msg, size_t len);
/* The threads of registered process p not managed yet, each decided as a
 * thread it creates later is (the owner's limits and quota; a refusal
 * noted for list --all and logged). True if p's registration ended
 * instead (one runs as another user) and p is freed. */
bool registry_process_more(struct registry *r, const struct config *c, struct reg_process *p);
/* Take over a process a previous rtschedd managed, if its start time still
 * matches; its threads come through registry_adopt_thread(). */
int registry_adopt_process(struct registry *r, pid_t pid, uint64_t starttime, uid_t owner,
			   const struct grant_request *req, struct reg_process **out);
/* Put back a recorded original on a thread nobody manages any more, if it is
 * still the recorded thread. */
void registry_restore_saved(pid_t tid, const struct reg_saved *saved);
/* Stop managing a thread; put its original settings back when `restore`. */
void registry_remove_thread(struct registry *r, struct reg_thread *t, bool restore);
/* Stop managing a process and its threads. */
void registry_remove_process(struct registry *r, struct reg_process *p, bool restore);
/* A thread was created (proc connector): manage it if its process is registered. */
void registry_on_new_thread(struct registry *r, const struct config *c, pid_t tid, pid_t pid);
/* Process pid exec'd (proc connector): a registration of it (or of its
 * thread) by a user it does not run as any more, real and effective uid
 * (a setuid program), ends, its threads restored; a user's thread of it
 * that was not the main thread is gone, and if it was the one that exec'd
 * (it is pid now, with its grant) pid gets back what the thread had. */
void registry_on_exec(struct registry *r, pid_t pid);
/* A task exited (proc connector, or a pidfd). */
void registry_on_exit(struct registry *r, pid_t tid);
/* Re-read the task lists of registered processes: new threads are managed,
 * vanished ones dropped (one that exec'd as registry_on_exec does), and a
 * user's process or main thread that runs as someone else now ends as at
 * its exec. Used after a connector overrun and as the fallback. */
void registry_rescan(struct registry *r, const struct config *c);
/* The managed threads whose CPUs rtschedd set and whose affinity the
 * kernel changed since get them again: before Linux 6.2 a task that moves
 * between cgroup2 cpusets (systemd enabling the cpuset controller on a slice
 * for AllowedCPUs=) or whose cpuset changes is given that cpuset's CPUs,
 * whatever its own affinity was. Returns how many. */
size_t registry_repin(struct registry *r);
/* A new configuration: resolve every registration again and apply it; a
 * thread whose role is gone gets its original settings back and leaves. */
void registry_reapply(struct registry *r, const struct config *c);
/* The watchdog demoted the real-time threads that may run on `starved`
 * (watchdog-demote = all): record what they had and what the kernel now
 * reports. Returns how many. */
size_t registry_demote(struct registry *r, const cpu_set_t *starved);
/* The watchdog demoted one culprit (watchdog-demote = culprit): record it as
 * above. The thread, or NULL if it is not managed (any more). */
struct reg_thread *registry_demote_thread(struct registry *r, pid_t tid, uint64_t starttime);
/* A watchdog cooldown holds back real-time settings, until registry_promote():
 * threads held get SCHED_OTHER at every apply (a reload, a rule match, a new
 * thread) and what they asked for afterwards. Everyone's ... */
void registry_hold_all(struct registry *r);
/* ... or the culprit's: a hold is per account and, for a thread a [rule]
 * matched, per rule, so neither a fork nor a new process of the same user
 * escapes it, and another user the same rule matches is not caught by it:
 *   - a [rule] match: the rule's matches of the culprit's account, and the
 *     culprit's process;
 *   - a registration of a non-root account: every real-time grant of it;
 *   - root's registration: the culprit's process (root is every service).
 * 0, or -ENOMEM (then everyone is held). */
int registry_hold_thread(struct registry *r, const struct reg_thread *t);
/* The same for a culprit the registry does not know (any more): a thread
 * of account, pid, that the rule `rule` ("" none) matched. */
int registry_hold(struct registry *r, uid_t account, pid_t pid, const char *rule);
/* Whether real-time is held back for a thread of account in process pid
 * that the [rule] `rule` matched (NULL: not a rule match). */
bool registry_held(struct registry *r, uid_t account, pid_t pid, const char *rule);
/* The registry's facts of a grant decision (core/grant.h): how many
 * threads a->subj's account holds (0 for a privileged subject, whom no
 * quota limits, and when a->adding is 0: nothing to check) and whether the cooldown holds it back, for a thread of
 * process a->target (a [rule] match: of the rule a->req->role). */
void registry_ask(struct registry *r, struct grant_ask *a);
/* Who is held, for the log and status: "uid 1000 (alice)", "rule ola-main of
 * uid 0 and pid 12 (olad)", ..., or "every process"; "" if no one. */
void registry_holds_text(struct registry *r, char *buf, size_t len);
/* After the cooldown: release the holds and give demoted threads their
 * real-time settings back. Returns how many got them. */
size_t registry_promote(struct registry *r);
/* Remember that a grant for tid was refused with `code`, a refusal or
 * -errno (see struct reg_recent). True when the thread, as it is now (its
 * start time), had been refused the same way the last time (source, rule
 * or role, code): a rename storm or a rescan asks again and again, but the
 * log says it once. One read of the thread's stat for both. */
bool registry_note_refused(struct registry *r, pid_t tid, pid_t pid, uid_t owner, enum reg_source source,
			   const char *rule, int code, const char *why);
/* Whether a refusal for a thread of `account` may be logged now: at most
 * REG_LOG_BURST at once, then REG_LOG_RATE a second, per account. A user
 * who renames or creates threads as fast as the machine allows would
 * otherwise write a line per thread, and journald's own per-service rate
 * limit would then drop the daemon's other messages (a watchdog's trip
 * among them). When lines were held back, a notice says how many first. */
#define REG_LOG_BURST 10u
#define REG_LOG_RATE 1u
bool registry_may_log_refusal(struct registry *r, uid_t account);
/* The diagnosis code (diag.h) of the last apply that failed with
 * apply-failed ("" if none found, or it succeeded). */
const char *registry_last_diag(struct registry *r);
/* The i-th remembered thread, newest first; NULL past the end. */
const struct reg_recent *registry_recent(struct registry *r, size_t i);
/* Whether threads get their own pidfd (PIDFD_THREAD, Linux 6.9+). */
bool registry_thread_pidfds(struct registry *r);

#endif
