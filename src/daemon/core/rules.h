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

/* Evaluate one task against the rules of c: apply the winning rule through
 * the registry r, or restore a thread that a rule managed and no rule
 * matches any more. Explicit registrations are left alone. comm: the
 * thread's name when the caller has it (a COMM event), NULL to read it. */
void rules_on_task(struct registry *r, const struct config *c, pid_t tid, pid_t pid, const char *comm,
		   bool force);
/* A process exec'd or its main thread renamed: evaluate all its threads. */
void rules_on_process(struct registry *r, const struct config *c, pid_t pid);
/* Scan every task in /proc. force: re-apply to threads already matched
 * (reload). Returns the number of tasks looked at. */
size_t rules_scan(struct registry *r, const struct config *c, bool force);

#endif
