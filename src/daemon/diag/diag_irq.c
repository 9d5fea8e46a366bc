/* diag_irq.c: the checks of interrupts and kernel threads (diag_irq() in
 * diag.h): what the [irq NAME] and [kthread NAME] sections match on this
 * machine now and what the kernel will refuse them, whether /proc/irq can
 * be written, real-time priorities against the IRQ threads and ksoftirqd
 * they share CPUs with, irq-avoid-cpus and irqbalance. Everything is read
 * through the struct diag_env's roots (sys/irqinfo.h), so fixture trees
 * test it. */
#include "autoconfig.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "daemon/diag/diag.h"
#include "daemon/diag/diag_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"

/* Up to this many IRQs or threads are named in one finding. */
#define NAMED_MAX 6

/* The CPUs an IRQ of section q runs on: the section's, else where it is. */
static void irq_cpus(const struct diag_irq_section *q, const struct irq_desc *d, cpu_set_t *out)
{
	*out = q->has_cpus ? q->cpus : d->effective;
}

/* "irq 28 (xhci_hcd), irq 29 (xhci_hcd) and 3 more" into buf. */
static void name_irqs(const struct irq_snapshot *s, const int *v, size_t n, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < n && i < NAMED_MAX; i++) {
		const struct irq_desc *d = irqinfo_find(s, v[i]);
		diag_cat(buf, len, "%sirq %d (%s)", i ? ", " : "", v[i], d ? d->line.actions : "?");
	}
	if (n > NAMED_MAX)
		diag_cat(buf, len, " and %zu more", n - NAMED_MAX);
}

