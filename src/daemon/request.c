/* request.c: the control requests: version, status, list, register,
 * unregister, reload (see rtschedd-protocol(7)). Every refusal carries its
 * own error code and a message naming the rule that refused it. */
#include "autoconfig.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/protocol.h"
#include "daemon/control.h"
#include "daemon/diag/diag.h"
#include "daemon/core/grant.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/bpfcheck.h"
#include "daemon/observe/observer.h"
#include "daemon/privs.h"
#include "daemon/sys/proc.h"
#include "daemon/sys/procev.h"
#include "daemon/core/registry.h"
#include "daemon/request.h"
#include "daemon/rtkit/rtkit.h"
#include "daemon/watchdog/safety.h"

struct ctx {
	struct daemon *d;
	const struct peer *peer;
	struct proto_msg *m;
	reply_fn reply;
	void *ud;
	struct proto_buf out;
	int fd;              /* passed by the client; -1 once consumed */
};

static void send_buf(struct ctx *x)
{
	if (x->out.overflow)
		proto_error(&x->out, PE_INTERNAL, "reply too long");
	x->reply(x->ud, x->out.data, x->out.len);
}

/* Refuse with error e; diag, if not NULL or "", is the diagnosed cause's code. */
static void refuse_msg(struct ctx *x, int e, const char *diag, const char *msg)
{
	proto_error_diag(&x->out, (enum proto_error)e, diag, "%s", msg);
	x->d->refusals++;
	log_debug("refused pid %d uid %u: %s %s", (int)x->peer->pid, (unsigned)x->peer->uid,
		  proto_error_code((enum proto_error)e), msg);
	send_buf(x);
}

__attribute__((format(printf, 3, 4)))
static void refuse(struct ctx *x, int e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	refuse_msg(x, e, NULL, msg);
}

static uint64_t now_usec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Add the kernel's view of a thread's scheduling to a message. */
static void add_sched(struct proto_buf *b, const struct task_sched *s)
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

/* Where the ceiling came from, and whether the priority was clamped to it. */
static void add_cap(struct proto_buf *b, const struct grant_cap *cap)
{
	if (!cap->applies)
		return;
	proto_add_long(b, "cap", cap->cap);
	proto_add(b, "cap_from", cap->from);
	if (cap->clamped)
		proto_add_long(b, "clamped_from", cap->asked);
}

static void op_version(struct ctx *x)
{
	proto_begin(&x->out, "OK");
	proto_add(&x->out, "version", PACKAGE_VERSION);
	proto_add_long(&x->out, "proto", PROTO_VERSION);
	send_buf(x);
}

static void op_status(struct ctx *x)
{
	struct daemon *d = x->d;
	const struct config *c = d->config;
	unsigned long ev, ov;

	procev_stats(d->procev, &ev, &ov);
	proto_begin(&x->out, "OK");
	proto_add(&x->out, "version", PACKAGE_VERSION);
	proto_add_long(&x->out, "proto", PROTO_VERSION);
	proto_add_long(&x->out, "pid", getpid());
	proto_add_long(&x->out, "uptime_s", (long)((now_usec(CLOCK_MONOTONIC) - d->start_usec) / 1000000u));
	proto_add_long(&x->out, "threads", (long)registry_n_threads(d->registry));
	proto_add_long(&x->out, "processes", (long)registry_n_processes(d->registry));
	proto_add_long(&x->out, "clients", control_n_clients(d->control));
	proto_add_long(&x->out, "grants", (long)d->grants);
	proto_add_long(&x->out, "refusals", (long)d->refusals);
	proto_add_long(&x->out, "reloads", (long)d->reloads);
	proto_add(&x->out, "config", d->config_path);
	proto_add_long(&x->out, "config_files", (long)c->n_files);
	proto_add(&x->out, "socket", c->socket_path);
	proto_add(&x->out, "socket_activated", control_activated(d->control) ? "yes" : "no");
	proto_add(&x->out, "default_policy", policy_to_string(c->dflt.policy));
	proto_add_long(&x->out, "default_priority", c->dflt.priority);
	proto_add_long(&x->out, "max_priority", c->max_priority);
	proto_add(&x->out, "thread_exit", registry_thread_pidfds(d->registry) ? "pidfd-thread" : "connector+rescan");
	if (d->safety) {
		struct safety_status st;
		safety_get_status(d->safety, &st);
		proto_add(&x->out, "watchdog", st.cooldown ? "cooldown" : st.watching ? "watching" : "idle");
		proto_add_long(&x->out, "watchdog_threshold_ms", (long)st.threshold_ms);
		proto_add_long(&x->out, "watchdog_cooldown_s", (long)st.cooldown_s);
		proto_add_long(&x->out, "watchdog_cooldown_left_s", (long)st.cooldown_left_s);
		proto_add_long(&x->out, "watchdog_trips", (long)st.trips);
		if (st.last_culprit[0])
			proto_add(&x->out, "watchdog_last", st.last_culprit);
		if (st.cooldown) {
			char held[512];
			registry_holds_text(d->registry, held, sizeof(held));
			proto_add(&x->out, "watchdog_held", held[0] ? held : "no one");
		}
	} else {
		proto_add(&x->out, "watchdog", "off");
	}
	if (d->observer) {
		unsigned max, n = observer_watched(d->observer, &max);
		char buf[64];
		snprintf(buf, sizeof(buf), "bpf, %u of %u threads", n, max);
		proto_add(&x->out, "observer", buf);
	} else {
		proto_add(&x->out, "observer", d->observer_why[0] ? d->observer_why : "none");
	}
	struct rtkit_stats rs;
	rtkit_stats(d->rtkit, &rs);
	proto_add(&x->out, "rtkit", rs.state);
	if (rs.detail[0])
		proto_add(&x->out, "rtkit_detail", rs.detail);
	if (d->rtkit) {
		proto_add_long(&x->out, "rtkit_calls", (long)rs.calls);
		proto_add_long(&x->out, "rtkit_grants", (long)rs.grants);
		proto_add_long(&x->out, "rtkit_refusals", (long)rs.refusals);
	}
	char *caps = privs_describe();
	proto_add(&x->out, "capabilities", caps ? caps : "?");
	free(caps);
	proto_add_long(&x->out, "match_rules", (long)c->n_auto_rules);
	proto_add_long(&x->out, "scan_tasks", (long)d->scan_tasks);
	proto_add_long(&x->out, "scan_us", (long)d->scan_usec);
	if (d->procev) {
		proto_add(&x->out, "new_threads", procev_active(d->procev) ? "connector" :
			  "connector (idle: nothing needs process events now)");
		proto_add_long(&x->out, "connector_events", (long)ev);
		proto_add_long(&x->out, "connector_overruns", (long)ov);
	} else {
		char why[96];
		snprintf(why, sizeof(why), "rescan every %u ms (connector %s)", c->rescan_ms,
			 d->procev_error == -ENOTSUP ? "off: process-events = no" : strerror(-d->procev_error));
		proto_add(&x->out, "new_threads", why);
	}
	send_buf(x);
}

