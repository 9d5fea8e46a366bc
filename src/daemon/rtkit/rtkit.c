/* rtkit.c: org.freedesktop.RealtimeKit1 served with sd-bus on the daemon's
 * event loop. Each Make* call becomes a grant request that goes through the
 * daemon's grant callback (struct rtkit_ctx; dispatch_register(), the path
 * of a control-socket `register`): the same rules, limits, rate limit,
 * rtprio-cap, watchdog, restore and jitter. What rtkit adds on top is kept
 * here: its argument ranges, the cap and floor it
 * advertises as properties, its RLIMIT_RTTIME contract, and its rule that a
 * caller may name any process of its own uid (MakeThread*WithPID, which the
 * Realtime portal uses with host pids). A refusal is a D-Bus error that
 * clients already handle, with rtschedd's diagnosis in its message. */
#include "autoconfig.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-bus.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/log.h"
#include "shared/protocol.h"
#include "daemon/config/config.h"
#include "daemon/frontend.h"
#include "daemon/sys/proc.h"
#include "daemon/sys/sysbus.h"
#include "daemon/rtkit/rtkit.h"

#define RTKIT_NAME "org.freedesktop.RealtimeKit1"
#define RTKIT_PATH "/org/freedesktop/RealtimeKit1"
#define RTKIT_IFACE RTKIT_NAME

/* RequestName flags and replies (the D-Bus specification). */
#define NAME_FLAG_REPLACE_EXISTING 0x2
#define NAME_FLAG_DO_NOT_QUEUE 0x4
enum { NAME_PRIMARY = 1, NAME_IN_QUEUE = 2, NAME_EXISTS = 3, NAME_ALREADY_OWNER = 4 };

/* The bus daemon records a connection's uid and pid when it connects and
 * never changes them, and never gives a unique name (":1.42") to a second
 * connection: what it said about a sender holds as long as the sender is
 * connected. Asking again on every call is a synchronous round trip to the
 * bus daemon on the event loop, the larger part of a grant's cost, so the
 * answers of the last SENDER_CACHE senders are kept, each dropped when the
 * bus says its connection is gone (NameOwnerChanged) or when a newer sender
 * needs the slot. Each also holds the sender's process open for rtkit's
 * RLIMIT_RTTIME check of its threads (struct proc_pin, from its first
 * MakeThreadRealtime on). */
#define SENDER_CACHE 64
struct sender {
	char name[48];                /* the unique name; "" = a free slot */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	unsigned long used;           /* the call counter when last used: the oldest goes first */
	struct proc_pin pin;          /* /proc/PID and its limits, open; PROC_PIN_NONE until used */
};

/* A call whose sender the bus has not been asked about yet waits for the
 * answer off the event loop (GetConnectionCredentials, asynchronously): a
 * caller that connects anew for every call costs the loop no round trip.
 * At most PENDING_MAX such calls wait at once, one per sender. */
#define PENDING_MAX 64

/* One Make* call, as parsed. */
struct call {
	sd_bus_message *m;            /* referenced while it waits */
	bool with_pid, realtime;
	uint64_t process, thread;
	uint32_t prio;
	int32_t nice;
	struct rtkit *rk;
	sd_bus_slot *slot;            /* the credentials query */
	char sender[48];
	struct call *next;
};

enum rtkit_state { RK_CONNECTING, RK_OWNED, RK_NOT_OWNED, RK_LOST, RK_RELEASED, RK_FAILED };
static const char *const state_names[] = { "connecting", "owned", "not owned", "lost", "released", "failed" };

struct rtkit {
	struct rtkit_ctx ctx;
	const struct config *config;  /* the running configuration, given again at every reload */
	sd_bus *bus;
	sd_bus_slot *vtable, *request, *lost, *acquired, *exit_call, *owner_changed;
	enum rtkit_state state;
	char detail[192];
	unsigned long calls, grants, refusals;
	struct sender senders[SENDER_CACHE];
	struct call *pending;         /* waiting for their sender's credentials */
	unsigned n_pending;
};

/* One refusal: counted, logged at debug, answered with `name` and a message
 * that starts with rtschedd's diagnosis code. */
__attribute__((format(printf, 5, 6)))
static int refuse(struct rtkit *rk, sd_bus_error *err, const char *name, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rk->refusals++;
	rk->ctx.refused(rk->ctx.ud);
	log_debug("rtkit: refused: %s: %s", code, msg);
	return sd_bus_error_setf(err, name, "rtschedd: %s: %s", code, msg);
}