/* The IRQs of v[0..n) that keep() holds for, named into names; how many. */
static size_t pick(struct diag_ctx *c, const struct irq_snapshot *s, const int *v, size_t n,
		   bool (*keep)(struct diag_ctx *c, const struct irq_snapshot *s, int irq), char *names, size_t len)
{
	int *p = calloc(n ? n : 1, sizeof(*p));
	size_t k = 0;

	if (!p) {
		c->err = -ENOMEM;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (keep(c, s, v[i]))
			p[k++] = v[i];
	if (k)
		name_irqs(s, p, k, names, len);
	free(p);
	return k;
}

/* An IRQ with no thread irq/N-name. */
static bool unthreaded(struct diag_ctx *c, const struct irq_snapshot *s, int irq)
{
	for (size_t k = 0; k < s->n_kthreads; k++)
		if (s->kthreads[k].irq == irq)
			return false;
	return true;
}

/* An IRQ whose CPUs the kernel manages, as debugfs says. */
static bool managed(struct diag_ctx *c, const struct irq_snapshot *s, int irq)
{
	struct irq_env ie = { c->real ? NULL : c->env.proc, c->real ? NULL : c->env.sys };

	return irqinfo_managed(&ie, irq) == 1;
}

static void check_irq_section(struct diag_ctx *c, const struct irq_snapshot *s, const struct diag_irq_section *q,
			      const struct diag_irq_input *in)
{
	char names[DIAG_TEXT_MAX], fix[DIAG_TEXT_MAX];
	int *v;
	size_t n;

	if (irqinfo_select(s, q->sel, &v, &n) < 0) {
		c->err = -ENOMEM;
		return;
	}
	if (n == 0) {
		diag_add(c, "irq-unmatched", DIAG_WARNING,
			 "compare its keys with /proc/interrupts (match), lspci -nn (pci-id, driver), lsusb (usb-id), "
			 "/proc/asound/cards (sound-card) and ip link (net-interface); a device plugged in later is "
			 "matched when it appears",
			 "[irq %s] (%s) matches no interrupt now", q->name, q->where);
		free(v);
		return;
	}
	name_irqs(s, v, n, names, sizeof(names));
	diag_add(c, "irq-match", DIAG_INFO, NULL, "[irq %s] (%s) matches %s", q->name, q->where, names);
	size_t k;
	if (q->priority > 0 && (k = pick(c, s, v, n, unthreaded, names, sizeof(names))))
		diag_add(c, "irq-not-threaded", DIAG_WARNING,
			 "boot with threadirqs on the kernel command line (or run a PREEMPT_RT kernel): every "
			 "handler then runs in a thread irq/N-name that priority = acts on",
			 "[irq %s]: %s %s no thread, so priority %d has nothing to act on: the handler runs "
			 "in hard interrupt context", q->name, names, k == 1 ? "has" : "have", q->priority);
	if (q->has_cpus && pick(c, s, v, n, managed, names, sizeof(names)))
		diag_add(c, "irq-managed", DIAG_WARNING,
			 "the driver spreads these vectors over the CPUs itself; keep them off real-time CPUs "
			 "with isolcpus=managed_irq,LIST on the kernel command line, or leave cpus = out",
			 "[irq %s]: the kernel manages the CPUs of %s; cpus = will be refused", q->name, names);
	/* real-time priorities at or above this section's, on its CPUs */
	for (size_t u = 0; q->priority > 0 && u < in->n_rt; u++) {
		const struct diag_rt_use *rt = &in->rt[u];
		cpu_set_t on, hit, all;
		char cpus[256];

		if (rt->priority < q->priority)
			continue;
		CPU_ZERO(&hit);
		for (size_t i = 0; i < n; i++) {
			const struct irq_desc *d = irqinfo_find(s, v[i]);
			if (!d)
				continue;
			irq_cpus(q, d, &on);
			CPU_OR(&hit, &hit, &on);
		}
		all = rt->has_cpus ? rt->cpus : s->online;
		CPU_AND(&hit, &hit, &all);
		if (CPU_COUNT(&hit) == 0)
			continue;
		cpulist_format(&hit, cpus, sizeof(cpus));
		diag_fmt(fix, sizeof(fix), "give [irq %s] a priority above %d (within max-priority), or %s a "
			 "priority below %d, or keep them on different CPUs", q->name, rt->priority, rt->who,
			 q->priority);
		diag_add(c, "rt-above-irq", DIAG_WARNING, fix,
			 "%s (priority %d) is at or above [irq %s] (priority %d) on CPU %s: while it runs there, the "
			 "interrupt's thread waits, and so does the device it serves", rt->who, rt->priority, q->name,
			 q->priority, cpus);
	}
	free(v);
}

static void check_kthread_section(struct diag_ctx *c, const struct irq_snapshot *s, const struct diag_irq_section *q)
{
	char names[DIAG_TEXT_MAX] = "", bound[DIAG_TEXT_MAX] = "";
	size_t n = 0, nb = 0;

	for (size_t k = 0; k < s->n_kthreads; k++) {
		const struct irq_kthread *t = &s->kthreads[k];

		if (fnmatch(q->match, t->comm, 0) != 0)
			continue;
		if (n++ < NAMED_MAX)
			diag_cat(names, sizeof(names), "%s%s", n > 1 ? ", " : "", t->comm);
		if (q->has_cpus && (t->flags & PROC_PF_NO_SETAFFINITY) && nb++ < NAMED_MAX)
			diag_cat(bound, sizeof(bound), "%s%s", nb > 1 ? ", " : "", t->comm);
	}
	if (n == 0) {
		diag_add(c, "kthread-unmatched", DIAG_WARNING,
			 "compare match = with the kernel threads ps -eo comm lists (children of kthreadd, in [brackets] "
			 "in ps aux)", "[kthread %s] (%s) matches no kernel thread now", q->name, q->where);
		return;
	}
	if (n > NAMED_MAX)
		diag_cat(names, sizeof(names), " and %zu more", n - NAMED_MAX);
	diag_add(c, "irq-match", DIAG_INFO, NULL, "[kthread %s] (%s) matches %s", q->name, q->where, names);
	if (nb)
		diag_add(c, "kthread-bound", DIAG_WARNING,
			 "remove cpus = from the section: a per-CPU kernel thread runs on its CPU",
			 "[kthread %s]: %s%s %s bound to %s CPU by the kernel (PF_NO_SETAFFINITY); cpus = cannot "
			 "apply to %s", q->name, bound, nb > NAMED_MAX ? " and more" : "", nb == 1 ? "is" : "are",
			 nb == 1 ? "its" : "their", nb == 1 ? "it" : "them");
}

/* Do softirqs run in ksoftirqd here: forced IRQ threading (threadirqs),
 * or a PREEMPT_RT kernel, where they run in thread context and pile up in
 * ksoftirqd when raised faster than they are done? */
static const char *softirqs_threaded(struct diag_ctx *c)
{
	char cmd[4096];
	long long rt;

	if (diag_read_ll(&rt, "%s/kernel/realtime", c->env.sys) == 0 && rt == 1)
		return "a PREEMPT_RT kernel";
	if (diag_read(cmd, sizeof(cmd), "%s", c->env.cmdline) < 0)
		return NULL;
	/* a word of its own, before any " -- " (init's arguments) */
	char *save = NULL;
	for (char *w = strtok_r(cmd, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(w, "--") == 0)
			break;
		if (strcmp(w, "threadirqs") == 0)
			return "threadirqs";
	}
	return NULL;
}

static void check_ksoftirqd(struct diag_ctx *c, const struct irq_snapshot *s, const struct diag_irq_input *in)
{
	const char *why = softirqs_threaded(c);

	for (size_t u = 0; why && u < in->n_rt; u++) {
		const struct diag_rt_use *rt = &in->rt[u];
		char cpus[256] = "", fix[DIAG_TEXT_MAX];
		cpu_set_t on = rt->has_cpus ? rt->cpus : s->online, hit;
		int top = 0;

		CPU_ZERO(&hit);
		for (size_t k = 0; k < s->n_kthreads; k++) {
			const struct irq_kthread *t = &s->kthreads[k];
			int prio = policy_is_realtime(t->policy) ? t->priority : 0, cpu;

			if (strncmp(t->comm, "ksoftirqd/", 10) != 0 || sscanf(t->comm + 10, "%d", &cpu) != 1 ||
			    cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &on))
				continue;
			/* what a [kthread] section gives it */
			for (size_t i = 0; i < in->n_sections; i++) {
				const struct diag_irq_section *q = &in->sections[i];
				if (q->kthread && q->priority > 0 && policy_is_realtime(q->policy) &&
				    fnmatch(q->match, t->comm, 0) == 0) {
					prio = q->priority;
					break;
				}
			}
			if (rt->priority > prio) {
				CPU_SET(cpu, &hit);
				top = prio > top ? prio : top;
			}
		}
		if (CPU_COUNT(&hit) == 0)
			continue;
		cpulist_format(&hit, cpus, sizeof(cpus));
		diag_fmt(fix, sizeof(fix), "if %s waits on network or disk I/O, put ksoftirqd above it: "
			 "[kthread softirq] match = ksoftirqd/* policy = fifo priority = %d; if it must never be "
			 "preempted, leave it", rt->who, rt->priority + 1 > 99 ? 99 : rt->priority + 1);
		diag_add(c, "rt-above-ksoftirqd", DIAG_WARNING, fix,
			 "%s (priority %d) runs above ksoftirqd on CPU %s (priority %d at most): with %s, softirqs "
			 "(network receive, timers, block completions) that pile up run in ksoftirqd, which waits "
			 "while it runs", rt->who, rt->priority, cpus, top, why);
	}
}

