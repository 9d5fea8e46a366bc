/* irqmgr.c: the IRQ and kernel-thread manager (see irqmgr.h).
 *
 * Journal lines (core/state.c carries them):
 *   I irq actions original-cpus     an IRQ whose affinity rtschedd wrote
 *   K tid starttime policy priority nice reset-on-fork cpus cpus-changed
 *                                   a kernel thread whose scheduling it wrote
 *   D 0 original-cpus               /proc/irq/default_smp_affinity
 * with "-I irq", "-K tid", "-D 0" when they are given back. actions is
 * percent-encoded (it may hold blanks). */
#include "autoconfig.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/irq/hotplug.h"
#include "daemon/irq/irqbalance.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/irq/irqmgr_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/clock.h"

/* uevents come in bursts (a USB audio device: the device, its interfaces,
 * the sound card, its PCM devices): one sync after the burst settles */
#define HOTPLUG_SETTLE_USEC 20000
/* the kernel sends a device's "remove" before its sysfs directory goes: a
 * second look after a removal catches what the first still saw */
#define HOTPLUG_RECHECK_USEC 250000
/* sd-event's default timer slack is 250 ms: a device must not wait for it */
#define HOTPLUG_ACCURACY_USEC 1000


/* --- IRQs -------------------------------------------------------------------------- */

static struct irq_entry *irq_find(struct irqmgr *m, int irq)
{
	for (struct irq_entry *e = m->irqs; e; e = e->next)
		if (e->irq == irq)
			return e;
	return NULL;
}

/* Write the original affinity back (if rtschedd changed it). */
static void irq_restore(struct irqmgr *m, struct irq_entry *e)
{
	char buf[CPUS_TEXT_MAX];
	int r;

	if (!e->written)
		return;
	irqmgr_fmt_cpus(&e->original, buf, sizeof(buf));
	r = irqinfo_write_affinity(&m->env, e->irq, &e->original);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "irq %d (%s): cannot restore CPUs %s", e->irq, e->actions, buf);
	else
		log_info("irq %d (%s): restored CPUs %s", e->irq, e->actions, buf);
	e->written = false;
}

static void irq_drop(struct irqmgr *m, struct irq_entry **pp, bool restore)
{
	struct irq_entry *e = *pp;

	if (restore)
		irq_restore(m, e);
	if (e->written || restore)
		state_put_gone(m->state, 'I', e->irq);
	*pp = e->next;
	free(e);
}

/* The IRQ number now belongs to another device (its actions differ): the
 * recorded original was the old device's, and is not given to the new one. */
static void irq_forget(struct irqmgr *m, struct irq_entry *e, const struct irq_desc *d)
{
	if (!e->written || strcmp(e->actions, d->line.actions) == 0)
		return;
	log_info("irq %d is another device's now (%s, was %s): its old CPUs are not given back", e->irq,
		 d->line.actions, e->actions);
	e->written = false;
	state_put_gone(m->state, 'I', e->irq);
}

/* The code and words for a refused affinity write. */
static void irq_refusal(struct irqmgr *m, struct irq_entry *e, int r, const char *cpus)
{
	if (r == -EIO) {
		int managed = irqinfo_managed(&m->env, e->irq);
		e->code = IRQ_CODE_MANAGED;
		snprintf(e->why, sizeof(e->why), "the kernel refused CPUs %.40s: %s", cpus,
			 managed == 1 ? "its driver's vectors are managed, the kernel spreads them itself" :
			 "a managed or per-CPU interrupt, whose CPUs the kernel chooses");
	} else if (r == -EACCES || r == -EROFS || r == -EPERM) {
		/* the file, not the value: /proc/irq read-only, or not root's */
		e->code = IRQ_CODE_PERMISSION;
		snprintf(e->why, sizeof(e->why), "cannot write /proc/irq/%d/smp_affinity_list: %s (rtschedd.service "
			 "needs the drop-in of rtschedd(8), IRQ AFFINITY)", e->irq, strerror(-r));
	} else {
		e->code = IRQ_CODE_AFFINITY;
		snprintf(e->why, sizeof(e->why), "the kernel refused CPUs %.40s: %s", cpus, strerror(-r));
	}
}

