/* caught.c: refused scheduling calls, granted from outside (caught.h). */
#include "autoconfig.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "daemon/caught.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/core/task.h"
#include "daemon/dispatch.h"
#include "daemon/observe/bpf/catcher.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

/* Threads whose outcome was logged (a program retrying a refused call in
 * a loop logs once); the oldest entry goes first. */
#define LOGGED_MAX 256
/* sd-event's rate limit on the ring buffer: a storm of refusals (a program
 * retrying in a loop) cannot take the main loop (the grant path's own rate
 * limit then refuses most of them anyway) */
#define RATE_US 100000
#define RATE_BURST 200

struct logged {
	pid_t tid;
	uint64_t starttime;
};

struct caught {
	struct catcher *catcher;
	struct service *svc;
	sd_event_source *io;
	struct logged logged[LOGGED_MAX];
	unsigned next;
	long clk_tck;
};

/* Was this thread's outcome logged already? Remember it if not. */
static bool logged_once(struct caught *c, pid_t tid, uint64_t starttime)
{
	for (unsigned i = 0; i < LOGGED_MAX; i++)
		if (c->logged[i].tid == tid && c->logged[i].starttime == starttime)
			return true;
	c->logged[c->next] = (struct logged){ tid, starttime };
	c->next = (c->next + 1) % LOGGED_MAX;
	return false;
}

static const char *call_name(uint32_t call)
{
	return call == CATCHER_SETSCHEDULER ? "sched_setscheduler" :
	       call == CATCHER_SETPARAM ? "sched_setparam" : "sched_setattr";
}

/* One refused call: the thread it named, if still the one that was named,
 * gets what was asked through the grant path, as the caller's register. */
static void on_refused(void *ud, const struct catcher_event *ev)
{
	struct caught *c = ud;
	struct grant_request req = { .role = "" };
	struct frontend_grant out;
	struct task_sched now;
	struct proc_stat st;
	pid_t tid = ev->target ? ev->target : ev->tid;
	char msg[768], applied[128];
	int policy = ev->policy;

	if (!ev->read_ok || ev->target == CATCHER_FOREIGN_TARGET || tid <= 0 || proc_read_stat(tid, &st) < 0)
		return;
	/* a tid reused since the call (a thread started after it) is not the one asked for */
	if (c->clk_tck > 0 && st.starttime / (uint64_t)c->clk_tck > ev->at_ns / 1000000000ull)
		return;
	if (policy == CATCHER_KEEP_POLICY) {
		/* sched_setparam: the policy the thread has */
		if (task_sched_read(tid, &now) < 0)
			return;
		policy = now.policy;
	}
	/* only real-time requests: a refused nice or SCHED_DEADLINE is left alone */
	if (!policy_is_realtime(policy) || ev->priority < 1 || ev->priority > 99)
		return;
	req.has_policy = req.has_priority = true;
	req.policy = policy;
	req.priority = ev->priority;
	struct peer p = { .pid = ev->tgid, .uid = ev->uid, .gid = ev->gid, .account = grant_account(ev->uid),
			  .pidfd = -1 };
	if (dispatch_register(c->svc, &p, tid, &req, REG_SOURCE_CAUGHT, NULL, &out, msg, sizeof(msg)) != 0) {
		c->svc->refusals++;
		if (!logged_once(c, tid, st.starttime) && registry_may_log_refusal(c->svc->registry, p.account))
			log_notice("caught a refused %s(%s %d) of tid %d (pid %d, uid %u): not granted: %s",
				   call_name(ev->call), policy_to_string(policy), ev->priority, (int)tid, (int)ev->tgid,
				   (unsigned)ev->uid, msg);
		return;
	}
	if (!logged_once(c, tid, st.starttime)) {
		task_sched_format(&out.applied, applied, sizeof(applied));
		log_info("caught a refused %s(%s %d) of tid %d (pid %d, uid %u): granted %s%s%s",
			 call_name(ev->call), policy_to_string(policy), ev->priority, (int)tid, (int)ev->tgid,
			 (unsigned)ev->uid, applied, msg[0] ? "; " : "", msg);
	}
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct caught *c = userdata;

	catcher_read(c->catcher, on_refused, c);
	return 0;
}

int caught_start(struct caught **ret, sd_event *e, struct service *s, char *why, size_t len)
{
	struct caught *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	c->svc = s;
	c->clk_tck = sysconf(_SC_CLK_TCK);
	if ((r = catcher_new(&c->catcher, why, len)) < 0) {
		free(c);
		return r;
	}
	if ((r = sd_event_add_io(e, &c->io, catcher_fd(c->catcher), EPOLLIN, on_io, c)) < 0 ||
	    (r = sd_event_source_set_ratelimit(c->io, RATE_US, RATE_BURST)) < 0) {
		snprintf(why, len, "cannot watch its ring buffer: %s", strerror(-r));
		caught_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void caught_free(struct caught *c)
{
	if (!c)
		return;
	sd_event_source_disable_unref(c->io);
	catcher_free(c->catcher);
	free(c);
}
