/* tasks.bpf.c: the watchdog's view of the machine's tasks, through BPF task
 * iterators (Linux 5.8; one process's tasks only, Linux 6.1). Reading the
 * iterator's descriptor runs the program over every task under RCU and
 * returns one tasks_rec per task it writes: no path is looked up, no /proc
 * file opened, so the FIFO 99 watchdog never waits on a dcache lookup or an
 * inode lock that a starved task holds (the reason this exists; see
 * src/daemon/watchdog/scan.c). tasks.c loads it as a light skeleton (Linux
 * 5.17: the kernel applies its CO-RE relocations) and reads it. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tasks_abi.h"

#define SCHED_FIFO 1
#define SCHED_RR 2

static __always_inline void rec_fill(struct tasks_rec *r, struct task_struct *t)
{
	struct task_struct *lead = BPF_CORE_READ(t, group_leader);

	r->tid = BPF_CORE_READ(t, pid);
	r->pid = BPF_CORE_READ(t, tgid);
	r->euid = BPF_CORE_READ(t, cred, euid.val);
	if (bpf_core_field_exists(t->thread_info.cpu))
		r->cpu = (__s32)BPF_CORE_READ(t, thread_info.cpu);
	else
		r->cpu = (__s32)BPF_CORE_READ((struct task_struct___pre516 *)t, cpu);
	r->policy = BPF_CORE_READ(t, policy);
	r->priority = BPF_CORE_READ(t, rt_priority);
	r->run_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
	r->start_ns = BPF_CORE_READ(t, start_boottime);
	if (bpf_core_field_exists(t->__state))
		r->running = BPF_CORE_READ(t, __state) == 0;
	else
		r->running = BPF_CORE_READ((struct task_struct___pre514 *)t, state) == 0;
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	if (lead)
		BPF_CORE_READ_STR_INTO(&r->pcomm, lead, comm);
}

/* Every real-time task (SCHED_FIFO, SCHED_RR): what the watchdog measures
 * during a starvation episode. */
SEC("iter/task")
int rt_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct tasks_rec r = {};
	__u32 policy;

	if (!t)
		return 0;
	policy = BPF_CORE_READ(t, policy);
	if (policy != SCHED_FIFO && policy != SCHED_RR)
		return 0;
	rec_fill(&r, t);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

/* Every task, whatever its policy: attached per process (its tasks only)
 * when a culprit's identity is checked right before its demotion. */
SEC("iter/task")
int any_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct tasks_rec r = {};

	if (!t)
		return 0;
	rec_fill(&r, t);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
