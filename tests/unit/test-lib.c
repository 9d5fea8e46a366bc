/* test-lib.c: librtsched (src/lib) against a stand-in daemon, a thread of
 * this test serving a socket in a private directory: the requests the API
 * builds and the grants and errors it gives back (rtsched_last_message and
 * _diag per thread), the connection it keeps (reused; not the fork()ed
 * child's; re-opened once after a restart and only then; never written
 * through once its descriptor was closed and reused behind its back), a
 * busy connection that makes another thread open its own instead of
 * waiting, and the timer's histogram memfd passed sealed with its attach.
 * tests/lib-conn.sh runs the same library against the real daemon. Runs as
 * any user. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/hist.h"
#include "shared/protocol.h"
#include "rtsched.h"
#include "unit-util.h"

#define MAX_CONNS 16
#define MAX_REQS 64

/* The stand-in: accepts, reads one request per message, answers with
 * `reply` (or holds a request whose text has "hold" until `release`),
 * records what it saw. */
static struct standin {
	pthread_t th;
	int lfd, stop[2];
	char path[PATH_MAX + 16];
	pthread_mutex_t lock;
	pthread_cond_t changed;
	int conn[MAX_CONNS];        /* accepted connections, -1 when closed */
	pid_t conn_pid[MAX_CONNS];  /* SO_PEERCRED */
	int n_conns;
	char req[MAX_REQS][PROTO_MSG_MAX + 1];
	int req_conn[MAX_REQS];
	struct stat req_fd[MAX_REQS]; /* what a passed descriptor was (st_nlink 0: none) */
	int req_seals[MAX_REQS];
	int n_reqs;
	char reply[PROTO_MSG_MAX];
	bool close_after;           /* close a connection after each reply: a restart */
	bool close_before;          /* close it on a request, unanswered */
	int held;                   /* the connection of a held request, or -1 */
	bool release;
} S;

static char dir[PATH_MAX];

static void standin_answer(int k, const char *text)
{
	if (strstr(text, "hold") && !S.release) {
		S.held = k;
		return;
	}
	if (S.close_before) {
		close(S.conn[k]);
		S.conn[k] = -1;
		return;
	}
	send(S.conn[k], S.reply, strlen(S.reply), MSG_NOSIGNAL);
	if (S.close_after) {
		close(S.conn[k]);
		S.conn[k] = -1;
	}
}

/* One request on connection k: record it (and any descriptor), answer. */
static void standin_read(int k)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	char buf[PROTO_MSG_MAX + 1];
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(S.conn[k], &mh, MSG_CMSG_CLOEXEC);
	struct cmsghdr *c;
	int i;

	if (n <= 0) {
		close(S.conn[k]);
		S.conn[k] = -1;
		return;
	}
	buf[n] = '\0';
	i = S.n_reqs < MAX_REQS ? S.n_reqs++ : MAX_REQS - 1;
	snprintf(S.req[i], sizeof(S.req[i]), "%s", buf);
	S.req_conn[i] = k;
	memset(&S.req_fd[i], 0, sizeof(S.req_fd[i]));
	S.req_seals[i] = -1;
	if ((c = CMSG_FIRSTHDR(&mh)) && c->cmsg_type == SCM_RIGHTS) {
		int fd;
		memcpy(&fd, CMSG_DATA(c), sizeof(fd));
		fstat(fd, &S.req_fd[i]);
		S.req_seals[i] = fcntl(fd, F_GET_SEALS);
		close(fd);
	}
	standin_answer(k, buf);
}

