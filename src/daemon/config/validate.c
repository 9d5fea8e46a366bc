/* validate.c: the checks that span keys (a priority against its policy and
 * max-priority, the watchdog's room at 99, a rule without a policy, the
 * [rtkit] role, the CPUs isolate = yes empties), run on a loaded config after
 * any command-line overrides.
 * Each message names the file:line of the key at fault. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon/sys/cgroupfs.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/config/config.h"
#include "daemon/config/keys.h"

/* Priority against policy and the global ceiling. `base` maps rule key
 * numbers onto the section's own (the [daemon] spec keys start at D_POLICY);
 * `where` names the section. */
static int spec_validate(const struct config *c, struct sched_spec *s, const struct key_origin *o,
			 int base, const char *where, struct config_report *errors)
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
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: policy %s needs a priority; add 'priority = N' (%d..%d)\n",
			at, where, policy_to_string(s->policy), lo, hi);
		return -EINVAL;
	}
	bool cmdline = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_CMDLINE;
	origin_str(c, o, base + R_PRIORITY, at, sizeof(at));
	if (s->priority < lo || s->priority > hi) {
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: priority %d is out of range for %s (%d..%d)%s\n", at, where,
			s->priority, policy_to_string(s->policy), lo, hi,
			lo == 0 ? "; other, batch and idle take priority 0 and use nice instead" : "");
		return -EINVAL;
	}
	if (s->priority > c->max_priority) {
		/* a priority no file sets is the built-in one: the key at fault is max-priority */
		bool dflt = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_DEFAULT;
		if (dflt)
			origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, cmdline, NULL, "%s: %s: priority %d%s is above max-priority %d; "
				  "lower it or raise max-priority in [daemon]", at, where, s->priority,
				  dflt ? " (built-in default)" : "", c->max_priority);
		return -EINVAL;
	}
	if (origin_set(o, base + R_NICE) && s->nice != 0 &&
	    s->policy != SCHED_OTHER && s->policy != SCHED_BATCH) {
		origin_str(c, o, base + R_NICE, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: nice has no effect with policy %s; remove it or use policy other or batch\n",
			at, where, policy_to_string(s->policy));
		return -EINVAL;
	}
	return 0;
}

/* What the machine offers isolate = yes: the CPUs online and those of
 * rtschedd's own cpuset, read once per validation. */
struct quiet_env {
	bool read;
	cpu_set_t online, own;
};

/* grant-rlimit and grant-rttime-us of a rule: the limit raised is the
 * priority of a real-time policy, at exec of what the rule matches, so the
 * rule needs both; grant-rttime-us only goes with grant-rlimit. */
static int rlimit_validate(const struct config *c, const struct rule *rl, const char *where,
			   struct config_report *errors)
{
	char at[PATH_MAX + 16];

	if (rl->grant_rttime_us >= 0 && !rl->grant_rlimit) {
		origin_str(c, &rl->origin, R_GRANT_RTTIME, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: grant-rttime-us without grant-rlimit = yes; "
				  "add grant-rlimit = yes or remove the key\n", at, where);
		return -EINVAL;
	}
	if (!rl->grant_rlimit)
		return 0;
	origin_str(c, &rl->origin, R_GRANT_RLIMIT, at, sizeof(at));
	if (!policy_is_realtime(rl->spec.policy)) {
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: grant-rlimit = yes raises RLIMIT_RTPRIO to "
				  "the rule's priority, but its policy is %s; use policy = fifo or rr, or remove the key\n",
				  at, where, policy_to_string(rl->spec.policy));
		return -EINVAL;
	}
	if (!rl->match.n_keys) {
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: grant-rlimit = yes acts on the processes "
				  "the rule matches, and it has no match key; add one (process-name =, exe =, unit = ...)\n",
				  at, where);
		return -EINVAL;
	}
	/* the kernel refuses an unprivileged sched_setscheduler() that would
	 * clear SCHED_RESET_ON_FORK, whatever its RLIMIT_RTPRIO */
	if (rl->spec.reset_on_fork)
		config_report_add(errors, CONFIG_WARNING, false, at, "%s: grant-rlimit = yes with reset-on-fork = yes: "
				  "once the rule has applied its scheduling, the program's own sched_setscheduler() "
				  "without SCHED_RESET_ON_FORK is refused (EPERM) even with the raised limit; add "
				  "'reset-on-fork = no'", where);
	return 0;
}

