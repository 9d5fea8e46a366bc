/* task.c: reading and writing a thread's scheduling (see task.h).
 * glibc 2.36 has no sched_setattr wrapper, so the syscalls are made directly. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/core/task.h"

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

/* The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER0 part); its
 * linux/sched/types.h clashes with glibc's struct sched_param. */
struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

int task_sched_read(pid_t tid, struct task_sched *out)
{
	struct sched_attr a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, tid, &a, sizeof(a), 0) < 0)
		return -errno;
	if (sched_getaffinity(tid, sizeof(out->cpus), &out->cpus) < 0)
		return -errno;
	out->policy = (int)a.sched_policy;
	out->priority = (int)a.sched_priority;
	out->nice = a.sched_nice;
	out->reset_on_fork = a.sched_flags & SCHED_FLAG_RESET_ON_FORK;
	return 0;
}

int task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what)
{
	struct sched_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = (unsigned)s->policy;
	a.sched_priority = (unsigned)s->priority;
	a.sched_nice = s->nice;
	a.sched_flags = s->reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0;
	/* Affinity first: a thread made real-time on a CPU it must leave would
	 * briefly compete there. */
	if (set_cpus && sched_setaffinity(tid, sizeof(s->cpus), &s->cpus) < 0) {
		*what = "sched_setaffinity";
		return -errno;
	}
	if (syscall(SYS_sched_setattr, tid, &a, 0) < 0) {
		*what = "sched_setattr";
		return -errno;
	}
	return 0;
}

int task_cpus_write(pid_t tid, const cpu_set_t *cpus)
{
	return sched_setaffinity(tid, sizeof(*cpus), cpus) < 0 ? -errno : 0;
}

void task_sched_format(const struct task_sched *s, char *buf, size_t len)
{
	char cpus[256];

	if (cpulist_format(&s->cpus, cpus, sizeof(cpus)) < 0)
		snprintf(cpus, sizeof(cpus), "(many)");
	snprintf(buf, len, "%s/%d nice=%d cpus=%s%s", policy_to_string(s->policy), s->priority, s->nice,
		 cpus, s->reset_on_fork ? " reset-on-fork" : "");
}
