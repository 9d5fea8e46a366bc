/* validate.c: the checks that span keys (a priority against its policy and
 * max-priority, the watchdog's room at 99, a rule without a policy, the
 * [rtkit] role), run on a loaded config after any command-line overrides.
 * Each message names the file:line of the key at fault. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "daemon/sys/policy.h"
#include "daemon/config/config.h"
#include "daemon/config/keys.h"

/* Priority against policy and the global ceiling. `base` maps rule key
 * numbers onto the section's own (the [daemon] spec keys start at D_POLICY);
 * `where` names the section. */
static int spec_validate(const struct config *c, struct sched_spec *s, const struct key_origin *o,
			 int base, const char *where, FILE *errors)
{
	char at[PATH_MAX + 16];
	int lo, hi;

	if (policy_priority_range(s->policy, &lo, &hi) < 0)
		return -EINVAL;
	/* other, batch and idle have only priority 0: an unset priority means it. */
	if (!origin_set(o, base + R_PRIORITY) && lo == 0)
		s->priority = 0;
	if (base == 0 && !origin_set(o, R_PRIORITY) && lo > 0) {
		origin_str(c, o, base + R_POLICY, at, sizeof(at));
		fprintf(errors, "%s: %s: policy %s needs a priority; add 'priority = N' (%d..%d)\n",
			at, where, policy_to_string(s->policy), lo, hi);
		return -EINVAL;
	}
	bool cmdline = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_CMDLINE;
	origin_str(c, o, base + R_PRIORITY, at, sizeof(at));
	if (s->priority < lo || s->priority > hi) {
		fprintf(errors, "%s: %s: priority %d is out of range for %s (%d..%d)%s\n", at, where,
			s->priority, policy_to_string(s->policy), lo, hi,
			lo == 0 ? "; other, batch and idle take priority 0 and use nice instead" : "");
		return -EINVAL;
	}
	if (s->priority > c->max_priority) {
		/* a priority no file sets is the built-in one: the key at fault is max-priority */
		bool dflt = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_DEFAULT;
		if (dflt)
			origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: %s: priority %d%s is above max-priority %d; lower it or raise max-priority in [daemon]\n",
			at, where, s->priority, dflt ? " (built-in default)" : "", c->max_priority);
		return cmdline ? -EDOM : -EINVAL;
	}
	if (origin_set(o, base + R_NICE) && s->nice != 0 &&
	    s->policy != SCHED_OTHER && s->policy != SCHED_BATCH) {
		origin_str(c, o, base + R_NICE, at, sizeof(at));
		fprintf(errors, "%s: %s: nice has no effect with policy %s; remove it or use policy other or batch\n",
			at, where, policy_to_string(s->policy));
		return -EINVAL;
	}
	return 0;
}

int config_validate(struct config *c, FILE *errors)
{
	char where[CONFIG_NAME_MAX + 16];
	int r;

	c->n_auto_rules = 0;
	c->match_needs = 0;
	r = spec_validate(c, &c->dflt, &c->origin, D_POLICY, "[daemon]", errors);
	/* the watchdog thread runs at FIFO 99: nothing it guards may reach it */
	if (c->watchdog && c->max_priority > 98) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: [daemon]: max-priority %d leaves no room for the watchdog at 99; use 98 or less, "
			"or watchdog = no\n", at, c->max_priority);
		r = -EINVAL;
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		struct probe_conf *p = &c->probes[i];
		int lo, hi;

		if (p->priority < 0)
			p->priority = policy_is_realtime(p->policy) ? c->dflt.priority : 0;
		policy_priority_range(p->policy, &lo, &hi);
		if (p->priority < lo || p->priority > hi || p->priority > c->max_priority) {
			fprintf(errors, "%s:%u: [probe %s]: priority %d is not valid for %s (%d..%d, at most max-priority %d)\n",
				c->files[p->file], p->line, p->name, p->priority, policy_to_string(p->policy), lo, hi,
				c->max_priority);
			r = -EINVAL;
		}
		if (p->budget_us && (p->noise || p->budget_us > p->period_us)) {
			char at[PATH_MAX + 16];
			origin_str(c, &p->origin, PR_BUDGET, at, sizeof(at));
			if (p->noise)
				fprintf(errors, "%s: [probe %s]: budget-us %u: a noise probe never sleeps, so has no "
					"wake-up to be late; remove it or use mode = latency\n", at, p->name,
					p->budget_us);
			else
				fprintf(errors, "%s: [probe %s]: budget-us %u is above period-us %u: a wake-up that "
					"late has missed its period already; use at most %u\n", at, p->name,
					p->budget_us, p->period_us, p->period_us);
			r = -EINVAL;
		}
	}
	for (size_t i = 0; i < c->n_rules; i++) {
		struct rule *rl = &c->rules[i];

		snprintf(where, sizeof(where), "[rule %s]", rl->name);
		if (!origin_set(&rl->origin, R_POLICY)) {
			fprintf(errors, "%s:%u: %s: no policy; add 'policy = fifo' (or rr, other, batch, idle)\n",
				c->files[rl->file], rl->line, where);
			r = -EINVAL;
			continue;
		}
		rl->match.n_keys = 0;
		for (int k = R_THREAD_NAME; k < R_N; k++)
			rl->match.n_keys += origin_set(&rl->origin, k);
		if (rl->match.n_keys)
			c->n_auto_rules++;
		if (rl->match.process_name[0])
			c->match_needs |= MATCH_NEED_PROCESS_NAME;
		if (rl->match.exe[0])
			c->match_needs |= MATCH_NEED_EXE;
		if (rl->match.unit[0] || rl->match.cgroup[0])
			c->match_needs |= MATCH_NEED_CGROUP;
		if (rl->match.has_user || rl->match.has_group)
			c->match_needs |= MATCH_NEED_IDS;
		if (!origin_set(&rl->origin, R_RESET_ON_FORK)) {
			rl->spec.reset_on_fork = c->dflt.reset_on_fork;
			rl->origin.file[R_RESET_ON_FORK] = c->origin.file[D_RESET_ON_FORK];
			rl->origin.line[R_RESET_ON_FORK] = c->origin.line[D_RESET_ON_FORK];
		}
		if (spec_validate(c, &rl->spec, &rl->origin, 0, where, errors) < 0)
			r = -EINVAL;
	}
	if (c->rtkit.role[0] && !config_find_rule(c, c->rtkit.role)) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->rtkit.origin, RK_ROLE, at, sizeof(at));
		fprintf(errors, "%s: [rtkit]: role '%s' is no [rule NAME] section; add it or remove the key\n", at,
			c->rtkit.role);
		r = -EINVAL;
	}
	if (c->rtkit.max_priority > c->max_priority && !origin_set(&c->rtkit.origin, RK_MAX_RT_PRIORITY)) {
		/* rtkit's built-in 20 follows a lower max-priority: only a value a
		 * file set can be wrong */
		c->rtkit.max_priority = c->max_priority;
	} else if (c->rtkit.max_priority > c->max_priority) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->rtkit.origin, RK_MAX_RT_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: [rtkit]: max-realtime-priority %d is above max-priority %d in [daemon]; "
			"use %d or less\n", at, c->rtkit.max_priority, c->max_priority, c->max_priority);
		r = -EINVAL;
	}
	return r;
}
