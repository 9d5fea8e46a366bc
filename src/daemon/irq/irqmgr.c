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

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
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
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"

#define CPUS_TEXT_MAX 4096
/* uevents come in bursts (a USB audio device: the device, its interfaces,
 * the sound card, its PCM devices): one sync after the burst settles */
#define HOTPLUG_SETTLE_USEC 20000
/* the kernel sends a device's "remove" before its sysfs directory goes: a
 * second look after a removal catches what the first still saw */
#define HOTPLUG_RECHECK_USEC 250000
/* sd-event's default timer slack is 250 ms: a device must not wait for it */
#define HOTPLUG_ACCURACY_USEC 1000

struct irqmgr {
	sd_event *event;
	struct irq_env env;
	char proc[PATH_MAX], sys[PATH_MAX], ibrun[PATH_MAX];
	struct state *state;
	struct registry *registry;
	const struct config *config;
	struct irq_entry *irqs;
	struct kt_entry *kts;
	bool default_written;
	cpu_set_t default_original;
	cpu_set_t avoid;                  /* the set in force, empty: none */
	bool avoid_warned;
	cpu_set_t isolated;               /* CPUs isolate = yes emptied (irqmgr_isolate): avoided too */
	struct hotplug *hotplug;
	int hotplug_error;
	struct irqbalance *ib;
	sd_event_source *later;           /* a coalesced sync */
	uint64_t pending_since;           /* CLOCK_MONOTONIC of the first uevent it waits for; 0: none */
	uint64_t last_sync_usec, last_hotplug_usec;
	bool announce;                    /* a new configuration: say what matches nothing */
	void (*watch)(void *ud, pid_t tid, bool held);  /* irqmgr_set_watch() */
	void *watch_ud;
	bool recheck;                     /* a removal was synced: look once more, later */
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void fmt_cpus(const cpu_set_t *set, char *buf, size_t len)
{
	if (CPU_COUNT(set) == 0 || cpulist_format(set, buf, len) < 0 || !buf[0])
		snprintf(buf, len, "-");
}

/* --- the journal ------------------------------------------------------------------ */

/* Percent-encode what is not a printable, blank-free character. */
static void encode(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < len; p++) {
		if (*p > ' ' && *p < 0x7f && *p != '%')
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02x", *p);
	}
	out[o] = '\0';
	if (!o)
		snprintf(out, len, "%%");
}

static void decode(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 1 < len; p++) {
		if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char hex[3] = { p[1], p[2], 0 };
			out[o++] = (char)strtol(hex, NULL, 16);
			p += 2;
		} else if (*p != '%') {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static void put_irq(FILE *f, const void *arg)
{
	const struct irq_entry *e = arg;
	char act[3 * IRQ_ACTIONS_MAX + 4], cpus[CPUS_TEXT_MAX];

	encode(e->actions, act, sizeof(act));
	fmt_cpus(&e->original, cpus, sizeof(cpus));
	fprintf(f, "I %d %s %s\n", e->irq, act, cpus);
}

static void put_kt(FILE *f, const void *arg)
{
	const struct kt_entry *k = arg;
	char cpus[CPUS_TEXT_MAX];

	fmt_cpus(&k->original.cpus, cpus, sizeof(cpus));
	fprintf(f, "K %d %" PRIu64 " %d %d %d %d %s %d\n", (int)k->tid, k->starttime, k->original.policy,
		k->original.priority, k->original.nice, k->original.reset_on_fork, cpus, k->cpus_changed);
}

static void journal_irq(struct irqmgr *m, const struct irq_entry *e)
{
	state_put_with(m->state, put_irq, e);
}

static void journal_kt(struct irqmgr *m, const struct kt_entry *k)
{
	state_put_with(m->state, put_kt, k);
}

static void journal_default(struct irqmgr *m)
{
	char cpus[CPUS_TEXT_MAX];

	fmt_cpus(&m->default_original, cpus, sizeof(cpus));
	state_put(m->state, "D 0 %s", cpus);
}

/* The compaction's writer: every live entry. */
static size_t journal_write(void *ud, FILE *f)
{
	struct irqmgr *m = ud;
	size_t n = 0;

	for (const struct irq_entry *e = m->irqs; e; e = e->next)
		if (e->written) {
			put_irq(f, e);
			n++;
		}
	for (const struct kt_entry *k = m->kts; k; k = k->next) {
		put_kt(f, k);
		n++;
	}
	if (m->default_written) {
		char cpus[CPUS_TEXT_MAX];
		fmt_cpus(&m->default_original, cpus, sizeof(cpus));
		fprintf(f, "D 0 %s\n", cpus);
		n++;
	}
	return n + irqbalance_journal(m->ib, f);
}

/* A number token in [lo, hi]. */
static bool num(char **save, long lo, long hi, long *out)
{
	const char *t = strtok_r(NULL, " ", save);
	char *end;

	if (!t)
		return false;
	errno = 0;
	*out = strtol(t, &end, 10);
	return !errno && end != t && !*end && *out >= lo && *out <= hi;
}

static bool cpus_tok(char **save, cpu_set_t *set)
{
	const char *t = strtok_r(NULL, " ", save);

	CPU_ZERO(set);
	return t && (strcmp(t, "-") == 0 || cpulist_parse(t, set, NULL) == 0);
}

/* A line of the last run: its entry, with the originals it recorded. */
static void adopt_line(void *ud, char *line)
{
	struct irqmgr *m = ud;
	char *save = NULL, kind = line[0];
	long v[7];

	if (kind == 'B') {
		irqbalance_adopt(&m->ib, line);
		return;
	}
	strtok_r(line, " ", &save);
	if (kind == 'I') {
		struct irq_entry *e = calloc(1, sizeof(*e));
		const char *act;

		if (!e || !num(&save, 0, INT32_MAX, &v[0]) || !(act = strtok_r(NULL, " ", &save)) ||
		    !cpus_tok(&save, &e->original) || CPU_COUNT(&e->original) == 0) {
			free(e);
			log_warnx("state journal: a malformed IRQ entry, dropped");
			return;
		}
		e->irq = (int)v[0];
		decode(act, e->actions, sizeof(e->actions));
		e->written = true;
		e->next = m->irqs;
		m->irqs = e;
	} else if (kind == 'K') {
		struct kt_entry *k = calloc(1, sizeof(*k));

		if (!k || !num(&save, 1, INT32_MAX, &v[0]) || !num(&save, 0, LONG_MAX, &v[1]) ||
		    !num(&save, 0, 6, &v[2]) || !num(&save, 0, 99, &v[3]) || !num(&save, -20, 19, &v[4]) ||
		    !num(&save, 0, 1, &v[5]) || !cpus_tok(&save, &k->original.cpus) || !num(&save, 0, 1, &v[6])) {
			free(k);
			log_warnx("state journal: a malformed kernel thread entry, dropped");
			return;
		}
		k->tid = (pid_t)v[0];
		k->starttime = (uint64_t)v[1];
		k->original.policy = (int)v[2];
		k->original.priority = (int)v[3];
		k->original.nice = (int)v[4];
		k->original.reset_on_fork = v[5];
		k->cpus_changed = v[6];
		k->irq = -1;
		k->next = m->kts;
		m->kts = k;
	} else if (kind == 'D') {
		if (num(&save, 0, 0, &v[0]) && cpus_tok(&save, &m->default_original) &&
		    CPU_COUNT(&m->default_original) > 0)
			m->default_written = true;
	}
}

/* --- kernel threads ---------------------------------------------------------------- */

/* Is tid still the thread the entry names? */
static bool kt_alive(struct irqmgr *m, const struct kt_entry *k)
{
	struct irq_kthread t;

	return irqinfo_read_kthread(&m->env, k->tid, &t) == 0 && t.starttime == k->starttime;
}

/* Give a thread back what it had: its policy, and its CPUs if they were set. */
static void kt_restore(struct irqmgr *m, struct kt_entry *k)
{
	const char *what = NULL;
	char buf[128];
	int r;

	if (!kt_alive(m, k))
		return;
	r = task_sched_write(k->tid, &k->original, k->cpus_changed && !(k->flags & PROC_PF_NO_SETAFFINITY), &what);
	task_sched_format(&k->original, buf, sizeof(buf));
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "kernel thread %d (%s): cannot restore %s: %s", (int)k->tid, k->comm,
			  buf, what);
	else
		log_info("kernel thread %d (%s): restored %s", (int)k->tid, k->comm, buf);
}

