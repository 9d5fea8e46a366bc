/* control.c: the control socket and its clients (see control.h). Requests
 * are read one message at a time; replies queue per client and go out as
 * the socket drains, so a slow reader never blocks the daemon.
 *
 * What one user can hold is bounded, the way systemd's
 * MaxConnectionsPerSource= and dbus-broker's per-uid quotas bound it: at
 * most MAX_PER_UID connections per non-privileged uid, the last
 * RESERVED_PRIVILEGED of MAX_CLIENTS slots only for root and admin-group,
 * and a client whose unread replies pass QUEUE_PAUSE is not read from
 * until they drain (backpressure: its own sends block, our memory does not
 * grow); nor is any connection of a user whose unread replies, all its
 * connections together, pass ACCOUNT_QUEUE_PAUSE (or a user could hold a
 * big reply per connection). Per uid here means per account (grant.h): a
 * user's subordinate uids share its slots.
 *
 * The loop serves users, not connections: each account's connections sit
 * in an epoll set of its own (struct user_conns), which is one source in the
 * loop, and each dispatch of it reads one message of one of them (epoll
 * hands its ready connections out in turn). So a user who spreads requests
 * over a hundred connections gets the turns of one user, another user's
 * request waits behind about one request of each other busy user, and a
 * user over a rate limit is held by turning one source off, not each of
 * its connections.
 *
 * Accepting is sliced the same way: one turn of the loop accepts at most
 * ACCEPT_BATCH connections, for at most PROCEV_SLICE_US, and the rest wait
 * in the listen backlog for its next turn. A user who connects and closes
 * as fast as a few CPUs allow would otherwise keep the listening socket
 * readable and on_accept() never returning: nobody served, no connector
 * events, no exits, no watchdog ping to systemd. And a connection of a
 * user already at MAX_PER_UID is refused before any look-up of its user
 * (NSS, the subordinate ranges): by its credentials alone (struct tally).
 *
 * Nothing a client handed over is closed on the event loop: descriptors it
 * passed (SCM_RIGHTS) that no op kept, and the connection itself, whose
 * queue may hold more of them, go to the closer (closer.h); a client whose
 * user has too many closes pending is not read from until they finish. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon/sys/clock.h"
#include "daemon/sys/closer.h"
#include "daemon/sys/log.h"
#include "daemon/sys/procev.h"
#include "shared/protocol.h"
#include "daemon/control.h"
#include "daemon/sys/proc.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define MAX_PASSED 253          /* SCM_MAX_FD: the most descriptors one message can carry */

struct outmsg {
	struct outmsg *next;
	size_t len;
	char data[];
};

/* One account's connections: an epoll set, one source in the loop. */
struct user_conns {
	struct control *ctl;
	uid_t uid;                /* the account (grant.h) */
	int epfd;
	sd_event_source *src;     /* epfd in the loop; off while held */
	unsigned n;               /* its connections */
	uint64_t held_until;      /* none read until then: over a rate limit (0: not held) */
	size_t queued;            /* unread reply bytes of all its connections */
	bool queue_paused;        /* none read: queued passed ACCOUNT_QUEUE_PAUSE */
	struct user_conns *prev, *next;
};

/* The connections of one peer uid accepted as not privileged. Its account
 * is a function of the uid, and its privilege of the uid and its primary
 * gid (and of the configuration, the user database and the subordinate
 * ranges): a uid found not privileged is not a member of admin-group, so
 * only admin-group's own gid as its primary gid could make it privileged.
 * So a uid that holds MAX_PER_UID by itself is over its account's cap: its
 * next connection, with any other primary gid, is refused without asking
 * them, for VERDICT_TRUST_US after a look-up last found it not privileged.
 * Then one connection is looked up again, so what changed (a reload or the
 * user database made it admin-group) is seen within that time, and a flood
 * of connections costs one look-up per VERDICT_TRUST_US, not one each, with
 * however many gids it comes. */
struct tally {
	uid_t uid;
	uid_t account;            /* theirs (its closes are charged to it) */
	gid_t admin_gid;          /* admin-group's gid at that look-up ((gid_t)-1: none) */
	uint64_t confirmed;       /* CLOCK_MONOTONIC µs of the last look-up that found it not privileged */
	unsigned n;
	struct tally *prev, *next;
};

