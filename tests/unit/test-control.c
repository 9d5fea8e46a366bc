/* test-control.c: the control socket (daemon/control.c) on a private path,
 * its event loop run by the test and its clients sockets of the test
 * itself: requests in and replies out with the peer pinned, the socket made
 * (mode, directory, a stale file replaced, a live one refused) or taken from
 * systemd, descriptors passed with a request (one taken, more refused, none
 * leaked), the connection quotas (per uid, and the slots kept for root and
 * admin-group), backpressure on a client that does not read its replies and
 * on a user whose connections together do not, the drop of one whose
 * replies pass the limit, the pause when out of
 * descriptors, and turns per user, not per connection (as root: the other
 * user's connection is made by a child that changed its uid). Runs as any
 * user. The numbers are control.c's: */
#define MAX_CLIENTS 4096
#define RESERVED_PRIVILEGED 64
#define MAX_PER_UID 128
#define QUEUE_PAUSE (256u << 10)
#define MAX_QUEUED (64u << 20)
#define ACCOUNT_QUEUE_PAUSE (1u << 20)

#include "autoconfig.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/control.h"
#include "daemon/sys/closer.h"
#include "shared/protocol.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static char path[PATH_MAX + 32];
static sd_event *ev;
static struct control *ctl;
static struct closer *closer;   /* closes what clients passed, off the loop */

/* What the handlers saw, and how they answer. */
static struct {
	int n_req;
	char last[PROTO_MSG_MAX + 2];
	size_t last_len;
	struct peer peer;
	bool pidfd_ours;          /* the peer's pidfd named this process */
	struct stat fd_st;        /* the descriptor passed with the last request */
	bool got_fd;
	size_t reply_size;        /* bytes of each reply */
	int huge;                 /* replies to a "huge" request */
	int privileged;           /* the next this many accepts are privileged */
	int n_privileged;         /* calls of on_privileged (look-ups of a peer) */
	gid_t admin_gid;          /* what on_privileged says admin-group's gid is */
	int first_other;          /* requests served before the first of another uid's (-1: none yet) */
} H;

