/* cpucheck.h: the diagnosis of resume-latency-us and isolate = yes, for
 * `rtschedd --check` (the configuration and the machine) and `rtschedctl
 * check` (and what the running daemon holds). Nothing is added when no
 * rule or probe sets either key. Codes (stable; rtschedd(8)):
 *   isolate                  ok       the CPUs isolated now, for whom, how
 *   isolate-unavailable      warning  no cpuset controller rtschedd can use
 *   isolate-no-housekeeping  warning  they would be every online CPU
 *   isolate-refused          warning  the kernel or systemd refused a write
 *   isolate-busy             warning  the housekeeping group is someone else's
 *   isolate-kthreads         info     the kernel's per-CPU threads that stay there
 *   isolate-boot-params      info     what only the kernel command line does
 *                                     (nohz_full, rcu_nocbs), with the words
 *   resume-latency           ok       the CPUs' resume latency held now
 *   resume-latency-ignored   warning  the bound changes nothing on this
 *                                     machine: no cpuidle driver, every idle
 *                                     state leaves faster, or the haltpoll
 *                                     governor, which honours only 0 */
#ifndef RTSCHED_CPUCHECK_H
#define RTSCHED_CPUCHECK_H

#include "daemon/config/config.h"
#include "shared/report.h"

struct pmqos;
struct isolate;

/* Append the findings to rep. q and m: the running daemon's (NULL for
 * rtschedd --check). sys: prefix of /sys and /proc for tests (NULL: the
 * real ones). -ENOMEM. */
int cpucheck_run(const char *sys, const struct config *c, const struct pmqos *q, const struct isolate *m,
		 struct diag_report *rep);

#endif