struct client {
	struct control *ctl;
	struct user_conns *acct;
	struct tally *tally;      /* NULL: accepted as privileged (or no memory for it) */
	bool privileged;          /* root or admin-group: not paused for its account's unread replies */
	int fd;
	uint32_t events;          /* what acct->epfd waits for on fd */
	struct peer peer;
	struct outmsg *head, *tail;
	size_t queued;
	bool dead;
	bool close_paused;        /* not read while its user's closes are pending */
	struct client *prev, *next;
};

struct control {
	sd_event *event;
	const struct control_handlers *h;
	void *ud;
	int fd;
	bool activated;
	bool created;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	sd_event_source *src;
	struct client *clients;
	unsigned n_clients;
	bool paused;              /* out of descriptors: not accepting until a client goes */
	sd_event_source *resume;  /* or until this timer */
	unsigned long turned_away;
	struct closer *closer;
	unsigned n_close_paused;  /* clients with close_paused set */
	unsigned long queue_pauses; /* times an account passed ACCOUNT_QUEUE_PAUSE (logged 1 in 1000) */
	sd_event_source *hold;    /* the earliest held_until of any account */
	struct user_conns *users;
	struct tally *tallies;
};

/* Accept again (a client went, or the timer ran). */
static void accept_resume(struct control *c)
{
	if (!c->paused)
		return;
	c->paused = false;
	sd_event_source_set_enabled(c->resume, SD_EVENT_OFF);
	sd_event_source_set_enabled(c->src, SD_EVENT_ON);
}

static int on_resume(sd_event_source *s, uint64_t usec, void *userdata)
{
	accept_resume(userdata);
	return 0;
}

static struct user_conns *conns_find(const struct control *c, uid_t uid)
{
	for (struct user_conns *a = c->users; a; a = a->next)
		if (a->uid == uid)
			return a;
	return NULL;
}

static int on_user_conns(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* The account's set, made on its first connection; NULL with errno set. */
static struct user_conns *conns_get(struct control *c, uid_t uid)
{
	struct user_conns *a = conns_find(c, uid);
	int r;

	if (a)
		return a;
	if (!(a = calloc(1, sizeof(*a))))
		return NULL;
	a->ctl = c;
	a->uid = uid;
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->epfd < 0) {
		free(a);
		return NULL;
	}
	r = sd_event_add_io(c->event, &a->src, a->epfd, EPOLLIN, on_user_conns, a);
	if (r < 0) {
		close(a->epfd);
		free(a);
		errno = -r;
		return NULL;
	}
	a->next = c->users;
	if (a->next)
		a->next->prev = a;
	c->users = a;
	return a;
}

/* An account goes with its last connection, unless it is held: a user
 * who closes every connection and connects again is still held. */
static void conns_put(struct user_conns *a)
{
	struct control *c = a->ctl;

	if (a->n || a->held_until)
		return;
	/* may be the source being dispatched: sd-event frees it afterwards */
	sd_event_source_disable_unref(a->src);
	close(a->epfd);
	if (a->prev)
		a->prev->next = a->next;
	else
		c->users = a->next;
	if (a->next)
		a->next->prev = a->prev;
	free(a);
}

/* The tally of uid; made (n 0) if `add`; NULL if none or no memory. */
static struct tally *tally_get(struct control *c, uid_t uid, bool add)
{
	struct tally *t;

	for (t = c->tallies; t; t = t->next)
		if (t->uid == uid)
			return t;
	if (!add || !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->uid = uid;
	t->next = c->tallies;
	if (t->next)
		t->next->prev = t;
	c->tallies = t;
	return t;
}

/* One connection of the tally's fewer; it goes with its last. */
static void tally_put(struct control *c, struct tally *t)
{
	if (!t || --t->n)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		c->tallies = t->next;
	if (t->next)
		t->next->prev = t->prev;
	free(t);
}

/* What the account's set waits for on the client's connection. */
static void client_events(struct client *cl, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = cl };

	if (events == cl->events)
		return;
	if (epoll_ctl(cl->acct->epfd, EPOLL_CTL_MOD, cl->fd, &ev) < 0) {
		/* only out of memory; the connection cannot be served */
		log_warn("epoll_ctl for client pid %d; dropping it", (int)cl->peer.pid);
		cl->dead = true;
		return;
	}
	cl->events = events;
}