/* Whether pidfd refers to this process (its fdinfo's Pid:). */
static bool pidfd_is_us(int pidfd)
{
	char p[64], line[128];
	bool us = false;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", pidfd);
	if (!(f = fopen(p, "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Pid:", 4) == 0)
			us = atoi(line + 4) == getpid();
	fclose(f);
	return us;
}

static uint64_t on_request(void *ud, const struct peer *p, const void *data, size_t len, int *fd, reply_fn reply,
			   void *rud)
{
	char buf[PROTO_MSG_MAX];

	if (p->uid != getuid() && H.first_other < 0)
		H.first_other = H.n_req;
	H.n_req++;
	H.last_len = len;
	memcpy(H.last, data, len < sizeof(H.last) - 1 ? len : sizeof(H.last) - 1);
	H.last[len < sizeof(H.last) - 1 ? len : sizeof(H.last) - 1] = '\0';
	H.peer = *p;
	H.pidfd_ours = p->pidfd >= 0 && pidfd_is_us(p->pidfd);
	H.got_fd = *fd >= 0;
	if (*fd >= 0) {
		fstat(*fd, &H.fd_st);
		close(*fd);
		*fd = -1;   /* kept (and closed here) */
	}
	if (len >= 4 && memcmp(data, "huge", 4) == 0) {
		memset(buf, 'x', sizeof(buf));
		for (int i = 0; i < H.huge; i++)
			reply(rud, buf, sizeof(buf));
		return 0;
	}
	int n = snprintf(buf, sizeof(buf), "OK n=%d ", H.n_req);
	size_t want = H.reply_size > (size_t)n ? H.reply_size : (size_t)n;
	memset(buf + n, 'x', want - (size_t)n);
	reply(rud, buf, want);
	return 0;
}

static bool on_privileged(void *ud, uid_t uid, gid_t gid, pid_t pid, gid_t *admin_gid)
{
	H.n_privileged++;
	*admin_gid = H.admin_gid;
	if (H.privileged > 0) {
		H.privileged--;
		return true;
	}
	return false;
}

/* Every uid its own account (no subordinate uids here). */
static uid_t on_account(void *ud, uid_t uid)
{
	return uid;
}

static const struct control_handlers handlers = { on_request, on_privileged, on_account };

/* A close the closer finished: read again from paused clients. */
static void on_drained(void *ud)
{
	if (ctl)
		control_resume_closed(ctl);
}

/* Run the loop until nothing is left to do. */
static void pump(void)
{
	int r;

	while ((r = sd_event_run(ev, 0)) > 0)
		;
	ck_assert_int_ge(r, 0);
}

static int open_fds(void);

/* Run the loop until this process has `want` descriptors open: the closer's
 * threads close what clients passed, and their connections, a moment after
 * the loop handed them over (waited for up to 10 s: a bound, not a timing). */
static void settle_fds(int want)
{
	for (int i = 0; i < 10000 && open_fds() != want; i++) {
		pump();
		usleep(1000);
	}
	pump();
	ck_assert_int_eq(open_fds(), want);
}

/* Open descriptors of this process. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* A connected client, non-blocking; -errno if the backlog is full. */
static int client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* Whether the daemon closed fd's connection (EOF, once its replies are read). */
static bool closed_by_server(int fd)
{
	char buf[PROTO_MSG_MAX];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* Whether the daemon closes fd's connection: connections are closed by the
 * closer's threads, a moment after the loop let go of them (waited for up
 * to 10 s: a bound, not a timing). */
static bool closed_soon(int fd)
{
	for (int i = 0; i < 10000; i++) {
		if (closed_by_server(fd))
			return true;
		pump();
		usleep(1000);
	}
	return false;
}

/* Send text (and the descriptors fds[0..nfds)) as one message. */
static void send_with(int fd, const char *text, size_t len, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 32)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { (void *)text, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds > 0) {
		struct cmsghdr *c;
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	ck_assert_int_eq(sendmsg(fd, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

/* The next reply on fd, as text ("" if none is there). */
static const char *reply_of(int fd)
{
	static char buf[PROTO_MSG_MAX + 1];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void setup(void)
{
	unit_tmpdir(dir, "test-control");
	snprintf(path, sizeof(path), "%s/run/rtschedd/control", dir);
	memset(&H, 0, sizeof(H));
	H.first_other = -1;
	H.admin_gid = (gid_t)-1;
	ck_assert_int_ge(sd_event_new(&ev), 0);
	unsetenv("LISTEN_FDS");
	ck_assert_int_eq(closer_new(&closer, ev, on_drained, NULL), 0);
	ck_assert_int_eq(control_new(&ctl, ev, path, &handlers, NULL, closer), 0);
}

static void teardown(void)
{
	control_free(ctl);
	ctl = NULL;
	closer_free(closer);
	closer = NULL;
	sd_event_unref(ev);
	unit_rmdir(dir);
}

/* The socket it makes, a request and its reply, the peer pinned. */
START_TEST(test_socket)
{
	char parent[PATH_MAX + 16];
	struct stat st;
	struct control *other;
	int c;

	ck_assert(!control_activated(ctl));
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0666);   /* who may act is decided per request */
	snprintf(parent, sizeof(parent), "%s/run/rtschedd", dir);
	ck_assert_int_eq(stat(parent, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);

	c = client();
	ck_assert_int_ge(c, 0);
	send_with(c, "v=1 op=status", 13, NULL, 0);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 1);
	ck_assert_int_eq(H.n_req, 1);
	ck_assert_str_eq(H.last, "v=1 op=status");
	ck_assert_int_eq(H.peer.pid, getpid());
	ck_assert_uint_eq(H.peer.uid, geteuid());
	ck_assert_uint_eq(H.peer.gid, getegid());
	ck_assert(!H.peer.gone);
	ck_assert_msg(H.pidfd_ours, "the peer's pidfd %d does not name the client's process", H.peer.pidfd);
	ck_assert(!H.got_fd);
	ck_assert_str_eq(reply_of(c), "OK n=1 ");
	/* a message over the protocol's size reaches the handler whole in
	 * length, for it to refuse (not cut to look valid) */
	char big[PROTO_MSG_MAX + 100];
	memset(big, 'a', sizeof(big));
	send_with(c, big, sizeof(big), NULL, 0);
	pump();
	ck_assert_uint_eq(H.last_len, sizeof(big));
	/* the client goes: so does its connection */
	close(c);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 0);

	/* another daemon on the same path is refused; a stale file replaced */
	ck_assert_int_eq(control_new(&other, ev, path, &handlers, NULL, closer), -EADDRINUSE);
	control_free(ctl);
	ctl = NULL;
	ck_assert_int_eq(lstat(path, &st), -1);   /* removed by control_free */
	int l = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(l);                                  /* a socket file nobody listens on */
	ck_assert_int_eq(control_new(&ctl, ev, path, &handlers, NULL, closer), 0);
	c = client();
	ck_assert_int_ge(c, 0);
	close(c);
	/* a path a socket cannot have */
	char longp[200];
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	ck_assert_int_eq(control_new(&other, ev, longp, &handlers, NULL, closer), -ENAMETOOLONG);
}
END_TEST

/* One descriptor goes to the request; more are refused unread; none is
 * ever left open, whatever the client sends. */
START_TEST(test_fds)
{
	char f[PATH_MAX + 16];
	int fds[20], base0, base, c;
	struct stat st;

	snprintf(f, sizeof(f), "%s/file", dir);
	for (int i = 0; i < 20; i++) {
		fds[i] = open(f, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ck_assert_int_ge(fds[i], 0);
	}
	ck_assert_int_eq(fstat(fds[0], &st), 0);
	base0 = open_fds();
	c = client();
	ck_assert_int_ge(c, 0);
	pump();
	base = open_fds();

	send_with(c, "v=1 op=jitter-attach", 20, fds, 1);
	pump();
	ck_assert_int_eq(H.n_req, 1);
	ck_assert(H.got_fd);
	ck_assert_uint_eq(H.fd_st.st_ino, st.st_ino);
	ck_assert_str_eq(reply_of(c), "OK n=1 ");
	settle_fds(base);

	send_with(c, "v=1 op=jitter-attach", 20, fds, 2);
	pump();
	ck_assert_int_eq(H.n_req, 1);   /* never handed on */
	ck_assert_str_eq(reply_of(c), "ERR bad-request at most one file descriptor per request (jitter-attach)");
	settle_fds(base);

	/* more than the daemon's buffer holds: the kernel cuts them (MSG_CTRUNC) */
	send_with(c, "v=1 op=jitter-attach", 20, fds, 20);
	pump();
	ck_assert_int_eq(H.n_req, 1);
	ck_assert_str_eq(reply_of(c), "ERR bad-request at most one file descriptor per request (jitter-attach)");
	settle_fds(base);

	/* a zero-length message ends the connection, its descriptors closed */
	send_with(c, "", 0, fds, 3);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 0);
	ck_assert(closed_soon(c));
	close(c);
	settle_fds(base0);   /* the connection's and its pidfd too */
	for (int i = 0; i < 20; i++)
		close(fds[i]);
}
END_TEST

/* At most MAX_PER_UID connections of one non-privileged uid, those over it
 * refused without a look-up of the peer (for VERDICT_TRUST_US after the
 * last); a privileged one is not counted against it. */
START_TEST(test_quota_per_uid)
{
	int c[MAX_PER_UID + 3], closed = 0;

	unit_log_capture();
	H.n_privileged = 0;
	for (int i = 0; i < MAX_PER_UID + 2; i++) {
		c[i] = client();
		ck_assert_int_ge(c[i], 0);
		if (i % 64 == 63)
			pump();   /* keep the listen backlog (128) from filling */
	}
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_PER_UID);
	ck_assert(closed_soon(c[MAX_PER_UID]) && closed_soon(c[MAX_PER_UID + 1]));
	for (int i = 0; i < MAX_PER_UID + 2; i++)
		closed += closed_by_server(c[i]);
	ck_assert_int_eq(closed, 2);
	/* the two over the cap were refused by their credentials alone */
	ck_assert_int_eq(H.n_privileged, MAX_PER_UID);
	/* once the verdict is older than VERDICT_TRUST_US the peer is looked
	 * up again: now privileged (a reload made it admin-group), it is let in */
	usleep(VERDICT_TRUST_US + 100000);
	H.privileged = 1;
	c[MAX_PER_UID + 2] = client();
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_PER_UID + 1);
	ck_assert(!closed_by_server(c[MAX_PER_UID + 2]));
	const char *log = unit_log_captured();
	ck_assert_msg(strstr(log, "this user holds the most connections one user may"), "%s", log);
	/* one line, not one per refusal */
	ck_assert_int_eq(unit_count(log, "this user holds"), 1);
	for (int i = 0; i < MAX_PER_UID + 3; i++)
		close(c[i]);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 0);
}
END_TEST