/* The D-Bus error a client expects for one of the grant path's refusals. */
static const char *error_name(int e)
{
	switch (e) {
	case PE_BAD_REQUEST: case PE_NO_SUCH_THREAD: case PE_UNKNOWN_ROLE: case PE_STALE_THREAD:
		return SD_BUS_ERROR_INVALID_ARGS;
	case PE_PRIORITY_DENIED: case PE_CPU_DENIED: case PE_QUOTA: case PE_RATE_LIMITED:
	case PE_WATCHDOG_COOLDOWN: case PE_NICE_DENIED: case PE_ABOVE_MAX: case PE_RTPRIO_CAP:
		return SD_BUS_ERROR_LIMITS_EXCEEDED;
	case PE_NOT_OWN_THREAD: case PE_NOT_ADMIN: case PE_POLICY_DENIED: case PE_RTTIME_OVER_MAX:
		return SD_BUS_ERROR_ACCESS_DENIED;
	default:
		return SD_BUS_ERROR_FAILED;
	}
}

/* The cached answer for the sender `name`, or NULL. */
static struct sender *sender_find(struct rtkit *rk, const char *name)
{
	for (size_t i = 0; i < SENDER_CACHE; i++)
		if (rk->senders[i].name[0] && strcmp(rk->senders[i].name, name) == 0)
			return &rk->senders[i];
	return NULL;
}

/* Free a slot: its name and its process's descriptors. */
static void sender_drop(struct sender *s)
{
	s->name[0] = '\0';
	proc_pin_close(&s->pin);
}

/* Keep what the bus said about `name` in a free slot, else the least
 * recently used one; NULL for a name too long for a slot (not kept). */
static struct sender *sender_keep(struct rtkit *rk, const char *name, const struct peer *p)
{
	struct sender *s = &rk->senders[0];

	if (strlen(name) >= sizeof(s->name))
		return NULL;
	for (size_t i = 0; i < SENDER_CACHE && s->name[0]; i++)
		if (!rk->senders[i].name[0] || rk->senders[i].used < s->used)
			s = &rk->senders[i];
	sender_drop(s);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->uid = p->uid;
	s->gid = p->gid;
	s->pid = p->pid;
	s->used = rk->calls;
	return s;
}

/* A connection left the bus: its unique name will never call again. */
static int on_owner_changed(sd_bus_message *m, void *ud, sd_bus_error *unused)
{
	struct rtkit *rk = ud;
	const char *name = NULL, *old = NULL, *new = NULL;
	struct sender *s;

	if (sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || !name || name[0] != ':' || (new && new[0]))
		return 0;
	if ((s = sender_find(rk, name)))
		sender_drop(s);
	return 0;
}

/* Fill p from what the bus said of a sender. */
static void peer_fill(struct peer *p, uid_t uid, pid_t pid)
{
	struct account a;
	bool found = accounts_by_uid(uid, &a) == 0;

	memset(p, 0, sizeof(*p));
	/* no pidfd from dbus-daemon 1.14: the grant path's uid check stands in for it */
	p->pidfd = -1;
	p->pid = pid;
	p->uid = uid;
	p->account = grant_account(uid);
	p->gid = found ? a.gid : (gid_t)-1;
}

/* Who called, if the bus told us before: uid and pid as the bus daemon
 * recorded them when the caller connected (never read back from /proc,
 * which a caller could race). Its slot (which holds its process open for
 * read_rttime()), or NULL if not known. */
static struct sender *sender_known(struct rtkit *rk, const char *name, struct peer *p)
{
	struct sender *s;

	if (!name || !(s = sender_find(rk, name)))
		return NULL;
	s->used = rk->calls;
	peer_fill(p, s->uid, s->pid);
	return s;
}

/* rtkit's contract: a real-time thread's process must carry an RLIMIT_RTTIME
 * hard limit no higher than RTTimeUSecMax, so the kernel stops a runaway;
 * the grant decision judges it (grant_decide(), with the [rtkit] ceiling),
 * on what is read here. A thread of the caller's own process (pid) is read
 * through the process its connection holds open (s, if kept), which also
 * says that tid is one of its threads and whom it runs as; any other from
 * /proc/TID/limits. What was read is left in *known for the grant path. */
