/* registry_walk.c: finding a managed thread or process, walking them all,
 * and the counts (registry.h), through the links registry_int.h keeps
 * private; and the schedstat baseline only the registry writes. */
#include "autoconfig.h"

#include "daemon/core/registry.h"
#include "daemon/core/registry_int.h"
#include "daemon/sys/proc.h"

struct reg_thread *registry_find(struct registry *r, pid_t tid)
{
	for (struct reg_thread *t = r->buckets[reg_bucket(tid)]; t; t = tnode(t)->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct reg_process *registry_find_process(struct registry *r, pid_t pid)
{
	for (struct reg_process *p = r->procs; p; p = pnode(p)->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct reg_thread *registry_thread_next(struct registry *r, const struct reg_thread *t)
{
	return t ? tnode(t)->next : r->threads;
}

struct reg_process *registry_process_next(struct registry *r, const struct reg_process *p)
{
	return p ? pnode(p)->next : r->procs;
}

void registry_schedstat_base(const struct reg_thread *t, uint64_t *delay_ns, uint64_t *count)
{
	*delay_ns = tnode(t)->ss_delay0;
	*count = tnode(t)->ss_count0;
}

void registry_schedstat_rebase(struct registry *r)
{
	uint64_t run_ns;

	for (struct reg_thread *t = r->threads; t; t = tnode(t)->next)
		proc_read_schedstat(t->pid, t->tid, &run_ns, &tnode(t)->ss_delay0, &tnode(t)->ss_count0);
}

size_t registry_n_threads(struct registry *r) { return r->n_threads; }
size_t registry_n_processes(struct registry *r) { return r->n_procs; }
size_t registry_n_exec_watched(struct registry *r) { return r->n_exec_watched; }
bool registry_thread_pidfds(struct registry *r) { return r->thread_pidfd == 1; }
