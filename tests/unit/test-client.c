/* test-client.c: the client side of the control protocol (shared/client.h),
 * which rtschedctl and librtsched are built on: the socket path it picks,
 * the server it refuses to trust, one request and its replies (ROW
 * messages, the final OK or ERR and the errno an ERR maps to), a descriptor
 * passed with the request, and the transport failures (a closed
 * connection, a garbled reply, no answer in time). The server side is the
 * other end of a socketpair, or a listening socket in a private directory.
 * Runs as any user; the server of another uid needs root (skipped without). */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/client.h"
#include "shared/protocol.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static int sv[2]; /* sv[0] the client's end, sv[1] the server's */

static void setup(void)
{
	unit_tmpdir(dir, "test-client");
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
	unit_rmdir(dir);
}

/* The server's next messages, queued before the client asks. */
static void serve(const char *msg)
{
	ck_assert_int_eq(send(sv[1], msg, strlen(msg), 0), (ssize_t)strlen(msg));
}

/* What the client sent, as text. */
static const char *request(void)
{
	static char buf[PROTO_MSG_MAX + 1];
	ssize_t n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);

	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	return buf;
}

/* Every message handed to on_msg, "HEAD key=value ..." per line. */
static char seen[8192];
static int stop_at = -1, n_seen;

static int on_msg(void *ud, const struct proto_msg *m)
{
	size_t len = strlen(seen);

	snprintf(seen + len, sizeof(seen) - len, "%s", m->head);
	for (size_t i = 0; i < m->n; i++) {
		len = strlen(seen);
		snprintf(seen + len, sizeof(seen) - len, " %s=%s", m->f[i].key, m->f[i].value);
	}
	len = strlen(seen);
	snprintf(seen + len, sizeof(seen) - len, "\n");
	return ++n_seen == stop_at ? -ECANCELED : 0;
}

static int call(const char *req, int *err)
{
	seen[0] = '\0';
	n_seen = 0;
	return client_call(sv[0], req, strlen(req), on_msg, NULL, err);
}

/* $RTSCHED_SOCKET, the argument and the default, in that order of weight. */
START_TEST(test_socket_path)
{
	unsetenv(PROTO_SOCKET_ENV);
	ck_assert_str_eq(client_socket_path(NULL), PROTO_DEFAULT_SOCKET);
	ck_assert_str_eq(client_socket_path(""), PROTO_DEFAULT_SOCKET);
	setenv(PROTO_SOCKET_ENV, "/tmp/from-env", 1);
	ck_assert_str_eq(client_socket_path(NULL), "/tmp/from-env");
	ck_assert_str_eq(client_socket_path("/tmp/given"), "/tmp/given");
	setenv(PROTO_SOCKET_ENV, "", 1);
	ck_assert_str_eq(client_socket_path(NULL), PROTO_DEFAULT_SOCKET);
	unsetenv(PROTO_SOCKET_ENV);
}
END_TEST

/* A request, its ROWs and OK; an ERR and the errno and error it maps to. */
START_TEST(test_call)
{
	int err = -1;

	serve("ROW tid=1 comm=a%20b");
	serve("ROW tid=2");
	serve("OK rows=2");
	ck_assert_int_eq(call("v=1 op=list", &err), 0);
	ck_assert_int_eq(err, -1);   /* untouched on success */
	ck_assert_str_eq(request(), "v=1 op=list");
	ck_assert_str_eq(seen, "ROW tid=1 comm=a b\nROW tid=2\nOK rows=2\n");

	serve("ERR not-own-thread diag=rtprio-zero tid 5 is another user's");
	ck_assert_int_eq(call("v=1 op=register tid=5", &err), -proto_error_errno(PE_NOT_OWN_THREAD));
	ck_assert_int_eq(err, PE_NOT_OWN_THREAD);
	ck_assert_str_eq(seen, "ERR diag=rtprio-zero\n");
	/* a code this client does not know: internal, not a crash or a pass */
	serve("ERR from-the-future something new");
	ck_assert_int_eq(call("v=1 op=status", &err), -proto_error_errno(PE_INTERNAL));
	ck_assert_int_eq(err, PE_INTERNAL);
	/* an ERR without a message */
	serve("ERR rate-limited");
	ck_assert_int_eq(call("v=1 op=status", &err), -proto_error_errno(PE_RATE_LIMITED));
	ck_assert_int_eq(err, PE_RATE_LIMITED);
	/* no err pointer: fine */
	serve("ERR quota too many");
	ck_assert_int_eq(client_call(sv[0], "v=1 op=x", 8, NULL, NULL, NULL), -proto_error_errno(PE_QUOTA));
}
END_TEST

/* The handler stops the call with its own error; the rest stays unread. */
START_TEST(test_call_stopped)
{
	serve("ROW n=1");
	serve("ROW n=2");
	serve("OK");
	stop_at = 1;
	ck_assert_int_eq(call("v=1 op=list", NULL), -ECANCELED);
	stop_at = -1;
	ck_assert_str_eq(seen, "ROW n=1\n");
}
END_TEST