/* list: what the BPF observer saw of a thread since its registration (or
 * the last jitter --reset): samples and p99 of each kind, and how measured. */
static void list_observed(struct ctx *x, pid_t tid)
{
	struct hist *h = malloc(sizeof(*h));
	int64_t v;

	if (!h)
		return;
	if (observer_read(x->d->observer, tid, BPFOBS_TIMER, true, h) < 0) {
		proto_add(&x->out, "observed", "schedstat");
		free(h);
		return;
	}
	proto_add(&x->out, "observed", "bpf");
	for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++) {
		char key[32];

		if (k != BPFOBS_TIMER && observer_read(x->d->observer, tid, (enum bpfobs_kind)k, true, h) < 0)
			break;
		snprintf(key, sizeof(key), "bpf_%s_samples", bpfobs_kind_name((enum bpfobs_kind)k));
		proto_add_long(&x->out, key, (long)hist_count(h));
		if (hist_percentile(h, 99, &v) == 0) {
			snprintf(key, sizeof(key), "bpf_%s_p99_ns", bpfobs_kind_name((enum bpfobs_kind)k));
			proto_add_long(&x->out, key, (long)v);
		}
	}
	free(h);
}

static const char *source_name(enum reg_source s)
{
	return s == REG_SOURCE_PROCESS ? "process" : s == REG_SOURCE_RULE ? "match" :
	       s == REG_SOURCE_RTKIT ? "rtkit" : "thread";
}