static void check_avoid(struct diag_ctx *c, const struct irq_snapshot *s, const struct diag_irq_input *in)
{
	char cpus[256], names[DIAG_TEXT_MAX];
	int *moved = calloc(s->n_irqs ? s->n_irqs : 1, sizeof(*moved));
	size_t n = 0;

	if (!moved) {
		c->err = -ENOMEM;
		return;
	}
	cpu_set_t avoid;
	CPU_AND(&avoid, &in->avoid_cpus, &s->online);
	if (CPU_COUNT(&avoid) && CPU_EQUAL(&avoid, &s->online)) {
		diag_add(c, "irq-avoid", DIAG_ERROR, "leave at least one online CPU out of irq-avoid-cpus",
			 "irq-avoid-cpus = %s covers every online CPU: interrupts need one, so none are moved",
			 in->avoid_text);
		free(moved);
		return;
	}
	if (CPU_COUNT(&avoid) == 0) {
		diag_add(c, "irq-avoid", DIAG_INFO, NULL, "irq-avoid-cpus = %s: no CPU to keep free now (auto follows "
			 "the CPUs managed real-time threads are pinned to)", in->avoid_text);
		free(moved);
		return;
	}
	for (size_t i = 0; i < s->n_irqs; i++) {
		cpu_set_t hit;
		CPU_AND(&hit, &s->irqs[i].affinity, &avoid);
		if (CPU_COUNT(&hit))
			moved[n++] = s->irqs[i].line.irq;
	}
	cpulist_format(&avoid, cpus, sizeof(cpus));
	name_irqs(s, moved, n, names, sizeof(names));
	diag_add(c, "irq-avoid", DIAG_INFO, NULL, "irq-avoid-cpus = %s keeps CPU %s free of the interrupts no [irq] "
		 "section claims%s%s", in->avoid_text, cpus, n ? ": " : "", n ? names : "");
	free(moved);
}