static void account_drained(struct user_conns *a);

static void client_free(struct client *cl)
{
	struct control *c = cl->ctl;
	struct user_conns *a = cl->acct;

	a->queued -= cl->queued;
	while (cl->head) {
		struct outmsg *m = cl->head;
		cl->head = m->next;
		free(m);
	}
	if (cl->close_paused)
		c->n_close_paused--;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	/* in-flight descriptors in its queue are released by this close */
	closer_close(c->closer, cl->fd, cl->peer.account);
	if (cl->peer.pidfd >= 0)
		close(cl->peer.pidfd);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		c->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	c->n_clients--;
	a->n--;
	tally_put(c, cl->tally);
	free(cl);
	account_drained(a);
	conns_put(a);
	accept_resume(c);
}

/* Whether the account's connections may be read: not while their unread
 * replies, together, pass ACCOUNT_QUEUE_PAUSE (then it is marked, for
 * account_drained()). */
static bool account_readable(struct user_conns *a)
{
	struct control *c = a->ctl;

	if (a->queued < ACCOUNT_QUEUE_PAUSE)
		return true;
	if (!a->queue_paused) {
		a->queue_paused = true;
		/* one line per 1000, or a user who reads in spurts floods the log */
		if (c->queue_pauses++ % 1000 == 0)
			log_warnx("uid %u leaves %zu KiB of replies unread on its %u connections (at most %u KiB per "
				  "user): none of its requests is read until it reads them (%lu such pauses so far)",
				  (unsigned)a->uid, a->queued >> 10, a->n, ACCOUNT_QUEUE_PAUSE >> 10, c->queue_pauses);
	}
	return false;
}

/* Whether to read the client: not while its replies, or its user's, are
 * unread (backpressure), nor while its user's descriptors wait to be closed
 * (then it is marked, for control_resume_closed()). */
static bool client_readable(struct client *cl)
{
	bool closing = closer_pending(cl->ctl->closer, cl->peer.account) >= CLOSER_PENDING_MAX;

	if (closing != cl->close_paused) {
		cl->close_paused = closing;
		if (closing)
			cl->ctl->n_close_paused++;
		else
			cl->ctl->n_close_paused--;
	}
	/* a privileged client is not held for its account's other replies: all
	 * of root's processes share one account, and one `rtschedctl list |
	 * less` would stop every root service's requests and the admin's
	 * reload (its own connection still pauses at QUEUE_PAUSE) */
	return cl->queued < QUEUE_PAUSE && (cl->privileged || account_readable(cl->acct)) && !closing;
}

/* Some of the account's replies went: once they are under
 * ACCOUNT_QUEUE_PAUSE again, read its connections again. */
static void account_drained(struct user_conns *a)
{
	if (!a->queue_paused || a->queued >= ACCOUNT_QUEUE_PAUSE)
		return;
	a->queue_paused = false;
	for (struct client *cl = a->ctl->clients; cl; cl = cl->next)
		if (cl->acct == a && !cl->dead && client_readable(cl))
			client_events(cl, EPOLLIN | (cl->head ? EPOLLOUT : 0));
}

/* The earliest held_until of any account, for the hold timer (0: none). */
static uint64_t next_release(const struct control *c)
{
	uint64_t t = 0;

	for (const struct user_conns *a = c->users; a; a = a->next)
		if (a->held_until && (!t || a->held_until < t))
			t = a->held_until;
	return t;
}

