/* closer.c: descriptors closed by worker threads (see closer.h). The event
 * loop is the only producer; the owners' queues and counts sit behind one
 * mutex that nobody holds across a close(), and that lends a worker
 * holding it the loop's priority (PTHREAD_PRIO_INHERIT), so the loop waits
 * for it a few instructions at most. */
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

#define QUEUE_WARN 64   /* an owner's queue this long behind closes that do not finish is logged */

/* One user's descriptors: queued (a ring), and being closed. */
struct owner {
	uid_t uid;
	unsigned n;                   /* queued and being closed */
	unsigned busy;                /* being closed, a thread each */
	int *q;
	size_t head, len, cap;
	bool warned;                  /* its queue logged as stuck */
};

struct closer {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct owner *owners;
	size_t n_owners, cap_owners;
	size_t turn;                  /* the owner whose queue is looked at first */
	unsigned threads, busy;       /* started, and closing */
	bool stop;
	int done;                     /* eventfd: a close finished */
	sd_event_source *done_src;
	void (*drained)(void *ud);
	void *ud;
};

/* The owner's record (made if `add`); NULL if none, or no memory. */
static struct owner *owner_of(struct closer *c, uid_t owner, bool add)
{
	for (size_t i = 0; i < c->n_owners; i++)
		if (c->owners[i].uid == owner)
			return &c->owners[i];
	if (!add)
		return NULL;
	if (c->n_owners == c->cap_owners) {
		size_t cap = c->cap_owners ? 2 * c->cap_owners : 8;
		struct owner *o = realloc(c->owners, cap * sizeof(*o));
		if (!o)
			return NULL;
		c->owners = o;
		c->cap_owners = cap;
	}
	c->owners[c->n_owners] = (struct owner){ .uid = owner };
	return &c->owners[c->n_owners++];
}

/* Whether a thread may take one of o's descriptors now. */
static bool owner_ready(const struct owner *o)
{
	return o->len && o->busy < CLOSER_PER_OWNER;
}

/* How many closes could start now: what the threads not closing should cover. */
static unsigned ready_count(const struct closer *c)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->n_owners; i++) {
		const struct owner *o = &c->owners[i];
		if (owner_ready(o))
			n += o->len < CLOSER_PER_OWNER - o->busy ? (unsigned)o->len : CLOSER_PER_OWNER - o->busy;
	}
	return n;
}

/* The next owner with a descriptor a thread may take, the owners in turn;
 * NULL if none. */
static struct owner *owner_next(struct closer *c)
{
	for (size_t i = 0; i < c->n_owners; i++) {
		size_t k = (c->turn + i) % c->n_owners;

		if (owner_ready(&c->owners[k])) {
			c->turn = (k + 1) % c->n_owners;
			return &c->owners[k];
		}
	}
	return NULL;
}

static void *closer_main(void *arg)
{
	struct closer *c = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct owner *o;
		uid_t uid;
		int fd;

		while (!(o = owner_next(c)) && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (!o)
			break;
		fd = o->q[o->head];
		o->head = (o->head + 1) % o->cap;
		o->len--;
		o->busy++;
		c->busy++;
		uid = o->uid;
		pthread_mutex_unlock(&c->lock);
		/* a socket's close does not wait for its send queue to drain
		 * (SO_LINGER with a timeout): it is reset (ENOTSOCK for the rest) */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 }, sizeof(struct linger));
		/* a file's release may take as long as its owner makes it (FUSE,
		 * a lingering socket in flight in this one's queue) */
		close(fd);
		pthread_mutex_lock(&c->lock);
		c->busy--;
		/* the records may have moved (realloc), never gone */
		if ((o = owner_of(c, uid, false))) {
			o->busy--;
			o->n--;
			if (!o->len)
				o->warned = false;
		}
		/* its owner may be ready again: a thread that waits takes it
		 * if this one takes another owner's */
		pthread_cond_signal(&c->cond);
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
	pthread_mutexattr_t ma;
	int r;

	if (!c)
		return -ENOMEM;
	/* priority inheritance: the real-time loop takes it, and so do the
	 * SCHED_OTHER workers, which a user's real-time spinners could keep
	 * off the CPU while they hold it */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&c->lock, &ma);
	pthread_mutexattr_destroy(&ma);
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

/* Append fd to o's ring; -ENOMEM if it cannot grow. */
static int owner_push(struct owner *o, int fd)
{
	if (o->len == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 16;
		int *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (size_t i = 0; i < o->len; i++)
			q[i] = o->q[(o->head + i) % o->cap];
		free(o->q);
		o->q = q;
		o->head = 0;
		o->cap = cap;
	}
	o->q[(o->head + o->len) % o->cap] = fd;
	o->len++;
	o->n++;
	return 0;
}

void closer_close(struct closer *c, int fd, uid_t owner)
{
	struct owner *o;
	size_t stuck = 0;

	if (fd < 0)
		return;
	pthread_mutex_lock(&c->lock);
	if (!(o = owner_of(c, owner, true)) || owner_push(o, fd) < 0)
		goto inline_close;
	/* a thread for each close that can start, unless every thread is
	 * taken: an owner whose closes block holds at most CLOSER_PER_OWNER */
	if (c->threads < c->busy + ready_count(c) && c->threads < CLOSER_THREADS && start_thread(c) < 0 &&
	    !c->threads) {
		o->len--;
		o->n--;
		goto inline_close;
	}
	if (o->busy == CLOSER_PER_OWNER && o->len >= QUEUE_WARN && !o->warned) {
		o->warned = true;
		stuck = o->len;
	}
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (stuck)
		log_warnx("uid %u: %zu of its descriptors wait to be closed behind %d of its closes that do not finish "
			  "(a file or socket it passed blocks them); its clients are not read until they do",
			  (unsigned)owner, stuck, CLOSER_PER_OWNER);
	return;
inline_close:
	pthread_mutex_unlock(&c->lock);
	log_warnx("out of memory: closing a client's descriptor on the event loop");
	close(fd);
}

unsigned closer_pending(const struct closer *c, uid_t owner)
{
	struct closer *m = (struct closer *)c;
	struct owner *o;
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
	for (size_t i = 0; i < c->n_owners; i++)
		free(c->owners[i].q);
	free(c->owners);
	free(c);
}
