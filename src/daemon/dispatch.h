/* dispatch.h: the one entry point of requests from every front end: a
 * control request (parsing, the protocol version, the op table and its
 * gatekeeping), apart from socket I/O so it can be tested and fuzzed on its
 * own; and the register and reset of the rtkit bus service, through the
 * same grant path. Everything acts on a struct service (service.h). */
#ifndef RTSCHED_DISPATCH_H
#define RTSCHED_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/frontend.h"

struct service;

/* Root, or a member of the configured admin-group. *admin_gid (if not
 * NULL): that group's gid as the look-up found it, (gid_t)-1 if none. */
bool dispatch_privileged(struct service *s, uid_t uid, gid_t gid, pid_t pid, gid_t *admin_gid);

/* Parse, authorize and carry out one request, replying through `reply`.
 * *fd is a descriptor the client passed (-1 if none): set to -1 when the
 * op kept it (jitter-attach, a sealed memfd); otherwise it is left for the
 * caller, which has it closed off the event loop (closer.h). Returns 0, or
 * when a rate limit refused it the CLOCK_MONOTONIC time (µs) at which p's
 * account has a token again: the control socket reads none of that
 * account's requests until then. */
uint64_t dispatch_request(struct service *s, const struct peer *p, const void *data, size_t len, int *fd,
		      reply_fn reply, void *ud);

/* The grant path of a register from a front end other than the control
 * socket: the rate limit, the caller's user and groups, then what a
 * control-socket register of thread `tid` goes through (ownership, the
 * rule, the watchdog's cooldown, the limits, the registry: the one grant
 * decision, grant_decide()). Returns 0 when granted (out->tid, pid,
 * applied), else the refusal (enum refusal, > 0) or -errno, with its wire
 * code in out->code, out->diag and msg saying why; msg may hold a warning
 * after a grant too. known: what the
 * front end has just read about tid (NULL: nothing), not read again. */
int dispatch_register(struct service *s, const struct peer *p, pid_t tid, const struct grant_request *req,
		      enum reg_source source, const struct frontend_task *known, struct frontend_grant *out,
		      char *msg, size_t len);

/* Give the threads that `source` granted their scheduling back (all: every
 * managed thread; a registered process goes with its threads), then let the
 * daemon follow. Returns how many threads. */
size_t dispatch_reset(struct service *s, enum reg_source source, bool all);

#endif
