/* ops/reply.c: what every op's reply is built with: the wire codes of the
 * core's refusals, sending, refusing, and the kernel's view of a thread's
 * scheduling. */
#include "autoconfig.h"

#include <stdarg.h>
#include <stdio.h>

#include "daemon/core/refusal.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"

/* The wire code of each refusal of the core: the one place where the core's
 * answers become the protocol's (rtschedd-protocol(7) documents the codes). */
static const enum proto_error wire[REFUSE__MAX] = {
	[REFUSE_UNKNOWN_ROLE] = PE_UNKNOWN_ROLE,
	[REFUSE_BAD_PRIORITY] = PE_BAD_REQUEST,
	[REFUSE_ABOVE_MAX] = PE_ABOVE_MAX,
	[REFUSE_POLICY] = PE_POLICY_DENIED,
	[REFUSE_NICE] = PE_NICE_DENIED,
	[REFUSE_PRIORITY] = PE_PRIORITY_DENIED,
	[REFUSE_CPUS] = PE_CPU_DENIED,
	[REFUSE_RTPRIO_CAP] = PE_RTPRIO_CAP,
	[REFUSE_QUOTA] = PE_QUOTA,
	[REFUSE_NO_SUCH_THREAD] = PE_NO_SUCH_THREAD,
	[REFUSE_STALE_THREAD] = PE_STALE_THREAD,
	[REFUSE_NOT_A_PROCESS] = PE_BAD_REQUEST,
	[REFUSE_NOT_OWN_THREAD] = PE_NOT_OWN_THREAD,
	[REFUSE_WATCHDOG_COOLDOWN] = PE_WATCHDOG_COOLDOWN,
	[REFUSE_DEADLINE] = PE_UNSUPPORTED_TARGET,
	[REFUSE_RTTIME_ZERO] = PE_RTTIME_ZERO,
	[REFUSE_APPLY_FAILED] = PE_APPLY_FAILED,
	[REFUSE_BAD_HISTOGRAM] = PE_BAD_REQUEST,
	[REFUSE_HISTOGRAM_LAYOUT] = PE_VERSION,
	[REFUSE_RATE_LIMITED] = PE_RATE_LIMITED,
	[REFUSE_RTTIME_OVER_MAX] = PE_RTTIME_OVER_MAX,
};

/* A refusal by the table; -errno, or a value outside it, is internal. */
enum proto_error ops_wire_error(int r)
{
	return r > 0 && r < REFUSE__MAX ? wire[r] : PE_INTERNAL;
}

/* Send x->out as one message; an internal error instead if it overflowed. */
void send_buf(struct ctx *x)
{
	if (x->out.overflow)
		proto_error(&x->out, PE_INTERNAL, "reply too long");
	x->reply(x->ud, x->out.data, x->out.len);
	x->rows++;
}

/* Refuse with error e; diag, if not NULL or "", is the diagnosed cause's code. */
void refuse_msg(struct ctx *x, int e, const char *diag, const char *msg)
{
	proto_error_diag(&x->out, (enum proto_error)e, diag, "%s", msg);
	x->svc->refusals++;
	log_debug("refused pid %d uid %u: %s %s", (int)x->peer->pid, (unsigned)x->peer->uid,
		  proto_error_code((enum proto_error)e), msg);
	send_buf(x);
}

/* Refuse with error e and a formatted message. */
void refuse(struct ctx *x, int e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	refuse_msg(x, e, NULL, msg);
}

/* Add the kernel's view of a thread's scheduling to a message. */
void add_sched(struct proto_buf *b, const struct task_sched *s)
{
	char cpus[256];

	proto_add(b, "policy", policy_to_string(s->policy));
	proto_add_long(b, "priority", s->priority);
	proto_add_long(b, "nice", s->nice);
	if (cpulist_format(&s->cpus, cpus, sizeof(cpus)) < 0)
		snprintf(cpus, sizeof(cpus), "?");
	proto_add(b, "cpus", cpus);
	proto_add_long(b, "reset_on_fork", s->reset_on_fork);
}
