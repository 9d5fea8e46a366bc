/* policy.h: scheduling policy names and priority ranges, shared by the
 * daemon, rtschedctl and librtsched so every tool spells them alike. */
#ifndef RTSCHED_POLICY_H
#define RTSCHED_POLICY_H

#include <stdbool.h>

/* Parse "fifo", "rr", "other", "batch", "idle" (any case; "SCHED_" prefix
 * allowed) into a SCHED_* value; -EINVAL if unknown. */
int policy_from_string(const char *s);
/* Lower-case name of a SCHED_* value (the reset-on-fork bit is masked). */
const char *policy_to_string(int policy);
/* True for SCHED_FIFO and SCHED_RR. */
bool policy_is_realtime(int policy);
/* Valid priority range of a policy, from sched_get_priority_min/max. */
int policy_priority_range(int policy, int *min, int *max);
/* A comma-separated list of all policy names, for messages. */
const char *policy_names(void);
/* Parse a comma-separated policy list into a bit mask (1 << SCHED_*). */
int policy_mask_from_string(const char *s, unsigned *mask);
/* Format a policy mask as a comma-separated list into buf. */
int policy_mask_to_string(unsigned mask, char *buf, size_t len);

#endif
