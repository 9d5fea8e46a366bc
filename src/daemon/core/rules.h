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
 * outside their quota (rtschedd.conf(5)). Root's threads are not limited. */
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

#endif
