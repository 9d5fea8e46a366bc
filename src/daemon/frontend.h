/* frontend.h: what every front end (the control socket, the rtkit bus
 * service) and the dispatch of requests hand each other: who is asking,
 * where the replies go, what a grant gave (and what it asks: struct
 * grant_request, core/grant.h). A header of types only, below
 * both the transports and dispatch, so neither needs the other's header. */
#ifndef RTSCHED_FRONTEND_H
#define RTSCHED_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/protocol.h"
#include "daemon/core/grant.h"
#include "daemon/core/task.h"
#include "daemon/diag/diag.h"
#include "daemon/sys/proc.h"

/* The client, from SO_PEERCRED, and its process pinned by a pidfd
 * (SO_PEERPIDFD, or pidfd_open() at accept on older kernels). */
struct peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	uid_t account; /* whose limits, rate and connection slots it uses (grant.h) */
	int pidfd; /* -1 if none */
	bool gone; /* the process had exited by accept: pid names no process of ours */
	bool foreign; /* pid is a process the caller named, not its own (rtkit's WithPID): the
		       * target's real uid is read too, not only its /proc owner */
};

/* What a front end has just read from the kernel about the thread it asks
 * for, for a check of its own (the rtkit service's RLIMIT_RTTIME contract):
 * its process's rlimits and, if pid is not 0, that it is a thread of process
 * pid running as owner (what proc_task_owner() says). The grant path takes
 * them rather than reading them again (the limits' read alone costs ~8 us,
 * as much as the rest of a grant). */
struct frontend_task {
	pid_t tid;
	struct proc_rlimits limits;
	pid_t pid;                  /* 0: the process and owner were not read */
	uid_t owner;
	uint64_t starttime;         /* with owner: the start time of the thread whose
				       owner it is, read first (0: not read) */
};

/* Where reply messages go (each call is one message). */
typedef void (*reply_fn)(void *ud, const char *msg, size_t len);

/* What the grant path answered a front end's register of a thread. */
struct frontend_grant {
	pid_t tid, pid;             /* granted: the thread, now managed */
	struct task_sched applied;  /* and what the kernel reports it has */
	enum proto_error code;      /* refused: the wire code */
	char diag[DIAG_CODE_MAX];   /* on apply-failed: the diagnosed cause's code, "" if none */
};

#endif
