/* internal.h: what librtsched's files share and do not export. */
#ifndef RTSCHED_LIB_INTERNAL_H
#define RTSCHED_LIB_INTERNAL_H

#include "shared/protocol.h"
#include "rtsched.h"

/* One request on the process's kept connection (conn.c), with an optional
 * descriptor (passfd < 0: none); the daemon's message for a failure is kept for
 * rtsched_last_message(); the OK's fields fill *grant if given. */
int lib_call(const char *socket, struct proto_buf *b, int passfd, struct rtsched_grant *grant);

/* rtsched_register() with the request's source= field ("preload" from the
 * preload library; NULL: none, the daemon's "thread"). */
int lib_register(const struct rtsched_request *req, const char *source, struct rtsched_grant *grant);
/* The wire code of this thread's last ERR from the daemon ("priority-denied");
 * "" when the last call got no ERR (granted, or the daemon was not reached). */
const char *lib_last_code(void);

#endif
