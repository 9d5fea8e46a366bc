/* tasks_abi.h: what tasks.bpf.c and tasks.c share: one record per task,
 * written by a BPF task iterator into the read() of its descriptor.
 * Includes nothing. */
#ifndef TASKS_ABI_H
#define TASKS_ABI_H

#define TASKS_COMM_LEN 16

struct tasks_rec {
	__s32 tid, pid;          /* in the initial pid namespace */
	__u32 euid;              /* its effective uid (the credentials it acts with) */
	__s32 cpu;               /* the CPU it last ran on, or runs on */
	__u32 policy;            /* SCHED_* (without SCHED_RESET_ON_FORK) */
	__u32 priority;          /* its real-time priority, 0 for the others */
	__u64 run_ns;            /* time on a CPU, as the first field of /proc's schedstat */
	__u64 start_ns;          /* CLOCK_BOOTTIME of its start: /proc's starttime * (1e9 / USER_HZ) */
	__u32 running;           /* 1: runs or waits to (state R) */
	__u32 pad;
	char comm[TASKS_COMM_LEN];   /* its name */
	char pcomm[TASKS_COMM_LEN];  /* its process's (the thread group leader's) */
};

#endif