static void check_irqbalance(struct diag_ctx *c, const struct diag_irq_input *in, bool placing)
{
	char sock[256], cpus[256] = "";
	pid_t pid;

	if (!placing || !c->real || irqinfo_find_irqbalance("/run/irqbalance", &pid, sock, sizeof(sock)) < 0)
		return;
	if (CPU_COUNT(&in->avoid_cpus))
		cpulist_format(&in->avoid_cpus, cpus, sizeof(cpus));
	if (in->irqbalance_told) {
		diag_add(c, "irqbalance", DIAG_INFO, NULL, "irqbalance (pid %d) runs; rtschedd tells it over %s which "
			 "CPUs (%s) and IRQs to leave alone", (int)pid, sock, cpus[0] ? cpus : "none");
		return;
	}
	char fix[DIAG_TEXT_MAX];
	diag_fmt(fix, sizeof(fix), "run rtschedd as root, or set IRQBALANCE_BANNED_CPULIST=%s in /etc/default/irqbalance "
		 "and add --banirq=N to IRQBALANCE_ARGS for each IRQ an [irq] section places, then systemctl restart "
		 "irqbalance", cpus[0] ? cpus : "LIST");
	diag_add(c, "irqbalance", DIAG_WARNING, fix, "irqbalance (pid %d) runs and rewrites every IRQ's CPUs each 10 s; "
		 "it takes settings over %s from root only, which rtschedd is not", (int)pid, sock);
}

/* Can /proc/irq be written? */
static void check_permission(struct diag_ctx *c)
{
	char path[PATH_MAX];
	struct statvfs vfs;

	if (diag_path(path, sizeof(path), "%s/irq/default_smp_affinity", c->env.proc) < 0)
		return;
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		diag_add(c, "irq-no-permission", DIAG_ERROR,
			 "systemctl edit rtschedd.service, and under [Service] add ProtectKernelTunables=no (see "
			 "rtschedd(8), IRQ AFFINITY, for the capability a non-root rtschedd needs too)",
			 "/proc/irq is read-only here (systemd's ProtectKernelTunables= does that): IRQ CPUs cannot be "
			 "set");
		return;
	}
	if (access(path, W_OK) < 0)
		diag_add(c, "irq-no-permission", DIAG_ERROR,
			 "run rtschedd as root, or give it CAP_DAC_OVERRIDE (rtschedd(8), IRQ AFFINITY)",
			 "%s cannot be written by rtschedd's user (%s): IRQ CPUs cannot be set", path, strerror(errno));
}

int diag_irq(const struct diag_env *env, const struct diag_irq_input *in, struct diag_report *r)
{
	struct diag_target t = { .policy = -1 };
	struct irq_snapshot s;
	struct diag_ctx *c = calloc(1, sizeof(*c));
	bool placing = in->avoid;
	int e;

	if (!c)
		return -ENOMEM;
	if ((e = diag_ctx_init(c, env, &t, r)) < 0) {
		free(c);
		return e;
	}
	struct irq_env ie = { c->real ? NULL : c->env.proc, c->real ? NULL : c->env.sys };
	if ((e = irqinfo_read(&ie, IRQINFO_DEVICES | IRQINFO_KTHREADS, &s)) < 0) {
		diag_failed(c, "the machine's interrupts (/proc/interrupts, /sys)", e);
		irqinfo_free(&s);
		e = c->err;
		free(c);
		return e;
	}
	for (size_t i = 0; i < in->n_sections; i++) {
		const struct diag_irq_section *q = &in->sections[i];

		placing |= !q->kthread && q->has_cpus;
		if (q->kthread)
			check_kthread_section(c, &s, q);
		else
			check_irq_section(c, &s, q, in);
	}
	if (placing)
		check_permission(c);
	check_ksoftirqd(c, &s, in);
	if (in->avoid)
		check_avoid(c, &s, in);
	check_irqbalance(c, in, placing);
	irqinfo_free(&s);
	e = c->err;
	free(c);
	return e;
}