static int read_rttime(struct rtkit *rk, struct sender *s, pid_t pid, pid_t tid, struct frontend_task *known,
		       sd_bus_error *err)
{
	struct proc_rlimits l;
	uint64_t start;
	uid_t owner;
	int r = -ESRCH;

	memset(known, 0, sizeof(*known));
	if (s && s->pid == pid) {
		if (s->pin.dir_fd < 0)
			proc_pin_open(&s->pin, pid);   /* if it fails: /proc/TID/limits below */
		/* the thread pinned (its start time) and its owner read in one
		 * step: the grant path checks the owner of the thread it pins */
		if ((r = proc_pin_read_limits(&s->pin, tid, &l, &owner, &start)) == 0) {
			known->pid = pid;
			known->owner = owner;
			known->starttime = start;
		}
	}
	if (r < 0)
		r = proc_read_limits(tid, &l);

	if (r == -ESRCH || r == -ENOENT)
		return refuse(rk, err, SD_BUS_ERROR_INVALID_ARGS, proto_error_code(PE_NO_SUCH_THREAD),
			      "thread %d: no such thread", (int)tid);
	if (r < 0)
		return refuse(rk, err, SD_BUS_ERROR_FAILED, proto_error_code(PE_INTERNAL),
			      "cannot read /proc/%d/limits: %s", (int)tid, strerror(-r));
	known->tid = tid;
	known->limits = l;
	return 0;
}

/* The rest of a Make* call, once its sender is known: the grant, through
 * the daemon's grant path. Returns as a method handler does. */
static int call_finish(struct rtkit *rk, const struct call *c, struct peer *peer, struct sender *slot,
		       sd_bus_error *err)
{
	const struct rtkit_conf *conf = &rk->config->rtkit;
	struct grant_request req;
	struct frontend_grant g;
	struct frontend_task known, *read = NULL;
	char msg[768];
	int e, r;

	/* WithPID: the thread must be one of `process`, which must be the
	 * caller's uid's (the grant path checks both); else the caller's own */
	if (c->with_pid) {
		peer->foreign = peer->pid != (pid_t)c->process;
		peer->pid = (pid_t)c->process;
	}
	memset(&req, 0, sizeof(req));
	snprintf(req.role, sizeof(req.role), "%s", conf->role);
	req.has_policy = true;
	if (c->realtime) {
		if ((r = read_rttime(rk, slot, peer->pid, (pid_t)c->thread, &known, err)) < 0)
			return r;
		read = &known;
		req.policy = conf->policy;
		req.has_priority = true;
		/* capped, not refused: clients ask for what they like and adapt to
		 * MaxRealtimePriority, which says what they get */
		req.priority = (int)c->prio > conf->max_priority ? conf->max_priority : (int)c->prio;
	} else {
		req.policy = SCHED_OTHER;
		req.has_nice = true;
		/* floored to MinNiceLevel, which its clients read; [user]/[group]
		 * min-nice still holds below that (grant_check()) */
		req.nice = c->nice < conf->min_nice ? conf->min_nice : c->nice;
	}
	e = rk->ctx.grant(rk->ctx.ud, peer, (pid_t)c->thread, &req, read, &g, msg, sizeof(msg));
	/* the message starts with the error code, then, when the kernel refused,
	 * the diagnosed cause's code: "rtschedd: apply-failed: rtprio-zero: ..." */
	if (e != 0)
		return refuse(rk, err, error_name(g.code), proto_error_code(g.code), "%s%s%s", g.diag,
			      g.diag[0] ? ": " : "", msg);
	rk->grants++;
	if (log_enabled(LOG_LEVEL_INFO)) {
		task_sched_format(&g.applied, msg, sizeof(msg));
		log_info("rtkit: %s for uid %u (pid %d): tid %d (pid %d): %s",
			 c->realtime ? "MakeThreadRealtime" : "MakeThreadHighPriority", (unsigned)peer->uid,
			 (int)peer->pid, (int)g.tid, (int)g.pid, msg);
	}
	return sd_bus_reply_method_return(c->m, NULL);
}

static void call_free(struct call *c)
{
	struct rtkit *rk = c->rk;

	for (struct call **pp = &rk->pending; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			rk->n_pending--;
			break;
		}
	sd_bus_slot_unref(c->slot);
	sd_bus_message_unref(c->m);
	free(c);
}

/* The bus's answer about a waiting call's sender: go on with the call, and
 * answer it. */
