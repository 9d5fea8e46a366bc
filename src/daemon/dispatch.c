/* dispatch.c: the control requests, from the wire to their op: parsing, the
 * protocol version, the one op table (version, status, list, register,
 * unregister, reload, jitter, jitter-attach, jitter-reset, metrics, why, check;
 * see rtschedd-protocol(7)) and the gatekeeping its flags ask for, done here
 * once for every op; the ops are in ops/. Every refusal carries its own
 * error code and a message naming the rule that refused it. The other front
 * ends' register and reset come through here too (dispatch.h). */
#include "autoconfig.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/protocol.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/dispatch.h"
#include "daemon/ops/ops.h"
#include "daemon/service.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"

/* One op: its name on the wire, what carries it out, and what dispatch
 * checks and parses before it runs (enum op_flag). */
struct op {
	const char *name;
	void (*run)(struct ctx *x);
	unsigned flags;
};

/* The order is the one the unknown-op refusal lists them in. */
static const struct op ops[] = {
	{ "version", op_version, OP_FREE },
	{ "status", op_status, OP_FREE },
	{ "list", op_list, OP_SUBJECT | OP_FREE },
	{ "register", op_register, OP_TARGET | OP_SCHED | OP_SUBJECT | OP_RATE },
	{ "unregister", op_unregister, OP_TARGET | OP_SUBJECT | OP_RATE },
	{ "reload", op_reload, OP_ADMIN | OP_RATE },
	{ "jitter", op_jitter, OP_RATE },
	{ "jitter-attach", op_jitter_attach, OP_FD | OP_SUBJECT | OP_UNLISTED | OP_RATE },
	{ "jitter-reset", op_jitter_reset, OP_ADMIN },
	{ "metrics", op_metrics, OP_RATE },
	{ "why", op_why, OP_RATE },
	{ "check", op_check, OP_SCHED | OP_SUBJECT | OP_RATE },
};

/* The rate limit of every front end, one token per request that costs, per
 * account (a user and its subordinate uids share one): 0 if it had one,
 * else REFUSE_RATE_LIMITED (a normal outcome) with msg saying how many are
 * allowed and where that is set. */
static int rate(struct service *s, uid_t uid, char *msg, size_t len)
{
	const struct config *c = s->config;

	if (ratelimit_take(s->ratelimit, uid, clock_usec(CLOCK_MONOTONIC), c->rate_limit, c->rate_burst))
		return 0;
	snprintf(msg, len, "more than %u requests per second (burst %u; a reply costs one more per %d rows) "
		 "from uid %u; slow down or raise rate-limit in [daemon]", c->rate_limit, c->rate_burst,
		 ROWS_PER_TOKEN, (unsigned)uid);
	return REFUSE_RATE_LIMITED;
}

/* The free ops' own limit (OP_FREE): what any user can make the loop do
 * without a token of rate-limit, bounded per account; root is not limited.
 * 0, else REFUSE_RATE_LIMITED with msg saying where it is set. */
static int free_rate(struct service *s, const struct peer *p, char *msg, size_t len)
{
	const struct config *c = s->config;

	if (p->uid == 0 ||
	    ratelimit_take(s->free_ratelimit, p->account, clock_usec(CLOCK_MONOTONIC), c->free_rate_limit,
			   c->free_rate_burst))
		return 0;
	snprintf(msg, len, "more than %u version/status/list requests per second (burst %u; a reply costs one "
		 "more per %d rows) from uid %u; slow down or raise free-rate-limit in [daemon]",
		 c->free_rate_limit, c->free_rate_burst, ROWS_PER_TOKEN, (unsigned)p->account);
	return REFUSE_RATE_LIMITED;
}

/* When an account refused by rl has a token again: the time the control
 * socket stops reading its connections until (a flood of refused requests
 * would otherwise cost the loop as much as served ones, and make every
 * other user's request wait behind them). */