static void *standin_main(void *arg)
{
	for (;;) {
		struct pollfd p[MAX_CONNS + 2];
		int map[MAX_CONNS + 2], n = 0;

		pthread_mutex_lock(&S.lock);
		p[n] = (struct pollfd){ S.stop[0], POLLIN, 0 };
		map[n++] = -2;
		p[n] = (struct pollfd){ S.lfd, POLLIN, 0 };
		map[n++] = -1;
		for (int k = 0; k < S.n_conns; k++)
			if (S.conn[k] >= 0) {
				p[n] = (struct pollfd){ S.conn[k], POLLIN, 0 };
				map[n++] = k;
			}
		if (S.release && S.held >= 0) {
			standin_answer(S.held, "");
			S.held = -1;
		}
		pthread_mutex_unlock(&S.lock);
		if (poll(p, (nfds_t)n, 20) < 0)
			continue;
		if (p[0].revents)
			return NULL;
		pthread_mutex_lock(&S.lock);
		for (int i = 1; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (map[i] == -1 && S.n_conns < MAX_CONNS) {
				struct ucred cr;
				socklen_t len = sizeof(cr);
				int fd = accept4(S.lfd, NULL, NULL, SOCK_CLOEXEC);
				if (fd < 0)
					continue;
				getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len);
				S.conn_pid[S.n_conns] = cr.pid;
				S.conn[S.n_conns++] = fd;
			} else if (map[i] >= 0 && S.conn[map[i]] >= 0) {
				standin_read(map[i]);
			}
		}
		pthread_cond_broadcast(&S.changed);
		pthread_mutex_unlock(&S.lock);
	}
}

