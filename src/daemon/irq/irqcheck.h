/* irqcheck.h: the diagnosis of interrupts and kernel threads for `rtschedd
 * --check` and `rtschedctl check`: the configuration's [irq NAME] and
 * [kthread NAME] sections, its real-time rules and (in a running daemon)
 * the managed threads handed to diag_irq() (diag/diag_irq.c), and what the
 * running IRQ manager could not apply, each with its code. */
#ifndef RTSCHED_IRQCHECK_H
#define RTSCHED_IRQCHECK_H

#include "daemon/config/config.h"
#include "shared/report.h"

struct registry;
struct irqmgr;

/* Append the findings to rep. registry and m may be NULL (rtschedd
 * --check: the configuration alone). env NULL: the real /proc and /sys.
 * Nothing is added when the configuration has no IRQ sections, no
 * irq-avoid-cpus and no real-time rule. -ENOMEM. */
struct diag_env;
int irqcheck_run(const struct diag_env *env, const struct config *c, struct registry *registry,
		 const struct irqmgr *m, struct diag_report *rep);

#endif
