/* ops/reply.c: what every op's reply is built with: sending, refusing, and
 * the kernel's view of a thread's scheduling. */
#include "autoconfig.h"

#include <stdarg.h>
#include <stdio.h>

#include "daemon/ops/ops.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"

/* Send x->out as one message; an internal error instead if it overflowed. */
void send_buf(struct ctx *x)
{
	if (x->out.overflow)
		proto_error(&x->out, PE_INTERNAL, "reply too long");
	x->reply(x->ud, x->out.data, x->out.len);
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