static void hold_arm(struct control *c)
{
	uint64_t t = next_release(c);

	if (!t) {
		sd_event_source_set_enabled(c->hold, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(c->hold, t);
	sd_event_source_set_enabled(c->hold, SD_EVENT_ONESHOT);
}

/* A rate limit refused a request of account's: none of its connections
 * is read until `until`, when its bucket has a token again, or for at most
 * RATE_HOLD_MAX_US times the connections it holds. Its requests wait in
 * their sockets meanwhile (the kernel's queue, bounded per socket) instead
 * of each costing the loop a parse and a refusal, and the other users'
 * requests are not served behind them: however many connections it
 * spreads a flood over, a user costs the loop about one refusal per token
 * its limit gives (or per RATE_HOLD_MAX_US and connection) beside what the
 * limit serves. The cap keeps a refused client answered promptly (with
 * rate-limited) however low its limit. Holding turns the account's one
 * source off, whatever its number of connections; replies queued for them
 * (a client that does not read) go out when it is released. */
static void hold_account(struct user_conns *a, uint64_t until)
{
	struct control *c = a->ctl;
	uint64_t now, most = (uint64_t)RATE_HOLD_MAX_US * a->n;

	if (sd_event_now(c->event, CLOCK_MONOTONIC, &now) >= 0 && until > now + most)
		until = now + most;
	if (until <= a->held_until)
		return;
	a->held_until = until;
	sd_event_source_set_enabled(a->src, SD_EVENT_OFF);
	hold_arm(c);
}

static int on_hold(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct control *c = userdata;
	struct user_conns *next;

	for (struct user_conns *a = c->users; a; a = next) {
		next = a->next;
		if (a->held_until && a->held_until <= usec) {
			a->held_until = 0;
			sd_event_source_set_enabled(a->src, SD_EVENT_ON);
			conns_put(a);
		}
	}
	hold_arm(c);
	return 0;
}

/* Send what is queued; returns -errno if the client must go. */
static int client_flush(struct client *cl)
{
	while (cl->head) {
		struct outmsg *m = cl->head;
		ssize_t n = send(cl->fd, m->data, m->len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		cl->head = m->next;
		if (!cl->head)
			cl->tail = NULL;
		cl->queued -= m->len;
		cl->acct->queued -= m->len;
		free(m);
	}
	account_drained(cl->acct);
	/* backpressure: a client that does not read its replies is not read */
	client_events(cl, (client_readable(cl) ? EPOLLIN : 0) | (cl->head ? EPOLLOUT : 0));
	return 0;
}

void control_resume_closed(struct control *c)
{
	if (!c->n_close_paused)
		return;   /* a close finished, and no client waits for one */
	for (struct client *cl = c->clients; cl; cl = cl->next)
		if (cl->close_paused && !cl->dead && client_readable(cl))
			client_events(cl, EPOLLIN | (cl->head ? EPOLLOUT : 0));
}

/* reply_fn: queue one message. */
static void client_reply(void *ud, const char *data, size_t len)
{
	struct client *cl = ud;
	struct outmsg *m;

	if (cl->dead)
		return;
	if (cl->queued + len > MAX_QUEUED || !(m = malloc(sizeof(*m) + len))) {
		log_warnx("client pid %d does not read its replies; dropping it", (int)cl->peer.pid);
		cl->dead = true;
		return;
	}
	m->next = NULL;
	m->len = len;
	memcpy(m->data, data, len);
	if (cl->tail)
		cl->tail->next = m;
	else
		cl->head = m;
	cl->tail = m;
	cl->queued += len;
	cl->acct->queued += len;
}

/* The file descriptors a client sent: keep the first in *keep (only
 * jitter-attach takes one), have the rest closed off the loop. Returns how
 * many came. */
static int take_fds(struct client *cl, struct msghdr *mh, int *keep)
{
	int n = 0;

	*keep = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < cnt; i++, n++) {
			int fd;

			/* CMSG_DATA() is only char-aligned as far as the compiler knows */
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (*keep < 0)
				*keep = fd;
			else
				closer_close(cl->ctl->closer, fd, cl->peer.account);
		}
	}
	if (mh->msg_flags & MSG_CTRUNC)
		n += 2; /* some were cut off: more than the protocol allows */
	return n;
}

/* One message of the client's, and its replies sent. */
static void client_event(struct client *cl, uint32_t revents)
{
	int fd = cl->fd;
	char buf[PROTO_MSG_MAX + 1];
	/* room for every descriptor a message can carry: those that did not
	 * fit would be released by the kernel in this thread, at the end of
	 * recvmsg(), which is what the closer is there to avoid */
	char cbuf[CMSG_SPACE(sizeof(int) * MAX_PASSED)];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	uint64_t hold = 0;
	ssize_t n;

	if ((revents & EPOLLIN) && client_readable(cl)) {
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			int passed;

			/* a zero-length message ends the connection, but it may still
			 * have carried descriptors: they are ours now, close them */
			if (n == 0) {
				take_fds(cl, &mh, &passed);
				closer_close(cl->ctl->closer, passed, cl->peer.account);
			}
			client_free(cl);
			return;
		}
		if (n > 0) {
			struct proto_buf out;
			int passed, nfds = take_fds(cl, &mh, &passed);

			if (nfds > 1) {
				proto_error(&out, PE_BAD_REQUEST, "at most one file descriptor per request (jitter-attach)");
				client_reply(cl, out.data, out.len);
			} else {
				/* MSG_TRUNC: n is the real length, so oversize is seen, not cut;
				 * the request may keep the passed fd */
				hold = cl->ctl->h->request(cl->ctl->ud, &cl->peer, buf, (size_t)n, &passed, client_reply,
							   cl);
			}
			closer_close(cl->ctl->closer, passed, cl->peer.account);
		}
	}
	if (hold)
		hold_account(cl->acct, hold);
	if (cl->dead || client_flush(cl) < 0 || (revents & (EPOLLHUP | EPOLLERR) && !(revents & EPOLLIN)))
		client_free(cl);
}

