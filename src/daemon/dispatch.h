/* dispatch.h: the one entry point of a control request (parsing, the
 * protocol version, the op table and its gatekeeping), apart from socket
 * I/O so it can be tested and fuzzed on its own. */
#ifndef RTSCHED_DISPATCH_H
#define RTSCHED_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "daemon/frontend.h"

/* Rate limit for every front end: take one of uid's tokens. 0 if there was
 * one, else -EAGAIN with msg saying how many are allowed and where that is
 * set. */
int dispatch_rate(struct daemon *d, uid_t uid, char *msg, size_t len);

/* Root, or a member of the configured admin-group. */
bool dispatch_privileged(struct daemon *d, uid_t uid, gid_t gid, pid_t pid);

/* Parse, authorize and carry out one request, replying through `reply`.
 * `fd` is a descriptor the client passed (-1 if none); it is always
 * consumed: kept by jitter-attach, closed otherwise. */
void dispatch_request(struct daemon *d, const struct peer *p, const void *data, size_t len, int fd,
		      reply_fn reply, void *ud);

#endif