/* isolate = yes and resume-latency-us of a rule (key numbers ki, kl, kc of
 * isolate, resume-latency-us and cpus, "cpus") or a probe ("cpu"): isolate
 * needs CPUs of its own, inside rtschedd's cpuset, that leave the machine
 * at least one online CPU. */
static int quiet_validate(const struct config *c, struct quiet_env *env, const struct cpu_quiet *q,
			  const struct key_origin *o, int ki, int kl, int kc, const char *cpukey, const cpu_set_t *cpus,
			  const char *where, struct config_report *errors)
{
	char at[PATH_MAX + 16], want[256], list[256], bad[256];
	cpu_set_t out;

	if (q->resume_latency_us >= 0 && !q->isolate && !origin_set(o, kc) && strcmp(cpukey, "cpus") == 0) {
		origin_str(c, o, kl, at, sizeof(at));
		config_report_add(errors, CONFIG_WARNING, false, at, "%s: resume-latency-us without cpus: every CPU its threads "
			"may run on keeps out of its idle states (all of them, for a thread not pinned); add "
			"'cpus = N' to keep the other CPUs' idle states", where);
	}
	if (!q->isolate)
		return 0;
	if (!origin_set(o, kc)) {
		origin_str(c, o, ki, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: isolate = yes needs the CPUs to empty for it; add '%s = N' (and leave at "
			"least one CPU out for the rest of the system)\n", at, where, cpukey);
		return -EINVAL;
	}
	if (!env->read) {
		env->read = true;
		if (cpulist_online(&env->online) < 0 || cgroupfs_own_cpus(&env->own) < 0) {
			CPU_ZERO(&env->online);
			CPU_ZERO(&env->own);
		}
	}
	origin_str(c, o, kc, at, sizeof(at));
	cpulist_format(cpus, want, sizeof(want));
	if (CPU_COUNT(&env->own) && cpulist_missing(cpus, &env->own, &out)) {
		cpulist_format(&out, bad, sizeof(bad));
		cpulist_format(&env->own, list, sizeof(list));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: isolate = yes with %s = %s: CPU %s is outside rtschedd's cpuset (%s), so "
			"rtschedd cannot hand it to its threads; choose CPUs from %s, or widen the cpuset rtschedd runs "
			"in\n", at, where, cpukey, want, bad, list, list);
		return -EINVAL;
	}
	if (CPU_COUNT(&env->online) && cpulist_missing(&env->online, cpus, NULL) == 0) {
		cpulist_format(&env->online, list, sizeof(list));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: %s: isolate = yes with %s = %s empties every online CPU (%s): the kernel's "
			"housekeeping and every other program need one; leave at least one out\n", at, where, cpukey,
			want, list);
		return -EINVAL;
	}
	return 0;
}

/* "FILE:LINE: [KIND NAME]: " of key k of a section (its header line when
 * the key is not set). */
static void section_at(const struct config *c, const struct key_origin *o, int k, short file, unsigned line,
		       char *at, size_t len)
{
	if (k >= 0 && origin_set(o, k))
		origin_str(c, o, k, at, len);
	else
		snprintf(at, len, "%s:%u", c->files[file], line);
}

/* [irq NAME]: something to match, something to set, a priority within
 * max-priority. */
