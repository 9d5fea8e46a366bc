/* rules.h: rules that find threads by themselves ([rule NAME] sections with
 * match keys): a /proc scan at start and on reload, then the process events
 * connector's fork, exec and comm events for threads created or renamed
 * later. Matched threads live in the registry like registered ones. */
#ifndef RTSCHED_RULES_H
#define RTSCHED_RULES_H

#include <stdbool.h>
#include <sys/types.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"

/* What a rule's grant goes through. A rule that matches a thread of a
 * non-root user grants on that user's behalf, so the grant is checked as
 * the user's own request would be (grant_check(): [user]/[group] limits,
 * rtprio-cap, the quota of its account), costs a token of its rate limit,
 * and is listed as the user's; unless the rule names its users (user = or
 * group =): the administrator granted them by name, past their limits and
 * outside their quota (rtschedd.conf(5)). Root's threads are not limited;
 * a thread whose owner (effective uid) is privileged but whose real uid is
 * another (a setuid program a user started under a rule's name) is not
 * granted at all. */
struct rules_ctx {
	struct registry *registry;
	const struct config *config;
	struct ratelimit *ratelimit;   /* NULL: no rate limit */
};

/* Evaluate one task against the rules: apply the winning rule through the
 * registry, or restore a thread that a rule managed and no rule matches any
 * more. Explicit registrations are left alone. comm: the thread's name when
 * the caller has it (a COMM event), NULL to read it. */
void rules_on_task(const struct rules_ctx *x, pid_t tid, pid_t pid, const char *comm, bool force);
/* A process exec'd or its main thread renamed: evaluate all its threads. */
void rules_on_process(const struct rules_ctx *x, pid_t pid);
/* Scan every task in /proc. force: re-apply to threads already matched
 * (reload). Returns the number of tasks looked at. */
size_t rules_scan(const struct rules_ctx *x, bool force);

/* The same scan a few tasks at a time, for the event loop's turns: a
 * rescan after lost process events (which any user can cause) must not
 * hold a real-time loop for as long as the machine has threads. Zeroed to
 * start; /proc is read in order of pid, so a walk resumed a turn later
 * goes on where it stopped (processes born since are the connector's). */
struct rules_walk {
	void *proc;      /* DIR of /proc, NULL before the start */
	bool one;        /* a walk of one process's tasks (rules_walk_process) */
	pid_t pid;       /* the process whose tasks are being looked at */
	pid_t *tids;
	size_t n, i;     /* its tasks, and the next one to look at */
	size_t seen;     /* tasks looked at so far */
};
/* Look at up to max_tasks more tasks. True when the walk has reached the
 * end of /proc (or cannot open it), or of its one process: it is closed
 * then, and may start again; w->seen says how many tasks it looked at. */
bool rules_walk_step(const struct rules_ctx *x, struct rules_walk *w, size_t max_tasks, bool force);
/* Make w (not walking) a walk of the tasks of process pid, as
 * rules_on_process() would look at them at once: 0, or -errno if pid is
 * gone. The main thread of a process with thousands of threads renaming
 * itself in a loop would otherwise hold the loop for thousands of tasks an
 * event, when a rule matches process names. */
int rules_walk_process(struct rules_walk *w, pid_t pid);
/* Stop a walk anywhere (nothing to do for one at the start or the end). */
void rules_walk_stop(struct rules_walk *w);

#endif