static void setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	unit_tmpdir(dir, "test-lib");
	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.lock, NULL);
	pthread_cond_init(&S.changed, NULL);
	S.held = -1;
	snprintf(S.path, sizeof(S.path), "%s/control", dir);
	ck_assert_uint_lt(strlen(S.path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, S.path, strlen(S.path) + 1);
	snprintf(S.reply, sizeof(S.reply), "OK");
	S.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(S.lfd, 0);
	ck_assert_int_eq(bind(S.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(S.lfd, 16), 0);
	ck_assert_int_eq(pipe(S.stop), 0);
	ck_assert_int_eq(pthread_create(&S.th, NULL, standin_main, NULL), 0);
	setenv("RTSCHED_SOCKET", S.path, 1);
}

static void teardown(void)
{
	rtsched_disconnect();
	ck_assert_int_eq(write(S.stop[1], "x", 1), 1);
	pthread_join(S.th, NULL);
	for (int k = 0; k < S.n_conns; k++)
		if (S.conn[k] >= 0)
			close(S.conn[k]);
	close(S.lfd);
	close(S.stop[0]);
	close(S.stop[1]);
	unsetenv("RTSCHED_SOCKET");
	unit_rmdir(dir);
}

static void set_reply(const char *r)
{
	pthread_mutex_lock(&S.lock);
	snprintf(S.reply, sizeof(S.reply), "%s", r);
	pthread_mutex_unlock(&S.lock);
}

/* Request i as the stand-in read it. */
static const char *req(int i)
{
	static char copy[PROTO_MSG_MAX + 1];

	pthread_mutex_lock(&S.lock);
	ck_assert_int_lt(i, S.n_reqs);
	snprintf(copy, sizeof(copy), "%s", S.req[i]);
	pthread_mutex_unlock(&S.lock);
	return copy;
}

static int n_conns(void)
{
	int n;

	pthread_mutex_lock(&S.lock);
	n = S.n_conns;
	pthread_mutex_unlock(&S.lock);
	return n;
}

static int conn_of(int i)
{
	int k;

	pthread_mutex_lock(&S.lock);
	k = S.req_conn[i];
	pthread_mutex_unlock(&S.lock);
	return k;
}

/* The descriptor of the library's kept connection: the one socket whose
 * peer is the stand-in's path (the stand-in's own ends have an unnamed one). */
static int kept_fd(void)
{
	struct stat st;
	int kept = -1;

	for (int i = 3; i < 1024; i++) {
		struct sockaddr_un peer = { 0 };
		socklen_t len = sizeof(peer) - 1;
		if (fstat(i, &st) == 0 && S_ISSOCK(st.st_mode) && getpeername(i, (struct sockaddr *)&peer, &len) == 0 &&
		    len > sizeof(sa_family_t) && strcmp(peer.sun_path, S.path) == 0) {
			ck_assert_int_lt(kept, 0);
			kept = i;
		}
	}
	ck_assert_int_ge(kept, 0);
	return kept;
}

/* What the API sends, and the grant it reads back. */
START_TEST(test_register_request)
{
	struct rtsched_request r = RTSCHED_REQUEST_INIT;
	struct rtsched_grant g;
	char want[128];

	set_reply("OK tid=1 policy=fifo priority=10 nice=-5 reset_on_fork=1 cpus=0-1 rule=audio threads=3");
	r.role = "audio";
	r.policy = "fifo";
	r.priority = 10;
	r.nice = -5;
	r.cpus = "0-1";
	memset(&g, 0x55, sizeof(g));
	ck_assert_int_eq(rtsched_register(&r, &g), 0);
	snprintf(want, sizeof(want), "v=1 op=register tid=%d role=audio policy=fifo priority=10 nice=-5 cpus=0-1",
		 (int)gettid());
	ck_assert_str_eq(req(0), want);
	ck_assert_str_eq(g.policy, "fifo");
	ck_assert_int_eq(g.priority, 10);
	ck_assert_int_eq(g.nice, -5);
	ck_assert_int_eq(g.reset_on_fork, 1);
	ck_assert_str_eq(g.cpus, "0-1");
	ck_assert_str_eq(g.rule, "audio");
	ck_assert_int_eq(g.threads, 3);
	ck_assert_str_eq(rtsched_last_message(), "");

	/* a process; the role's own values (nothing else sent); the grant
	 * cleared of what the reply does not say */
	set_reply("OK policy=rr");
	r = (struct rtsched_request)RTSCHED_REQUEST_INIT;
	r.pid = 4242;
	ck_assert_int_eq(rtsched_register(&r, &g), 0);
	ck_assert_str_eq(req(1), "v=1 op=register pid=4242");
	ck_assert_str_eq(g.policy, "rr");
	ck_assert_int_eq(g.priority, 0);
	ck_assert_str_eq(g.rule, "");
	/* the calling thread with the daemon's default, no grant wanted */
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	snprintf(want, sizeof(want), "v=1 op=register tid=%d", (int)gettid());
	ck_assert_str_eq(req(2), want);
	ck_assert_int_eq(rtsched_unregister_self(), 0);
	snprintf(want, sizeof(want), "v=1 op=unregister tid=%d", (int)gettid());
	ck_assert_str_eq(req(3), want);
	ck_assert_int_eq(rtsched_unregister(0, 77, NULL), 0);
	ck_assert_str_eq(req(4), "v=1 op=unregister pid=77");
}
END_TEST

/* What the API refuses without asking. */
START_TEST(test_invalid)
{
	struct rtsched_request r = RTSCHED_REQUEST_INIT;
	char role[PROTO_MSG_MAX + 10];

	ck_assert_int_eq(rtsched_register(NULL, NULL), -EINVAL);
	r.tid = 1;
	r.pid = 1;
	ck_assert_int_eq(rtsched_register(&r, NULL), -EINVAL);
	r.pid = 0;
	r.tid = -3;
	ck_assert_int_eq(rtsched_register(&r, NULL), -EINVAL);
	ck_assert_int_eq(rtsched_unregister(0, 0, NULL), -EINVAL);
	ck_assert_int_eq(rtsched_unregister(5, 6, NULL), -EINVAL);
	memset(role, 'a', sizeof(role) - 1);
	role[sizeof(role) - 1] = '\0';
	r = (struct rtsched_request)RTSCHED_REQUEST_INIT;
	r.role = role;
	ck_assert_int_eq(rtsched_register(&r, NULL), -E2BIG);
	ck_assert_int_eq(n_conns(), 0);   /* nothing was sent */
}
END_TEST

static void *other_thread_error(void *arg)
{
	set_reply("ERR no-such-thread tid 9 does not exist");
	*(int *)arg = rtsched_unregister(9, 0, NULL);
	return (void *)strdup(rtsched_last_message());
}

/* A refusal: its errno, the daemon's message and diagnosis, per thread. */
START_TEST(test_errors)
{
	pthread_t th;
	void *msg;
	int r;

	set_reply("ERR apply-failed diag=rtprio-zero sched_setattr(tid 5) failed: Operation not permitted");
	ck_assert_int_eq(rtsched_register_self("audio"), -proto_error_errno(PE_APPLY_FAILED));
	ck_assert_int_eq(rtsched_register_self("audio"), -EIO);
	ck_assert_str_eq(rtsched_last_message(), "sched_setattr(tid 5) failed: Operation not permitted");
	ck_assert_str_eq(rtsched_last_diag(), "rtprio-zero");
	/* another thread's failure is its own */
	ck_assert_int_eq(pthread_create(&th, NULL, other_thread_error, &r), 0);
	ck_assert_int_eq(pthread_join(th, &msg), 0);
	ck_assert_int_eq(r, -ESRCH);
	ck_assert_str_eq(msg, "tid 9 does not exist");
	free(msg);
	ck_assert_str_eq(rtsched_last_message(), "sched_setattr(tid 5) failed: Operation not permitted");
	ck_assert_str_eq(rtsched_last_diag(), "rtprio-zero");
	/* the next success clears both */
	set_reply("OK");
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_str_eq(rtsched_last_message(), "");
	ck_assert_str_eq(rtsched_last_diag(), "");
	/* no daemon: the message says where it looked */
	struct rtsched_request q = RTSCHED_REQUEST_INIT;
	char nowhere[PATH_MAX + 16];
	snprintf(nowhere, sizeof(nowhere), "%s/nothing", dir);
	q.socket = nowhere;
	ck_assert_int_eq(rtsched_register(&q, NULL), -ENOENT);
	ck_assert_msg(strstr(rtsched_last_message(), "cannot connect to ") && strstr(rtsched_last_message(), nowhere),
		      "%s", rtsched_last_message());
	/* the descriptions */
	ck_assert_str_eq(rtsched_strerror(0), "success");
	/* EBUSY is the watchdog's cooldown or a SCHED_DEADLINE thread: both named */
	ck_assert_msg(strstr(rtsched_strerror(-EBUSY), "paused after the watchdog") &&
			      strstr(rtsched_strerror(-EBUSY), "try again later") &&
			      strstr(rtsched_strerror(-EBUSY), "SCHED_DEADLINE"),
		      "%s", rtsched_strerror(-EBUSY));
	ck_assert_str_eq(rtsched_strerror(-ENOTDIR), strerror(ENOTDIR));
}
END_TEST

/* One connection for many requests; a new one after rtsched_disconnect. */
START_TEST(test_kept)
{
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 1);
	ck_assert_int_eq(conn_of(4), 0);
	ck_assert_int_eq(rtsched_disconnect(), 0);
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
	ck_assert_int_eq(conn_of(5), 1);
	/* another socket path: another connection */
	struct rtsched_request q = RTSCHED_REQUEST_INIT;
	q.socket = S.path;   /* the same path, given: the same connection */
	ck_assert_int_eq(rtsched_register(&q, NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
}
END_TEST

/* A fork()ed child never uses its parent's connection (the daemon would
 * take it for the parent); the parent keeps its own. */
START_TEST(test_fork)
{
	int st, kept;
	pid_t child;

	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	kept = kept_fd();
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		/* closed before any code of the child ran */
		if (fcntl(kept, F_GETFD) != -1 || errno != EBADF)
			_exit(2);
		_exit(rtsched_register_self(NULL) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s",
		      WIFEXITED(st) && WEXITSTATUS(st) == 2 ? "the parent's connection was still open" : "failed");
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
	pthread_mutex_lock(&S.lock);
	ck_assert_int_eq(S.conn_pid[0], getpid());
	ck_assert_int_eq(S.conn_pid[1], child);
	ck_assert_int_eq(S.req_conn[1], 1);
	ck_assert_int_eq(S.req_conn[2], 0);   /* the parent's, still */
	pthread_mutex_unlock(&S.lock);
}
END_TEST

/* The daemon restarted (it closed the kept connection): the request is
 * made again, once, on a new one. A new connection that fails is not
 * retried: that is no restart. */
START_TEST(test_restart)
{
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	pthread_mutex_lock(&S.lock);
	close(S.conn[0]);
	S.conn[0] = -1;
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
	ck_assert_int_eq(conn_of(1), 1);

	rtsched_disconnect();
	pthread_mutex_lock(&S.lock);
	S.close_before = true;
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(rtsched_register_self(NULL), -ECONNRESET);
	ck_assert_int_eq(n_conns(), 3);
	/* a kept connection reset on every try: one retry, then the error */
	pthread_mutex_lock(&S.lock);
	S.close_before = false;
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 4);
	pthread_mutex_lock(&S.lock);
	S.close_before = true;
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(rtsched_register_self(NULL), -ECONNRESET);
	ck_assert_int_eq(n_conns(), 5);
}
END_TEST

/* The kept descriptor closed behind the library's back and its number
 * reused for a file: the library notices, connects again and never writes
 * to the file. */
START_TEST(test_closed_behind)
{
	char path[PATH_MAX + 16];
	struct stat st;
	int fd, kept;

	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	kept = kept_fd();
	close(kept);
	snprintf(path, sizeof(path), "%s/victim", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	if (fd != kept) {
		ck_assert_int_eq(dup2(fd, kept), kept);
		close(fd);
	}
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
	ck_assert_int_eq(fstat(kept, &st), 0);
	ck_assert_int_eq(st.st_size, 0);   /* nothing written to the file */
	ck_assert(S_ISREG(st.st_mode));    /* and it was not closed */
	close(kept);
}
END_TEST

static void *held_request(void *arg)
{
	return (void *)(long)rtsched_register_self("hold");
}

/* While one thread's request waits for its answer, another thread's goes
 * on a connection of its own instead of waiting for the first. */
START_TEST(test_busy)
{
	pthread_t th;
	void *r;

	ck_assert_int_eq(pthread_create(&th, NULL, held_request, NULL), 0);
	pthread_mutex_lock(&S.lock);
	while (S.held < 0)
		pthread_cond_wait(&S.changed, &S.lock);
	pthread_mutex_unlock(&S.lock);
	/* with the kept connection busy this must not wait (the held one is
	 * only answered below) */
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(n_conns(), 2);
	ck_assert_int_eq(conn_of(1), 1);
	pthread_mutex_lock(&S.lock);
	S.release = true;
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(pthread_join(th, &r), 0);
	ck_assert_int_eq((long)r, 0);
	/* the one-off connection was closed; the kept one is still used */
	ck_assert_int_eq(rtsched_register_self(NULL), 0);
	ck_assert_int_eq(conn_of(2), 0);
}
END_TEST

/* attach: the histogram's memfd goes with the request, sealed against
 * shrinking and growing, the size of a struct hist. */
START_TEST(test_timer_attach)
{
	struct rtsched_timer *t;
	struct rtsched_timer_stats s;
	char want[128];

	ck_assert_int_eq(rtsched_timer_create(&t, 999, NULL), -EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(rtsched_timer_create(&t, 1000000, "nonsense"), -EINVAL);
	ck_assert_int_eq(rtsched_timer_create(&t, 5000000000ULL, "adaptive"), 0);
	ck_assert_int_eq(rtsched_timer_attach(t, NULL), 0);
	snprintf(want, sizeof(want), "v=1 op=jitter-attach tid=%d period_ns=5000000000 strategy=adaptive",
		 (int)gettid());
	ck_assert_str_eq(req(0), want);
	pthread_mutex_lock(&S.lock);
	ck_assert_uint_eq(S.req_fd[0].st_size, sizeof(struct hist));
	ck_assert_int_eq(S.req_seals[0], F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	pthread_mutex_unlock(&S.lock);
	ck_assert_int_eq(rtsched_timer_stats(t, &s), 0);
	ck_assert_uint_eq(s.count, 0);
	rtsched_timer_free(t);
	ck_assert_int_eq(rtsched_timer_attach(NULL, NULL), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib");
	TCase *tc = tcase_create("lib");

	/* a stand-in that closes a connection must not kill the test */
	signal(SIGPIPE, SIG_IGN);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_register_request);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_kept);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_restart);
	tcase_add_test(tc, test_closed_behind);
	tcase_add_test(tc, test_busy);
	tcase_add_test(tc, test_timer_attach);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