/* Claim IRQ d for a section (or irq-avoid-cpus) and give it cpus (when
 * has_cpus). */
static struct irq_entry *irq_apply(struct irqmgr *m, const struct irq_desc *d, const char *section, bool avoid,
				   bool has_cpus, const cpu_set_t *cpus)
{
	struct irq_entry *e = irq_find(m, d->line.irq);
	char was[CPUS_TEXT_MAX], now[CPUS_TEXT_MAX];
	int r;

	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return NULL;
		e->irq = d->line.irq;
		e->next = m->irqs;
		m->irqs = e;
	}
	if (!e->written) {
		snprintf(e->actions, sizeof(e->actions), "%s", d->line.actions);
		e->original = d->affinity;
	}
	snprintf(e->section, sizeof(e->section), "%s", section);
	e->avoid = avoid;
	e->seen = true;
	e->has_cpus = has_cpus;
	e->effective = d->effective;
	if (!has_cpus) {
		/* the section no longer sets the CPUs: they go back */
		if (e->written) {
			irq_restore(m, e);
			state_put_gone(m->state, 'I', e->irq);
		}
		e->code = NULL;
		return e;
	}
	if (e->written && CPU_EQUAL(&e->want, cpus) && CPU_EQUAL(&d->affinity, cpus))
		return e;
	e->want = *cpus;
	e->code = NULL;
	e->why[0] = '\0';
	if (CPU_EQUAL(&d->affinity, cpus) && !e->written)
		return e; /* already there: nothing to write, nothing to give back */
	irqmgr_fmt_cpus(&d->affinity, was, sizeof(was));
	irqmgr_fmt_cpus(cpus, now, sizeof(now));
	r = irqinfo_write_affinity(&m->env, e->irq, cpus);
	if (r < 0) {
		irq_refusal(m, e, r, now);
		log_warnx("irq %d (%s), %s%s%s: %s", e->irq, e->actions, avoid ? "irq-avoid-cpus" : "[irq ",
			  avoid ? "" : section, avoid ? "" : "]", e->why);
		return e;
	}
	if (!e->written) {
		e->written = true;
		irqmgr_journal_irq(m, e);
	}
	cpu_set_t aff;
	char eff[CPUS_TEXT_MAX];
	if (irqinfo_read_affinity(&m->env, e->irq, &aff, &e->effective) < 0)
		e->effective = *cpus;
	irqmgr_fmt_cpus(&e->effective, eff, sizeof(eff));
	log_info("irq %d (%s), %s%s%s: CPUs %s -> %s (effective %s)", e->irq, e->actions,
		 avoid ? "irq-avoid-cpus" : "[irq ", avoid ? "" : section, avoid ? "" : "]", was, now, eff);
	return e;
}

/* --- what the configuration wants ------------------------------------------------- */

/* The CPUs irq-avoid-cpus keeps free now: the list, or (auto) the CPUs
 * managed real-time threads are pinned to; and the CPUs isolation emptied,
 * whatever irq-avoid-cpus says. False when there are none. */
static bool avoid_cpus(struct irqmgr *m, const struct irq_snapshot *s, cpu_set_t *out)
{
	const struct config *c = m->config;
	cpu_set_t iso;

	CPU_ZERO(out);
	if (c->irq_avoid.mode == IRQ_AVOID_LIST) {
		CPU_AND(out, &c->irq_avoid.cpus, &s->online);
	} else if (c->irq_avoid.mode == IRQ_AVOID_AUTO && m->registry) {
		REGISTRY_FOREACH_THREAD(t, m->registry) {
			cpu_set_t on;
			CPU_AND(&on, &t->applied.cpus, &s->online);
			if (policy_is_realtime(t->applied.policy) && CPU_COUNT(&on) < CPU_COUNT(&s->online))
				CPU_OR(out, out, &on);
		}
	}
	CPU_AND(&iso, &m->isolated, &s->online);
	CPU_OR(out, out, &iso);
	if (CPU_COUNT(out) == 0)
		return false;
	if (CPU_EQUAL(out, &s->online)) {
		if (!m->avoid_warned)
			log_warnx("irq-avoid-cpus: that is every online CPU; interrupts need one, so they stay where "
				  "they are");
		m->avoid_warned = true;
		return false;
	}
	m->avoid_warned = false;
	return true;
}

