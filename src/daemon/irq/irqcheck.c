/* irqcheck.c: the configuration and the daemon's state, handed to the
 * interrupt checks of diag_irq() (see irqcheck.h). */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/diag/diag.h"
#include "daemon/irq/irqcheck.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

#define WHO_MAX 96

/* The fix line of a code the IRQ manager met when applying. */
static const char *fix_of(const char *code)
{
	if (!strcmp(code, IRQ_CODE_MANAGED))
		return "the driver spreads these vectors itself; keep them off real-time CPUs with "
		       "isolcpus=managed_irq,LIST on the kernel command line, or remove cpus = from the section";
	if (!strcmp(code, IRQ_CODE_PERMISSION))
		return "systemctl edit rtschedd.service: ProtectKernelTunables=no, and CAP_DAC_OVERRIDE for a "
		       "non-root rtschedd (rtschedd(8), IRQ AFFINITY)";
	if (!strcmp(code, IRQ_CODE_NOT_THREADED))
		return "boot with threadirqs on the kernel command line (or run a PREEMPT_RT kernel)";
	if (!strcmp(code, IRQ_CODE_BOUND))
		return "remove cpus = from the [kthread] section: a per-CPU kernel thread runs on its CPU";
	return "see the reason; rtschedd retries at the next reload or device event";
}

/* What the running manager could not apply, by code; irq-not-threaded and
 * irq-managed come from diag_irq's own look at the machine too, so only
 * the manager's other codes are added here, and those two when there is
 * no configuration check to find them. */
static int add_refusals(const struct irqmgr *m, struct diag_report *rep)
{
	for (const struct irq_entry *e = irqmgr_irqs(m); e; e = e->next) {
		char msg[DIAG_TEXT_MAX];
		int r;

		if (!e->code || !strcmp(e->code, IRQ_CODE_NOT_THREADED))
			continue;
		snprintf(msg, sizeof(msg), "irq %d (%.64s), %s%s%s: %s", e->irq, e->actions,
			 e->avoid ? "irq-avoid-cpus" : "[irq ", e->avoid ? "" : e->section, e->avoid ? "" : "]", e->why);
		if ((r = diag_report_add(rep, e->code, e->avoid ? DIAG_INFO : DIAG_WARNING, msg, fix_of(e->code))) < 0)
			return r;
	}
	for (const struct kt_entry *k = irqmgr_kthreads(m); k; k = k->next) {
		char msg[DIAG_TEXT_MAX];
		int r;

		if (!k->code || !strcmp(k->code, IRQ_CODE_BOUND))
			continue;
		snprintf(msg, sizeof(msg), "kernel thread %d (%.32s), [%s %s]: %s", (int)k->tid, k->comm,
			 k->irq >= 0 ? "irq" : "kthread", k->section, k->why);
		if ((r = diag_report_add(rep, k->code, DIAG_WARNING, msg, fix_of(k->code))) < 0)
			return r;
	}
	return 0;
}