static int on_creds(sd_bus_message *reply, void *userdata, sd_bus_error *unused)
{
	struct call *c = userdata;
	struct rtkit *rk = c->rk;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	uint32_t uid = 0, pid = 0;
	bool have_uid = false, have_pid = false;
	struct peer peer;
	int r = 0;

	if (e)
		r = refuse(rk, &err, SD_BUS_ERROR_ACCESS_DENIED, "no-credentials", "the bus did not say who is "
			   "calling (%s); rtschedd grants nothing to an unknown caller", e->message ? e->message : e->name);
	else if ((r = sd_bus_message_enter_container(reply, 'a', "{sv}")) >= 0) {
		const char *key;

		while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
			if ((r = sd_bus_message_read(reply, "s", &key)) < 0)
				break;
			if (strcmp(key, "UnixUserID") == 0 && (r = sd_bus_message_read(reply, "v", "u", &uid)) >= 0)
				have_uid = true;
			else if (strcmp(key, "ProcessID") == 0 && (r = sd_bus_message_read(reply, "v", "u", &pid)) >= 0)
				have_pid = true;
			else if (r >= 0)
				r = sd_bus_message_skip(reply, "v");
			if (r < 0 || (r = sd_bus_message_exit_container(reply)) < 0)
				break;
		}
		if (r >= 0 && (!have_uid || !have_pid))
			r = -ENODATA;
		if (r < 0)
			r = refuse(rk, &err, SD_BUS_ERROR_ACCESS_DENIED, "no-credentials", "the bus did not say who is "
				   "calling (%s); rtschedd grants nothing to an unknown caller", strerror(-r));
	}
	if (r >= 0) {
		peer_fill(&peer, (uid_t)uid, (pid_t)pid);
		r = call_finish(rk, c, &peer, sender_keep(rk, c->sender, &peer), &err);
	}
	if (r < 0)
		sd_bus_reply_method_errno(c->m, r, &err);
	sd_bus_error_free(&err);
	call_free(c);
	return 0;
}

/* The common body of the four Make* methods. */
static int make_thread(sd_bus_message *m, void *userdata, sd_bus_error *err, bool with_pid, bool realtime)
{
	struct rtkit *rk = userdata;
	const struct rtkit_conf *conf = &rk->config->rtkit;
	const char *name = sd_bus_message_get_sender(m);
	struct call c = { .m = m, .with_pid = with_pid, .realtime = realtime, .rk = rk }, *w;
	struct sender *s;
	struct peer peer;
	int r;

	rk->calls++;
	if (with_pid)
		r = realtime ? sd_bus_message_read(m, "ttu", &c.process, &c.thread, &c.prio) :
			       sd_bus_message_read(m, "tti", &c.process, &c.thread, &c.nice);
	else
		r = realtime ? sd_bus_message_read(m, "tu", &c.thread, &c.prio) :
			       sd_bus_message_read(m, "ti", &c.thread, &c.nice);
	if (r < 0)
		return r;
	if (c.thread == 0 || c.thread > INT32_MAX || (with_pid && (c.process == 0 || c.process > INT32_MAX)))
		return refuse(rk, err, SD_BUS_ERROR_INVALID_ARGS, proto_error_code(PE_BAD_REQUEST),
			      "thread and process ids must be in 1..%d", INT32_MAX);
	if (realtime && (c.prio < 1 || c.prio > 99))
		return refuse(rk, err, SD_BUS_ERROR_INVALID_ARGS, proto_error_code(PE_BAD_REQUEST),
			      "priority %" PRIu32 " is not a real-time priority; ask for 1..%d "
			      "(MaxRealtimePriority)", c.prio, conf->max_priority);
	if (!realtime && (c.nice < -20 || c.nice > 19))
		return refuse(rk, err, SD_BUS_ERROR_INVALID_ARGS, proto_error_code(PE_BAD_REQUEST),
			      "nice level %" PRId32 " is out of range; ask for %d..19 (MinNiceLevel)", c.nice,
			      conf->min_nice);
	if ((s = sender_known(rk, name, &peer)))
		return call_finish(rk, &c, &peer, s, err);
	/* ask the bus who it is, and answer when it says (on_creds) */
	if (!name || name[0] != ':' || strlen(name) >= sizeof(c.sender))
		return refuse(rk, err, SD_BUS_ERROR_ACCESS_DENIED, "no-credentials",
			      "the call has no unique sender name; rtschedd grants nothing to an unknown caller");
	for (w = rk->pending; w; w = w->next)
		if (strcmp(w->sender, name) == 0)
			break;
	if (w || rk->n_pending >= PENDING_MAX)
		return refuse(rk, err, SD_BUS_ERROR_LIMITS_EXCEEDED, proto_error_code(PE_RATE_LIMITED),
			      "%s; call again once the bus has answered", w ? "this caller's previous call still waits "
			      "for the bus to say who it is" : "too many callers wait for the bus to say who they are");
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	*w = c;
	snprintf(w->sender, sizeof(w->sender), "%s", name);
	r = sd_bus_call_method_async(rk->bus, &w->slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
				     "org.freedesktop.DBus", "GetConnectionCredentials", on_creds, w, "s", name);
	if (r < 0) {
		free(w);
		return refuse(rk, err, SD_BUS_ERROR_ACCESS_DENIED, "no-credentials", "cannot ask the bus who is "
			      "calling (%s); rtschedd grants nothing to an unknown caller", strerror(-r));
	}
	w->m = sd_bus_message_ref(m);
	w->next = rk->pending;
	rk->pending = w;
	rk->n_pending++;
	return 1;   /* answered by on_creds() */
}

