/* conn.c: librtsched's kept connection to rtschedd (see conn.h).
 *
 * One connection per process, opened on the first request and reused by
 * every later one, so a registration costs one round trip instead of a
 * connect, an accept, the daemon's credential look-ups and a close.
 *
 * Who may use it. rtschedd authorizes a connection by the credentials the
 * kernel recorded when it was opened (SO_PEERCRED: pid, euid, egid;
 * SO_PEERPIDFD). So the connection is only ever used by the process that
 * opened it, with the effective ids it had then:
 *   - a child of fork() closes it at once (pthread_atfork child handler),
 *     before any code of the child runs, and opens its own on its first
 *     request; a child made by clone(2) without fork's handlers finds
 *     getpid() changed and drops it on its first request;
 *   - a process whose euid or egid changed since it connected reconnects;
 *   - a descriptor closed behind the library's back (closefrom, a loop over
 *     /proc/self/fd) and reused for something else is noticed by its inode
 *     and never written to.
 * Threads. One request at a time uses the kept connection (a trylock); a
 * thread that finds it busy makes its request on a connection of its own
 * rather than wait for another thread's round trip.
 * Who may serve it: client_connect()'s check, with the daemon user's uid
 * looked up once, when the library is loaded (conn_load()), unless the
 * socket was root's or ours then.
 * Restarts. A request that fails on the transport (EPIPE, ECONNRESET,
 * ENOTCONN: the daemon restarted or dropped the connection) on a connection
 * that had been kept is retried once on a new one. Any other transport
 * failure (a timeout, a garbled reply) drops the connection too, so a late
 * reply can never be read as the answer to the next request. */
#include "autoconfig.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/client.h"
#include "lib/conn.h"

struct kept {
	pthread_mutex_t lock; /* held for one request on fd */
	int fd;               /* -1: none */
	pid_t pid;            /* the process that connected */
	uid_t euid;           /* its effective ids then (what SO_PEERCRED says) */
	gid_t egid;
	dev_t dev;            /* the socket's identity, to notice a closed and */
	ino_t ino;            /* reused descriptor */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static struct kept kept = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* At load time, the uid of the daemon's user if the socket is not root's or
 * ours (client_load_daemon_user()): never on a request, which may come from
 * a real-time thread, or from a thread a library constructor made inside
 * dlopen() while the loader's lock is held, where an NSS module load would
 * deadlock. */
__attribute__((constructor)) static void conn_load(void)
{
	client_load_daemon_user();
}

/* In a fork()ed child, before it runs any code of its own: the parent's
 * connection is not the child's to use. The child has only this thread, so
 * nobody holds the lock but a thread that no longer exists. */
static void atfork_child(void)
{
	if (kept.fd >= 0)
		close(kept.fd);
	kept.fd = -1;
	pthread_mutex_init(&kept.lock, NULL);
}

static void atfork_register(void)
{
	pthread_atfork(NULL, NULL, atfork_child);
}

/* Is kept.fd still the socket we opened? */
static bool kept_is_ours(void)
{
	struct stat s;

	return fstat(kept.fd, &s) == 0 && S_ISSOCK(s.st_mode) && s.st_dev == kept.dev && s.st_ino == kept.ino;
}

/* Forget the kept connection, closing it only if the descriptor is still
 * ours (after a closefrom it may be someone else's now). In a clone(2)
 * child that shares the descriptor table, closing it ends the parent's
 * connection too: the parent notices by its inode and reconnects. */
static void kept_drop(bool close_it)
{
	if (kept.fd >= 0 && close_it && kept_is_ours())
		close(kept.fd);
	kept.fd = -1;
}

/* The kept connection to path, reused if it is still valid for this
 * process, else a new one; *reused says which. fd or -errno. */
static int kept_get(const char *path, bool *reused)
{
	struct stat s;
	int fd;

	*reused = false;
	if (kept.fd >= 0) {
		if (kept.pid == getpid() && kept.euid == geteuid() && kept.egid == getegid() &&
		    strcmp(kept.path, path) == 0 && kept_is_ours()) {
			*reused = true;
			return kept.fd;
		}
		kept_drop(true);
	}
	if (strlen(path) >= sizeof(kept.path))
		return -ENAMETOOLONG;
	fd = client_connect(path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &s) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	pthread_once(&atfork_once, atfork_register);
	kept.fd = fd;
	kept.pid = getpid();
	kept.euid = geteuid();
	kept.egid = getegid();
	kept.dev = s.st_dev;
	kept.ino = s.st_ino;
	strcpy(kept.path, path);
	return fd;
}

/* A transport failure that a new connection may cure: the daemon went away
 * (restart, crash) or dropped this connection. */
static bool is_reset(int r)
{
	return r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN;
}

int conn_call_oneshot(const char *socket, const char *req, size_t len, int passfd,
		      int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *connect_err)
{
	int fd, r;

	*connect_err = 0;
	fd = client_connect(socket);
	if (fd < 0) {
		*connect_err = fd;
		return fd;
	}
	r = client_call_fd(fd, req, len, passfd, on_msg, ud, NULL);
	close(fd);
	return r;
}

int conn_call(const char *socket, const char *req, size_t len, int passfd,
	      int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *connect_err)
{
	const char *path = client_socket_path(socket);
	bool reused;
	int fd, r, perr;

	if (pthread_mutex_trylock(&kept.lock) != 0)
		return conn_call_oneshot(socket, req, len, passfd, on_msg, ud, connect_err);
	*connect_err = 0;
	for (int attempt = 0;; attempt++) {
		fd = kept_get(path, &reused);
		if (fd < 0) {
			*connect_err = r = fd;
			break;
		}
		perr = -1;
		r = client_call_fd(fd, req, len, passfd, on_msg, ud, &perr);
		if (r >= 0 || perr >= 0)
			break; /* OK, or the daemon's ERR: the connection is fine */
		kept_drop(true);
		if (!reused || !is_reset(r) || attempt > 0)
			break;
	}
	pthread_mutex_unlock(&kept.lock);
	return r;
}

void conn_close(void)
{
	pthread_mutex_lock(&kept.lock);
	kept_drop(true);
	pthread_mutex_unlock(&kept.lock);
}
