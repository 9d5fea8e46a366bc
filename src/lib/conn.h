/* conn.h: how librtsched reaches rtschedd: a connection kept per process
 * (fork-safe, re-opened once after a daemon restart), or one per call.
 * conn.c says when the kept connection is and is not used. */
#ifndef RTSCHED_LIB_CONN_H
#define RTSCHED_LIB_CONN_H

#include <stddef.h>

#include "shared/protocol.h"

/* Send one request (with passfd by SCM_RIGHTS if >= 0) on the kept
 * connection to socket (NULL: $RTSCHED_SOCKET or the default) and hand each
 * reply message to on_msg, as client_call_fd() does. Returns its result;
 * *connect_err is the -errno of a failed connect (0 if connecting was not
 * what failed). */
int conn_call(const char *socket, const char *req, size_t len, int passfd,
	      int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *connect_err);
/* The same on a connection of its own, closed afterwards. */
int conn_call_oneshot(const char *socket, const char *req, size_t len, int passfd,
		      int (*on_msg)(void *ud, const struct proto_msg *m), void *ud, int *connect_err);
/* Close the kept connection, if any; the next conn_call opens a new one. */
void conn_close(void);

#endif
