/* ops/register.h: the grant path of a `register`, for every front end (the
 * control socket, the rtkit bus service). */
#ifndef RTSCHED_OPS_REGISTER_H
#define RTSCHED_OPS_REGISTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/diag/diag.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"

/* What register_grant() granted: the thread (or, is_pid, the process) now
 * managed, and the rtprio-cap that applied. */
struct register_granted {
	struct reg_thread *thread;
	struct reg_process *process;
	struct grant_cap cap;
	char diag[DIAG_CODE_MAX];   /* on apply-failed: the diagnosed cause's code, "" if none */
};

/* The grant path of a `register`, for every front end (the control socket,
 * the rtkit bus service): rate limit, the target is the caller's (pid from
 * the peer, checked alive through its pidfd, and running as the caller's
 * uid, real and effective, which also guards a pid the bus gave without a
 * pidfd), the rule, the watchdog's
 * cooldown, [user]/[group] limits and rtprio-cap, then the registry (restore
 * on exit, watchdog, jitter). Returns -1 when granted (*out filled), else a
 * proto_error with msg saying why and what to do; msg may hold a warning
 * after a grant too. */
int register_grant(struct daemon *d, const struct peer *peer, pid_t id, bool is_pid,
		   const struct grant_request *req, enum reg_source source, struct register_granted *out,
		   char *msg, size_t len);

#endif