/* Does the configuration need the device tree (a device key) or the
 * kernel threads? */
static unsigned snapshot_needs(const struct config *c)
{
	unsigned what = 0;

	for (size_t i = 0; i < c->n_irqs; i++) {
		const struct irq_selector *q = &c->irqs[i].sel;
		if (q->driver[0] || q->device[0] || q->pci_id[0] || q->usb_id[0] || q->sound_card[0] ||
		    q->net_interface[0])
			what |= IRQINFO_DEVICES;
		if (c->irqs[i].priority > 0 || c->irqs[i].has_cpus)
			what |= IRQINFO_KTHREADS;
	}
	if (c->n_kthreads)
		what |= IRQINFO_KTHREADS;
	return what;
}

int irqmgr_sync(struct irqmgr *m)
{
	const struct config *c = m->config;
	struct irq_snapshot s;
	uint64_t t0 = clock_usec(CLOCK_MONOTONIC);
	int r;

	bool any = c->n_irqs || c->n_kthreads || c->irq_avoid.mode != IRQ_AVOID_OFF || CPU_COUNT(&m->isolated) ||
		   m->irqs || m->kts || m->default_written;
	if (!any)
		return 0;
	if ((r = irqinfo_read(&m->env, snapshot_needs(c) | (m->kts ? IRQINFO_KTHREADS : 0), &s)) < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "reading the machine's interrupts");
		irqinfo_free(&s);
		return r;
	}
	for (struct irq_entry *e = m->irqs; e; e = e->next)
		e->seen = false;
	for (struct kt_entry *k = m->kts; k; k = k->next)
		k->seen = false;

	/* 1. the sections' claims, in file order: the first claim of an IRQ wins */
	for (size_t i = 0; i < c->n_irqs; i++) {
		const struct irq_conf *q = &c->irqs[i];
		int *irqs;
		size_t n, k = 0;

		if (irqinfo_select(&s, &q->sel, &irqs, &n) < 0)
			continue;
		if (n == 0 && m->announce)
			log_warnx("%s:%u: [irq %s] matches no interrupt now; it applies when a device it names appears "
				  "(rtschedd --check says more)", c->files[q->file], q->line, q->name);
		for (size_t j = 0; j < n; j++) {
			const struct irq_desc *d = irqinfo_find(&s, irqs[j]);
			struct irq_entry *e = irq_find(m, irqs[j]);
			cpu_set_t one;

			if (!d)
				continue;
			if (e && e->seen) {
				log_debug("irq %d (%s) is claimed by [irq %s] already; [irq %s] leaves it", d->line.irq,
					  d->line.actions, e->section, q->name);
				continue;
			}
			if (e)
				irq_forget(m, e, d);
			const cpu_set_t *cpus = &q->cpus;
			if (q->spread && q->has_cpus) {
				/* the k-th vector gets the k-th CPU of the list, in turn */
				int nth = (int)(k++ % (size_t)CPU_COUNT(&q->cpus)), c2 = -1;
				for (int cpu = 0; cpu < CPU_SETSIZE && nth >= 0; cpu++)
					if (CPU_ISSET(cpu, &q->cpus) && nth-- == 0)
						c2 = cpu;
				CPU_ZERO(&one);
				CPU_SET(c2, &one);
				cpus = &one;
			}
			e = irq_apply(m, d, q->name, false, q->has_cpus, cpus);
			if (e)
				irqinfo_served(&s, d->line.irq, e->served, sizeof(e->served));
		}
		free(irqs);
	}

	/* 2. irq-avoid-cpus: the unclaimed IRQs off the avoided CPUs, through
	 * irqbalance when it runs (it would move them back otherwise) */
	cpu_set_t avoid;
	bool avoiding = avoid_cpus(m, &s, &avoid);
	bool through_ib = false;
	if (avoiding)
		m->avoid = avoid;
	else
		CPU_ZERO(&m->avoid);
	if (m->ib || avoiding || c->n_irqs) {
		int claimed[512];
		size_t nc = 0;
		for (struct irq_entry *e = m->irqs; e && nc < sizeof(claimed) / sizeof(claimed[0]); e = e->next)
			if (e->seen && !e->avoid && e->has_cpus)
				claimed[nc++] = e->irq; /* what irqbalance would move: the IRQs given CPUs */
		through_ib = irqbalance_sync(&m->ib, m->env.irqbalance, m->state, avoiding ? &avoid : NULL, claimed,
					     nc) > 0;
	}
	for (size_t i = 0; avoiding && !through_ib && i < s.n_irqs; i++) {
		const struct irq_desc *d = &s.irqs[i];
		struct irq_entry *e = irq_find(m, d->line.irq);
		cpu_set_t want, base;

		if (e && e->seen)
			continue;
		if (e)
			irq_forget(m, e, d);
		base = e && e->written ? e->original : d->affinity;
		if (!d->has_affinity || CPU_COUNT(&base) == 0)
			continue;
		cpu_set_t hit;
		CPU_AND(&hit, &base, &avoid);
		/* nothing of it avoided (any more): an entry gets its CPUs back below */
		if (CPU_COUNT(&hit) == 0)
			continue;
		CPU_XOR(&want, &base, &hit);
		CPU_AND(&want, &want, &s.online);
		if (CPU_COUNT(&want) == 0) {
			CPU_XOR(&want, &s.online, &avoid);
		}
		if (e && !e->written && e->code && e->avoid) {
			e->seen = true; /* refused before (a managed vector): not tried again */
			continue;
		}
		irq_apply(m, d, "", true, true, &want);
	}
	/* new IRQs (a device plugged in later) start off the avoided CPUs */
	cpu_set_t dflt;
	if (avoiding && irqinfo_read_default_affinity(&m->env, &dflt) == 0) {
		cpu_set_t base = m->default_written ? m->default_original : dflt, want;
		CPU_XOR(&want, &base, &avoid);
		CPU_AND(&want, &want, &base);
		if (CPU_COUNT(&want) == 0)
			CPU_XOR(&want, &s.online, &avoid);
		if (!CPU_EQUAL(&want, &dflt)) {
			if (!m->default_written) {
				m->default_original = dflt;
				m->default_written = true;
				irqmgr_journal_default(m);
			}
			if ((r = irqinfo_write_default_affinity(&m->env, &want)) < 0)
				log_errno(LOG_LEVEL_WARNING, r, "irq-avoid-cpus: /proc/irq/default_smp_affinity");
		}
	} else if (!avoiding && m->default_written) {
		if ((r = irqinfo_write_default_affinity(&m->env, &m->default_original)) < 0)
			log_errno(LOG_LEVEL_WARNING, r, "restoring /proc/irq/default_smp_affinity");
		m->default_written = false;
		state_put_gone(m->state, 'D', 0);
	}

	/* 3. what is no longer claimed goes back; a gone IRQ (or a number now
	 * another device's) is forgotten */
	for (struct irq_entry **pp = &m->irqs; *pp;) {
		struct irq_entry *e = *pp;
		const struct irq_desc *d = irqinfo_find(&s, e->irq);
		bool same = d && strcmp(d->line.actions, e->actions) == 0;

		if (e->seen && (same || !e->written)) {
			pp = &e->next;
			continue;
		}
		if (!same && e->written)
			log_info("irq %d (%s) is gone; nothing to give back", e->irq, e->actions);
		else if (e->written)
			log_info("irq %d (%s): no section claims it any more", e->irq, e->actions);
		irq_drop(m, pp, same);
	}

	/* 4. the kernel threads: those of the claimed IRQs, then [kthread] matches */
	for (size_t i = 0; i < s.n_kthreads; i++) {
		const struct irq_kthread *t = &s.kthreads[i];
		struct irqmgr_kt_want w;

		memset(&w, 0, sizeof(w));
		w.irq = -1;
		if (t->irq >= 0) {
			struct irq_entry *e = irq_find(m, t->irq);
			const struct irq_conf *q = NULL;

			for (size_t j = 0; e && !e->avoid && j < c->n_irqs && !q; j++)
				if (strcmp(c->irqs[j].name, e->section) == 0)
					q = &c->irqs[j];
			if (q) {
				w.section = q->name;
				w.irq = t->irq;
				w.has_policy = q->priority > 0;
				w.policy = q->policy;
				w.priority = q->priority;
				/* the thread follows its handler: the CPUs the kernel chose,
				 * or (a move the kernel makes at the vector's next
				 * interrupt, still pending) the CPUs asked for */
				w.has_cpus = e->written;
				CPU_AND(&w.cpus, &e->effective, &e->want);
				if (CPU_COUNT(&w.cpus) == 0)
					w.cpus = e->want;
				if (w.has_policy || w.has_cpus)
					irqmgr_kt_apply(m, t, &w);
				continue;
			}
		}
		for (size_t j = 0; j < c->n_kthreads; j++) {
			const struct kthread_conf *k = &c->kthreads[j];

			if (fnmatch(k->match, t->comm, 0) != 0)
				continue;
			w.section = k->name;
			w.has_policy = k->has_policy;
			w.policy = k->policy;
			w.priority = k->priority;
			w.nice = k->nice;
			w.has_cpus = k->has_cpus;
			w.cpus = k->cpus;
			irqmgr_kt_apply(m, t, &w);
			break;
		}
	}
	for (size_t j = 0; m->announce && j < c->n_kthreads; j++) {
		bool hit = false;
		for (size_t i = 0; i < s.n_kthreads && !hit; i++)
			hit = fnmatch(c->kthreads[j].match, s.kthreads[i].comm, 0) == 0;
		if (!hit)
			log_warnx("%s:%u: [kthread %s] matches no kernel thread now", c->files[c->kthreads[j].file],
				  c->kthreads[j].line, c->kthreads[j].name);
	}
	m->announce = false;
	/* a section with a priority for an IRQ without a thread says so */
	for (struct irq_entry *e = m->irqs; e; e = e->next) {
		bool threaded = false;
		const struct irq_conf *q = NULL;

		for (size_t j = 0; !e->avoid && j < c->n_irqs && !q; j++)
			if (strcmp(c->irqs[j].name, e->section) == 0)
				q = &c->irqs[j];
		if (!q || q->priority == 0 || e->code)
			continue;
		for (size_t i = 0; i < s.n_kthreads && !threaded; i++)
			threaded = s.kthreads[i].irq == e->irq;
		if (!threaded) {
			e->code = IRQ_CODE_NOT_THREADED;
			snprintf(e->why, sizeof(e->why), "irq %d has no thread for priority %d: its handler runs in hard "
				 "interrupt context; boot with threadirqs (or a PREEMPT_RT kernel) to thread it",
				 e->irq, q->priority);
		}
	}
	for (struct kt_entry **pp = &m->kts; *pp;) {
		struct kt_entry *k = *pp;

		if (k->seen) {
			pp = &k->next;
			continue;
		}
		irqmgr_kt_drop(m, pp, irqmgr_kt_alive(m, k));
	}
	irqinfo_free(&s);
	m->last_sync_usec = clock_usec(CLOCK_MONOTONIC) - t0;
	return 0;
}