/* A connection made with effective gid `gid` (root only). */
static int client_as_gid(gid_t gid)
{
	int fd;

	ck_assert_int_eq(setegid(gid), 0);
	fd = client();
	ck_assert_int_eq(setegid(0), 0);
	return fd;
}

/* Root only (main): a uid at the cap that connects with other primary
 * gids (sg, newgrp, a user namespace's mapped gids) is refused without a
 * look-up too (review R4: the tally was per (uid, gid), so each new gid
 * brought back a look-up per connection); only admin-group's own gid,
 * which could make the uid privileged, is looked up, and let in. */
START_TEST(test_quota_other_gid)
{
	int c[MAX_PER_UID + 4];

	H.admin_gid = 4242;
	for (int i = 0; i < MAX_PER_UID; i++) {
		c[i] = client();
		ck_assert_int_ge(c[i], 0);
		if (i % 64 == 63)
			pump();
	}
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_PER_UID);
	ck_assert_int_eq(H.n_privileged, MAX_PER_UID);
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(c[MAX_PER_UID + i] = client_as_gid(12345 + (gid_t)i), 0);
	pump();
	for (int i = 0; i < 3; i++)
		ck_assert(closed_soon(c[MAX_PER_UID + i]));
	ck_assert_msg(H.n_privileged == MAX_PER_UID, "%d look-ups for 3 connections over the cap with new gids",
		      H.n_privileged - MAX_PER_UID);
	/* admin-group's gid may make it privileged: looked up, and let in */
	H.privileged = 1;
	ck_assert_int_ge(c[MAX_PER_UID + 3] = client_as_gid(4242), 0);
	pump();
	ck_assert_int_eq(H.n_privileged, MAX_PER_UID + 1);
	ck_assert_int_eq(control_n_clients(ctl), MAX_PER_UID + 1);
	ck_assert(!closed_by_server(c[MAX_PER_UID + 3]));
	for (int i = 0; i < MAX_PER_UID + 4; i++)
		close(c[i]);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 0);
}
END_TEST