/* One turn of the account: one of its ready connections, in the order
 * epoll keeps (a connection served goes to the back). */
static int on_user_conns(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct epoll_event ev;

	if (epoll_wait(fd, &ev, 1, 0) == 1)
		client_event(ev.data.ptr, ev.events);
	return 0;
}

/* How many connections the account holds. */
static unsigned uid_clients(const struct control *c, uid_t account)
{
	const struct user_conns *a = conns_find(c, account);

	return a ? a->n : 0;
}

/* Pin the client's process with a pidfd, so a connection handed to another
 * process cannot act for whoever reuses the pid after the client exits.
 * SO_PEERPIDFD (Linux 6.5+) gives it; otherwise (or if it failed: before
 * 6.16 it does for a client already gone) pidfd_open() the pid SO_PEERCRED
 * gave, kept only if that process still has the client's uid (by then the
 * pid may name another process). A client whose pid went, before accept, to
 * another process of the same uid cannot be told apart. Sets p->pidfd, or
 * p->gone when the client is no more; p->pidfd stays -1 if no pidfd could
 * be had at all (no pidfd_open, out of descriptors). */
static void peer_pin(struct peer *p, int cfd)
{
	static bool announced;
	socklen_t len = sizeof(p->pidfd);
	struct proc_status ps;
	int fd;

	p->pidfd = -1;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERPIDFD, &p->pidfd, &len) == 0)
		return;
	p->pidfd = -1;
	if (errno == ENOPROTOOPT && !announced) {
		announced = true;
		log_info("kernel has no SO_PEERPIDFD (Linux < 6.5): clients are pinned with pidfd_open() "
			 "at accept and a check of their uid");
	}
	fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (fd < 0) {
		if (errno == ESRCH)
			p->gone = true;
		else
			log_warn("pidfd_open(%d) for a client", (int)p->pid);
		return;
	}
	/* the status is the pidfd's process only if that still holds the pid afterwards */
	if (proc_read_status(p->pid, &ps) < 0 ||
	    (syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) < 0 && errno == ESRCH) || ps.euid != p->uid) {
		close(fd);
		p->gone = true;
		return;
	}
	p->pidfd = fd;
}

/* Out of descriptors: the listening socket stays readable, so without a
 * pause epoll would call us again at once, forever. */