/* --- events --------------------------------------------------------------------------- */

static void sync_later(struct irqmgr *m, uint64_t delay);

static int on_later(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct irqmgr *m = userdata;
	uint64_t since = m->pending_since;

	m->pending_since = 0;
	irqmgr_sync(m);
	if (since) {
		m->last_hotplug_usec = clock_usec(CLOCK_MONOTONIC) - since;
		log_info("hotplug: interrupts synced %.1f ms after the device event",
			 m->last_hotplug_usec / 1000.0);
	}
	if (m->recheck) {
		m->recheck = false;
		sync_later(m, HOTPLUG_RECHECK_USEC);
	}
	return 0;
}

/* A sync in delay microseconds, unless one is already due sooner. */
static void sync_later(struct irqmgr *m, uint64_t delay)
{
	uint64_t now, at;
	int on = SD_EVENT_OFF;

	if (!m->later)
		return;
	sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	sd_event_source_get_enabled(m->later, &on);
	if (on != SD_EVENT_OFF && sd_event_source_get_time(m->later, &at) >= 0 && at <= now + delay)
		return;
	sd_event_source_set_time(m->later, now + delay);
	sd_event_source_set_enabled(m->later, SD_EVENT_ONESHOT);
}

/* A device came or went: match again once the burst settles. */
static void on_hotplug(void *ud, const char *action, const char *devpath)
{
	struct irqmgr *m = ud;

	log_debug("hotplug: %s %s", action, devpath);
	if (!m->pending_since)
		m->pending_since = clock_usec(CLOCK_MONOTONIC);
	if (strcmp(action, "remove") == 0 || strcmp(action, "unbind") == 0)
		m->recheck = true;
	sync_later(m, HOTPLUG_SETTLE_USEC);
}