/* The last RESERVED_PRIVILEGED of MAX_CLIENTS slots are root's and
 * admin-group's; none past MAX_CLIENTS. (Needs ~3 descriptors a client.) */
START_TEST(test_quota_reserved)
{
	static int c[MAX_CLIENTS + 2];
	int n = 0;

	unit_log_capture();
	H.privileged = MAX_CLIENTS - RESERVED_PRIVILEGED;
	while (n < MAX_CLIENTS - RESERVED_PRIVILEGED) {
		c[n] = client();
		ck_assert_int_ge(c[n++], 0);
		if (n % 64 == 0)
			pump();
	}
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_CLIENTS - RESERVED_PRIVILEGED);
	/* a non-privileged client finds only reserved slots */
	c[n++] = client();
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_CLIENTS - RESERVED_PRIVILEGED);
	ck_assert(closed_soon(c[n - 1]));
	/* privileged ones take them, up to MAX_CLIENTS */
	H.privileged = RESERVED_PRIVILEGED + 1;
	for (int i = 0; i < RESERVED_PRIVILEGED + 1; i++) {
		c[n] = client();
		ck_assert_int_ge(c[n++], 0);
	}
	pump();
	ck_assert_int_eq(control_n_clients(ctl), MAX_CLIENTS);
	ck_assert(closed_soon(c[n - 1]));
	ck_assert(!closed_by_server(c[n - 2]));
	const char *log = unit_log_captured();
	/* (one line per 1000 refusals: the first says why) */
	ck_assert_msg(strstr(log, "the free connections are kept for root and admin-group (4032 connected"), "%s",
		      log);
	for (int i = 0; i < n; i++)
		close(c[i]);
	pump();
	ck_assert_int_eq(control_n_clients(ctl), 0);
}
END_TEST