static uint64_t hold_until(const struct ratelimit *rl, uid_t account, unsigned rate)
{
	uint64_t now = clock_usec(CLOCK_MONOTONIC);

	return now + ratelimit_wait(rl, account, now, rate);
}

/* Root, or admin-group: grant_subject_init()'s answer, without a name for
 * root; *admin_gid (if not NULL) as grant_subject's. */
bool dispatch_privileged(struct service *s, uid_t uid, gid_t gid, pid_t pid, gid_t *admin_gid)
{
	struct grant_subject subj;

	if (admin_gid)
		*admin_gid = (gid_t)-1;
	if (uid == 0)
		return true;
	grant_subject_init(&subj, s->config, uid, gid, pid);
	if (admin_gid)
		*admin_gid = subj.admin_gid;
	return subj.privileged;
}

/* OP_TARGET: tid= or pid=, exactly one, into x->id and x->is_pid. 0, or
 * -EINVAL after refusing. */
static int parse_target(struct ctx *x)
{
	long tid = 0, pid = 0;
	int rt = proto_get_long(x->m, "tid", 1, INT32_MAX, &tid);
	int rp = proto_get_long(x->m, "pid", 1, INT32_MAX, &pid);

	if ((rt == -ENOENT) == (rp == -ENOENT)) {
		refuse(x, PE_BAD_REQUEST, "give exactly one of tid=TID or pid=PID");
		return -EINVAL;
	}
	if ((rt != -ENOENT && rt < 0) || (rp != -ENOENT && rp < 0)) {
		refuse(x, PE_BAD_REQUEST, "tid and pid must be positive numbers");
		return -EINVAL;
	}
	x->is_pid = rp == 0;
	x->id = x->is_pid ? pid : tid;
	return 0;
}

/* OP_SCHED: the optional scheduling fields (role, policy, priority, nice,
 * cpus) into x->req. 0, or -EINVAL after refusing. */
static int parse_sched(struct ctx *x)
{
	struct grant_request *req = &x->req;
	const char *v;
	long n;
	int r;

	memset(req, 0, sizeof(*req));
	if ((v = proto_get(x->m, "role"))) {
		if (!*v || strlen(v) >= sizeof(req->role)) {
			refuse(x, PE_BAD_REQUEST, "role must be 1..%zu characters", sizeof(req->role) - 1);
			return -EINVAL;
		}
		strcpy(req->role, v);
	}
	if ((v = proto_get(x->m, "policy"))) {
		if ((req->policy = policy_from_string(v)) < 0) {
			refuse(x, PE_BAD_REQUEST, "unknown policy '%s'; use one of %s", v, policy_names());
			return -EINVAL;
		}
		req->has_policy = true;
	}
	if ((r = proto_get_long(x->m, "priority", 0, 99, &n)) != -ENOENT) {
		if (r < 0) {
			refuse(x, PE_BAD_REQUEST, "priority must be a number in 0..99");
			return -EINVAL;
		}
		req->priority = (int)n;
		req->has_priority = true;
	}
	if ((r = proto_get_long(x->m, "nice", -20, 19, &n)) != -ENOENT) {
		if (r < 0) {
			refuse(x, PE_BAD_REQUEST, "nice must be a number in -20..19");
			return -EINVAL;
		}
		req->nice = (int)n;
		req->has_nice = true;
	}
	if ((v = proto_get(x->m, "cpus"))) {
		cpu_set_t present, missing;
		char have[128];

		if (cpulist_parse(v, &req->cpus, NULL) < 0 || CPU_COUNT(&req->cpus) == 0) {
			refuse(x, PE_BAD_REQUEST, "bad CPU list '%s'; use the kernel's syntax, e.g. 0-3,6", v);
			return -EINVAL;
		}
		if (cpulist_present(&present) == 0 && cpulist_missing(&req->cpus, &present, &missing) > 0) {
			cpulist_format(&present, have, sizeof(have));
			refuse(x, PE_CPU_DENIED, "CPU list '%s' names CPUs that do not exist; present CPUs are %s",
			       v, have);
			return -EINVAL;
		}
		req->has_cpus = true;
	}
	return 0;
}