int irqcheck_run(const struct diag_env *env, const struct config *c, struct registry *registry,
		 const struct irqmgr *m, struct diag_report *rep)
{
	size_t nsec = c->n_irqs + c->n_kthreads, nrt = 0, cap = 1 + c->n_rules;
	struct diag_irq_section *sec = calloc(nsec ? nsec : 1, sizeof(*sec));
	struct diag_rt_use *rt;
	char (*where)[PATH_MAX + 16] = calloc(nsec ? nsec : 1, sizeof(*where));
	char (*who)[WHO_MAX];
	struct diag_irq_input in;
	char avoid[64];
	int r;

	cap += registry ? registry_n_threads(registry) : 0;
	rt = calloc(cap, sizeof(*rt));
	who = calloc(cap, sizeof(*who));
	if (!sec || !where || !rt || !who) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->n_irqs; i++) {
		const struct irq_conf *q = &c->irqs[i];
		snprintf(where[i], sizeof(where[i]), "%s:%u", c->files[q->file], q->line);
		sec[i] = (struct diag_irq_section){ .name = q->name, .where = where[i], .sel = &q->sel,
						    .policy = q->policy, .priority = q->priority, .has_cpus = q->has_cpus,
						    .cpus = q->cpus };
	}
	for (size_t i = 0; i < c->n_kthreads; i++) {
		const struct kthread_conf *k = &c->kthreads[i];
		size_t j = c->n_irqs + i;
		snprintf(where[j], sizeof(where[j]), "%s:%u", c->files[k->file], k->line);
		sec[j] = (struct diag_irq_section){ .kthread = true, .name = k->name, .where = where[j], .match = k->match,
						    .policy = k->has_policy ? k->policy : -1,
						    .priority = k->has_policy ? k->priority : 0, .has_cpus = k->has_cpus,
						    .cpus = k->cpus };
	}
	/* what gives threads real-time priorities: the default, the rules, and
	 * in a running daemon the threads themselves */
	if (policy_is_realtime(c->dflt.policy)) {
		snprintf(who[nrt], WHO_MAX, "the [daemon] default");
		rt[nrt] = (struct diag_rt_use){ who[nrt], c->dflt.priority, c->dflt.has_cpus, c->dflt.cpus };
		nrt++;
	}
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *rl = &c->rules[i];
		if (!policy_is_realtime(rl->spec.policy))
			continue;
		snprintf(who[nrt], WHO_MAX, "[rule %s]", rl->name);
		rt[nrt] = (struct diag_rt_use){ who[nrt], rl->spec.priority, rl->spec.has_cpus, rl->spec.cpus };
		nrt++;
	}
	for (struct reg_thread *t = registry ? registry_thread_next(registry, NULL) : NULL; t && nrt < cap;
	     t = registry_thread_next(registry, t)) {
		char comm[PROC_COMM_MAX + 1] = "?";
		if (!policy_is_realtime(t->applied.policy))
			continue;
		proc_read_comm(t->pid, t->tid, comm, sizeof(comm));
		snprintf(who[nrt], WHO_MAX, "tid %d (%s)", (int)t->tid, comm);
		rt[nrt] = (struct diag_rt_use){ who[nrt], t->applied.priority, true, t->applied.cpus };
		nrt++;
	}
	if (nsec == 0 && c->irq_avoid.mode == IRQ_AVOID_OFF && nrt == 0) {
		r = 0;
		goto out;
	}
	memset(&in, 0, sizeof(in));
	in.sections = sec;
	in.n_sections = nsec;
	in.rt = rt;
	in.n_rt = nrt;
	in.avoid = c->irq_avoid.mode != IRQ_AVOID_OFF;
	if (c->irq_avoid.mode == IRQ_AVOID_LIST) {
		in.avoid_cpus = c->irq_avoid.cpus;
	} else if (c->irq_avoid.mode == IRQ_AVOID_AUTO) {
		/* the running daemon's set, or (--check) the rules' pinned CPUs */
		for (size_t i = 0; i < nrt; i++)
			if (rt[i].has_cpus)
				CPU_OR(&in.avoid_cpus, &in.avoid_cpus, &rt[i].cpus);
	}
	if (c->irq_avoid.mode == IRQ_AVOID_LIST)
		cpulist_format(&c->irq_avoid.cpus, avoid, sizeof(avoid));
	else
		snprintf(avoid, sizeof(avoid), "%s", c->irq_avoid.mode == IRQ_AVOID_AUTO ? "auto" : "off");
	in.avoid_text = avoid;
	if (m) {
		struct irqmgr_stats st;
		irqmgr_stats(m, &st);
		in.irqbalance_told = strncmp(st.irqbalance, "running (pid", 12) == 0 &&
				     !strstr(st.irqbalance, "not taking");
	} else {
		in.irqbalance_told = geteuid() == 0;
	}
	if ((r = diag_irq(env, &in, rep)) == 0 && m)
		r = add_refusals(m, rep);
out:
	free(sec);
	free(where);
	free(rt);
	free(who);
	return r;
}
