/* rtsched.c: librtsched (see rtsched.h). Builds requests with the shared
 * protocol code and speaks to the daemon through the shared client. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/client.h"
#include "shared/protocol.h"
#include "lib/conn.h"
#include "lib/internal.h"
#include "rtsched.h"

#define EXPORT __attribute__((visibility("default")))

static __thread char last_message[PROTO_MSG_MAX + 1];
static __thread char last_diag[PROTO_DIAG_MAX];
static __thread char last_code[32];

static void clear_last(void)
{
	last_message[0] = '\0';
	last_diag[0] = '\0';
	last_code[0] = '\0';
}

struct collect {
	struct rtsched_grant *grant;
};

/* Keep the daemon's reply: the grant on OK, the message on ERR. */
static int on_reply(void *ud, const struct proto_msg *m)
{
	struct collect *c = ud;
	struct rtsched_grant *g = c->grant;
	const char *v;
	long n;

	if (strcmp(m->head, "ERR") == 0) {
		const char *sp = strchr(m->rest, ' ');
		snprintf(last_message, sizeof(last_message), "%s", sp ? sp + 1 : m->rest);
		snprintf(last_diag, sizeof(last_diag), "%s", proto_get(m, "diag") ?: "");
		snprintf(last_code, sizeof(last_code), "%.*s", (int)(sp ? (size_t)(sp - m->rest) : strlen(m->rest)),
			 m->rest);
		return 0;
	}
	if (!g || strcmp(m->head, "OK") != 0)
		return 0;
	if ((v = proto_get(m, "policy")))
		snprintf(g->policy, sizeof(g->policy), "%s", v);
	if ((v = proto_get(m, "cpus")))
		snprintf(g->cpus, sizeof(g->cpus), "%s", v);
	if ((v = proto_get(m, "rule")))
		snprintf(g->rule, sizeof(g->rule), "%s", v);
	if (proto_get_long(m, "priority", 0, 99, &n) == 0)
		g->priority = (int)n;
	if (proto_get_long(m, "nice", -20, 19, &n) == 0)
		g->nice = (int)n;
	if (proto_get_long(m, "reset_on_fork", 0, 1, &n) == 0)
		g->reset_on_fork = (int)n;
	if (proto_get_long(m, "threads", 0, 1L << 30, &n) == 0)
		g->threads = (int)n;
	return 0;
}

int lib_call(const char *socket, struct proto_buf *b, int passfd, struct rtsched_grant *grant)
{
	struct collect c = { grant };
	int r, cerr;

	clear_last();
	if (b->overflow)
		return -E2BIG;
	r = conn_call(socket, b->data, b->len, passfd, on_reply, &c, &cerr);
	if (cerr < 0)
		snprintf(last_message, sizeof(last_message), "cannot connect to %s: %s",
			 client_socket_path(socket), strerror(-cerr));
	return r;
}

int lib_register(const struct rtsched_request *req, const char *source, struct rtsched_grant *grant)
{
	struct proto_buf b;

	clear_last();
	if (!req || (req->tid < 0 || req->pid < 0) || (req->tid && req->pid))
		return -EINVAL;
	if (grant)
		memset(grant, 0, sizeof(*grant));
	proto_begin(&b, PROTO_REQUEST_HEAD);
	proto_add(&b, "op", "register");
	if (req->pid)
		proto_add_long(&b, "pid", req->pid);
	else
		proto_add_long(&b, "tid", req->tid ? req->tid : gettid());
	if (req->role)
		proto_add(&b, "role", req->role);
	if (req->policy)
		proto_add(&b, "policy", req->policy);
	if (req->priority != RTSCHED_UNSET)
		proto_add_long(&b, "priority", req->priority);
	if (req->nice != RTSCHED_UNSET)
		proto_add_long(&b, "nice", req->nice);
	if (req->cpus)
		proto_add(&b, "cpus", req->cpus);
	if (source)
		proto_add(&b, "source", source);
	return lib_call(req->socket, &b, -1, grant);
}

EXPORT int rtsched_register(const struct rtsched_request *req, struct rtsched_grant *grant)
{
	return lib_register(req, NULL, grant);
}

EXPORT int rtsched_register_self(const char *role)
{
	struct rtsched_request req = RTSCHED_REQUEST_INIT;

	req.role = role;
	return rtsched_register(&req, NULL);
}

EXPORT int rtsched_unregister(pid_t tid, pid_t pid, const char *socket)
{
	struct proto_buf b;

	clear_last();
	if ((tid <= 0) == (pid <= 0))
		return -EINVAL;
	proto_begin(&b, PROTO_REQUEST_HEAD);
	proto_add(&b, "op", "unregister");
	proto_add_long(&b, tid > 0 ? "tid" : "pid", tid > 0 ? tid : pid);
	return lib_call(socket, &b, -1, NULL);
}

EXPORT int rtsched_unregister_self(void)
{
	return rtsched_unregister(gettid(), 0, NULL);
}

EXPORT int rtsched_disconnect(void)
{
	conn_close();
	return 0;
}

EXPORT const char *rtsched_strerror(int err)
{
	switch (-err) {
	case 0: return "success";
	case ENOENT: return "rtschedd is not running, or the role or registration does not exist";
	case ECONNREFUSED: return "rtschedd is not running (connection refused)";
	case EACCES: return "not allowed: needs root or the daemon's admin-group";
	case EPERM: return "refused by the daemon's rules or by the kernel";
	case ESRCH: return "no such thread or process";
	case ESTALE: return "the thread exited and its id was reused";
	case EDQUOT: return "too many threads registered for this user";
	case EAGAIN: return "rate limited: too many requests, try again later";
	case EBUSY: return "refused: real-time grants are paused after the watchdog demoted a runaway thread "
			   "(try again later), or the thread runs SCHED_DEADLINE";
	case EPROTO: return "protocol version mismatch between librtsched and rtschedd";
	case ETIMEDOUT: return "rtschedd did not answer in time";
	case EIO: return "the kernel refused to apply the scheduling";
	case EINVAL: return "invalid request";
	default: return strerror(-err);
	}
}

EXPORT const char *rtsched_last_message(void)
{
	return last_message;
}

const char *lib_last_code(void)
{
	return last_code;
}

EXPORT const char *rtsched_last_diag(void)
{
	return last_diag;
}