/* Everything an op's flags ask for, in this order: a descriptor only where
 * one is taken, the arguments (so a malformed request is refused as such
 * and costs no rate-limit token), the caller's user and groups, root or
 * admin-group, then the rate limit (or the free ops' one). 0 when the op may run, else -errno
 * after refusing. */
static int gate(struct ctx *x, const struct op *op)
{
	char msg[256];
	int r;

	if (x->fd >= 0 && !(op->flags & OP_FD)) {
		refuse(x, PE_BAD_REQUEST, "op %s takes no file descriptor; only jitter-attach does", op->name);
		return -EBADF;
	}
	if ((op->flags & OP_TARGET) && (r = parse_target(x)) < 0)
		return r;
	if ((op->flags & OP_SCHED) && (r = parse_sched(x)) < 0)
		return r;
	if (op->flags & (OP_SUBJECT | OP_ADMIN))
		grant_subject_init(&x->subj, x->svc->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if ((op->flags & OP_ADMIN) && !x->subj.privileged) {
		refuse(x, PE_NOT_ADMIN, "%s needs root or admin-group", op->name);
		return -EPERM;
	}
	if ((op->flags & OP_RATE) && (r = rate(x->svc, x->peer->account, msg, sizeof(msg))) != 0) {
		x->hold_until = hold_until(x->svc->ratelimit, x->peer->account, x->svc->config->rate_limit);
		refuse(x, ops_wire_error(r), "%s", msg);
		return r;
	}
	if ((op->flags & OP_FREE) && (r = free_rate(x->svc, x->peer, msg, sizeof(msg))) != 0) {
		x->hold_until = hold_until(x->svc->free_ratelimit, x->peer->account, x->svc->config->free_rate_limit);
		refuse(x, ops_wire_error(r), "%s", msg);
		return r;
	}
	return 0;
}

/* A request's rows (its reply's messages, the threads it looked through)
 * cost its account one more token of the op's bucket per ROWS_PER_TOKEN,
 * taken after it ran: a list of a big registry is that many requests' work
 * for the loop. The bucket may go below empty; the account's next request
 * is then refused, and its connections held, until it is paid back. Not
 * root's: the size of the registry is other users' doing, and root's
 * bucket also pays for its services' grants (rtkit's, caught calls'). */
static void charge_rows(struct ctx *x, const struct op *op)
{
	const struct config *c = x->svc->config;
	unsigned extra = (unsigned)(x->rows / ROWS_PER_TOKEN);
	uint64_t now = clock_usec(CLOCK_MONOTONIC);

	if (extra == 0 || x->peer->uid == 0)
		return;
	if (op->flags & OP_RATE)
		ratelimit_charge(x->svc->ratelimit, x->peer->account, now, c->rate_limit, c->rate_burst, extra);
	else if (op->flags & OP_FREE)
		ratelimit_charge(x->svc->free_ratelimit, x->peer->account, now, c->free_rate_limit,
				 c->free_rate_burst, extra);
}

/* "a, b, ... or z": the ops a client may name (OP_UNLISTED ones left out). */
static void op_names(char *buf, size_t len)
{
	size_t n = 0, left = 0;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		left += !(ops[i].flags & OP_UNLISTED);
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && n < len; i++) {
		if (ops[i].flags & OP_UNLISTED)
			continue;
		left--;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n == 0 ? "" : left == 0 ? " or " : ", ",
				      ops[i].name);
	}
}

