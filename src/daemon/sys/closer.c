/* closer.c: descriptors closed by worker threads (see closer.h). The event
 * loop is the only producer; the queue and the per-owner counts sit behind
 * one mutex that nobody holds across a close(), so the loop waits for it a
 * few instructions at most. */
#include "autoconfig.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/sys/closer.h"
#include "daemon/sys/log.h"

struct pending {
	int fd;
	uid_t owner;
};

struct owner_count {
	uid_t uid;
	unsigned n;
};

struct closer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pending *q;            /* a ring */
	size_t head, len, cap;
	struct owner_count *owners;
	size_t n_owners, cap_owners;
	unsigned threads, idle;       /* started, and waiting for work */
	bool stop;
	int done;                     /* eventfd: a close finished */
	sd_event_source *done_src;
	void (*drained)(void *ud);
	void *ud;
};

/* The count of owner (created at 0 if `add`); NULL if none, or no memory. */
static struct owner_count *owner_of(struct closer *c, uid_t owner, bool add)
{
	for (size_t i = 0; i < c->n_owners; i++)
		if (c->owners[i].uid == owner)
			return &c->owners[i];
	if (!add)
		return NULL;
	if (c->n_owners == c->cap_owners) {
		size_t cap = c->cap_owners ? 2 * c->cap_owners : 8;
		struct owner_count *o = realloc(c->owners, cap * sizeof(*o));
		if (!o)
			return NULL;
		c->owners = o;
		c->cap_owners = cap;
	}
	c->owners[c->n_owners] = (struct owner_count){ owner, 0 };
	return &c->owners[c->n_owners++];
}

static void *closer_main(void *arg)
{
	struct closer *c = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct pending p;
		struct owner_count *o;

		while (!c->len && !c->stop) {
			c->idle++;
			pthread_cond_wait(&c->cond, &c->lock);
			c->idle--;
		}
		if (!c->len)
			break;
		p = c->q[c->head];
		c->head = (c->head + 1) % c->cap;
		c->len--;
		pthread_mutex_unlock(&c->lock);
		/* a socket's close does not wait for its send queue to drain
		 * (SO_LINGER with a timeout): it is reset (ENOTSOCK for the rest) */
		setsockopt(p.fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 }, sizeof(struct linger));
		close(p.fd);   /* a file's release may take as long as its owner makes it (FUSE) */
		pthread_mutex_lock(&c->lock);
		if ((o = owner_of(c, p.owner, false)) && o->n > 0)
			o->n--;
		if (write(c->done, &one, sizeof(one)) < 0) {
			/* the counter is full: the loop has been told already */
		}
	}
	c->threads--;
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct closer *c = userdata;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return 0;
	if (c->drained)
		c->drained(c->ud);
	return 0;
}

int closer_new(struct closer **ret, sd_event *e, void (*drained)(void *ud), void *ud)
{
	struct closer *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->drained = drained;
	c->ud = ud;
	c->done = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->done < 0) {
		r = -errno;
		free(c);
		return r;
	}
	if ((r = sd_event_add_io(e, &c->done_src, c->done, EPOLLIN, on_done, c)) < 0) {
		close(c->done);
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* A new worker, every signal blocked (the loop takes them through signalfd). */
static int start_thread(struct closer *c)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t th;
	int r;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&th, &a, closer_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (r == 0)
		c->threads++;
	return -r;
}

void closer_close(struct closer *c, int fd, uid_t owner)
{
	struct owner_count *o;

	if (fd < 0)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->len == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct pending *q = malloc(cap * sizeof(*q));
		if (!q)
			goto inline_close;
		for (size_t i = 0; i < c->len; i++)
			q[i] = c->q[(c->head + i) % c->cap];
		free(c->q);
		c->q = q;
		c->head = 0;
		c->cap = cap;
	}
	if (!(o = owner_of(c, owner, true)))
		goto inline_close;
	if (!c->idle && c->threads < CLOSER_THREADS && start_thread(c) < 0 && !c->threads)
		goto inline_close;
	c->q[(c->head + c->len) % c->cap] = (struct pending){ fd, owner };
	c->len++;
	o->n++;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return;
inline_close:
	pthread_mutex_unlock(&c->lock);
	log_warnx("out of memory: closing a client's descriptor on the event loop");
	close(fd);
}

unsigned closer_pending(const struct closer *c, uid_t owner)
{
	struct closer *m = (struct closer *)c;
	struct owner_count *o;
	unsigned n;

	if (!c)
		return 0;
	pthread_mutex_lock(&m->lock);
	o = owner_of(m, owner, false);
	n = o ? o->n : 0;
	pthread_mutex_unlock(&m->lock);
	return n;
}

void closer_free(struct closer *c)
{
	bool busy = true;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	sd_event_source_disable_unref(c->done_src);
	/* the threads close what is queued, then leave; one still blocked in a
	 * close after a second keeps the closer's memory: the process's exit
	 * takes both */
	for (int i = 0; i < 1000 && busy; i++) {
		pthread_mutex_lock(&c->lock);
		busy = c->threads > 0;
		pthread_mutex_unlock(&c->lock);
		if (busy)
			usleep(1000);
	}
	if (busy) {
		log_warnx("a client's descriptor is still being closed; leaving it to the exit");
		return;
	}
	close(c->done);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c->q);
	free(c->owners);
	free(c);
}
