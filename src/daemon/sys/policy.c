/* policy.c: scheduling policy names and ranges (see policy.h). */
#include "autoconfig.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "daemon/sys/policy.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

static const struct {
	const char *name;
	int policy;
} policies[] = {
	{ "other", SCHED_OTHER }, { "fifo", SCHED_FIFO }, { "rr", SCHED_RR },
	{ "batch", SCHED_BATCH }, { "idle", SCHED_IDLE },
};

#define N_POLICIES (sizeof(policies) / sizeof(policies[0]))

int policy_from_string(const char *s)
{
	if (strncasecmp(s, "SCHED_", 6) == 0)
		s += 6;
	for (size_t i = 0; i < N_POLICIES; i++)
		if (strcasecmp(s, policies[i].name) == 0)
			return policies[i].policy;
	/* "normal" is the kernel's and chrt's name for SCHED_OTHER. */
	if (strcasecmp(s, "normal") == 0)
		return SCHED_OTHER;
	return -EINVAL;
}

const char *policy_to_string(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	for (size_t i = 0; i < N_POLICIES; i++)
		if (policies[i].policy == policy)
			return policies[i].name;
	return "unknown";
}

bool policy_is_realtime(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR;
}

int policy_priority_range(int policy, int *min, int *max)
{
	/* constant for the kernel's life: ask it once per policy (a config with
	 * thousands of rules asked twice per rule, and syscalls are dear in a VM);
	 * 0 = not asked yet, else range + 1 packed as lo << 8 | hi */
	static int cache[8];
	int lo, hi, v = policy >= 0 && policy < 8 ? __atomic_load_n(&cache[policy], __ATOMIC_RELAXED) : 0;

	if (v) {
		*min = (v - 1) >> 8;
		*max = (v - 1) & 0xff;
		return 0;
	}
	lo = sched_get_priority_min(policy);
	hi = sched_get_priority_max(policy);
	if (lo < 0 || hi < 0)
		return -errno;
	if (policy >= 0 && policy < 8 && lo < 256 && hi < 256)
		__atomic_store_n(&cache[policy], (lo << 8 | hi) + 1, __ATOMIC_RELAXED);
	*min = lo;
	*max = hi;
	return 0;
}

const char *policy_names(void)
{
	return "fifo, rr, other, batch, idle";
}

int policy_mask_from_string(const char *s, unsigned *mask)
{
	char buf[128], *save = NULL;
	unsigned m = 0;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (char *tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		int p = policy_from_string(tok);
		if (p < 0)
			return p;
		m |= 1u << p;
	}
	if (!m)
		return -EINVAL;
	*mask = m;
	return 0;
}

int policy_mask_to_string(unsigned mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_POLICIES; i++) {
		if (!(mask & (1u << policies[i].policy)))
			continue;
		int n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", policies[i].name);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}