static void op_list(struct ctx *x)
{
	struct safety_status ss = { 0 };
	long rows = 0, all = 0;
	int r = proto_get_long(x->m, "all", 0, 1, &all);

	if (r < 0 && r != -ENOENT) {
		refuse(x, PE_BAD_REQUEST, "all=%s: use all=1 (or 0)", proto_get(x->m, "all"));
		return;
	}

	if (x->d->safety)
		safety_get_status(x->d->safety, &ss);
	for (struct reg_thread *t = registry_threads(x->d->registry); t; t = t->next) {
		struct proc_stat st;

		proto_begin(&x->out, "ROW");
		proto_add_long(&x->out, "tid", t->tid);
		proto_add_long(&x->out, "pid", t->pid);
		proto_add(&x->out, "comm", proc_read_stat(t->tid, &st) == 0 ? st.comm : "?");
		add_sched(&x->out, &t->applied);
		proto_add(&x->out, "rule", t->req.role[0] ? t->req.role : "default");
		proto_add(&x->out, "source", source_name(t->source));
		proto_add_long(&x->out, "owner", (long)t->owner);
		proto_add_long(&x->out, "since", (long)(t->since_usec / 1000000u));
		/* why the policy shown is what it is: applied as asked, or set to
		 * SCHED_OTHER by the watchdog until its cooldown ends */
		proto_add(&x->out, "state", t->demoted ? "demoted" : "applied");
		if (t->demoted) {
			proto_add(&x->out, "state_by", "watchdog");
			proto_add_long(&x->out, "state_left_s", ss.cooldown ? (long)ss.cooldown_left_s : 0);
		}
		list_observed(x, t->tid);
		send_buf(x);
		rows++;
	}
	/* with all=1, threads not managed, still alive, that a rule matched (or
	 * a process registered) and were refused, or that were let go and
	 * restored; without, only how many there are */
	const struct reg_recent *e;
	bool admin = request_privileged(x->d, x->peer->uid, x->peer->gid, x->peer->pid);
	long unmanaged = 0;
	for (size_t i = 0; (e = registry_recent(x->d->registry, i)); i++) {
		struct proc_stat st;
		struct task_sched now;

		if (registry_find(x->d->registry, e->tid) || proc_read_stat(e->tid, &st) < 0 ||
		    st.starttime != e->starttime)
			continue;
		unmanaged++;
		/* the kernel's view only for a row that is sent */
		if (!all || task_sched_read(e->tid, &now) < 0)
			continue;
		proto_begin(&x->out, "ROW");
		proto_add_long(&x->out, "tid", e->tid);
		proto_add_long(&x->out, "pid", e->pid);
		proto_add(&x->out, "comm", st.comm);
		add_sched(&x->out, &now);
		proto_add(&x->out, "rule", e->rule[0] ? e->rule : "default");
		proto_add(&x->out, "source", source_name(e->source));
		proto_add_long(&x->out, "owner", (long)e->owner);
		proto_add_long(&x->out, "since", (long)(e->when_usec / 1000000u));
		proto_add(&x->out, "state", e->code < 0 ? "restored" : "refused");
		if (e->code >= 0) {
			proto_add(&x->out, "state_code", proto_error_code((enum proto_error)e->code));
			/* the reason may quote the owner's limits: theirs and the admins' to read */
			if (admin || x->peer->uid == e->owner)
				proto_add(&x->out, "state_msg", e->why);
		}
		send_buf(x);
		rows++;
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", rows);
	proto_add_long(&x->out, "unmanaged", unmanaged);
	send_buf(x);
}

/* The client's process must still be the one that connected. */
static bool peer_alive(const struct peer *p)
{
	if (p->gone)
		return false;
	if (p->pidfd < 0)
		return true;
	/* signal 0 only probes; EPERM (no CAP_KILL over the client) still means it lives */
	return syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0 || errno != ESRCH;
}

/* May the client act on this task? Privileged: yes. Otherwise the task is
 * in the client's own process, that process is still the one that connected,
 * and the task runs as the client's uid, real and effective (grant_owns: a
 * process that exec'd a setuid program is no longer the client's, though its
 * pid is). -1 if it may, else PE_NOT_OWN_THREAD with msg. */
static int may_act_on(const struct peer *peer, const struct grant_subject *subj, const struct proc_status *ps,
		      const char *what, long id, char *msg, size_t len)
{
	if (subj->privileged)
		return -1;
	if (ps->tgid != peer->pid || !peer_alive(peer)) {
		snprintf(msg, len, "%s %ld belongs to process %d, not to the caller (pid %d); "
			 "registering another process's threads needs root or admin-group",
			 what, id, (int)ps->tgid, (int)peer->pid);
		return PE_NOT_OWN_THREAD;
	}
	if (!grant_owns(subj->uid, ps)) {
		snprintf(msg, len, "%s %ld runs as uid %u (effective %u), not as the caller's uid %u; "
			 "a process that changed its identity (a setuid program) needs root or admin-group",
			 what, id, (unsigned)ps->uid, (unsigned)ps->euid, (unsigned)subj->uid);
		return PE_NOT_OWN_THREAD;
	}
	return -1;
}

/* Parse the optional scheduling fields of a register request. */
static int parse_request_fields(struct ctx *x, struct grant_request *req)
{
	const char *v;
	long n;
	int r;

	memset(req, 0, sizeof(*req));
	if ((v = proto_get(x->m, "role"))) {
		if (!*v || strlen(v) >= sizeof(req->role)) {
			refuse(x, PE_BAD_REQUEST, "role must be 1..%zu characters", sizeof(req->role) - 1);
			return -1;
		}
		strcpy(req->role, v);
	}
	if ((v = proto_get(x->m, "policy"))) {
		if ((req->policy = policy_from_string(v)) < 0) {
			refuse(x, PE_BAD_REQUEST, "unknown policy '%s'; use one of %s", v, policy_names());
			return -1;
		}
		req->has_policy = true;
	}
	if ((r = proto_get_long(x->m, "priority", 0, 99, &n)) != -ENOENT) {
		if (r < 0) {
			refuse(x, PE_BAD_REQUEST, "priority must be a number in 0..99");
			return -1;
		}
		req->priority = (int)n;
		req->has_priority = true;
	}
	if ((r = proto_get_long(x->m, "nice", -20, 19, &n)) != -ENOENT) {
		if (r < 0) {
			refuse(x, PE_BAD_REQUEST, "nice must be a number in -20..19");
			return -1;
		}
		req->nice = (int)n;
		req->has_nice = true;
	}
	if ((v = proto_get(x->m, "cpus"))) {
		cpu_set_t present, missing;
		char have[128];

		if (cpulist_parse(v, &req->cpus, NULL) < 0 || CPU_COUNT(&req->cpus) == 0) {
			refuse(x, PE_BAD_REQUEST, "bad CPU list '%s'; use the kernel's syntax, e.g. 0-3,6", v);
			return -1;
		}
		if (cpulist_present(&present) == 0 && cpulist_missing(&req->cpus, &present, &missing) > 0) {
			cpulist_format(&present, have, sizeof(have));
			refuse(x, PE_CPU_DENIED, "CPU list '%s' names CPUs that do not exist; present CPUs are %s",
			       v, have);
			return -1;
		}
		req->has_cpus = true;
	}
	return 0;
}

/* Rate limit: one token per state-changing request. -1 if allowed, else
 * PE_RATE_LIMITED with msg. */
static int rate_check(struct daemon *d, uid_t uid, char *msg, size_t len)
{
	const struct config *c = d->config;

	if (ratelimit_take(d->ratelimit, uid, now_usec(CLOCK_MONOTONIC), c->rate_limit, c->rate_burst))
		return -1;
	snprintf(msg, len, "more than %u requests per second (burst %u) from uid %u; "
		 "slow down or raise rate-limit in [daemon]", c->rate_limit, c->rate_burst, (unsigned)uid);
	return PE_RATE_LIMITED;
}

static bool rate_ok(struct ctx *x)
{
	char msg[256];

	if (rate_check(x->d, x->peer->uid, msg, sizeof(msg)) < 0)
		return true;
	refuse(x, PE_RATE_LIMITED, "%s", msg);
	return false;
}

/* tid= or pid=, exactly one. */
static int get_target(struct ctx *x, long *id, bool *is_pid)
{
	long tid = 0, pid = 0;
	int rt = proto_get_long(x->m, "tid", 1, INT32_MAX, &tid);
	int rp = proto_get_long(x->m, "pid", 1, INT32_MAX, &pid);

	if ((rt == -ENOENT) == (rp == -ENOENT)) {
		refuse(x, PE_BAD_REQUEST, "give exactly one of tid=TID or pid=PID");
		return -1;
	}
	if ((rt != -ENOENT && rt < 0) || (rp != -ENOENT && rp < 0)) {
		refuse(x, PE_BAD_REQUEST, "tid and pid must be positive numbers");
		return -1;
	}
	*is_pid = rp == 0;
	*id = *is_pid ? pid : tid;
	return 0;
}

int request_grant(struct daemon *d, const struct peer *peer, pid_t id, bool is_pid,
		  const struct grant_request *req_in, enum reg_source source, struct request_granted *out,
		  char *msg, size_t len)
{
	struct grant_subject subj;
	struct grant_request req = *req_in;
	struct sched_spec spec;
	struct proc_status ps;
	size_t adding = 1;
	int e, r;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	if ((e = rate_check(d, peer->uid, msg, len)) >= 0)
		return e;
	grant_subject_init(&subj, d->config, peer->uid, peer->gid, peer->pid);
	if (source == REG_SOURCE_RTKIT) {
		subj.has_nice_floor = true;
		subj.nice_floor = d->config->rtkit.min_nice;
	}
	if ((r = proc_read_status(id, &ps)) < 0) {
		snprintf(msg, len, "%s %d: %s", is_pid ? "pid" : "tid", (int)id,
			 r == -ESRCH ? "no such task" : strerror(-r));
		return PE_NO_SUCH_THREAD;
	}
	if (is_pid && ps.tgid != id) {
		snprintf(msg, len, "%d is a thread of process %d, not a process; use tid=%d", (int)id, (int)ps.tgid,
			 (int)id);
		return PE_BAD_REQUEST;
	}
	if ((e = may_act_on(peer, &subj, &ps, is_pid ? "pid" : "tid", id, msg, len)) >= 0)
		return e;
	if ((e = grant_resolve(d->config, &req, &spec, msg, len)) >= 0)
		return e;
	/* during a cooldown, the runaway's own process (with watchdog-demote =
	 * all, every process) waits; other programs still get real-time */
	if (d->safety && safety_in_cooldown(d->safety) && policy_is_realtime(spec.policy) &&
	    registry_held(d->registry, ps.tgid, NULL)) {
		struct safety_status st;
		char held[512];
		safety_get_status(d->safety, &st);
		registry_holds_text(d->registry, held, sizeof(held));
		snprintf(msg, len, "the watchdog demoted a runaway real-time thread (%s); real-time "
			 "grants for %s resume in %llu s", st.last_culprit, held, (unsigned long long)st.cooldown_left_s);
		return PE_WATCHDOG_COOLDOWN;
	}
	if (is_pid) {
		struct reg_process *rp = registry_find_process(d->registry, id);
		pid_t *tids;
		if (proc_list_tasks(id, &tids, &adding) == 0)
			free(tids);
		/* registering again: only threads not yet held count against the quota */
		if (rp && subj.uid == rp->owner)
			adding = adding > rp->n_threads ? adding - rp->n_threads : 0;
	} else {
		struct reg_thread *held = registry_find(d->registry, id);

		/* registering again a thread this uid holds adds nothing; taking one
		 * over from another owner (root, a match rule) adds it to the quota */
		if (held && held->owner == subj.uid)
			adding = 0;
	}
	e = grant_check(d->config, &subj, &req, &spec, ps.tgid,
			subj.privileged ? 0 : registry_count_owner(d->registry, subj.uid), adding, &out->cap, msg,
			len);
	if (e >= 0)
		return e;
	if (is_pid)
		e = registry_add_process(d->registry, id, subj.uid, &req, &spec, &out->process, msg, len);
	else
		e = registry_add_thread(d->registry, id, ps.tgid, subj.uid, source, &req, &spec, NULL, &out->thread,
					msg, len);
	if (e == PE_APPLY_FAILED)
		snprintf(out->diag, sizeof(out->diag), "%s", registry_last_diag(d->registry));
	if (e >= 0)
		return e;
	d->grants++;
	return -1;
}

static void op_register(struct ctx *x)
{
	struct grant_request req;
	struct request_granted g;
	char msg[768];
	bool is_pid;
	long id;
	int e;

	if (get_target(x, &id, &is_pid) < 0 || parse_request_fields(x, &req) < 0)
		return;
	e = request_grant(x->d, x->peer, (pid_t)id, is_pid, &req, REG_SOURCE_THREAD, &g, msg, sizeof(msg));
	if (e >= 0) {
		refuse_msg(x, e, g.diag, msg);
		return;
	}
	if (is_pid) {
		struct reg_process *p = g.process;
		proto_begin(&x->out, "OK");
		proto_add_long(&x->out, "pid", id);
		proto_add_long(&x->out, "threads", (long)p->n_threads);
		proto_add(&x->out, "rule", req.role[0] ? req.role : "default");
		struct reg_thread *t = registry_find(x->d->registry, (pid_t)id);
		if (t)
			add_sched(&x->out, &t->applied);
		add_cap(&x->out, &g.cap);
		if (msg[0])
			proto_add(&x->out, "warning", msg);
		log_info("registered process %d (%zu threads) for uid %u, rule %s", (int)id, p->n_threads,
			 (unsigned)x->peer->uid, req.role[0] ? req.role : "default");
		send_buf(x);
		return;
	}
	struct reg_thread *t = g.thread;
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "tid", t->tid);
	proto_add_long(&x->out, "pid", t->pid);
	proto_add(&x->out, "rule", req.role[0] ? req.role : "default");
	add_sched(&x->out, &t->applied);
	add_cap(&x->out, &g.cap);
	task_sched_format(&t->applied, msg, sizeof(msg));
	log_info("registered tid %d (pid %d) for uid %u, rule %s: %s", (int)t->tid, (int)t->pid,
		 (unsigned)x->peer->uid, req.role[0] ? req.role : "default", msg);
	send_buf(x);
}