/* The transport failing: closed, garbled, silent. */
START_TEST(test_call_failures)
{
	struct timeval tv = { 0, 50000 };
	int err = -1;

	/* a reply that is no reply */
	serve("HELLO there");
	ck_assert_int_eq(call("v=1 op=status", &err), -EPROTO);
	ck_assert_int_eq(err, -1);
	/* no answer within the receive timeout (10 s by client_connect; short here) */
	ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	ck_assert_int_eq(call("v=1 op=status", &err), -ETIMEDOUT);
	/* the server closed the connection after some rows */
	serve("ROW n=1");
	ck_assert_int_eq(shutdown(sv[1], SHUT_WR), 0);
	ck_assert_int_eq(call("v=1 op=list", &err), -ECONNRESET);
	ck_assert_str_eq(seen, "ROW n=1\n");
	ck_assert_int_eq(err, -1);
	/* and the request could not even go (the server read what it had: a
	 * close with unread requests would be a reset instead) */
	while (recv(sv[1], seen, sizeof(seen), MSG_DONTWAIT) >= 0)
		;
	close(sv[1]);
	sv[1] = -1;
	ck_assert_int_eq(call("v=1 op=list", &err), -EPIPE);
}
END_TEST

/* A descriptor goes with the request, as SCM_RIGHTS, and stays the caller's. */
START_TEST(test_call_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cbuf;
	char buf[PATH_MAX + 16];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;
	struct stat a, b;
	int fd, got;
	ssize_t n;

	unit_write(dir, "passed", "x");
	snprintf(buf, sizeof(buf), "%s/passed", dir);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	serve("OK");
	ck_assert_int_eq(client_call_fd(sv[0], "v=1 op=jitter-attach", 20, fd, on_msg, NULL, NULL), 0);
	n = recvmsg(sv[1], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	ck_assert_int_eq(n, 20);
	c = CMSG_FIRSTHDR(&mh);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->cmsg_type, SCM_RIGHTS);
	ck_assert_uint_eq(c->cmsg_len, CMSG_LEN(sizeof(int)));   /* exactly one */
	memcpy(&got, CMSG_DATA(c), sizeof(got));
	ck_assert_int_eq(fstat(got, &a), 0);
	ck_assert_int_eq(fstat(fd, &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino);
	ck_assert_uint_eq(a.st_dev, b.st_dev);
	close(got);
	close(fd);
	/* passfd < 0: nothing passed */
	serve("OK");
	ck_assert_int_eq(client_call_fd(sv[0], "v=1 op=status", 13, -1, NULL, NULL, NULL), 0);
	mh.msg_controllen = sizeof(cbuf.buf);
	ck_assert_int_eq(recvmsg(sv[1], &mh, MSG_DONTWAIT), 13);
	ck_assert_ptr_null(CMSG_FIRSTHDR(&mh));
}
END_TEST

/* A listening socket of ours at PATH (not accepting: connect succeeds on
 * the backlog), or -errno. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
		return -errno;
	return fd;
}

/* Connecting: to our own server; to nothing; to a path too long. */
START_TEST(test_connect)
{
	char path[PATH_MAX + 16], longp[200];
	struct timeval tv;
	socklen_t len = sizeof(tv);
	int l, fd;

	snprintf(path, sizeof(path), "%s/control", dir);
	ck_assert_int_eq(client_connect(path), -ENOENT);
	l = listen_at(path);
	ck_assert_int_ge(l, 0);
	fd = client_connect(path);
	ck_assert_int_ge(fd, 0);
	/* a daemon that never answers cannot hang the caller forever */
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len), 0);
	ck_assert_int_eq(tv.tv_sec, 10);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len), 0);
	ck_assert_int_eq(tv.tv_sec, 10);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	close(l);
	ck_assert_int_eq(client_connect(path), -ECONNREFUSED);
	memset(longp, 'x', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	ck_assert_int_eq(client_connect(longp), -ENAMETOOLONG);
}
END_TEST

/* Root only (main): a server of another uid (neither root, the daemon's
 * user nor us) is not believed: -EPERM before anything is sent. */
START_TEST(test_connect_squatter)
{
	char path[PATH_MAX + 16];
	int pipefd[2], st;
	pid_t child;
	char c;

	snprintf(path, sizeof(path), "%s/control", dir);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int l;
		close(pipefd[0]);
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		/* nobody cannot bind in root's directory: make the socket in /tmp */
		snprintf(path, sizeof(path), "/tmp/rtschedd-test-client.%d", (int)getpid());
		unlink(path);
		if ((l = listen_at(path)) < 0 || write(pipefd[1], "y", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	snprintf(path, sizeof(path), "/tmp/rtschedd-test-client.%d", (int)child);
	ck_assert_int_eq(client_connect(path), -EPERM);
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("client");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_socket_path);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_call_stopped);
	tcase_add_test(tc, test_call_failures);
	tcase_add_test(tc, test_call_fd);
	tcase_add_test(tc, test_connect);
	if (geteuid() == 0)
		tcase_add_test(tc, test_connect_squatter);
	else
		unit_skip("test_connect_squatter: needs root, to serve the socket as another uid");
	suite_add_tcase(s, tc);
	return unit_run(s);
}
