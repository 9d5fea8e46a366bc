/* match.h: which [rule NAME] applies to a thread. A rule's match keys are
 * globs and ids set in the configuration; the thread's side (its names,
 * executable, cgroup and ids) is what rules.c read from /proc. */
#ifndef RTSCHED_MATCH_H
#define RTSCHED_MATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "daemon/config/config.h"

/* What is known about one thread; a NULL string is one nobody read (no rule
 * needs it, or /proc did not have it) and matches no pattern. */
struct match_subject {
	const char *thread_name;
	const char *process_name;
	const char *exe;
	const char *unit;
	const char *cgroup;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
};

/* The rule that applies to a thread with these properties, or NULL: the most
 * specific (most match keys) first, then the first in file order. Rules with
 * no match keys (roles) never match. */
const struct rule *config_match(const struct config *c, const struct match_subject *s);

#endif
