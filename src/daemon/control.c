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
 * grow). Per uid here means per account (grant.h): a user's subordinate
 * uids share its slots.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon/sys/closer.h"
#include "daemon/sys/log.h"
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

struct client {
	struct control *ctl;
	int fd;
	sd_event_source *src;
	struct peer peer;
	struct outmsg *head, *tail;
	size_t queued;
	bool dead;
	bool close_paused;        /* not read while its user's closes are pending */
	uint64_t held_until;      /* not read until then: its user is over a rate limit (0: not held) */
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
	sd_event_source *hold;    /* the earliest held_until of any client */
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

static void client_free(struct client *cl)
{
	struct control *c = cl->ctl;

	while (cl->head) {
		struct outmsg *m = cl->head;
		cl->head = m->next;
		free(m);
	}
	if (cl->close_paused)
		c->n_close_paused--;
	sd_event_source_disable_unref(cl->src);
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
	free(cl);
	accept_resume(c);
}

/* Whether to read the client: not while its replies are unread
 * (backpressure), nor while its user's descriptors wait to be closed (then
 * it is marked, for control_resume_closed()). */
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
	return cl->queued < QUEUE_PAUSE && !closing && !cl->held_until;
}

/* The earliest held_until of any client, for the hold timer (0: none). */
static uint64_t next_release(const struct control *c)
{
	uint64_t t = 0;

	for (const struct client *cl = c->clients; cl; cl = cl->next)
		if (cl->held_until && (!t || cl->held_until < t))
			t = cl->held_until;
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

static unsigned uid_clients(const struct control *c, uid_t account);

/* A rate limit refused a request of account's: none of its connections
 * is read until `until`, when its bucket has a token again, or for at most
 * RATE_HOLD_MAX_US times the connections it holds. Its requests wait in
 * their sockets meanwhile (the kernel's queue, bounded per socket) instead
 * of each costing the loop a parse and a refusal, and the other users'
 * requests are not served behind them: however many connections it
 * spreads a flood over, a user costs the loop about one refusal per token
 * its limit gives (or per RATE_HOLD_MAX_US and connection) beside what the
 * limit serves. The cap keeps a refused client answered promptly (with
 * rate-limited) however low its limit. */
static void hold_account(struct control *c, uid_t account, uint64_t until)
{
	uint64_t now, most = (uint64_t)RATE_HOLD_MAX_US * uid_clients(c, account);

	if (sd_event_now(c->event, CLOCK_MONOTONIC, &now) >= 0 && until > now + most)
		until = now + most;
	for (struct client *cl = c->clients; cl; cl = cl->next)
		if (cl->peer.account == account && !cl->dead && until > cl->held_until) {
			cl->held_until = until;
			sd_event_source_set_io_events(cl->src, cl->head ? EPOLLOUT : 0);
		}
	hold_arm(c);
}

static int on_hold(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct control *c = userdata;

	for (struct client *cl = c->clients; cl; cl = cl->next)
		if (cl->held_until && cl->held_until <= usec) {
			cl->held_until = 0;
			if (!cl->dead)
				sd_event_source_set_io_events(cl->src, (client_readable(cl) ? EPOLLIN : 0) |
								       (cl->head ? EPOLLOUT : 0));
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
		free(m);
	}
	/* backpressure: a client that does not read its replies is not read */
	return sd_event_source_set_io_events(cl->src, (client_readable(cl) ? EPOLLIN : 0) | (cl->head ? EPOLLOUT : 0));
}

void control_resume_closed(struct control *c)
{
	if (!c->n_close_paused)
		return;   /* a close finished, and no client waits for one */
	for (struct client *cl = c->clients; cl; cl = cl->next)
		if (cl->close_paused && !cl->dead && client_readable(cl))
			sd_event_source_set_io_events(cl->src, EPOLLIN | (cl->head ? EPOLLOUT : 0));
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

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct client *cl = userdata;
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
			return 0;
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
		hold_account(cl->ctl, cl->peer.account, hold);
	if (cl->dead || client_flush(cl) < 0 || (revents & (EPOLLHUP | EPOLLERR) && !(revents & EPOLLIN)))
		client_free(cl);
	return 0;
}

/* How many connections the account holds. */
static unsigned uid_clients(const struct control *c, uid_t account)
{
	unsigned n = 0;

	for (const struct client *cl = c->clients; cl; cl = cl->next)
		n += cl->peer.account == account;
	return n;
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

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct control *c = userdata;

	for (;;) {
		struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t len = sizeof(cred);
		struct client *cl;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				/* the listening socket stays readable: without a pause
				 * epoll would call us again at once, forever */
				uint64_t now;
				log_warn("accept: not accepting connections until a client disconnects (or for 1 s)");
				c->paused = true;
				sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
				sd_event_now(c->event, CLOCK_MONOTONIC, &now);
				sd_event_source_set_time(c->resume, now + 1000000);
				sd_event_source_set_enabled(c->resume, SD_EVENT_ONESHOT);
			} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				log_warn("accept");
			}
			return 0;
		}
		bool privileged = false;
		const char *full = NULL;
		uid_t account = (uid_t)-1;
		bool known = getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
		if (!known) {
			full = "no credentials";
		} else {
			privileged = c->h->privileged(c->ud, cred.uid, cred.gid, cred.pid);
			account = c->h->account(c->ud, cred.uid);
			if (c->n_clients >= MAX_CLIENTS)
				full = "all connections taken";
			else if (!privileged && c->n_clients >= MAX_CLIENTS - RESERVED_PRIVILEGED)
				full = "the free connections are kept for root and admin-group";
			else if (!privileged && uid_clients(c, account) >= MAX_PER_UID)
				full = "this user holds the most connections one user may";
		}
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
		peer_pin(&cl->peer, cfd);
		if (sd_event_add_io(c->event, &cl->src, cfd, EPOLLIN, on_client, cl) < 0) {
			closer_close(c->closer, cfd, account);
			if (cl->peer.pidfd >= 0)
				close(cl->peer.pidfd);
			free(cl);
			continue;
		}
		/* a new connection does not get round its user's hold */
		for (const struct client *o = c->clients; o; o = o->next)
			if (o->peer.account == account && o->held_until > cl->held_until)
				cl->held_until = o->held_until;
		if (cl->held_until)
			sd_event_source_set_io_events(cl->src, 0);
		cl->next = c->clients;
		if (cl->next)
			cl->next->prev = cl;
		c->clients = cl;
		c->n_clients++;
	}
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
	sd_event_source_disable_unref(c->resume);
	sd_event_source_disable_unref(c->hold);
	sd_event_source_disable_unref(c->src);
	if (c->fd >= 0)
		close(c->fd);
	if (c->created)
		unlink(c->path);
	free(c);
}
