/* catcher.c: loads catcher.bpf.c (its skeleton) and reads its ring buffer
 * of refused scheduling calls; see catcher.h. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "catcher.h"
#include "bpfload.h"
#include "catcher.skel.h"

struct catcher {
	struct catcher_bpf *skel;
	struct ring_buffer *rb;
	void (*fn)(void *ud, const struct catcher_event *ev);
	void *ud;
	unsigned n_read;  /* records handed on in this read */
};

/* ring_buffer's callback: one record, handed on if whole. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct catcher *c = ctx;

	if (size >= sizeof(struct catcher_event) && c->fn)
		c->fn(c->ud, data);
	return ++c->n_read >= RB_BATCH ? RB_BATCH_END : 0;
}

int catcher_new(struct catcher **ret, char *why, size_t len)
{
	libbpf_print_fn_t old_print;
	struct catcher *c;
	int r;

	if (why && len)
		why[0] = '\0';
	if ((r = bpfobs_precheck(why, len)) < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	old_print = bpfobs_capture_begin();
	c->skel = catcher_bpf__open();
	if (!c->skel)
		r = bpfobs_load_error(errno, "open", why, len);
	else if ((r = catcher_bpf__load(c->skel)) < 0)
		r = bpfobs_load_error(r, "load", why, len);
	else if ((r = catcher_bpf__attach(c->skel)) < 0)
		r = bpfobs_load_error(r, "attach", why, len);
	libbpf_set_print(old_print);
	if (r == 0 && !(c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.caught), on_record, c, NULL))) {
		int e = errno ? errno : ENOMEM;
		snprintf(why, len, "cannot map the ring buffer of refused calls: %s", strerror(e));
		r = -e;
	}
	if (r < 0) {
		catcher_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void catcher_free(struct catcher *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	catcher_bpf__destroy(c->skel);
	free(c);
}

int catcher_fd(struct catcher *c)
{
	return ring_buffer__epoll_fd(c->rb);
}

int catcher_read(struct catcher *c, void (*fn)(void *ud, const struct catcher_event *ev), void *ud)
{
	int r;

	c->fn = fn;
	c->ud = ud;
	c->n_read = 0;
	r = ring_buffer__consume(c->rb);
	c->fn = NULL;
	return r == RB_BATCH_END ? (int)c->n_read : r;
}
