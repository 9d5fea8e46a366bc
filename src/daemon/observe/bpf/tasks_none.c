/* tasks_none.c: the task iterators when rtschedd is built without BPF
 * (configure --disable-bpf, or libbpf-dev, bpftool or clang missing): the
 * watchdog reads /proc. */
#include <errno.h>
#include <stdio.h>

#include "tasks.h"

int tasks_new(struct tasks **ret, char *why, size_t len)
{
	*ret = NULL;
	if (why && len)
		snprintf(why, len, "rtschedd was built without BPF support (configure --disable-bpf, or "
			 "libbpf-dev, bpftool or clang missing)");
	return -ENOPKG;
}

void tasks_free(struct tasks *t)
{
	(void)t;
}

int tasks_open(const struct tasks *t)
{
	(void)t;
	return -ENOPKG;
}

int tasks_open_process(const struct tasks *t, pid_t pid)
{
	(void)t;
	(void)pid;
	return -ENOPKG;
}