/* Hotplug matters when a section may match a device that is not there yet. */
static void hotplug_follow(struct irqmgr *m)
{
	const struct config *c = m->config;
	bool want = c->n_irqs > 0 || c->irq_avoid.mode != IRQ_AVOID_OFF;

	if (want && !m->hotplug) {
		int r = hotplug_new(&m->hotplug, m->event, on_hotplug, m);
		if (r < 0) {
			m->hotplug_error = r;
			log_errno(LOG_LEVEL_NOTICE, r, "hotplug: cannot watch for devices; a device plugged in later is "
				  "matched at the next reload");
		} else {
			m->hotplug_error = 0;
			log_info("hotplug: watching for devices (%s)", hotplug_source(m->hotplug));
		}
	} else if (!want && m->hotplug) {
		hotplug_free(m->hotplug);
		m->hotplug = NULL;
	}
}

int irqmgr_new(struct irqmgr **ret, sd_event *e, const struct irq_env *env, struct state *st,
	       struct registry *registry, const struct config *c, const cpu_set_t *isolated)
{
	struct irqmgr *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	*ret = m;
	m->event = sd_event_ref(e);
	if (env && env->proc) {
		snprintf(m->proc, sizeof(m->proc), "%s", env->proc);
		m->env.proc = m->proc;
	}
	if (env && env->sys) {
		snprintf(m->sys, sizeof(m->sys), "%s", env->sys);
		m->env.sys = m->sys;
	}
	if (env && env->irqbalance) {
		snprintf(m->ibrun, sizeof(m->ibrun), "%s", env->irqbalance);
		m->env.irqbalance = m->ibrun;
	}
	m->state = st;
	m->registry = registry;
	m->config = c;
	m->announce = true;
	if (isolated)
		m->isolated = *isolated;
	if ((r = sd_event_add_time(e, &m->later, CLOCK_MONOTONIC, 0, HOTPLUG_ACCURACY_USEC, on_later, m)) < 0)
		return r;
	sd_event_source_set_enabled(m->later, SD_EVENT_OFF);
	/* what the last rtschedd changed comes first: its originals are the ones restored */
	state_take(st, "IKDB", irqmgr_adopt_line, m);
	if ((r = state_add_writer(st, irqmgr_journal_write, m)) < 0)
		return r;
	if (m->irqs || m->kts || m->default_written) {
		size_t ni = 0, nk = 0;
		for (struct irq_entry *x = m->irqs; x; x = x->next)
			ni++;
		for (struct kt_entry *x = m->kts; x; x = x->next)
			nk++;
		log_info("state journal: %zu IRQ%s and %zu kernel thread%s from the last run", ni, ni == 1 ? "" : "s",
			 nk, nk == 1 ? "" : "s");
	}
	/* adopted kernel threads that are gone (or are another thread under
	 * the old tid) are forgotten; the sync restores the rest if unclaimed */
	for (struct kt_entry **pp = &m->kts; *pp;) {
		struct irq_kthread t;
		if (irqinfo_read_kthread(&m->env, (*pp)->tid, &t) == 0 && t.starttime == (*pp)->starttime) {
			snprintf((*pp)->comm, sizeof((*pp)->comm), "%s", t.comm);
			(*pp)->flags = t.flags;
			pp = &(*pp)->next;
		} else {
			irqmgr_kt_drop(m, pp, false);
		}
	}
	irqmgr_sync(m);
	hotplug_follow(m);
	return 0;
}

