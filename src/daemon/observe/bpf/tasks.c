/* tasks.c: loads tasks.bpf.c (its skeleton) and opens its iterators; see
 * tasks.h. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tasks.h"
#include "bpfload.h"
#include "tasks.skel.h"

struct tasks {
	struct tasks_bpf *skel;
	int rt_link;     /* rt_tasks over every task */
	int any_prog;    /* any_tasks, linked per process on demand */
};

int tasks_new(struct tasks **ret, char *why, size_t len)
{
	libbpf_print_fn_t old_print;
	struct tasks *t;
	int r;

	if (why && len)
		why[0] = '\0';
	if ((r = bpfobs_precheck(why, len)) < 0)
		return r;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	t->rt_link = -1;
	old_print = bpfobs_capture_begin();
	t->skel = tasks_bpf__open();
	if (!t->skel) {
		r = bpfobs_load_error(errno, "open", why, len);
	} else {
		/* linked per process when needed, not over every task */
		bpf_program__set_autoattach(t->skel->progs.any_tasks, false);
		if ((r = tasks_bpf__load(t->skel)) < 0)
			r = bpfobs_load_error(r, "load", why, len);
		else if ((r = tasks_bpf__attach(t->skel)) < 0)
			r = bpfobs_load_error(r, "attach", why, len);
	}
	libbpf_set_print(old_print);
	if (r < 0) {
		tasks_free(t);
		return r;
	}
	t->rt_link = bpf_link__fd(t->skel->links.rt_tasks);
	t->any_prog = bpf_program__fd(t->skel->progs.any_tasks);
	*ret = t;
	return 0;
}

void tasks_free(struct tasks *t)
{
	if (!t)
		return;
	tasks_bpf__destroy(t->skel);
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