static int m_realtime(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	return make_thread(m, ud, err, false, true);
}

static int m_realtime_pid(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	return make_thread(m, ud, err, true, true);
}

static int m_high(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	return make_thread(m, ud, err, false, false);
}

static int m_high_pid(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	return make_thread(m, ud, err, true, false);
}

/* Who calls Reset* or Exit: asked of the bus on the loop (they are refused
 * by the bus policy to everyone but root, and rare; not worth waiting for
 * off the loop). */
static int admin_sender(struct rtkit *rk, sd_bus_message *m, struct peer *p, sd_bus_error *err)
{
	sd_bus_creds *c = NULL;
	uid_t uid;
	pid_t pid;
	int r;

	if (sender_known(rk, sd_bus_message_get_sender(m), p))
		return 0;
	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID, &c);
	if (r >= 0 && (r = sd_bus_creds_get_pid(c, &pid)) >= 0 &&
	    ((r = sd_bus_creds_get_euid(c, &uid)) >= 0 || (r = sd_bus_creds_get_uid(c, &uid)) >= 0)) {
		sd_bus_creds_unref(c);
		peer_fill(p, uid, pid);
		return 0;
	}
	sd_bus_creds_unref(c);
	return refuse(rk, err, SD_BUS_ERROR_ACCESS_DENIED, "no-credentials",
		      "the bus did not say who is calling (%s); rtschedd grants nothing to an unknown caller",
		      strerror(-r));
}

/* Reset*, Exit: root or admin-group only (rtkit's bus policy denies them to
 * everyone but root; this holds even where the policy file is missing). */
static int admin_only(struct rtkit *rk, sd_bus_message *m, const char *what, sd_bus_error *err)
{
	struct peer p;
	int r;

	rk->calls++;
	if ((r = admin_sender(rk, m, &p, err)) < 0)
		return r;
	if (!rk->ctx.privileged(rk->ctx.ud, &p))
		return refuse(rk, err, SD_BUS_ERROR_ACCESS_DENIED, proto_error_code(PE_NOT_ADMIN),
			      "%s needs root or admin-group (uid %u is neither)", what, (unsigned)p.uid);
	return 0;
}

/* Give back what they had to the threads granted over the bus (all = every
 * thread rtschedd manages). Returns how many. */
static size_t reset(struct rtkit *rk, bool all)
{
	return rk->ctx.reset(rk->ctx.ud, all);
}

static int m_reset_known(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	int r = admin_only(rk, m, "ResetKnown", err);

	if (r < 0)
		return r;
	log_info("rtkit: ResetKnown: %zu thread(s) granted over the bus restored", reset(rk, false));
	return sd_bus_reply_method_return(m, NULL);
}

static int m_reset_all(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	int r = admin_only(rk, m, "ResetAll", err);

	if (r < 0)
		return r;
	log_info("rtkit: ResetAll: %zu managed thread(s) restored", reset(rk, true));
	return sd_bus_reply_method_return(m, NULL);
}

/* Exit: rtschedd is more than the bus service, so only that part goes: the
 * threads granted over the bus are restored and the name released (a reload
 * with [rtkit] enable = yes asks for it again: rtkit_reconfigure()). */