static void accept_pause(struct control *c, const char *what)
{
	uint64_t now;

	log_warn("%s: not accepting connections until a client disconnects (or for 1 s)", what);
	c->paused = true;
	sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
	sd_event_now(c->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(c->resume, now + 1000000);
	sd_event_source_set_enabled(c->resume, SD_EVENT_ONESHOT);
}

/* Whether a connection with these credentials must be refused, and why
 * (NULL: it may stay). The checks that need no look-up come first: all
 * slots taken, or its uid already holding MAX_PER_UID connections accepted
 * as not privileged (with a primary gid other than admin-group's); only
 * then its privilege and account (the user database, the subordinate
 * ranges). */
static const char *refusal(struct control *c, const struct ucred *cred, bool *privileged, uid_t *account,
			   gid_t *admin_gid)
{
	struct tally *t = tally_get(c, cred->uid, false);
	uint64_t now = clock_usec(CLOCK_MONOTONIC);

	*privileged = false;
	*account = (uid_t)-1;
	*admin_gid = (gid_t)-1;
	if (c->n_clients >= MAX_CLIENTS)
		return "all connections taken";
	if (t && t->n >= MAX_PER_UID && now - t->confirmed < VERDICT_TRUST_US && cred->gid != t->admin_gid) {
		*account = t->account;
		return "this user holds the most connections one user may";
	}
	*privileged = c->h->privileged(c->ud, cred->uid, cred->gid, cred->pid, admin_gid);
	*account = c->h->account(c->ud, cred->uid);
	if (t && !*privileged && *account == t->account) {
		t->confirmed = now;
		t->admin_gid = *admin_gid;
	}
	if (!*privileged && c->n_clients >= MAX_CLIENTS - RESERVED_PRIVILEGED)
		return "the free connections are kept for root and admin-group";
	if (!*privileged && uid_clients(c, *account) >= MAX_PER_UID)
		return "this user holds the most connections one user may";
	return NULL;
}

/* At most ACCEPT_BATCH connections, for at most PROCEV_SLICE_US (as
 * procev.c reads its events); the rest wait in the backlog, the socket
 * stays readable and the loop comes back here after its other sources. */
static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct control *c = userdata;
	uint64_t end = clock_usec(CLOCK_MONOTONIC) + PROCEV_SLICE_US;

	for (unsigned i = 0; i < ACCEPT_BATCH && (i == 0 || clock_usec(CLOCK_MONOTONIC) < end); i++) {
		struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t len = sizeof(cred);
		struct client *cl;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				accept_pause(c, "accept");
			} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				log_warn("accept");
			}
			return 0;
		}
		bool privileged = false;
		const char *full = NULL;
		uid_t account = (uid_t)-1;
		gid_t admin_gid = (gid_t)-1;
		bool known = getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
		if (!known)
			full = "no credentials";
		else
			full = refusal(c, &cred, &privileged, &account, &admin_gid);
		if (full || !(cl = calloc(1, sizeof(*cl)))) {
			/* one line per 1000, or a flood of connections floods the log */
			if (c->turned_away++ % 1000 == 0) {
				/* without SO_PEERCRED there is no uid or pid to name */
				char who[64] = "a peer whose credentials cannot be read";
				if (known)
					snprintf(who, sizeof(who), "uid %u pid %d", (unsigned)cred.uid, (int)cred.pid);
				log_warnx("refusing a connection from %s: %s (%u connected; at most %d per user, %d in "
					  "all); %lu refused so far", who, full ? full : "out of memory", c->n_clients,
					  MAX_PER_UID, MAX_CLIENTS, c->turned_away);
			}
			/* it may have sent descriptors already */
			closer_close(c->closer, cfd, account);
			continue;
		}
		cl->ctl = c;
		cl->fd = cfd;
		cl->peer.pid = cred.pid;
		cl->peer.uid = cred.uid;
		cl->peer.gid = cred.gid;
		cl->peer.account = account;
		/* a new connection joins its user's set: it does not get round a hold */
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = cl };
		if (!(cl->acct = conns_get(c, account)) || epoll_ctl(cl->acct->epfd, EPOLL_CTL_ADD, cfd, &ev) < 0) {
			int e = errno;

			if (cl->acct)
				conns_put(cl->acct);
			closer_close(c->closer, cfd, account);
			free(cl);
			/* the set of a user's first connection is one more descriptor */
			if (e == EMFILE || e == ENFILE) {
				accept_pause(c, "a connection's epoll set");
				return 0;
			}
			log_errno(LOG_LEVEL_WARNING, -e, "cannot watch a connection of uid %u pid %d; closed it",
				  (unsigned)cred.uid, (int)cred.pid);
			continue;
		}
		cl->events = EPOLLIN;
		cl->acct->n++;
		/* out of memory for it, the connection is only not counted here */
		cl->privileged = privileged;
		if (!privileged && (cl->tally = tally_get(c, cred.uid, true))) {
			if (!cl->tally->n || cl->tally->account == account) {
				cl->tally->confirmed = clock_usec(CLOCK_MONOTONIC);
				cl->tally->admin_gid = admin_gid;
			}
			cl->tally->account = account;
			cl->tally->n++;
		}
		/* after the set: without a pidfd the connection is still served */
		peer_pin(&cl->peer, cfd);
		cl->next = c->clients;
		if (cl->next)
			cl->next->prev = cl;
		c->clients = cl;
		c->n_clients++;
	}
	return 0;
}

