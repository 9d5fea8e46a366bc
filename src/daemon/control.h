/* control.h: the control socket: AF_UNIX SOCK_SEQPACKET, from systemd socket
 * activation when present, else created by the daemon; one request per
 * message, answered in the event loop. */
#ifndef RTSCHED_CONTROL_H
#define RTSCHED_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "daemon/frontend.h"

/* What one user can hold (rtschedd-protocol(7), "Connections", lists these;
 * tests/docs.sh checks that it does). */
#define MAX_CLIENTS 4096
#define RESERVED_PRIVILEGED 64  /* slots only root and admin-group may take */
#define MAX_PER_UID 128         /* connections of one non-privileged uid */
#define QUEUE_PAUSE (256u << 10) /* unread reply bytes above which we stop reading the client */
#define MAX_QUEUED (64u << 20)  /* bytes of unread replies (one huge reply) before a client is dropped */
#define ACCOUNT_QUEUE_PAUSE (1u << 20) /* the same as QUEUE_PAUSE for all of one user's connections together */
#define RATE_HOLD_MAX_US 1000   /* a user over a rate limit: its connections unread this long, times their number, at most */
#define ACCEPT_BATCH 32u        /* connections one turn of the loop accepts, at most (and for PROCEV_SLICE_US) */
#define VERDICT_TRUST_US 1000000u /* a uid at its cap is refused without a look-up for this long after one */

struct control;
struct closer;

/* Where the socket's requests go, and who may take the connections kept
 * for root and admin-group: the daemon wires these to dispatch. */
struct control_handlers {
	/* One request from p, *fd the descriptor it passed (-1 if none),
	 * answered through reply(reply_ud, ...). The handler sets *fd to -1 if
	 * it kept the descriptor; else the control socket has it closed off
	 * the event loop (closer.h). Returns 0, or the CLOCK_MONOTONIC time
	 * (µs) until which p's account is over a rate limit: none of that
	 * account's connections is read until then (its requests wait in the
	 * socket instead of each costing the loop a refusal). */
	uint64_t (*request)(void *ud, const struct peer *p, const void *data, size_t len, int *fd, reply_fn reply,
			    void *reply_ud);
	/* Root or a member of admin-group. *admin_gid: admin-group's gid as
	 * looked up ((gid_t)-1: none), the one primary gid that could make a
	 * uid found not privileged so (its membership is the uid's own). */
	bool (*privileged)(void *ud, uid_t uid, gid_t gid, pid_t pid, gid_t *admin_gid);
	/* The user uid counts as (grant.h's account: a subordinate uid's owner). */
	uid_t (*account)(void *ud, uid_t uid);
};

/* Take the activated socket or create one at `path`, served on the event
 * loop `e`; requests go to the handlers, with `ud`. Descriptors clients
 * hand over, and their connections, are closed through `closer`. */
int control_new(struct control **ret, sd_event *e, const char *path, const struct control_handlers *h, void *ud,
		struct closer *closer);
/* A close a client waited for finished: read again from clients paused
 * for their pending closes (closer.h). */
void control_resume_closed(struct control *c);
/* True when the socket came from systemd. */
bool control_activated(const struct control *c);
/* Number of connected clients. */
unsigned control_n_clients(const struct control *c);
/* Close every client and the socket (removing the path if we created it). */
void control_free(struct control *c);

#endif