void irqmgr_reconfigure(struct irqmgr *m, const struct config *c)
{
	if (!m)
		return;
	m->config = c;
	m->announce = true;
	irqmgr_sync(m);
	hotplug_follow(m);
}

void irqmgr_threads_changed(struct irqmgr *m)
{
	if (m && m->config->irq_avoid.mode == IRQ_AVOID_AUTO)
		sync_later(m, 0);
}

void irqmgr_isolate(struct irqmgr *m, const cpu_set_t *cpus)
{
	if (!m || CPU_EQUAL(cpus, &m->isolated))
		return;
	m->isolated = *cpus;
	irqmgr_sync(m);
}

void irqmgr_free(struct irqmgr *m, bool restore)
{
	if (!m)
		return;
	hotplug_free(m->hotplug);
	sd_event_source_disable_unref(m->later);
	irqbalance_free(m->ib, restore);
	while (m->kts) {
		struct kt_entry *k = m->kts;
		m->kts = k->next;
		if (restore)
			irqmgr_kt_restore(m, k);
		free(k);
	}
	while (m->irqs) {
		struct irq_entry *e = m->irqs;
		m->irqs = e->next;
		if (restore)
			irq_restore(m, e);
		free(e);
	}
	if (restore && m->default_written) {
		int r = irqinfo_write_default_affinity(&m->env, &m->default_original);
		if (r < 0)
			log_errno(LOG_LEVEL_WARNING, r, "restoring /proc/irq/default_smp_affinity");
	}
	state_remove_writer(m->state, irqmgr_journal_write, m);
	sd_event_unref(m->event);
	free(m);
}