/* A client that sends and does not read: once its unread replies pass
 * QUEUE_PAUSE it is not read from, so the daemon's memory stops growing;
 * when it reads, the rest is served, in order. */
START_TEST(test_backpressure)
{
	enum { N = 400 };
	int rcvbuf, sent = 0, got = 0, stalled;
	socklen_t len = sizeof(rcvbuf);
	char buf[PROTO_MSG_MAX + 1], want[32];
	int c = client();

	ck_assert_int_ge(c, 0);
	H.reply_size = 4000;
	ck_assert_int_eq(getsockopt(c, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
	for (; sent < N; sent++) {
		if (send(c, "v=1 op=x", 8, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			break;
		}
		if (sent % 32 == 31)
			pump();
	}
	pump();
	stalled = H.n_req;
	ck_assert_msg(stalled < sent, "all %d requests read although no reply was", sent);
	/* it read until the replies it held reached the pause, not fewer */
	ck_assert_uint_ge((size_t)stalled * H.reply_size, QUEUE_PAUSE);
	/* and no more than the pause, one reply, and what the client's socket took */
	ck_assert_uint_le((size_t)stalled * H.reply_size, QUEUE_PAUSE + H.reply_size + (size_t)rcvbuf);
	pump();
	ck_assert_int_eq(H.n_req, stalled);
	/* the client reads: everything is served, in order */
	while (got < sent) {
		ssize_t n = recv(c, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0) {
			ck_assert_int_eq(errno, EAGAIN);
			int before = H.n_req;
			pump();
			ck_assert_msg(H.n_req > before || got < H.n_req, "stuck at %d of %d", got, sent);
			continue;
		}
		buf[n] = '\0';
		snprintf(want, sizeof(want), "OK n=%d ", ++got);
		ck_assert_int_eq(strncmp(buf, want, strlen(want)), 0);
	}
	ck_assert_int_eq(H.n_req, sent);
	ck_assert_int_eq(control_n_clients(ctl), 1);
	close(c);
}
END_TEST

/* One user, many connections, one request on each whose reply is bigger
 * than its socket takes, none read: once the replies the daemon holds for
 * the user pass ACCOUNT_QUEUE_PAUSE, none of its connections is read (each
 * alone is under QUEUE_PAUSE); once they are read, the rest is served. */
START_TEST(test_backpressure_per_user)
{
	enum { N = 32 };
	int c[N], msgs[N] = { 0 }, served, done = 0;
	char buf[PROTO_MSG_MAX + 1];

	H.huge = 48;   /* 192 KiB a reply: under QUEUE_PAUSE, over what a socket takes */
	unit_log_capture();
	for (int i = 0; i < N; i++) {
		c[i] = client();
		ck_assert_int_ge(c[i], 0);
		send_with(c[i], "huge", 4, NULL, 0);
	}
	pump();
	served = H.n_req;
	ck_assert_msg(served < N, "all %d requests read although no reply was", N);
	ck_assert_int_ge(served, 1);
	const char *log = unit_log_captured();
	ck_assert_msg(strstr(log, "KiB of replies unread on its 32 connections (at most 1024 KiB per user)"), "%s",
		      log);
	pump();
	ck_assert_int_eq(H.n_req, served);
	/* the clients read: every request is served, whole, and the loop is not stuck */
	while (done < N) {
		int before = H.n_req, got = 0;

		for (int i = 0; i < N; i++) {
			ssize_t n;

			while (msgs[i] < H.huge && (n = recv(c[i], buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
				ck_assert_int_eq(n, PROTO_MSG_MAX);
				got++;
				if (++msgs[i] == H.huge)
					done++;
			}
		}
		pump();
		ck_assert_msg(got > 0 || H.n_req > before, "stuck: %d of %d served, %d read whole", H.n_req, N, done);
	}
	ck_assert_int_eq(H.n_req, N);
	for (int i = 0; i < N; i++)
		close(c[i]);
}
END_TEST

/* Replies to one request past MAX_QUEUED unread: the client is dropped
 * (said once in the log), the daemon goes on. */
START_TEST(test_drop_unread)
{
	int c = client(), other = client();

	ck_assert_int_ge(c, 0);
	H.huge = (int)(MAX_QUEUED / (PROTO_MSG_MAX)) + 64;
	unit_log_capture();
	send_with(c, "huge", 4, NULL, 0);
	pump();
	const char *log = unit_log_captured();
	ck_assert_msg(strstr(log, "does not read its replies; dropping it"), "%s", log);
	ck_assert_int_eq(control_n_clients(ctl), 1);   /* the other */
	ck_assert(closed_soon(c));
	close(c);
	send_with(other, "v=1 op=status", 13, NULL, 0);
	pump();
	ck_assert_str_eq(reply_of(other), "OK n=2 ");
	close(other);
}
END_TEST

/* Out of descriptors: accepting pauses (no busy loop on the readable
 * socket) and resumes when a client goes. */
START_TEST(test_out_of_fds)
{
	struct rlimit old, low;
	int a, b;

	a = client();
	b = client();
	ck_assert_int_ge(a, 0);
	ck_assert_int_ge(b, 0);
	unit_log_capture();
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	/* the lowest limit that leaves exactly two descriptor numbers free
	 * (below it: new descriptors take the lowest free number): one
	 * connection and the epoll set of its user's connections */
	low = old;
	for (int fd = 0, used = 0;; fd++) {
		if (fd - used == 2) {
			low.rlim_cur = (rlim_t)fd;
			break;
		}
		used += fcntl(fd, F_GETFD) >= 0;
	}
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	pump();   /* must return: paused, not spinning on EMFILE */
	unsigned n = control_n_clients(ctl);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	const char *log = unit_log_captured();
	ck_assert_msg(n == 1, "%u clients accepted with RLIMIT_NOFILE %lu; the log: %s", n,
		      (unsigned long)low.rlim_cur, log);
	ck_assert_msg(strstr(log, "not accepting connections until a client disconnects"), "%s", log);
	/* the accepted one goes: the other is taken */
	bool a_closed = closed_by_server(a), b_closed = closed_by_server(b);
	unit_log_capture();
	close(a_closed ? b : a);
	pump();
	n = control_n_clients(ctl);
	log = unit_log_captured();
	ck_assert_msg(n == 1, "%u clients after one went (a closed %d, b closed %d); the log: %s", n, a_closed,
		      b_closed, log);
	close(closed_by_server(a) ? b : a);
	pump();
}
END_TEST

/* A connection of uid's: made by a child that took the uid, handed back
 * over a socket pair (the peer's credentials are those of connect()). */
static int client_as(uid_t uid)
{
	int sp[2], fd = -1, status;
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);   /* the test's directory, for the uid to reach the socket */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sp[0]);
		if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
			_exit(2);
		fd = client();
		send_with(sp[1], "c", 1, &fd, 1);
		_exit(fd >= 0 ? 0 : 3);
	}
	close(sp[1]);
	char c;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	if (recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC) == 1 && CMSG_FIRSTHDR(&mh))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(fd));
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child as uid %u: status %d", (unsigned)uid,
		      status);
	return fd;
}

