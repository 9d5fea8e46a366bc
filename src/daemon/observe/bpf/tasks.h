/* tasks.h: the machine's tasks as the watchdog reads them, through BPF task
 * iterators (tasks.bpf.c) instead of /proc. Reading /proc means path
 * lookups, and a lookup of a name another lookup has in flight waits for
 * that one to finish: a starved SCHED_OTHER task in the middle of one holds
 * the FIFO 99 watchdog for as long as it is starved. An iterator's read
 * runs under RCU and takes no lock another task can hold.
 *
 * tasks_new() loads the programs (CAP_BPF and CAP_PERFMON; Linux 5.17 or
 * later, a light skeleton: see tasks.c) and may allocate; tasks_open() and
 * tasks_open_process() are system calls only (no malloc, no stdio, no
 * lock), for the watchdog thread, and need no capability once the object
 * exists. */
#ifndef RTSCHED_TASKS_H
#define RTSCHED_TASKS_H

#include <stddef.h>
#include <sys/types.h>

#include <linux/types.h>

#include "daemon/observe/bpf/tasks_abi.h"

struct tasks;

/* Load; -errno with the reason in why, as bpfobs_new() (-ENOPKG built
 * without BPF, -EPERM no capabilities...). */
int tasks_new(struct tasks **ret, char *why, size_t len);
/* Free; NULL is fine. */
void tasks_free(struct tasks *t);
/* A descriptor whose read() gives a struct tasks_rec for every real-time
 * task of the machine (whole records; read into a buffer of at least one
 * page). Close it after use; -errno. */
int tasks_open(const struct tasks *t);
/* The same for every task of process pid, whatever its policy; -errno
 * (also on kernels before 6.1, which cannot narrow an iterator). */
int tasks_open_process(const struct tasks *t, pid_t pid);

#endif
