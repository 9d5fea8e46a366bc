/* dispatch.c: the control requests, from the wire to their op: parsing, the
 * protocol version, and the op table (version, status, list, register,
 * unregister, reload, jitter, jitter-attach, jitter-reset, metrics, check;
 * see rtschedd-protocol(7)); the ops are in ops/. Every refusal carries its
 * own error code and a message naming the rule that refused it. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shared/protocol.h"
#include "daemon/core/grant.h"
#include "daemon/dispatch.h"
#include "daemon/ops/ops.h"

/* Rate limit: one token per state-changing request. -1 if allowed, else
 * PE_RATE_LIMITED with msg. */
int rate_check(struct daemon *d, uid_t uid, char *msg, size_t len)
{
	const struct config *c = d->config;

	if (ratelimit_take(d->ratelimit, uid, now_usec(CLOCK_MONOTONIC), c->rate_limit, c->rate_burst))
		return -1;
	snprintf(msg, len, "more than %u requests per second (burst %u) from uid %u; "
		 "slow down or raise rate-limit in [daemon]", c->rate_limit, c->rate_burst, (unsigned)uid);
	return PE_RATE_LIMITED;
}

/* The rate limit for x's caller; false after refusing. */
bool rate_ok(struct ctx *x)
{
	char msg[256];

	if (rate_check(x->d, x->peer->uid, msg, sizeof(msg)) < 0)
		return true;
	refuse(x, PE_RATE_LIMITED, "%s", msg);
	return false;
}

/* Root, or admin-group: grant_subject_init()'s answer, without a name for root. */
bool dispatch_privileged(struct daemon *d, uid_t uid, gid_t gid, pid_t pid)
{
	struct grant_subject subj;

	return uid == 0 || (grant_subject_init(&subj, d->config, uid, gid, pid) == 0 && subj.privileged);
}

/* Carry out a parsed request; x->fd is closed by the caller if left. */
static void dispatch(struct ctx *x)
{
	static const struct {
		const char *name;
		void (*fn)(struct ctx *);
		bool takes_fd;
	} ops[] = {
		{ "version", op_version, false }, { "status", op_status, false }, { "list", op_list, false },
		{ "register", op_register, false }, { "unregister", op_unregister, false },
		{ "reload", op_reload, false }, { "jitter", op_jitter, false },
		{ "jitter-attach", op_jitter_attach, true }, { "jitter-reset", op_jitter_reset, false },
		{ "metrics", op_metrics, false }, { "check", op_check, false },
	};
	const char *op = proto_get(x->m, "op");
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
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(op, ops[i].name) != 0)
			continue;
		if (x->fd >= 0 && !ops[i].takes_fd) {
			refuse(x, PE_BAD_REQUEST, "op %s takes no file descriptor; only jitter-attach does", op);
			return;
		}
		ops[i].fn(x);
		return;
	}
	refuse(x, PE_UNKNOWN_OP, "unknown op '%s'; use version, status, list, register, unregister, reload, "
	       "jitter, jitter-reset, metrics or check", op ? op : "");
}

/* Parse one request and carry it out; the passed descriptor is closed if no op kept it. */
void dispatch_request(struct daemon *d, const struct peer *p, const void *data, size_t len, int fd,
		      reply_fn reply, void *ud)
{
	struct proto_msg m;
	struct ctx x = { .d = d, .peer = p, .m = &m, .reply = reply, .ud = ud, .fd = fd };
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
	if (x.fd >= 0)
		close(x.fd);
}