/* The loop gives turns to users, not connections: a user with many
 * connections full of requests gets one turn, then another user's request
 * is served. Per connection, the other user's request (pending one loop
 * iteration later) would wait for one request of each of the first's. */
START_TEST(test_turns_per_user)
{
	enum { CONNS = 20, EACH = 5 };
	int a[CONNS], b;

	for (int i = 0; i < CONNS; i++) {
		a[i] = client();
		ck_assert_int_ge(a[i], 0);
	}
	b = client_as(65534);
	ck_assert_int_ge(b, 0);
	pump();   /* all accepted */
	ck_assert_int_eq(control_n_clients(ctl), CONNS + 1);
	for (int i = 0; i < CONNS; i++)
		for (int k = 0; k < EACH; k++)
			send_with(a[i], "v=1 op=status", 13, NULL, 0);
	/* one iteration: everything of the first user's is pending */
	ck_assert_int_ge(sd_event_run(ev, 0), 0);
	send_with(b, "v=1 op=status", 13, NULL, 0);
	for (int i = 0; i < 10 * CONNS * EACH && H.first_other < 0; i++)
		ck_assert_int_ge(sd_event_run(ev, 0), 0);
	ck_assert_msg(H.first_other >= 0 && H.first_other <= 2,
		      "the other user's request was served after %d of the first user's (at most 2: one turn "
		      "each)", H.first_other);
	pump();
	ck_assert_int_eq(H.n_req, CONNS * EACH + 1);
	/* every request answered */
	for (int i = 0; i < CONNS; i++) {
		for (int k = 0; k < EACH; k++) {
			const char *r = reply_of(a[i]);
			ck_assert_msg(strncmp(r, "OK n=", 5) == 0, "connection %d reply %d: '%s'", i, k, r);
		}
		close(a[i]);
	}
	ck_assert_int_eq(strncmp(reply_of(b), "OK n=", 5), 0);
	close(b);
	pump();
}
END_TEST