static void kt_drop(struct irqmgr *m, struct kt_entry **pp, bool restore)
{
	struct kt_entry *k = *pp;

	if (restore)
		kt_restore(m, k);
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

/* What a kernel thread should get. */
struct kt_want {
	const char *section;
	int irq;
	bool has_policy;
	int policy, priority, nice;
	bool has_cpus;
	cpu_set_t cpus;
};

/* Apply want to snapshot thread t (an entry is made the first time). */
static void kt_apply(struct irqmgr *m, const struct irq_kthread *t, const struct kt_want *w)
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
				kt_drop(m, pp, false);
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
		journal_kt(m, k);
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
				journal_kt(m, k);
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
	fmt_cpus(&e->original, buf, sizeof(buf));
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
	fmt_cpus(&d->affinity, was, sizeof(was));
	fmt_cpus(cpus, now, sizeof(now));
	r = irqinfo_write_affinity(&m->env, e->irq, cpus);
	if (r < 0) {
		irq_refusal(m, e, r, now);
		log_warnx("irq %d (%s), %s%s%s: %s", e->irq, e->actions, avoid ? "irq-avoid-cpus" : "[irq ",
			  avoid ? "" : section, avoid ? "" : "]", e->why);
		return e;
	}
	if (!e->written) {
		e->written = true;
		journal_irq(m, e);
	}
	cpu_set_t aff;
	char eff[CPUS_TEXT_MAX];
	if (irqinfo_read_affinity(&m->env, e->irq, &aff, &e->effective) < 0)
		e->effective = *cpus;
	fmt_cpus(&e->effective, eff, sizeof(eff));
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
	uint64_t t0 = mono_usec();
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
				journal_default(m);
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
		struct kt_want w;

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
					kt_apply(m, t, &w);
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
			kt_apply(m, t, &w);
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
		kt_drop(m, pp, kt_alive(m, k));
	}
	irqinfo_free(&s);
	m->last_sync_usec = mono_usec() - t0;
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
		m->last_hotplug_usec = mono_usec() - since;
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
		m->pending_since = mono_usec();
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
	       struct registry *registry, const struct config *c)
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
	if ((r = sd_event_add_time(e, &m->later, CLOCK_MONOTONIC, 0, HOTPLUG_ACCURACY_USEC, on_later, m)) < 0)
		return r;
	sd_event_source_set_enabled(m->later, SD_EVENT_OFF);
	/* what the last rtschedd changed comes first: its originals are the ones restored */
	state_take(st, "IKDB", adopt_line, m);
	if ((r = state_add_writer(st, journal_write, m)) < 0)
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
			kt_drop(m, pp, false);
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
			kt_restore(m, k);
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
	state_remove_writer(m->state, journal_write, m);
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
