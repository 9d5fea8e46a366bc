/* pmqos.h: the wake-up latency rtschedd asks of the kernel's PM QoS while
 * the threads that want it are managed. Two mechanisms:
 *   cpu-dma-latency ([daemon]): /dev/cpu_dma_latency held open at the value
 *     while any real-time thread is managed. Every CPU of the machine stays
 *     out of the idle states slower to leave; the kernel drops the request
 *     when the file closes, so even a crash releases it.
 *   resume-latency-us ([rule NAME], [probe NAME]): the sysfs file
 *     cpuN/power/pm_qos_resume_latency_us of each CPU the rule's managed
 *     threads (or the probe) run on, at the strictest value asked for that
 *     CPU; the other CPUs keep their idle states. 0 is written as "n/a",
 *     the kernel's word for no idle state at all; the kernel's "0" means no
 *     limit. sysfs keeps a value after its writer exits, so each CPU's
 *     original goes into the state journal ("Q CPU ORIGINAL") and comes back
 *     when the last thread goes, on reload, on stop, and at the next start
 *     after a crash. A value someone else stored meanwhile is left alone. */
#ifndef RTSCHED_PMQOS_H
#define RTSCHED_PMQOS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/config/config.h"

struct pmqos;
struct registry;
struct state;

/* Where the files are; NULL members mean the real ones. */
struct pmqos_env {
	const char *sys;          /* prefix of /sys/devices/system/cpu (tests: a fixture tree) */
	const char *dma_latency;  /* /dev/cpu_dma_latency */
};

/* Create it and take over the per-CPU originals the journal st recorded
 * (st may be NULL). env NULL: the real files. 0 or -ENOMEM. */
int pmqos_new(struct pmqos **ret, const struct pmqos_env *env, struct state *st);
/* Bring both holds in line with what c asks for the threads r manages now
 * and for c's probes. */
void pmqos_update(struct pmqos *q, const struct config *c, struct registry *r);
/* The /dev/cpu_dma_latency hold in words: "off", "held at N us", ... */
const char *pmqos_global_state(const struct pmqos *q, const struct config *c, char *buf, size_t len);
/* The per-CPU holds in words: "off", or "cpu 1 at 0 us (n/a; was no
 * limit), ..." with any CPU that could not be held and why. */
void pmqos_cpus_state(const struct pmqos *q, char *buf, size_t len);
/* Put every original back (restore) or leave the per-CPU values to the
 * next rtschedd, which finds their originals in the journal (a restart).
 * The global hold ends either way. NULL is fine. */
void pmqos_free(struct pmqos *q, bool restore);

#endif
