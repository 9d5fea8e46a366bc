/* request.h: handling of one control request, apart from socket I/O so it
 * can be tested and fuzzed on its own. */
#ifndef RTSCHED_REQUEST_H
#define RTSCHED_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "daemon/diag/diag.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"

/* The client, from SO_PEERCRED, and its process pinned by a pidfd
 * (SO_PEERPIDFD, or pidfd_open() at accept on older kernels). */
struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int pidfd; /* -1 if none */
	bool gone; /* the process had exited by accept: pid names no process of ours */
};

/* Where reply messages go (each call is one message). */
typedef void (*reply_fn)(void *ud, const char *msg, size_t len);

/* Root, or a member of the configured admin-group. */
bool request_privileged(struct daemon *d, uid_t uid, gid_t gid, pid_t pid);

/* Parse, authorize and carry out one request, replying through `reply`.
 * `fd` is a descriptor the client passed (-1 if none); it is always
 * consumed: kept by jitter-attach, closed otherwise. */
void request_handle(struct daemon *d, const struct peer *p, const void *data, size_t len, int fd,
		    reply_fn reply, void *ud);

/* What request_grant() granted: the thread (or, is_pid, the process) now
 * managed, and the rtprio-cap that applied. */
struct request_granted {
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
int request_grant(struct daemon *d, const struct peer *peer, pid_t id, bool is_pid,
		  const struct grant_request *req, enum reg_source source, struct request_granted *out,
		  char *msg, size_t len);

#endif
