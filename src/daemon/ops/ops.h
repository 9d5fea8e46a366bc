/* ops/ops.h: what dispatch.c and the ops in ops/ share, and no other module
 * uses: the op flags, the request being handled, the reply helpers, the
 * grant path and the ops themselves. The ops act on a struct service
 * (service.h), never on the daemon. */
#ifndef RTSCHED_OPS_H
#define RTSCHED_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "shared/protocol.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/core/task.h"
#include "daemon/diag/diag.h"
#include "daemon/frontend.h"
#include "daemon/service.h"
#include "daemon/sys/clock.h"

/* What dispatch.c checks and parses before an op runs, from the op's flags
 * in its table; what it parsed is in struct ctx. */
enum op_flag {
	OP_FD = 1 << 0,       /* takes a descriptor (SCM_RIGHTS); the others refuse one */
	OP_TARGET = 1 << 1,   /* names a task: tid= or pid=, exactly one (x->id, x->is_pid) */
	OP_SCHED = 1 << 2,    /* takes role, policy, priority, nice, cpus (x->req) */
	OP_SUBJECT = 1 << 3,  /* needs the caller's user and groups (x->subj) */
	OP_ADMIN = 1 << 4,    /* root or admin-group only (fills x->subj too) */
	OP_RATE = 1 << 5,     /* takes a rate-limit token of the caller's uid */
	OP_UNLISTED = 1 << 6, /* left out of the unknown-op refusal's list (librtsched's own) */
	OP_FREE = 1 << 7,     /* takes a token of the caller's free-rate-limit bucket (root aside) */
};

/* One request being handled. */
struct ctx {
	struct service *svc;
	const struct peer *peer;
	struct proto_msg *m;
	reply_fn reply;
	void *ud;
	struct proto_buf out;
	int fd;                      /* passed by the client; -1 once consumed */
	struct grant_subject subj;   /* OP_SUBJECT, OP_ADMIN */
	long id;                     /* OP_TARGET: the tid, or with is_pid the pid */
	bool is_pid;
	struct grant_request req;    /* OP_SCHED */
	uint64_t hold_until;         /* refused by a rate limit: the account's next token (CLOCK_MONOTONIC µs) */
	size_t rows;                 /* messages sent (send_buf), and managed threads an op looked through:
				      * dispatch charges them to the op's rate limit (ROWS_PER_TOKEN) */
};

/* The rows of a reply, or the threads a request looks through, that cost
 * one more token of its rate limit (rtschedd-protocol(7), RATE LIMIT). */
#define ROWS_PER_TOKEN 10

/* reply.c: the wire code of an answer of the core (core/refusal.h): a
 * refusal by the one table of them, a failure (-errno) as internal. */
enum proto_error ops_wire_error(int r);
/* reply.c: send x->out as one message (an internal error if it overflowed). */
void send_buf(struct ctx *x);
/* Refuse with wire error e; diag, if not NULL or "", is the diagnosed cause's code. */
void refuse_msg(struct ctx *x, int e, const char *diag, const char *msg);
/* Refuse with wire error e and a formatted message. */
void refuse(struct ctx *x, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Add the kernel's view of a thread's scheduling to a message. */
void add_sched(struct proto_buf *b, const struct task_sched *s);

/* register.c: may the client act on this task (privileged, or its own
 * thread running as its uid)? 0 if it may, else REFUSE_NOT_OWN_THREAD with
 * msg. */
int may_act_on(const struct peer *peer, const struct grant_subject *subj, const struct proc_status *ps,
	       const char *what, long id, char *msg, size_t len);

/* What register_grant() granted: the thread (or, is_pid, the process) now
 * managed, and the rtprio-cap that applied. */
struct register_granted {
	struct reg_thread *thread;
	struct reg_process *process;
	struct grant_decision decision;   /* the grant decision (its cap, or why it refused) */
	char diag[DIAG_CODE_MAX];   /* on apply-failed: the diagnosed cause's code, "" if none */
};

/* register.c: the grant path of a `register` past the rate limit, for
 * subject subj (dispatch_register() is the same for the other front ends):
 * the target is the caller's (pid from the peer, checked alive through its
 * pidfd, and running as the caller's uid: its effective uid, which also
 * guards a pid the bus gave without a pidfd), the rule, the watchdog's
 * cooldown, [user]/[group] limits and rtprio-cap, then the registry
 * (restore on exit, watchdog, jitter). Returns 0 when granted (*out
 * filled), else a refusal (enum refusal) or -errno with msg saying why and
 * what to do; msg may hold a warning after a grant too. known: what the
 * front end has just read about thread id (NULL: nothing), not read again. */
int register_grant(struct service *s, const struct peer *peer, const struct grant_subject *subj, pid_t id,
		   bool is_pid, const struct grant_request *req, enum reg_source source,
		   const struct frontend_task *known, struct register_granted *out, char *msg, size_t len);

/* register.c: the detail of a cooldown refusal (struct grant_ask's
 * cooldown_note): the culprit, who is held and for how long; "" if no
 * cooldown runs. */
void ops_cooldown_note(struct service *s, char *buf, size_t len);

/* The ops (see rtschedd-protocol(7)), one per request's op=. */
void op_version(struct ctx *x);
void op_status(struct ctx *x);
void op_list(struct ctx *x);
void op_register(struct ctx *x);
void op_unregister(struct ctx *x);
void op_reload(struct ctx *x);
void op_check(struct ctx *x);
void op_jitter(struct ctx *x);
void op_jitter_reset(struct ctx *x);
void op_jitter_attach(struct ctx *x);
void op_metrics(struct ctx *x);
void op_why(struct ctx *x);
/* why.c: a jitter row's summary of tid's late wake-ups: how many, its
 * threshold and budget, and its culprits as culprit_N_name, _kind,
 * _share_pct, _total_ns and _first (nothing if the observer does not watch
 * it). */
void why_add_summary(struct ctx *x, pid_t tid);

#endif
