/* tasks.c: loads tasks.bpf.c and opens its iterators; see tasks.h. Through
 * a light skeleton (bpftool gen skeleton -L): a loader program applies the
 * CO-RE relocations in the kernel, so the daemon's start-up does not parse
 * the kernel's BTF (126,611 types here) nor probe its features as libbpf's
 * own loader does, 1 ms instead of 12 (doc/performance.md). It needs Linux
 * 5.17 or later (CO-RE in the kernel); where it cannot load, the watchdog
 * reads /proc. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "tasks.h"
#include "bpfload.h"
/* bpftool's generated loader subtracts void pointers (a GNU C extension
 * it relies on): not this tree's code to change */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpointer-arith"
#include "tasks.lskel.h"
#pragma GCC diagnostic pop

struct tasks {
	struct tasks_lskel *skel;
	int rt_link;     /* rt_tasks over every task */
	int any_prog;    /* any_tasks, linked per process on demand */
};

int tasks_new(struct tasks **ret, char *why, size_t len)
{
	struct tasks *t;
	int r;

	if (why && len)
		why[0] = '\0';
	if ((r = bpfobs_precheck(why, len)) < 0)
		return r;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->skel = tasks_lskel__open())) {
		free(t);
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	if ((r = tasks_lskel__load(t->skel)) < 0) {
		snprintf(why, len, "the kernel refused to load the task iterators: %s (they need Linux 5.17 or "
			 "later, CAP_BPF and CAP_PERFMON)", strerror(-r));
	} else if (tasks_lskel__rt_tasks__attach(t->skel) < 0) {
		r = -errno;
		snprintf(why, len, "cannot link the task iterator: %s (it needs Linux 5.8 or later)", strerror(-r));
	}
	if (r < 0) {
		tasks_free(t);
		return r;
	}
	/* any_tasks is linked per process when needed, not over every task */
	t->rt_link = t->skel->links.rt_tasks_fd;
	t->any_prog = t->skel->progs.any_tasks.prog_fd;
	*ret = t;
	return 0;
}

void tasks_free(struct tasks *t)
{
	if (!t)
		return;
	tasks_lskel__destroy(t->skel);
	free(t);
}

int tasks_open(const struct tasks *t)
{
	int fd = bpf_iter_create(t->rt_link);

	return fd < 0 ? -errno : fd;
}

int tasks_open_process(const struct tasks *t, pid_t pid)
{
	union bpf_iter_link_info info;
	LIBBPF_OPTS(bpf_link_create_opts, o, .iter_info = &info, .iter_info_len = sizeof(info));
	int link, fd, e;

	memset(&info, 0, sizeof(info));
	info.task.pid = (__u32)pid;
	link = bpf_link_create(t->any_prog, 0, BPF_TRACE_ITER, &o);
	if (link < 0)
		return -errno;
	fd = bpf_iter_create(link);   /* holds the link while it is open */
	e = errno;
	close(link);
	return fd < 0 ? -e : fd;
}
