/* irqbalance.h: working with irqbalance instead of against it. irqbalance
 * rewrites every IRQ's smp_affinity every 10 s; what rtschedd writes there
 * would be undone at its next pass. So while irqbalance runs, rtschedd
 * tells it what to leave alone through its own settings, over the socket
 * irqbalance serves to root (/run/irqbalance/irqbalancePID.sock, the one
 * irqbalance-ui uses): "settings cpus LIST" bans the CPUs irq-avoid-cpus
 * keeps free (added to what it bans already: isolcpus, nohz_full,
 * IRQBALANCE_BANNED_CPULIST), "settings ban irqs N..." the IRQs [irq NAME]
 * sections claim (added to its --banirq list). What irqbalance had comes
 * back when rtschedd stops; the state journal keeps it across a crash.
 * irqbalance applies a change at its next pass (10 s by default). */
#ifndef RTSCHED_IRQBALANCE_H
#define RTSCHED_IRQBALANCE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct irqbalance;
struct state;

#define IRQBALANCE_RUNDIR "/run/irqbalance"

/* Tell the running irqbalance (if any; its socket under rundir, NULL:
 * IRQBALANCE_RUNDIR) to ban the CPUs avoid (NULL: none)
 * and the IRQs claimed[0..n). *ib is made at the first contact and keeps
 * what irqbalance had; st (may be NULL) journals it. 1 when irqbalance runs
 * and took the settings (rtschedd then leaves unclaimed IRQs to it), 0 when
 * none runs, -errno when one runs that rtschedd cannot tell (not root:
 * irqbalance takes its socket's commands from root only). */
int irqbalance_sync(struct irqbalance **ib, const char *rundir, struct state *st, const cpu_set_t *avoid,
		    const int *claimed, size_t n);
/* A "B ..." journal line of the last run: what irqbalance had then. */
void irqbalance_adopt(struct irqbalance **ib, char *line);
/* Write its journal line (what irqbalance had) to f at compaction: how many (0 or 1). */
size_t irqbalance_journal(const struct irqbalance *ib, FILE *f);
/* For status: "not running", "banning CPUs 1 and 2 IRQs (pid 123)", ... */
void irqbalance_describe(const struct irqbalance *ib, char *buf, size_t len);
/* Give irqbalance back its own settings (restore), or leave them for the
 * next rtschedd. NULL is fine. */
void irqbalance_free(struct irqbalance *ib, bool restore);

/* Send one command; the reply (if any) into reply. -EACCES when irqbalance
 * closed without one to a command that has one ("setup"). */
int irqbalance_ask(const char *sock, const char *cmd, char *reply, size_t len);
/* The banned CPUs ("BANNED 00000002") and IRQs ("IRQ 30 LOAD ...") of a
 * "setup" reply; irqs gets "30 31" ("" if none). -EINVAL if it is not one. */
int irqbalance_parse_setup(const char *reply, cpu_set_t *cpus, char *irqs, size_t len);

#endif