static int m_exit(sd_bus_message *m, void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	int r = admin_only(rk, m, "Exit", err);

	if (r < 0)
		return r;
	r = sd_bus_reply_method_return(m, NULL);
	log_notice("rtkit: Exit: %zu thread(s) restored, releasing %s; the control socket keeps serving",
		   reset(rk, false), RTKIT_NAME);
	sd_bus_call_method_async(rk->bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
				 "ReleaseName", NULL, NULL, "s", RTKIT_NAME);
	rk->state = RK_RELEASED;
	snprintf(rk->detail, sizeof(rk->detail), "released on an Exit call");
	return r;
}

static int p_rttime(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
		    void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	return sd_bus_message_append(reply, "x", (int64_t)rk->config->rtkit.rttime_usec_max);
}

static int p_max_prio(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
		      void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	return sd_bus_message_append(reply, "i", (int32_t)rk->config->rtkit.max_priority);
}

static int p_min_nice(sd_bus *bus, const char *path, const char *iface, const char *prop, sd_bus_message *reply,
		      void *ud, sd_bus_error *err)
{
	struct rtkit *rk = ud;
	return sd_bus_message_append(reply, "i", (int32_t)rk->config->rtkit.min_nice);
}

/* rtkit's interface, as its /usr/share/dbus-1/interfaces/org.freedesktop.RealtimeKit1.xml
 * has it. sd-bus adds Properties (Get, GetAll), Introspectable and Peer. */
