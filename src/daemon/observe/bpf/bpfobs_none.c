/* bpfobs_none.c: bpfobs.h for a build without libbpf (configure
 * --disable-bpf, or libbpf-dev, bpftool or clang missing): the observer is
 * never available, and says so with its own reason, -ENOPKG. The build
 * picks this file instead of bpfobs.c, so callers need no #ifdef. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h"
#endif

#include <errno.h>
#include <stdio.h>

#include "bpfobs.h"

int bpfobs_new(struct bpfobs **ret, unsigned max_threads, bool culprits, char *why, size_t len)
{
	if (why && len)
		snprintf(why, len, "rtschedd was built without BPF support (configure --disable-bpf, or "
			 "libbpf-dev, bpftool or clang missing at build time)");
	return -ENOPKG;
}

void bpfobs_free(struct bpfobs *o)
{
}

int bpfobs_watch(struct bpfobs *o, pid_t tid, unsigned *slot)
{
	return -ENOPKG;
}

int bpfobs_unwatch(struct bpfobs *o, pid_t tid)
{
	return -ENOENT;
}

int bpfobs_read(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, struct hist *out)
{
	return -ENOENT;
}

int bpfobs_lost(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, uint64_t *lost)
{
	return -ENOENT;
}

int bpfobs_slot(struct bpfobs *o, pid_t tid)
{
	return -ENOENT;
}

int bpfobs_set_late(struct bpfobs *o, pid_t tid, uint64_t late_ns)
{
	return -ENOENT;
}

int bpfobs_late(struct bpfobs *o, pid_t tid, uint64_t late[2], uint64_t *dropped)
{
	return -ENOENT;
}

int bpfobs_events_fd(struct bpfobs *o)
{
	return -1;
}

int bpfobs_events_read(struct bpfobs *o, void (*fn)(void *ud, const struct bpfobs_late *ev), void *ud)
{
	return 0;
}

int bpfobs_stats(struct bpfobs *o, struct bpfobs_stats *st)
{
	return -ENOPKG;
}

const char *bpfobs_kind_name(enum bpfobs_kind kind)
{
	return kind == BPFOBS_TIMER ? "timer" : kind == BPFOBS_WAKEUP ? "wakeup" : "?";
}