/* --- queries --------------------------------------------------------------------------- */

void irqmgr_set_watch(struct irqmgr *m, void (*fn)(void *ud, pid_t tid, bool held), void *ud)
{
	if (!m)
		return;
	m->watch = fn;
	m->watch_ud = ud;
}

const struct irq_entry *irqmgr_irqs(const struct irqmgr *m)
{
	return m ? m->irqs : NULL;
}

const struct kt_entry *irqmgr_kthreads(const struct irqmgr *m)
{
	return m ? m->kts : NULL;
}

void irqmgr_stats(const struct irqmgr *m, struct irqmgr_stats *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->avoid, sizeof(st->avoid), "off");
	st->hotplug = "off (no [irq] section)";
	snprintf(st->irqbalance, sizeof(st->irqbalance), "not consulted");
	if (!m)
		return;
	for (const struct irq_entry *e = m->irqs; e; e = e->next)
		e->avoid ? st->avoided++ : st->irqs++;
	for (const struct kt_entry *k = m->kts; k; k = k->next)
		st->kthreads++;
	if (CPU_COUNT(&m->avoid))
		cpulist_format(&m->avoid, st->avoid, sizeof(st->avoid));
	else if (m->config->irq_avoid.mode != IRQ_AVOID_OFF)
		snprintf(st->avoid, sizeof(st->avoid), "none now (%s)",
			 m->config->irq_avoid.mode == IRQ_AVOID_AUTO ? "auto: no pinned real-time thread" : "list");
	if (m->hotplug)
		st->hotplug = hotplug_source(m->hotplug);
	else if (m->hotplug_error)
		st->hotplug = "off (cannot watch for devices)";
	irqbalance_describe(m->ib, st->irqbalance, sizeof(st->irqbalance));
	st->last_sync_usec = m->last_sync_usec;
	st->last_hotplug_usec = m->last_hotplug_usec;
}

const char *irqmgr_irq_section(const struct irqmgr *m, int irq)
{
	for (const struct irq_entry *e = m ? m->irqs : NULL; e; e = e->next)
		if (e->irq == irq)
			return e->avoid ? "irq-avoid-cpus" : e->section;
	return NULL;
}

const char *irqmgr_tid_section(const struct irqmgr *m, pid_t tid)
{
	for (const struct kt_entry *k = m ? m->kts : NULL; k; k = k->next)
		if (k->tid == tid)
			return k->section;
	return NULL;
}
