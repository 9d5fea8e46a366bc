/* catcher_none.c: the catcher when rtschedd is built without BPF
 * (configure --disable-bpf, or libbpf-dev, bpftool or clang missing). */
#include <errno.h>
#include <stdio.h>

#include "catcher.h"

int catcher_new(struct catcher **ret, char *why, size_t len)
{
	*ret = NULL;
	if (why && len)
		snprintf(why, len, "rtschedd was built without BPF support (configure --disable-bpf, or "
			 "libbpf-dev, bpftool or clang missing)");
	return -ENOPKG;
}

void catcher_free(struct catcher *c)
{
	(void)c;
}

int catcher_fd(struct catcher *c)
{
	(void)c;
	return -1;
}

int catcher_read(struct catcher *c, void (*fn)(void *ud, const struct catcher_event *ev), void *ud)
{
	(void)c;
	(void)fn;
	(void)ud;
	return 0;
}
