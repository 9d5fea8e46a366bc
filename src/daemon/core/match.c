/* match.c: rule matching (see match.h). The configuration says what each
 * rule matches (config_validate() counts its keys, the specificity); here a
 * thread is held against every automatic rule and the precedence decided. */
#include "autoconfig.h"

#include <fnmatch.h>
#include <stdbool.h>

#include "daemon/core/match.h"

/* One rule against one thread. */
static bool rule_matches(const struct rule_match *m, const struct match_subject *s)
{
	if (m->thread_name[0] && (!s->thread_name || fnmatch(m->thread_name, s->thread_name, 0) != 0))
		return false;
	if (m->process_name[0] && (!s->process_name || fnmatch(m->process_name, s->process_name, 0) != 0))
		return false;
	if (m->exe[0] && (!s->exe || fnmatch(m->exe, s->exe, 0) != 0))
		return false;
	if (m->unit[0] && (!s->unit || fnmatch(m->unit, s->unit, 0) != 0))
		return false;
	if (m->cgroup[0] && (!s->cgroup || fnmatch(m->cgroup, s->cgroup, 0) != 0))
		return false;
	if (m->has_user && s->uid != m->uid)
		return false;
	if (m->has_group) {
		bool in = s->gid == m->gid;
		for (size_t i = 0; !in && i < s->n_groups; i++)
			in = s->groups[i] == m->gid;
		if (!in)
			return false;
	}
	return true;
}

const struct rule *config_match(const struct config *c, const struct match_subject *s)
{
	const struct rule *best = NULL;

	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *rl = &c->rules[i];

		/* strictly more keys wins; on a tie the earlier rule stays */
		if (rl->match.n_keys && (!best || rl->match.n_keys > best->match.n_keys) &&
		    rule_matches(&rl->match, s))
			best = rl;
	}
	return best;
}
