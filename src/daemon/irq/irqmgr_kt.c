/* irqmgr_kt.c: the kernel threads the IRQ manager sets ([irq] sections'
 * threads, [kthread] sections): what each had is kept (and journalled) so
 * it goes back, and a thread the control socket manages is left alone. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/core/task.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/irq/irqmgr_int.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

/* Is tid still the thread the entry names? */
bool irqmgr_kt_alive(struct irqmgr *m, const struct kt_entry *k)
{
	struct irq_kthread t;

	return irqinfo_read_kthread(&m->env, k->tid, &t) == 0 && t.starttime == k->starttime;
}

/* Give a thread back what it had: its policy, and its CPUs if they were set. */
void irqmgr_kt_restore(struct irqmgr *m, struct kt_entry *k)
{
	const char *what = NULL;
	char buf[128];
	int r;

	if (!irqmgr_kt_alive(m, k))
		return;
	r = task_sched_write(k->tid, &k->original, k->cpus_changed && !(k->flags & PROC_PF_NO_SETAFFINITY), &what);
	task_sched_format(&k->original, buf, sizeof(buf));
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "kernel thread %d (%s): cannot restore %s: %s", (int)k->tid, k->comm,
			  buf, what);
	else
		log_info("kernel thread %d (%s): restored %s", (int)k->tid, k->comm, buf);
}

void irqmgr_kt_drop(struct irqmgr *m, struct kt_entry **pp, bool restore)
{
	struct kt_entry *k = *pp;

	if (restore)
		irqmgr_kt_restore(m, k);
	state_put_gone(m->state, 'K', k->tid);
	if (m->watch)
		m->watch(m->watch_ud, k->tid, false);
	*pp = k->next;
	free(k);
}

static struct kt_entry *kt_find(struct irqmgr *m, pid_t tid)
{
	for (struct kt_entry *k = m->kts; k; k = k->next)
		if (k->tid == tid)
			return k;
	return NULL;
}


/* Apply want to snapshot thread t (an entry is made the first time). */
void irqmgr_kt_apply(struct irqmgr *m, const struct irq_kthread *t, const struct irqmgr_kt_want *w)
{
	struct kt_entry *k = kt_find(m, t->tid);
	struct task_sched cur, want;
	const char *what = NULL;
	bool set_cpus, fresh = false;
	char a[128], b[128];
	int r;

	if (k && k->starttime != t->starttime) {
		/* the tid was reused: the recorded thread is gone */
		for (struct kt_entry **pp = &m->kts; *pp; pp = &(*pp)->next)
			if (*pp == k) {
				irqmgr_kt_drop(m, pp, false);
				break;
			}
		k = NULL;
	}
	if (m->registry && registry_find(m->registry, t->tid)) {
		log_debug("kernel thread %d (%s) is registered through the control socket; [%s %s] leaves it alone",
			  (int)t->tid, t->comm, w->irq >= 0 ? "irq" : "kthread", w->section);
		return;
	}
	if ((r = task_sched_read(t->tid, &cur)) < 0)
		return;
	if (!k) {
		if (!(k = calloc(1, sizeof(*k))))
			return;
		k->tid = t->tid;
		k->starttime = t->starttime;
		k->original = cur;
		k->next = m->kts;
		m->kts = k;
		fresh = true;
	}
	snprintf(k->comm, sizeof(k->comm), "%s", t->comm);
	snprintf(k->section, sizeof(k->section), "%s", w->section);
	k->irq = w->irq;
	k->flags = t->flags;
	k->seen = true;
	if (m->watch)
		m->watch(m->watch_ud, k->tid, true);
	k->code = NULL;
	k->why[0] = '\0';
	/* from what it had when rtschedd took it: a section that stops setting
	 * the CPUs gives them back */
	want = k->original;
	if (w->has_policy) {
		want.policy = w->policy;
		want.priority = w->priority;
		want.nice = policy_is_realtime(w->policy) ? 0 : w->nice;
		want.reset_on_fork = false;
	}
	set_cpus = w->has_cpus || k->cpus_changed;
	if (w->has_cpus)
		want.cpus = w->cpus;
	if (set_cpus && (t->flags & PROC_PF_NO_SETAFFINITY)) {
		set_cpus = false;
		if (w->has_cpus) {
			k->code = IRQ_CODE_BOUND;
			snprintf(k->why, sizeof(k->why), "%.32s is bound to its CPUs by the kernel (PF_NO_SETAFFINITY); "
				 "remove cpus = from [kthread %.32s]", t->comm, w->section);
		}
	}
	bool same = cur.policy == want.policy && cur.priority == want.priority &&
		    (policy_is_realtime(want.policy) || cur.nice == want.nice) &&
		    (!set_cpus || CPU_EQUAL(&cur.cpus, &want.cpus));
	if (fresh)
		irqmgr_journal_kt(m, k);
	if (!same) {
		r = task_sched_write(t->tid, &want, set_cpus, &what);
		if (r < 0) {
			k->code = IRQ_CODE_REFUSED;
			snprintf(k->why, sizeof(k->why), "%s failed: %s", what ? what : "sched_setattr", strerror(-r));
			log_errno(LOG_LEVEL_WARNING, r, "kernel thread %d (%s), [%s %s]: %s", (int)t->tid, t->comm,
				  w->irq >= 0 ? "irq" : "kthread", w->section, what ? what : "sched_setattr");
		} else {
			if (set_cpus && w->has_cpus && !k->cpus_changed) {
				k->cpus_changed = true;
				irqmgr_journal_kt(m, k);
			}
			task_sched_format(&cur, a, sizeof(a));
			task_sched_format(&want, b, sizeof(b));
			log_info("kernel thread %d (%s), [%s %s]: %s -> %s", (int)t->tid, t->comm,
				 w->irq >= 0 ? "irq" : "kthread", w->section, a, b);
		}
	}
	if (task_sched_read(t->tid, &k->applied) < 0)
		k->applied = want;
	if (k->code && strcmp(k->code, IRQ_CODE_BOUND) == 0)
		log_notice("kernel thread %d (%s), [kthread %s]: %s", (int)t->tid, t->comm, w->section, k->why);
}