static void op_unregister(struct ctx *x)
{
	struct daemon *d = x->d;
	struct grant_subject subj;
	struct task_sched now;
	bool is_pid;
	long id;

	if (get_target(x, &id, &is_pid) < 0 || !rate_ok(x))
		return;
	grant_subject_init(&subj, d->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if (is_pid) {
		struct reg_process *p = registry_find_process(d->registry, (pid_t)id);
		if (!p) {
			refuse(x, PE_NOT_REGISTERED, "process %ld is not registered", id);
			return;
		}
		if (!subj.privileged && p->owner != subj.uid) {
			refuse(x, PE_NOT_OWN_THREAD, "process %ld was registered by uid %u; only it, root or admin-group may unregister it",
			       id, (unsigned)p->owner);
			return;
		}
		registry_remove_process(d->registry, p, true);
	} else {
		struct reg_thread *t = registry_find(d->registry, (pid_t)id);
		if (!t) {
			refuse(x, PE_NOT_REGISTERED, "tid %ld is not managed", id);
			return;
		}
		if (!subj.privileged && t->owner != subj.uid) {
			refuse(x, PE_NOT_OWN_THREAD, "tid %ld was registered by uid %u; only it, root or admin-group may unregister it",
			       id, (unsigned)t->owner);
			return;
		}
		if (t->proc) {
			refuse(x, PE_BAD_REQUEST, "tid %ld is managed as part of registered process %d; "
			       "unregister --pid %d, or register the thread on its own first", id, (int)t->proc->pid,
			       (int)t->proc->pid);
			return;
		}
		registry_remove_thread(d->registry, t, true);
	}
	log_info("unregistered %s %ld", is_pid ? "process" : "tid", id);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, is_pid ? "pid" : "tid", id);
	if (task_sched_read((pid_t)id, &now) == 0)
		add_sched(&x->out, &now);
	send_buf(x);
}

