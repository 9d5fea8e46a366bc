/* client.c: control protocol client (see client.h). Never logs, never exits:
 * librtsched is built on it. */
#include "autoconfig.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/client.h"

#define CLIENT_TIMEOUT_S 10

const char *client_socket_path(const char *path)
{
	const char *env;

	if (path && *path)
		return path;
	env = secure_getenv(PROTO_SOCKET_ENV);
	return env && *env ? env : PROTO_DEFAULT_SOCKET;
}

/* The uid of RTSCHED_DAEMON_USER, looked up once per process; -1: no such
 * user (or the look-up failed). */
static pthread_once_t daemon_once = PTHREAD_ONCE_INIT;
static uid_t daemon_uid = (uid_t)-1;

static void daemon_lookup(void)
{
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (getpwnam_r(RTSCHED_DAEMON_USER, &pw, buf, sizeof(buf), &res) == 0 && res)
		daemon_uid = res->pw_uid;
}

void client_resolve_daemon_user(void)
{
	pthread_once(&daemon_once, daemon_lookup);
}

void client_load_daemon_user(void)
{
	struct stat st;

	/* the usual socket, root's (socket activation) or the caller's own (a
	 * private daemon): its server is believed without the look-up */
	if (stat(client_socket_path(NULL), &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (st.st_uid == 0 || st.st_uid == getuid() || st.st_uid == geteuid()))
		return;
	client_resolve_daemon_user();
}

/* Who may serve the socket: root, the user the daemon drops to
 * (RTSCHED_DAEMON_USER, its uid as client_resolve_daemon_user() found it),
 * or the caller itself (a private daemon). Anyone else squats the path and
 * would answer "OK fifo 99" to a request it never passed on. */
static int check_server(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid == 0 || cred.uid == getuid() || cred.uid == geteuid())
		return 0;
	/* at once if the library's constructor looked it up (librtsched and
	 * the preload library do, unless their socket was root's or the
	 * caller's then); rtschedctl looks it up here */
	client_resolve_daemon_user();
	if (daemon_uid != (uid_t)-1 && cred.uid == daemon_uid)
		return 0;
	return -EPERM;
}

int client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_S };
	int fd, r;

	path = client_socket_path(path);
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a daemon that never answers must not hang a worker thread forever */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (errno = -check_server(fd)) != 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int client_call(int fd, const char *req, size_t len, int (*on_msg)(void *ud, const struct proto_msg *m),
		void *ud, int *err)
{
	return client_call_fd(fd, req, len, -1, on_msg, ud, err);
}

int client_call_fd(int fd, const char *req, size_t len, int passfd,
		   int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { (void *)req, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct proto_msg *m;
	char buf[PROTO_MSG_MAX + 1];
	int r;

	if (passfd >= 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &passfd, sizeof(int));
	}
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno; /* SO_SNDTIMEO, not a refusal */
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			r = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0) {
			r = -ECONNRESET;
			break;
		}
		if (proto_parse_reply(m, buf, (size_t)n) < 0) {
			r = -EPROTO;
			break;
		}
		if (on_msg && (r = on_msg(ud, m)) < 0)
			break;
		if (strcmp(m->head, "ROW") == 0)
			continue;
		if (strcmp(m->head, "OK") == 0) {
			r = 0;
			break;
		}
		/* ERR code message */
		char code[32];
		size_t cl = strcspn(m->rest, " ");
		snprintf(code, sizeof(code), "%.*s", (int)(cl < sizeof(code) ? cl : sizeof(code) - 1), m->rest);
		int e = proto_error_from_code(code);
		if (err)
			*err = e < 0 ? PE_INTERNAL : e;
		r = -proto_error_errno(e < 0 ? PE_INTERNAL : (enum proto_error)e);
		break;
	}
	free(m);
	return r;
}
