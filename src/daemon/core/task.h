/* task.h: a thread's scheduling as the kernel holds it: policy, priority,
 * nice, SCHED_RESET_ON_FORK and CPU affinity, read with sched_getattr and
 * sched_getaffinity and written with sched_setattr and sched_setaffinity. */
#ifndef RTSCHED_TASK_H
#define RTSCHED_TASK_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

struct task_sched {
	int policy;          /* SCHED_*, reset-on-fork bit masked off */
	int priority;
	int nice;
	bool reset_on_fork;
	cpu_set_t cpus;
};

/* The same without the affinity: what a watchdog demotion takes away and the
 * promotion puts back (it never changes the CPUs), in 16 bytes, not 144. */
struct task_policy {
	int policy;
	int priority;
	int nice;
	bool reset_on_fork;
};

/* What the kernel reports for tid now. */
int task_sched_read(pid_t tid, struct task_sched *out);
/* Set policy, priority, nice and reset-on-fork; the affinity too when
 * set_cpus. Returns 0 or the kernel's -errno, saying which call failed
 * through *what ("sched_setattr" or "sched_setaffinity"). */
int task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what);
/* The CPUs of tid alone (a managed thread's, set again where the kernel
 * changed them: registry_repin()). 0 or -errno. */
int task_cpus_write(pid_t tid, const cpu_set_t *cpus);
/* Format "fifo/10 cpus=0-1" for logs. */
void task_sched_format(const struct task_sched *s, char *buf, size_t len);

#endif