static void op_reload(struct ctx *x)
{
	struct grant_subject subj;
	char err[512];

	grant_subject_init(&subj, x->d->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if (!subj.privileged) {
		refuse(x, PE_NOT_ADMIN, "reload needs root or admin-group");
		return;
	}
	if (!rate_ok(x))
		return;
	if (daemon_reload(x->d, err, sizeof(err)) < 0) {
		refuse(x, PE_CONFIG_INVALID, "%s; the running configuration was kept", err);
		return;
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "threads", (long)registry_n_threads(x->d->registry));
	proto_add_long(&x->out, "rules", (long)x->d->config->n_rules);
	send_buf(x);
}

/* The kernel's preemption model, from debugfs or the version string. */
static void preempt_model(char *buf, size_t len)
{
	struct utsname u;
	char line[128];
	FILE *f = fopen("/sys/kernel/debug/sched/preempt", "re");

	if (f && fgets(line, sizeof(line), f)) {
		/* "none voluntary (full)": the parenthesised one is active */
		char *a = strchr(line, '('), *b = a ? strchr(a, ')') : NULL;
		if (a && b) {
			snprintf(buf, len, "PREEMPT_DYNAMIC (%.*s)", (int)(b - a - 1), a + 1);
			fclose(f);
			return;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	snprintf(buf, len, "%s", strstr(u.version, "PREEMPT_RT") ? "PREEMPT_RT" :
		 strstr(u.version, "PREEMPT_DYNAMIC") ? "PREEMPT_DYNAMIC" :
		 strstr(u.version, "PREEMPT") ? "PREEMPT" : "none/voluntary");
}

/* Timer slack of a thread: RT threads get none; others from /proc if we may read it. */
static void timer_slack(const struct task_sched *ts, pid_t pid, char *buf, size_t len)
{
	char path[64], v[32];
	FILE *f;

	if (policy_is_realtime(ts->policy)) {
		snprintf(buf, len, "0");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/timerslack_ns", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(v, sizeof(v), f)) {
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
	} else {
		snprintf(buf, len, "?");
	}
	if (f)
		fclose(f);
}

struct jitter_ctx {
	struct ctx *x;
	const char *want;   /* histogram of this source ([KIND:]tid or name), or NULL */
	int want_kind;      /* the KIND: given or, once a row matched, its kind; -1 */
	long rows;
};

/* One source: a summary row, or with histogram= its buckets. */
static void jitter_row_out(void *ud, const struct jitter_row *r)
{
	struct jitter_ctx *jc = ud;
	struct ctx *x = jc->x;
	struct task_sched ts;
	char cpus[128] = "?", slack[32] = "?", tid[16];
	int64_t v;
	double d;

	snprintf(tid, sizeof(tid), "%d", (int)r->tid);
	if (jc->want) {
		/* one source only: a thread can have a timer and two BPF rows;
		 * the first that matches (timer, probe, bpf-timer, bpf-wakeup)
		 * unless the request names the kind */
		if (r->kind == JITTER_SCHEDSTAT || (jc->want_kind >= 0 && (int)r->kind != jc->want_kind) ||
		    (strcmp(jc->want, tid) && strcmp(jc->want, r->name)))
			return;
		jc->want_kind = (int)r->kind;
		for (int i = hist_bucket_next(&r->h, 0); i >= 0; i = hist_bucket_next(&r->h, i + 1)) {
			proto_begin(&x->out, "ROW");
			proto_add(&x->out, "name", r->name);
			proto_add(&x->out, "kind", jitter_kind_name(r->kind));
			proto_add_long(&x->out, "lo_ns", (long)hist_bucket_lower(i));
			proto_add_long(&x->out, "hi_ns", i == HIST_OVERFLOW ? -1 : (long)hist_bucket_upper(i));
			proto_add_long(&x->out, "count", (long)hist_bucket_count(&r->h, i));
			send_buf(x);
			jc->rows++;
		}
		return;
	}
	proto_begin(&x->out, "ROW");
	proto_add(&x->out, "kind", jitter_kind_name(r->kind));
	proto_add(&x->out, "name", r->name);
	proto_add_long(&x->out, "tid", r->tid);
	proto_add_long(&x->out, "pid", r->pid);
	proto_add(&x->out, "rule", r->rule);
	if (task_sched_read(r->tid, &ts) == 0) {
		cpulist_format(&ts.cpus, cpus, sizeof(cpus));
		timer_slack(&ts, r->pid, slack, sizeof(slack));
		proto_add(&x->out, "policy", policy_to_string(ts.policy));
		proto_add_long(&x->out, "priority", ts.priority);
	}
	proto_add(&x->out, "cpus", cpus);
	proto_add(&x->out, "timer_slack_ns", slack);
	proto_add(&x->out, "strategy", r->strategy);
	proto_add_long(&x->out, "period_ns", (long)r->period_ns);
	proto_add_long(&x->out, "samples", (long)r->samples);
	if (r->kind == JITTER_SCHEDSTAT) {
		proto_add_long(&x->out, "mean_ns", (long)r->mean_ns);
	} else if (r->samples) {
		static const struct { const char *k; double q; } pct[] = {
			{ "p50_ns", 50 }, { "p90_ns", 90 }, { "p99_ns", 99 }, { "p999_ns", 99.9 }, { "p9999_ns", 99.99 } };
		proto_add_long(&x->out, "min_ns", (long)hist_min(&r->h));
		for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
			if (hist_percentile(&r->h, pct[i].q, &v) == 0)
				proto_add_long(&x->out, pct[i].k, (long)v);
		proto_add_long(&x->out, "max_ns", (long)hist_max(&r->h));
		proto_add_long(&x->out, "mean_ns", (long)r->mean_ns);
		if (hist_stddev(&r->h, &d) == 0)
			proto_add_long(&x->out, "stddev_ns", (long)d);
		proto_add_long(&x->out, "overruns", (long)hist_overruns(&r->h));
		if (r->period_ns > 0 && hist_percentile(&r->h, 99, &v) == 0) {
			char p[32];
			snprintf(p, sizeof(p), "%.2f", 100.0 * (double)v / (double)r->period_ns);
			proto_add(&x->out, "p99_pct", p);
		}
	}
	send_buf(x);
	jc->rows++;
}

static void op_jitter(struct ctx *x)
{
	struct jitter_ctx jc = { .x = x, .want = proto_get(x->m, "histogram"), .want_kind = -1 };
	const char *colon = jc.want ? strchr(jc.want, ':') : NULL;
	char model[64];

	if (colon) {
		static const enum jitter_kind k[] = { JITTER_TIMER, JITTER_PROBE, JITTER_BPF_TIMER, JITTER_BPF_WAKEUP };
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
			if (strlen(jitter_kind_name(k[i])) == (size_t)(colon - jc.want) &&
			    !strncmp(jc.want, jitter_kind_name(k[i]), (size_t)(colon - jc.want)))
				jc.want_kind = (int)k[i];
		if (jc.want_kind < 0) {
			refuse(x, PE_BAD_REQUEST, "unknown kind in histogram '%s'; use timer:, probe:, bpf-timer: "
			       "or bpf-wakeup: before the name or tid", jc.want);
			return;
		}
		jc.want = colon + 1;
	}

	jitter_foreach(x->d->jitter, jitter_row_out, &jc);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", jc.rows);
	preempt_model(model, sizeof(model));
	proto_add(&x->out, "preempt", model);
	proto_add(&x->out, "cpu_dma_latency", daemon_pmqos_state(x->d));
	send_buf(x);
}

static void op_jitter_reset(struct ctx *x)
{
	struct grant_subject subj;

	grant_subject_init(&subj, x->d->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if (!subj.privileged) {
		refuse(x, PE_NOT_ADMIN, "jitter-reset needs root or admin-group");
		return;
	}
	jitter_reset(x->d->jitter);
	proto_begin(&x->out, "OK");
	send_buf(x);
}

static void op_jitter_attach(struct ctx *x)
{
	struct grant_subject subj;
	struct proc_status ps;
	const char *strategy = proto_get(x->m, "strategy");
	char msg[512];
	long tid, period;
	int e, fd = x->fd;

	x->fd = -1; /* ours now: jitter_attach consumes it */
	if (fd < 0) {
		refuse(x, PE_BAD_REQUEST, "jitter-attach needs the histogram memfd passed with SCM_RIGHTS");
		return;
	}
	if (proto_get_long(x->m, "tid", 1, INT32_MAX, &tid) < 0 ||
	    proto_get_long(x->m, "period_ns", 1, 60L * 1000000000L, &period) < 0 || !strategy ||
	    strlen(strategy) >= 16) {
		close(fd);
		refuse(x, PE_BAD_REQUEST, "jitter-attach needs tid=TID period_ns=N strategy=NAME");
		return;
	}
	grant_subject_init(&subj, x->d->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if (proc_read_status((pid_t)tid, &ps) < 0) {
		close(fd);
		refuse(x, PE_NO_SUCH_THREAD, "tid %ld: no such thread", tid);
		return;
	}
	if ((e = may_act_on(x->peer, &subj, &ps, "tid", tid, msg, sizeof(msg))) >= 0) {
		close(fd);
		refuse(x, e, "%s", msg);
		return;
	}
	e = jitter_attach(x->d->jitter, (pid_t)tid, ps.tgid, subj.uid, period, strategy, fd, msg, sizeof(msg));
	if (e >= 0) {
		refuse(x, e, "%s", msg);
		return;
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "tid", tid);
	send_buf(x);
}

/* The Prometheus text, one ROW per line. */
static void op_metrics(struct ctx *x)
{
	char *text = NULL, *save = NULL;
	size_t len = 0;
	long rows = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || jitter_prometheus(x->d->jitter, f) < 0) {
		if (f)
			fclose(f);
		free(text);
		refuse(x, PE_INTERNAL, "cannot build the metrics");
		return;
	}
	fclose(f);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), rows++) {
		proto_begin(&x->out, "ROW");
		proto_add(&x->out, "line", l);
		send_buf(x);
	}
	free(text);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", rows);
	send_buf(x);
}

/* The daemon's own decision on a check's policy and priority, as a register
 * would meet it: the same grant_check, the same code and fix. For the user
 * checked (or the caller), against the process checked. */
static void check_grant(struct ctx *x, const struct grant_subject *caller, const struct diag_target *t,
			struct diag_report *rep)
{
	const struct config *c = x->d->config;
	struct grant_request req = { .has_policy = true, .policy = t->policy, .has_priority = true,
				     .priority = t->priority };
	struct grant_subject subj = *caller;
	struct sched_spec spec;
	struct grant_cap cap;
	char msg[768];
	int e;

	if (t->user && strcmp(t->user, caller->user) != 0) {
		struct passwd *pw = getpwnam(t->user);
		if (!pw)
			return;
		grant_subject_init(&subj, c, pw->pw_uid, pw->pw_gid, 0);
	}
	if (grant_resolve(c, &req, &spec, msg, sizeof(msg)) >= 0)
		return;
	e = grant_check(c, &subj, &req, &spec, t->pid ? t->pid : caller->pid, 0, 0, &cap, msg, sizeof(msg));
	if (e >= 0) {
		/* the refusal is "what; what to do": the fix after the first "; " */
		char *fix = strstr(msg, "; ");
		if (fix) {
			*fix = '\0';
			fix += 2;
		}
		diag_report_add(rep, proto_error_code((enum proto_error)e), DIAG_ERROR, msg,
				fix ? fix : "see the message: it names the limit and where it is set");
		diag_report_sort(rep);
	}
}

/* check: the diagnosis of a process or a user, one ROW per finding. A
 * non-privileged client may examine only itself (its processes, its user). */
static void op_check(struct ctx *x)
{
	struct grant_subject subj;
	struct diag_target t = { .policy = -1 };
	struct diag_report rep;
	struct proc_status ps;
	const char *user = proto_get(x->m, "user"), *pol = proto_get(x->m, "policy"), *cpus_s = proto_get(x->m, "cpus");
	cpu_set_t cpus;
	long n;
	int r;

	if (!rate_ok(x))
		return;
	grant_subject_init(&subj, x->d->config, x->peer->uid, x->peer->gid, x->peer->pid);
	if ((r = proto_get_long(x->m, "pid", 1, INT32_MAX, &n)) == 0) {
		t.pid = (pid_t)n;
		if (proc_read_status(t.pid, &ps) < 0) {
			refuse(x, PE_NO_SUCH_THREAD, "pid %ld: no such process", n);
			return;
		}
		if (!subj.privileged && ps.uid != subj.uid) {
			refuse(x, PE_NOT_ADMIN, "pid %ld belongs to uid %u; checking another user's process needs root "
			       "or admin-group", n, (unsigned)ps.uid);
			return;
		}
	} else if (r != -ENOENT) {
		refuse(x, PE_BAD_REQUEST, "pid must be a positive number");
		return;
	}
	if (user) {
		if (!subj.privileged && strcmp(user, subj.user) != 0) {
			refuse(x, PE_NOT_ADMIN, "checking user %s needs root or admin-group", user);
			return;
		}
		t.user = user;
	}
	if (pol && (t.policy = policy_from_string(pol)) < 0) {
		refuse(x, PE_BAD_REQUEST, "unknown policy '%s'; use one of %s", pol, policy_names());
		return;
	}
	if ((r = proto_get_long(x->m, "priority", 0, 99, &n)) == 0) {
		t.priority = (int)n;
	} else if (r != -ENOENT) {
		refuse(x, PE_BAD_REQUEST, "priority must be a number in 0..99");
		return;
	} else if (t.policy >= 0) {
		t.priority = policy_is_realtime(t.policy) ? x->d->config->dflt.priority : 0;
	}
	if (cpus_s) {
		if (cpulist_parse(cpus_s, &cpus, NULL) < 0) {
			refuse(x, PE_BAD_REQUEST, "bad CPU list '%s'", cpus_s);
			return;
		}
		t.cpus = &cpus;
	}
	struct diag_env env = { .limits_conf = x->d->config->limits_conf, .limits_dir = x->d->config->limits_dir };
	diag_report_init(&rep);
	r = diag_run(&env, &t, &rep);
	if (r < 0) {
		diag_report_free(&rep);
		refuse(x, r == -ESRCH ? PE_NO_SUCH_THREAD : r == -ENOENT ? PE_BAD_REQUEST : PE_INTERNAL,
		       "check failed: %s%s", strerror(-r), r == -ENOENT ? " (no such user?)" : "");
		return;
	}
	if (t.policy >= 0)
		check_grant(x, &subj, &t, &rep);
	bpfcheck_add(&rep, x->d->observer_error, x->d->observer_why, true);
	diag_report_sort(&rep);
	for (size_t i = 0; i < rep.n; i++) {
		proto_begin(&x->out, "ROW");
		proto_add(&x->out, "code", rep.v[i].code);
		proto_add(&x->out, "severity", diag_severity_name(rep.v[i].severity));
		proto_add(&x->out, "message", rep.v[i].message);
		proto_add(&x->out, "fix", rep.v[i].fix);
		send_buf(x);
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", (long)rep.n);
	proto_add(&x->out, "worst", diag_severity_name(diag_report_worst(&rep)));
	proto_add_long(&x->out, "pid", rep.pid);
	proto_add(&x->out, "comm", rep.comm);
	proto_add(&x->out, "unit", rep.unit);
	proto_add(&x->out, "user", rep.user);
	proto_add_long(&x->out, "has_limits", rep.has_limits);
	proto_add_long(&x->out, "rtprio_soft", rep.rtprio_soft);
	proto_add_long(&x->out, "rtprio_hard", rep.rtprio_hard);
	proto_add(&x->out, "soft_src", rep.soft_src);
	proto_add(&x->out, "hard_src", rep.hard_src);
	send_buf(x);
	diag_report_free(&rep);
}

bool request_privileged(struct daemon *d, uid_t uid, gid_t gid, pid_t pid)
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

void request_handle(struct daemon *d, const struct peer *p, const void *data, size_t len, int fd,
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
