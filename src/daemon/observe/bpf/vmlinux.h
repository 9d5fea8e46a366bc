/* vmlinux.h: the few kernel types bpfobs.bpf.c reads, with only the fields it
 * reads, pinned in the tree. It is NOT generated from the build machine's
 * BTF, on purpose (it serves bpfobs.bpf.c, catcher.bpf.c and tasks.bpf.c):
 *   - a Debian package is built in an sbuild chroot whose running kernel is
 *     the buildd's (any version, maybe without BTF, /sys maybe not mounted):
 *     a header generated there describes no kernel the package will run on,
 *     and makes the build depend on the build host;
 *   - it would not help anyway: every struct here carries
 *     preserve_access_index, so clang records each field access as a CO-RE
 *     relocation and libbpf rewrites the offset (and load size) against the
 *     running kernel's /sys/kernel/btf/vmlinux at load time. Field order,
 *     sizes and padding here are irrelevant; only struct and field names
 *     matter, and those have been stable since Linux 4.16 (hrtimer
 *     is_soft) and 5.14 (task_struct __state; the ___pre514 flavour below
 *     covers the older `state`).
 * Regenerating a full header (bpftool btf dump file /sys/kernel/btf/vmlinux
 * format c) also works, but is 130,000 lines of one kernel's types. */
#ifndef BPFOBS_VMLINUX_H
#define BPFOBS_VMLINUX_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
/* what libbpf's bpf_helper_defs.h names in prototypes */
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
enum { false = 0, true = 1 };

typedef __s64 ktime_t;

/* from the UAPI <linux/bpf.h>, which -target bpf cannot include (it pulls
 * in the host's multiarch <asm/types.h>); these values are ABI */
enum bpf_map_type { BPF_MAP_TYPE_ARRAY = 2, BPF_MAP_TYPE_PERCPU_ARRAY = 6, BPF_MAP_TYPE_RINGBUF = 27 };
enum { BPF_F_MMAPABLE = 1U << 10 };

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct sched_entity {
	__u64 sum_exec_runtime;            /* ns on a CPU: the first field of /proc's schedstat */
};

struct thread_info {
	__u32 cpu;
};

struct task_struct {
	unsigned int __state; /* Linux 5.14+ */
	int on_cpu;           /* running, or being switched out of a CPU */
	int pid;              /* the thread id in the initial pid namespace */
	int tgid;             /* its process */
	int prio;             /* effective priority: 0..99 real-time (0 highest), 100..139 others */
	unsigned int policy;  /* SCHED_* */
	char comm[16];        /* its name (TASK_COMM_LEN) */
	struct pid *thread_pid; /* its pid in every namespace it is seen from (catcher.bpf.c) */
	/* tasks.bpf.c */
	unsigned int rt_priority;          /* 1..99 for SCHED_FIFO and SCHED_RR, else 0 */
	struct sched_entity se;            /* its run time */
	__u64 start_boottime;              /* CLOCK_BOOTTIME ns of its start (Linux 5.5+) */
	struct task_struct *group_leader;  /* its process's first thread */
	const struct cred *cred;           /* the credentials it acts with */
	struct thread_info thread_info;    /* where it runs (Linux 5.16+; the ___pre516 flavour below) */
};

typedef struct {
	__u32 val;
} kuid_t;

struct cred {
	kuid_t euid;
};

/* Linux 5.5 to 5.15: the CPU was the task's own field */
struct task_struct___pre516 {
	unsigned int cpu;
};

/* A task iterator's context (iter/task programs, Linux 5.8+). */
struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

struct pid_namespace;

/* a task's number in one pid namespace */
struct upid {
	int nr;
	struct pid_namespace *ns;
};

/* level: how deep the task's own pid namespace is (0: the initial one);
 * numbers[level] is its number there */
struct pid {
	unsigned int level;
	struct upid numbers[1];
};

/* a hard interrupt's handler: only passed on, never read */
struct irqaction;

/* Linux 5.12 and 5.13 (CO-RE ignores the ___suffix when matching names) */
struct task_struct___pre514 {
	long state;
};

struct hrtimer_clock_base;

struct timerqueue_node {
	ktime_t expires;               /* an hrtimer's hard expiry: the soft one plus its slack */
};

struct hrtimer {
	struct timerqueue_node node;
	ktime_t _softexpires;          /* the requested expiry, in the base's clock */
	struct hrtimer_clock_base *base;
	__u8 is_soft;                  /* expires in softirq context */
};

/* the timer of every sleep with a timeout: nanosleep, clock_nanosleep,
 * poll/select/epoll_wait timeouts, futex waits with a timeout */
struct hrtimer_sleeper {
	struct hrtimer timer;
	struct task_struct *task;
};

struct hrtimer_clock_base {
	ktime_t offset;                /* this clock minus CLOCK_MONOTONIC */
};

#pragma clang attribute pop

#endif