static const sd_bus_vtable rtkit_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtime", "tu", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", "", m_realtime, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadRealtimeWithPID", "ttu",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", "", m_realtime_pid, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriority", "ti", SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", "", m_high, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("MakeThreadHighPriorityWithPID", "tti",
				 SD_BUS_PARAM(process) SD_BUS_PARAM(thread) SD_BUS_PARAM(priority),
				 "", "", m_high_pid, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetKnown", "", "", m_reset_known, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("ResetAll", "", "", m_reset_all, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Exit", "", "", m_exit, SD_BUS_VTABLE_UNPRIVILEGED),
	/* the values follow the configuration across reloads: not const */
	SD_BUS_PROPERTY("RTTimeUSecMax", "x", p_rttime, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
	SD_BUS_PROPERTY("MaxRealtimePriority", "i", p_max_prio, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
	SD_BUS_PROPERTY("MinNiceLevel", "i", p_min_nice, 0, SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
	SD_BUS_VTABLE_END
};

/* Who holds the name now, for the one log line and status. */
static void describe_owner(struct rtkit *rk)
{
	sd_bus_creds *c = NULL;
	struct proc_stat st;
	pid_t pid = 0;

	if (sd_bus_get_name_creds(rk->bus, RTKIT_NAME, SD_BUS_CREDS_PID, &c) >= 0)
		sd_bus_creds_get_pid(c, &pid);
	/* the name only informs the log line: /proc is good enough for that */
	if (pid > 0)
		snprintf(rk->detail, sizeof(rk->detail), "held by pid %d (%s)", (int)pid,
			 proc_read_stat(pid, &st) == 0 ? st.comm : "?");
	else
		snprintf(rk->detail, sizeof(rk->detail), "held by another connection");
	sd_bus_creds_unref(c);
}

static int on_exit_reply(sd_bus_message *m, void *ud, sd_bus_error *unused)
{
	struct rtkit *rk = ud;
	const sd_bus_error *e = sd_bus_message_get_error(m);

	rk->exit_call = sd_bus_slot_unref(rk->exit_call);
	/* rtkit exits without replying at times: no reply is no failure */
	if (e && !sd_bus_error_has_name(e, SD_BUS_ERROR_NO_REPLY) && rk->state != RK_OWNED)
		log_warnx("rtkit: the holder of %s refused to exit (%s: %s); rtschedd waits in the queue for the name",
			  RTKIT_NAME, e->name, e->message ? e->message : "");
	return 0;
}

static int on_request_name(sd_bus_message *m, void *ud, sd_bus_error *unused)
{
	struct rtkit *rk = ud;
	const sd_bus_error *e = sd_bus_message_get_error(m);
	uint32_t ret = 0;

	rk->request = sd_bus_slot_unref(rk->request);
	if (e || sd_bus_message_read(m, "u", &ret) < 0) {
		rk->state = RK_FAILED;
		snprintf(rk->detail, sizeof(rk->detail), "RequestName failed: %s", e && e->message ? e->message : "?");
		log_warnx("rtkit: cannot own %s: %s; install rtschedd's D-Bus policy (%s), which lets root and "
			  "the rtschedd user own it; the control socket works without it", RTKIT_NAME,
			  e && e->message ? e->message : "bad reply", "/usr/share/dbus-1/system.d/rtschedd-rtkit.conf");
		return 0;
	}
	switch (ret) {
	case NAME_PRIMARY:
	case NAME_ALREADY_OWNER:
		/* NameAcquired may have come first and said so already */
		if (rk->state != RK_OWNED)
			log_info("rtkit: serving %s on the system bus", RTKIT_NAME);
		rk->state = RK_OWNED;
		rk->detail[0] = '\0';
		break;
	case NAME_IN_QUEUE:
		/* replace-existing against an owner that did not allow replacement
		 * (rtkit-daemon does not): ask it to exit; the bus hands the name on */
		describe_owner(rk);
		rk->state = RK_NOT_OWNED;
		log_notice("rtkit: %s is %s; replace-existing = yes: asking it to exit, the name comes to rtschedd then",
			   RTKIT_NAME, rk->detail);
		sd_bus_call_method_async(rk->bus, &rk->exit_call, RTKIT_NAME, RTKIT_PATH, RTKIT_IFACE, "Exit",
					 on_exit_reply, rk, NULL);
		break;
	default:
		describe_owner(rk);
		rk->state = RK_NOT_OWNED;
		log_notice("rtkit: %s is %s (rtkit?): rtschedd runs without the bus service; stop and mask "
			   "rtkit-daemon.service, or set replace-existing = yes in [rtkit]", RTKIT_NAME, rk->detail);
		break;
	}
	return 0;
}

static int on_name_signal(sd_bus_message *m, void *ud, sd_bus_error *unused)
{
	struct rtkit *rk = ud;
	const char *name = NULL;

	if (sd_bus_message_read(m, "s", &name) < 0 || !name || strcmp(name, RTKIT_NAME) != 0)
		return 0;
	if (sd_bus_message_is_signal(m, "org.freedesktop.DBus", "NameAcquired")) {
		if (rk->state != RK_OWNED)
			log_info("rtkit: serving %s on the system bus", RTKIT_NAME);
		rk->state = RK_OWNED;
		rk->detail[0] = '\0';
	} else if (rk->state == RK_OWNED) {
		rk->state = RK_LOST;
		snprintf(rk->detail, sizeof(rk->detail), "taken by another connection");
		log_warnx("rtkit: lost %s to another connection; bus callers no longer reach rtschedd", RTKIT_NAME);
	}
	return 0;
}

/* Ask the bus for the name, as [rtkit] says (replace-existing); the answer
 * comes to on_request_name(). 0 or -errno. */
static int request_name(struct rtkit *rk)
{
	const struct rtkit_conf *conf = &rk->config->rtkit;

	rk->request = sd_bus_slot_unref(rk->request);
	return sd_bus_call_method_async(rk->bus, &rk->request, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					"org.freedesktop.DBus", "RequestName", on_request_name, rk, "su", RTKIT_NAME,
					(uint32_t)(conf->replace ? NAME_FLAG_REPLACE_EXISTING : NAME_FLAG_DO_NOT_QUEUE));
}

int rtkit_start(struct rtkit **ret, const struct rtkit_ctx *ctx, const struct config *c)
{
	const struct rtkit_conf *conf = &c->rtkit;
	struct rtkit *rk;
	int r;

	*ret = NULL;
	if (!conf->enable)
		return 0;
	rk = calloc(1, sizeof(*rk));
	if (!rk)
		return -ENOMEM;
	rk->ctx = *ctx;
	rk->config = c;
	rk->state = RK_CONNECTING;
	for (size_t i = 0; i < SENDER_CACHE; i++)
		rk->senders[i].pin = PROC_PIN_NONE;
	*ret = rk;
	if ((r = sysbus_open(&rk->bus, "rtschedd-rtkit", 0)) < 0) {
		snprintf(rk->detail, sizeof(rk->detail), "cannot connect to the system bus: %s", strerror(-r));
		goto fail;
	}
	if ((r = sd_bus_add_object_vtable(rk->bus, &rk->vtable, RTKIT_PATH, RTKIT_IFACE, rtkit_vtable, rk)) < 0 ||
	    (r = sd_bus_match_signal_async(rk->bus, &rk->lost, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					   "org.freedesktop.DBus", "NameLost", on_name_signal, NULL, rk)) < 0 ||
	    (r = sd_bus_match_signal_async(rk->bus, &rk->acquired, "org.freedesktop.DBus", "/org/freedesktop/DBus",
					   "org.freedesktop.DBus", "NameAcquired", on_name_signal, NULL, rk)) < 0 ||
	    (r = sd_bus_match_signal_async(rk->bus, &rk->owner_changed, "org.freedesktop.DBus",
					   "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
					   on_owner_changed, NULL, rk)) < 0 ||
	    (r = request_name(rk)) < 0 ||
	    (r = sd_bus_attach_event(rk->bus, ctx->event, SD_EVENT_PRIORITY_NORMAL)) < 0) {
		snprintf(rk->detail, sizeof(rk->detail), "cannot set up the bus service: %s", strerror(-r));
		goto fail;
	}
	return 0;
fail:
	rk->state = RK_FAILED;
	log_warnx("rtkit: %s; rtschedd runs without the bus service (the control socket works)", rk->detail);
	rk->request = sd_bus_slot_unref(rk->request);
	rk->owner_changed = sd_bus_slot_unref(rk->owner_changed);
	rk->acquired = sd_bus_slot_unref(rk->acquired);
	rk->lost = sd_bus_slot_unref(rk->lost);
	rk->vtable = sd_bus_slot_unref(rk->vtable);
	rk->bus = sd_bus_flush_close_unref(rk->bus);
	return 0;
}

void rtkit_stop(struct rtkit *rk)
{
	if (!rk)
		return;
	while (rk->pending)
		call_free(rk->pending);
	sd_bus_slot_unref(rk->exit_call);
	sd_bus_slot_unref(rk->request);
	sd_bus_slot_unref(rk->owner_changed);
	sd_bus_slot_unref(rk->acquired);
	sd_bus_slot_unref(rk->lost);
	sd_bus_slot_unref(rk->vtable);
	if (rk->bus) {
		/* closing the connection releases the name; flush pending replies first */
		sd_bus_detach_event(rk->bus);
		sd_bus_flush_close_unref(rk->bus);
	}
	for (size_t i = 0; i < SENDER_CACHE; i++)
		proc_pin_close(&rk->senders[i].pin);
	free(rk);
}

int rtkit_reconfigure(struct rtkit **rk, const struct rtkit_ctx *ctx, const struct config *c)
{
	int r;

	if (*rk)
		(*rk)->config = c;
	if (c->rtkit.enable && *rk && (*rk)->state == RK_RELEASED) {
		/* released on an Exit call, the connection still open: ask again */
		log_info("rtkit: [rtkit] enable = yes: asking for %s again after Exit", RTKIT_NAME);
		(*rk)->state = RK_CONNECTING;
		(*rk)->detail[0] = '\0';
		if ((r = request_name(*rk)) < 0) {
			(*rk)->state = RK_FAILED;
			snprintf((*rk)->detail, sizeof((*rk)->detail), "cannot ask for the name: %s", strerror(-r));
			log_warnx("rtkit: %s; rtschedd runs without the bus service (the control socket works)",
				  (*rk)->detail);
		}
		return 0;
	}
	if (c->rtkit.enable && *rk && ((*rk)->state == RK_FAILED || !(*rk)->bus || !sd_bus_is_open((*rk)->bus))) {
		/* the bus was not there at start (or went away): try again now,
		 * an administrator's reload being the natural "the bus is up" */
		log_info("rtkit: [rtkit] enable = yes: connecting to the system bus again (%s)",
			 (*rk)->detail[0] ? (*rk)->detail : "disconnected");
		rtkit_stop(*rk);
		*rk = NULL;
		return rtkit_start(rk, ctx, c);
	}
	if (c->rtkit.enable == (*rk != NULL))
		return 0;
	if (*rk) {
		log_info("rtkit: [rtkit] enable = no: leaving the bus");
		rtkit_stop(*rk);
		*rk = NULL;
		return 0;
	}
	return rtkit_start(rk, ctx, c);
}

void rtkit_stats(const struct rtkit *rk, struct rtkit_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!rk) {
		st->state = "off";
		return;
	}
	st->state = state_names[rk->state];
	if (rk->bus && !sd_bus_is_open(rk->bus)) {
		st->state = "failed";
		snprintf(st->detail, sizeof(st->detail), "disconnected from the system bus; restart rtschedd");
	} else {
		snprintf(st->detail, sizeof(st->detail), "%s", rk->detail);
	}
	st->calls = rk->calls;
	st->grants = rk->grants;
	st->refusals = rk->refusals;
}