/* Socket activation: the listening socket systemd passed (fd 3) is used as
 * it is; one of another type is refused. In a child: fd 3 is the child's. */
static int activation_child(int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control *c = NULL;
	char env[32];
	int l = socket(AF_UNIX, type, 0), r;

	/* the parent's loop is not the child's (sd-event refuses it) */
	ev = NULL;
	if (sd_event_new(&ev) < 0)
		return 9;
	snprintf(path, sizeof(path), "%s/activated", dir);
	unlink(path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 4) < 0 || dup2(l, 3) != 3)
		return 10;
	snprintf(env, sizeof(env), "%d", (int)getpid());
	setenv("LISTEN_PID", env, 1);
	setenv("LISTEN_FDS", "1", 1);
	r = control_new(&c, ev, "/nonexistent/unused", &handlers, NULL, closer);
	if (type != SOCK_SEQPACKET)
		return r == -EINVAL ? 0 : 11;
	if (r < 0 || !control_activated(c))
		return 12;
	int fd = client();
	if (fd < 0)
		return 13;
	while (sd_event_run(ev, 0) > 0)
		;
	return control_n_clients(c) == 1 ? 0 : 14;
}

START_TEST(test_activation)
{
	int types[] = { SOCK_SEQPACKET, SOCK_STREAM };

	for (int i = 0; i < 2; i++) {
		int st;
		pid_t child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0)
			_exit(activation_child(types[i]));
		ck_assert_int_eq(waitpid(child, &st, 0), child);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "socket type %d: child exit %d", types[i],
			      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("control");
	struct rlimit rl;

	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_socket);
	tcase_add_test(tc, test_fds);
	tcase_add_test(tc, test_quota_per_uid);
	if (geteuid() == 0)
		tcase_add_test(tc, test_quota_other_gid);
	else
		unit_skip("test_quota_other_gid: needs root, to connect with other gids");
	/* a client is three descriptors here: its end, the daemon's, the pidfd */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 3 * MAX_CLIENTS + 256 && rl.rlim_max >= 3 * MAX_CLIENTS + 256) {
		rl.rlim_cur = 3 * MAX_CLIENTS + 256;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= 3 * MAX_CLIENTS + 256)
		tcase_add_test(tc, test_quota_reserved);
	else
		unit_skip("test_quota_reserved: RLIMIT_NOFILE's hard limit is below 3 descriptors per client");
	tcase_add_test(tc, test_backpressure);
	tcase_add_test(tc, test_backpressure_per_user);
	tcase_add_test(tc, test_drop_unread);
	/* valgrind closes a descriptor past its own, emulated RLIMIT_NOFILE as
	 * accept4() returns it: the connection is lost instead of left queued */
	if (!strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "", "vgpreload"))
		tcase_add_test(tc, test_out_of_fds);
	else
		unit_skip("test_out_of_fds: under valgrind, whose descriptor limit drops a connection accept4() took");
	tcase_add_test(tc, test_activation);
	if (geteuid() == 0)
		tcase_add_test(tc, test_turns_per_user);
	else
		unit_skip("test_turns_per_user: needs root, to connect as a second uid");
	suite_add_tcase(s, tc);
	return unit_run(s);
}