/* mkdir -p for the socket's directory. */
static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *p;

	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Create, bind and listen; a stale socket file is replaced, a live one is
 * another rtschedd and an error. */
static int create_socket(struct control *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if ((r = make_parent(path)) < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot create the directory of %s", path);
		return r;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		log_err("%s: another rtschedd is listening there; stop it or use --socket", path);
		return -EADDRINUSE;
	}
	close(fd);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Anyone may connect: what a client may do is decided per request from
	 * its credentials, not by the socket's mode. The mode comes from the
	 * umask at bind(): a chmod() of the path afterwards would follow
	 * whatever someone put there in between. */
	mode_t old = umask(0111);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(fd, 128) < 0) {
		r = -errno;
		log_errno(LOG_LEVEL_ERR, r, "cannot listen on %s", path);
		close(fd);
		return r;
	}
	c->fd = fd;
	c->created = true;
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

int control_new(struct control **ret, sd_event *e, const char *path, const struct control_handlers *h, void *ud,
		struct closer *closer)
{
	struct control *c = calloc(1, sizeof(*c));
	int n, r;

	if (!c)
		return -ENOMEM;
	c->closer = closer;
	c->event = e;
	c->h = h;
	c->ud = ud;
	c->fd = -1;
	n = sd_listen_fds(1);
	if (n < 0) {
		r = n;
		log_errno(LOG_LEVEL_ERR, r, "sd_listen_fds");
		goto fail;
	}
	if (n > 0) {
		if (n > 1)
			log_warnx("systemd passed %d sockets; using the first", n);
		if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
			log_err("the socket from systemd is not a listening AF_UNIX SOCK_SEQPACKET socket; "
				"use ListenSequentialPacket= in rtschedd.socket");
			r = -EINVAL;
			goto fail;
		}
		c->fd = SD_LISTEN_FDS_START;
		c->activated = true;
		fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
		fcntl(c->fd, F_SETFD, FD_CLOEXEC);
	} else if ((r = create_socket(c, path)) < 0) {
		goto fail;
	}
	r = sd_event_add_io(e, &c->src, c->fd, EPOLLIN, on_accept, c);
	if (r < 0)
		goto fail;
	r = sd_event_add_time(e, &c->resume, CLOCK_MONOTONIC, 0, 0, on_resume, c);
	if (r < 0)
		goto fail;
	sd_event_source_set_enabled(c->resume, SD_EVENT_OFF);
	/* accuracy 1 µs: the default (250 ms) would hold a user far past its token */
	r = sd_event_add_time(e, &c->hold, CLOCK_MONOTONIC, 0, 1, on_hold, c);
	if (r < 0)
		goto fail;
	sd_event_source_set_enabled(c->hold, SD_EVENT_OFF);
	log_info("listening on %s%s", c->activated ? "the socket from systemd" : c->path,
		 c->activated ? " (socket activation)" : "");
	*ret = c;
	return 0;
fail:
	control_free(c);
	return r;
}

bool control_activated(const struct control *c)
{
	return c && c->activated;
}

unsigned control_n_clients(const struct control *c)
{
	return c ? c->n_clients : 0;
}

void control_free(struct control *c)
{
	if (!c)
		return;
	c->paused = false; /* no resuming while the clients go */
	while (c->clients)
		client_free(c->clients);
	while (c->users) {
		/* held, with no connection left */
		c->users->held_until = 0;
		conns_put(c->users);
	}
	sd_event_source_disable_unref(c->resume);
	sd_event_source_disable_unref(c->hold);
	sd_event_source_disable_unref(c->src);
	if (c->fd >= 0)
		close(c->fd);
	if (c->created)
		unlink(c->path);
	free(c);
}
