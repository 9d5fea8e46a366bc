/* keys.h: the keys of each section of rtschedd.conf by number (a key's
 * number indexes its section's struct key_origin), and where each key's value
 * came from. Internal to src/daemon/config. */
#ifndef RTSCHED_CONFIG_KEYS_H
#define RTSCHED_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/config/config.h"

enum section_kind { SEC_NONE, SEC_DAEMON, SEC_RULE, SEC_USER, SEC_GROUP, SEC_PROBE, SEC_RTKIT, SEC_BAD };

enum daemon_key { D_SOCKET, D_POLICY, D_PRIORITY, D_NICE, D_CPUS, D_RESET_ON_FORK,
		  D_MAX_PRIORITY, D_LOG_LEVEL, D_ADMIN_GROUP, D_RATE_LIMIT, D_RATE_BURST, D_RESCAN, D_PROCESS_EVENTS,
		  D_RTPRIO_CAP, D_OVER_CAP, D_LIMITS_CONF, D_LIMITS_DIR, D_USER, D_STATE_FILE,
		  D_METRICS_FILE, D_METRICS_INTERVAL, D_CPU_DMA_LATENCY,
		  D_WATCHDOG, D_WATCHDOG_THRESHOLD, D_WATCHDOG_COOLDOWN, D_WATCHDOG_DEMOTE, D_OBSERVE_THREADS, D_N };

/* A rule's keys are the sched_spec keys of [daemon], in the same order. */
enum rule_key { R_POLICY, R_PRIORITY, R_NICE, R_CPUS, R_RESET_ON_FORK,
		R_THREAD_NAME, R_PROCESS_NAME, R_EXE, R_USER, R_GROUP, R_UNIT, R_CGROUP, R_N };

enum principal_key { P_MAX_PRIORITY, P_POLICIES, P_MAX_THREADS, P_CPUS, P_MIN_NICE, P_N };

enum probe_key { PR_CPU, PR_POLICY, PR_PRIORITY, PR_PERIOD, PR_STRATEGY, PR_MODE, PR_N };

/* [rtkit]: the RealtimeKit1 bus service (src/daemon/rtkit). */
enum rtkit_key { RK_ENABLE, RK_REPLACE, RK_POLICY, RK_MAX_RT_PRIORITY, RK_MIN_NICE, RK_RTTIME_MAX, RK_ROLE, RK_N };

_Static_assert(D_N <= CONFIG_KEYS_MAX && R_N <= CONFIG_KEYS_MAX && P_N <= CONFIG_KEYS_MAX &&
	       PR_N <= CONFIG_KEYS_MAX && RK_N <= CONFIG_KEYS_MAX,
	       "raise CONFIG_KEYS_MAX");

/* Mark every key of a section as not set: the built-in default. */
void origin_reset(struct key_origin *o);
/* True if a file or the command line set key k. */
bool origin_set(const struct key_origin *o, int k);
/* "file:line" of key k, "built-in default" or "command line", into buf. */
void origin_str(const struct config *c, const struct key_origin *o, int k, char *buf, size_t len);

#endif