/* Carry out a parsed request; x->fd goes back to the caller if left. */
static void dispatch(struct ctx *x)
{
	const char *name = proto_get(x->m, "op");
	char names[256];
	long v;

	if (proto_get_long(x->m, "v", 0, 1000000, &v) < 0) {
		refuse(x, PE_BAD_REQUEST, "no protocol version; start the request with v=%d", PROTO_VERSION);
		return;
	}
	if (v != PROTO_VERSION) {
		refuse(x, PE_VERSION, "protocol version %ld is not supported; this rtschedd %s speaks v=%d, "
		       "use a matching rtschedctl/librtsched", v, PACKAGE_VERSION, PROTO_VERSION);
		return;
	}
	for (size_t i = 0; name && i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(name, ops[i].name) != 0)
			continue;
		if (gate(x, &ops[i]) == 0) {
			ops[i].run(x);
			charge_rows(x, &ops[i]);
		}
		return;
	}
	op_names(names, sizeof(names));
	refuse(x, PE_UNKNOWN_OP, "unknown op '%s'; use %s", name ? name : "", names);
}

/* Parse one request and carry it out; the passed descriptor goes back to
 * the caller if no op kept it. */
uint64_t dispatch_request(struct service *s, const struct peer *p, const void *data, size_t len, int *fd,
		      reply_fn reply, void *ud)
{
	struct proto_msg m;
	struct ctx x = { .svc = s, .peer = p, .m = &m, .reply = reply, .ud = ud, .fd = *fd };
	int r;

	r = proto_parse_request(&m, data, len);
	if (r == -E2BIG)
		refuse(&x, len > PROTO_MSG_MAX ? PE_TOO_LARGE : PE_BAD_REQUEST,
		       len > PROTO_MSG_MAX ? "request over %d bytes" : "more than %d fields",
		       len > PROTO_MSG_MAX ? PROTO_MSG_MAX : PROTO_FIELDS_MAX);
	else if (r < 0)
		refuse(&x, PE_BAD_REQUEST, "malformed request; send 'v=%d op=NAME key=value ...' in printable ASCII",
		       PROTO_VERSION);
	else
		dispatch(&x);
	*fd = x.fd;
	return x.hold_until;
}

/* A front end's register (see dispatch.h): the rate limit and the caller's
 * user and groups, which dispatch's gate gives a control-socket register,
 * then register_grant(). */
int dispatch_register(struct service *s, const struct peer *p, pid_t tid, const struct grant_request *req,
		      enum reg_source source, const struct frontend_task *known, struct frontend_grant *out,
		      char *msg, size_t len)
{
	struct grant_subject subj;
	struct register_granted g;
	int e;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	if ((e = rate(s, p->account, msg, len)) != 0) {
		out->code = ops_wire_error(e);
		return e;
	}
	grant_subject_init(&subj, s->config, p->uid, p->gid, p->pid);
	if (source == REG_SOURCE_RTKIT) {
		subj.has_nice_floor = true;
		subj.nice_floor = s->config->rtkit.min_nice;
	}
	e = register_grant(s, p, &subj, tid, false, req, source, known, &g, msg, len);
	if (e != 0) {
		out->code = ops_wire_error(e);
		snprintf(out->diag, sizeof(out->diag), "%s", g.diag);
		return e;
	}
	out->tid = g.thread->tid;
	out->pid = g.thread->pid;
	out->applied = g.thread->applied;
	return 0;
}

/* A front end's reset (see dispatch.h). */
size_t dispatch_reset(struct service *s, enum reg_source source, bool all)
{
	struct registry *reg = s->registry;
	struct reg_thread *t, *next;
	size_t n = 0;

	for (t = registry_thread_next(reg, NULL); t; t = next) {
		next = registry_thread_next(reg, t);
		if (!all && t->source != source)
			continue;
		if (t->proc) {
			/* a registered process: its threads go with it */
			struct reg_process *p = t->proc;
			n += p->n_threads;
			registry_remove_process(reg, p, true);
			next = registry_thread_next(reg, NULL); /* the list changed under us: start again */
			continue;
		}
		registry_remove_thread(reg, t, true);
		n++;
	}
	s->hooks->changed(s->ud);
	return n;
}
