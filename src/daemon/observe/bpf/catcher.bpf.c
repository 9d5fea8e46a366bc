/* catcher.bpf.c: catches the scheduling calls the kernel refused. The
 * per-syscall tracepoints of sched_setscheduler, sched_setparam and
 * sched_setattr (CONFIG_FTRACE_SYSCALLS, on in Debian's kernels) run only
 * for those calls, not, as raw_syscalls:sys_exit would, for every system
 * call of the machine. On entry the arguments are kept by tid; on exit, if
 * the call returned -EPERM, what was asked (read from user memory, which
 * the kernel has just read itself) goes to the daemon through the ring
 * buffer `caught`. Not fexit on __x64_sys_sched_setscheduler: the kernel of
 * this project's test VM refuses to load fexit programs (EPERM), and those
 * names exist on x86-64 only. Read by catcher.c. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "catcher_abi.h"

#define EPERM 1
/* uapi values the pinned vmlinux.h leaves out */
#define CATCHER_MAP_LRU_HASH 9 /* BPF_MAP_TYPE_LRU_HASH */
#define CATCHER_ANY 0          /* BPF_ANY */
#define SCHED_RESET_ON_FORK 0x40000000

/* The syscalls' tracepoints' records (their format files in
 * /sys/kernel/tracing/events/syscalls/: a stable layout, the same on every
 * architecture): the arguments on entry, the result on exit. */
struct syscall_enter {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct syscall_exit {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

/* A call in progress: its arguments, from entry to exit. */
struct pending {
	__u32 call;
	__s32 target;
	__u64 arg1, arg2;
};

/* The leading fields of the uapi struct sched_attr (user memory, read by
 * offset: it is not a kernel type CO-RE could relocate, and its layout is
 * ABI). */
struct user_sched_attr {
	__u32 size;
	__u32 sched_policy;
	__u64 sched_flags;
	__s32 sched_nice;
	__u32 sched_priority;
};

/* Calls in progress by tid; LRU, so a thread killed inside one leaks nothing. */
struct {
	__uint(type, CATCHER_MAP_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pending);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} caught SEC(".maps");

/* The pid argument as the daemon (in the initial pid namespace) must read
 * it: a caller in a container names tasks by their numbers in its own
 * namespace. Itself (its own number there, as pthread_setschedparam passes
 * it) is 0; another task is CATCHER_FOREIGN_TARGET, since only the kernel's
 * find_vpid could translate it safely. */
static __always_inline __s32 global_target(__s32 target)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid own = {};

	if (target == 0 || level == 0)
		return target;
	if (bpf_core_read(&own, sizeof(own), &pid->numbers[level]) == 0 && own.nr == target)
		return 0;
	return CATCHER_FOREIGN_TARGET;
}

/* Remember a call's arguments until its exit. Only the arguments the call
 * has are read: the kernel refuses to attach a program that reads past its
 * tracepoint's record (EACCES), and sched_setparam's has two. */
static __always_inline void enter(const struct syscall_enter *ctx, __u32 call)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending p = { .call = call, .target = global_target((__s32)ctx->args[0]), .arg1 = ctx->args[1] };

	if (call != CATCHER_SETPARAM)
		p.arg2 = ctx->args[2];

	bpf_map_update_elem(&calls, &tid, &p, CATCHER_ANY);
}

/* At the exit: if the kernel refused the call with EPERM, one record of
 * who called and what was asked. */
static __always_inline void leave(const struct syscall_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ug;
	__u32 tid = (__u32)id;
	struct pending *p = bpf_map_lookup_elem(&calls, &tid);
	struct catcher_event *e;
	int param = 0;

	if (!p)
		return;
	if (ctx->ret != -EPERM)
		goto out;
	e = bpf_ringbuf_reserve(&caught, sizeof(*e), 0);
	if (!e)
		goto out;
	ug = bpf_get_current_uid_gid();
	e->at_ns = bpf_ktime_get_boot_ns();
	e->tgid = (__s32)(id >> 32);
	e->tid = (__s32)id;
	e->uid = (__u32)ug;
	e->gid = (__u32)(ug >> 32);
	e->target = p->target;
	e->call = p->call;
	e->nice = 0;
	e->read_ok = 0;
	e->priority = 0;
	e->policy = CATCHER_KEEP_POLICY;
	if (p->call == CATCHER_SETATTR) {
		struct user_sched_attr a = {};

		/* SCHED_ATTR_SIZE_VER0 is 48 bytes */
		if (bpf_probe_read_user(&a, sizeof(a), (const void *)p->arg1) == 0 && a.size >= 48) {
			e->read_ok = 1;
			e->policy = (__s32)a.sched_policy;
			e->priority = (__s32)a.sched_priority;
			e->nice = a.sched_nice;
		}
	} else {
		/* sched_setscheduler(pid, policy, param), sched_setparam(pid, param) */
		const void *ptr = (const void *)(p->call == CATCHER_SETSCHEDULER ? p->arg2 : p->arg1);

		if (p->call == CATCHER_SETSCHEDULER)
			e->policy = (__s32)p->arg1 & ~SCHED_RESET_ON_FORK;
		if (bpf_probe_read_user(&param, sizeof(param), ptr) == 0) {
			e->read_ok = 1;
			e->priority = param;
		}
	}
	bpf_ringbuf_submit(e, 0);
out:
	bpf_map_delete_elem(&calls, &tid);
}

SEC("tracepoint/syscalls/sys_enter_sched_setscheduler")
int catcher_enter_setscheduler(const struct syscall_enter *ctx)
{
	enter(ctx, CATCHER_SETSCHEDULER);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sched_setparam")
int catcher_enter_setparam(const struct syscall_enter *ctx)
{
	enter(ctx, CATCHER_SETPARAM);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_sched_setattr")
int catcher_enter_setattr(const struct syscall_enter *ctx)
{
	enter(ctx, CATCHER_SETATTR);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sched_setscheduler")
int catcher_exit_setscheduler(const struct syscall_exit *ctx)
{
	leave(ctx);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sched_setparam")
int catcher_exit_setparam(const struct syscall_exit *ctx)
{
	leave(ctx);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_sched_setattr")
int catcher_exit_setattr(const struct syscall_exit *ctx)
{
	leave(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