static int irq_validate(struct config *c, struct irq_conf *q, struct config_report *errors)
{
	char at[PATH_MAX + 16];
	int r = 0;

	q->n_keys = 0;
	for (int k = I_MATCH; k <= I_NET_INTERFACE; k++)
		q->n_keys += origin_set(&q->origin, k);
	if (q->n_keys == 0) {
		section_at(c, &q->origin, -1, q->file, q->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [irq %s]: nothing to match; add match = (an action name as /proc/interrupts "
			"shows it, globs allowed) or a device key (driver, device, pci-id, usb-id, sound-card, "
			"net-interface)\n", at, q->name);
		r = -EINVAL;
	}
	if (!q->has_cpus && q->priority == 0) {
		section_at(c, &q->origin, origin_set(&q->origin, I_POLICY) ? I_POLICY : -1, q->file, q->line, at,
			   sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [irq %s]: sets nothing; add cpus = (the IRQ's CPUs) or priority = (its "
			"threads')\n", at, q->name);
		r = -EINVAL;
	}
	if (q->priority > c->max_priority) {
		section_at(c, &q->origin, I_PRIORITY, q->file, q->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [irq %s]: priority %d is above max-priority %d; lower it or raise max-priority "
			"in [daemon]\n", at, q->name, q->priority, c->max_priority);
		r = -EINVAL;
	}
	if (q->spread && !q->has_cpus) {
		section_at(c, &q->origin, I_SPREAD, q->file, q->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [irq %s]: spread needs cpus = (the CPUs to spread the vectors over)\n", at,
			q->name);
		r = -EINVAL;
	}
	return r;
}

/* [kthread NAME]: a name to match, something to set, a valid scheduling. */
static int kthread_validate(struct config *c, struct kthread_conf *k, struct config_report *errors)
{
	char at[PATH_MAX + 16];
	int lo, hi, r = 0;

	if (!k->match[0]) {
		section_at(c, &k->origin, -1, k->file, k->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [kthread %s]: nothing to match; add match = (a kernel thread's name as ps shows "
			"it, such as ksoftirqd/*)\n", at, k->name);
		r = -EINVAL;
	}
	/* a priority alone means SCHED_FIFO, as chrt's default */
	if (!k->has_policy && origin_set(&k->origin, K_PRIORITY)) {
		k->has_policy = true;
		k->policy = SCHED_FIFO;
	}
	if (!k->has_policy && !k->has_cpus) {
		section_at(c, &k->origin, -1, k->file, k->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [kthread %s]: sets nothing; add policy = and priority =, or cpus =\n", at,
			k->name);
		return -EINVAL;
	}
	if (!k->has_policy)
		return r;
	policy_priority_range(k->policy, &lo, &hi);
	if (lo > 0 && !origin_set(&k->origin, K_PRIORITY)) {
		section_at(c, &k->origin, K_POLICY, k->file, k->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [kthread %s]: policy %s needs a priority; add 'priority = N' (%d..%d)\n", at,
			k->name, policy_to_string(k->policy), lo, hi);
		return -EINVAL;
	}
	if (k->priority < lo || k->priority > hi || k->priority > c->max_priority) {
		section_at(c, &k->origin, K_PRIORITY, k->file, k->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [kthread %s]: priority %d is not valid for %s (%d..%d, at most max-priority "
			"%d)\n", at, k->name, k->priority, policy_to_string(k->policy), lo, hi, c->max_priority);
		r = -EINVAL;
	}
	if (origin_set(&k->origin, K_NICE) && k->nice != 0 && k->policy != SCHED_OTHER && k->policy != SCHED_BATCH) {
		section_at(c, &k->origin, K_NICE, k->file, k->line, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [kthread %s]: nice has no effect with policy %s; remove it or use policy other "
			"or batch\n", at, k->name, policy_to_string(k->policy));
		r = -EINVAL;
	}
	return r;
}

int config_validate(struct config *c, struct config_report *errors)
{
	struct quiet_env qenv = { .read = false };
	char where[CONFIG_NAME_MAX + 16];
	int r;

	c->n_auto_rules = 0;
	c->n_rlimit_rules = 0;
	c->n_quiet = 0;
	c->match_needs = 0;
	r = spec_validate(c, &c->dflt, &c->origin, D_POLICY, "[daemon]", errors);
	/* the watchdog thread runs at FIFO 99: nothing it guards may reach it */
	if (c->watchdog && c->max_priority > 98) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [daemon]: max-priority %d leaves no room for the watchdog at 99; use 98 or less, "
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
			config_report_add(errors, CONFIG_ERROR, false, NULL, "%s:%u: [probe %s]: priority %d is not valid for %s (%d..%d, at most max-priority %d)\n",
				c->files[p->file], p->line, p->name, p->priority, policy_to_string(p->policy), lo, hi,
				c->max_priority);
			r = -EINVAL;
		}
		if (p->budget_us && (p->noise || p->budget_us > p->period_us)) {
			char at[PATH_MAX + 16];
			origin_str(c, &p->origin, PR_BUDGET, at, sizeof(at));
			if (p->noise)
				config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [probe %s]: budget-us %u: a noise probe never sleeps, so has no "
					"wake-up to be late; remove it or use mode = latency\n", at, p->name,
					p->budget_us);
			else
				config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [probe %s]: budget-us %u is above period-us %u: a wake-up that "
					"late has missed its period already; use at most %u\n", at, p->name,
					p->budget_us, p->period_us, p->period_us);
			r = -EINVAL;
		}
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(p->cpu, &one);
		snprintf(where, sizeof(where), "[probe %s]", p->name);
		if (quiet_validate(c, &qenv, &p->quiet, &p->origin, PR_ISOLATE, PR_RESUME_LATENCY, PR_CPU, "cpu", &one,
				   where, errors) < 0)
			r = -EINVAL;
		if (p->quiet.isolate || p->quiet.resume_latency_us >= 0)
			c->n_quiet++;
	}
	for (size_t i = 0; i < c->n_rules; i++) {
		struct rule *rl = &c->rules[i];

		snprintf(where, sizeof(where), "[rule %s]", rl->name);
		if (!origin_set(&rl->origin, R_POLICY)) {
			config_report_add(errors, CONFIG_ERROR, false, NULL, "%s:%u: %s: no policy; add 'policy = fifo' (or rr, other, batch, idle)\n",
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
		if (quiet_validate(c, &qenv, &rl->quiet, &rl->origin, R_ISOLATE, R_RESUME_LATENCY, R_CPUS, "cpus",
				   &rl->spec.cpus, where, errors) < 0)
			r = -EINVAL;
		if (rl->quiet.isolate || rl->quiet.resume_latency_us >= 0)
			c->n_quiet++;
		if (rlimit_validate(c, rl, where, errors) < 0)
			r = -EINVAL;
		else if (rl->grant_rlimit)
			c->n_rlimit_rules++;
	}
	for (size_t i = 0; i < c->n_irqs; i++)
		if (irq_validate(c, &c->irqs[i], errors) < 0)
			r = -EINVAL;
	for (size_t i = 0; i < c->n_kthreads; i++)
		if (kthread_validate(c, &c->kthreads[i], errors) < 0)
			r = -EINVAL;
	if (c->rtkit.role[0] && !config_find_rule(c, c->rtkit.role)) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->rtkit.origin, RK_ROLE, at, sizeof(at));
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [rtkit]: role '%s' is no [rule NAME] section; add it or remove the key\n", at,
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
		config_report_add(errors, CONFIG_ERROR, false, NULL, "%s: [rtkit]: max-realtime-priority %d is above max-priority %d in [daemon]; "
			"use %d or less\n", at, c->rtkit.max_priority, c->max_priority, c->max_priority);
		r = -EINVAL;
	}
	return r;
}
