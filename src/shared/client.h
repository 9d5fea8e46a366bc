/* client.h: the client side of the control protocol, shared by rtschedctl
 * and librtsched: connect, send one request, collect the reply messages. */
#ifndef RTSCHED_CLIENT_H
#define RTSCHED_CLIENT_H

#include <stddef.h>

#include "shared/protocol.h"

/* The socket path: `path` if given, else $RTSCHED_SOCKET, else the default. */
const char *client_socket_path(const char *path);
/* The system user rtschedd runs as (systemd/sysusers.d, User= in the unit). */
#define RTSCHED_DAEMON_USER "rtschedd"

/* Look up RTSCHED_DAEMON_USER's uid, once per process (later calls return
 * at once). The look-up goes through NSS, which may load a module (taking
 * the dynamic loader's lock) or ask sssd or userdb: nothing a request may
 * wait for, as it can come from a real-time thread or from a thread that a
 * library constructor created inside dlopen() and waits for. A user
 * created after the look-up is not seen by a process already running. */
void client_resolve_daemon_user(void);
/* What librtsched and the preload library call at load time
 * (constructors): client_resolve_daemon_user(), unless the socket
 * (client_socket_path(NULL)) is there and root's or the caller's, whose
 * server is believed without it (socket activation: the usual case, and
 * no NSS round trip at every program's start). */
void client_load_daemon_user(void);
/* Connect to the daemon; returns an fd or -errno. -EPERM: the socket is
 * served by a uid that is neither root, RTSCHED_DAEMON_USER nor the caller's,
 * so nothing it answers can be believed. Makes no NSS look-up once
 * client_resolve_daemon_user() has run, and none for a server of root or
 * of the caller; else it makes that call itself. */
int client_connect(const char *path);
/* Send a request and pass each reply message to on_msg (ROW messages, then
 * the final OK or ERR). Returns 0 when the final message is OK, the
 * proto_error's errno negated for ERR (with *err set to the error), or
 * -errno for transport failures. */
int client_call(int fd, const char *req, size_t len, int (*on_msg)(void *ud, const struct proto_msg *m),
		void *ud, int *err);
/* client_call() that also passes one file descriptor (SCM_RIGHTS) with the
 * request; passfd < 0 sends none. */
int client_call_fd(int fd, const char *req, size_t len, int passfd,
		   int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *err);

#endif
