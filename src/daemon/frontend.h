/* frontend.h: what every front end (the control socket, the rtkit bus
 * service) hands the dispatch of requests: who is asking, and where the
 * replies go. A header of types only, below both the transports and
 * dispatch, so neither needs the other's header. */
#ifndef RTSCHED_FRONTEND_H
#define RTSCHED_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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

#endif
