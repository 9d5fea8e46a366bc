/* daemon.c: the daemon object and its one sd-event loop. Signals arrive as
 * event sources (never as handlers doing work): SIGTERM and SIGINT end the
 * loop, SIGHUP reloads the configuration. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>

#include "daemon/caught.h"
#include "daemon/control.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/core/rlimit.h"
#include "daemon/core/state.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/daemon.h"
#include "daemon/diag/diag.h"
#include "daemon/dispatch.h"
#include "daemon/follow.h"
#include "daemon/guard.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/metrics.h"
#include "daemon/observe/bpf/tasks.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/observer.h"
#include "daemon/observing.h"
#include "daemon/privs.h"
#include "daemon/rtkit/rtkit.h"
#include "daemon/sys/accounts.h"
#include "daemon/sys/closer.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/rtloop.h"
#include "daemon/sys/unitjob.h"
#include "daemon/testhook.h"
#include "daemon/watchdog/safety.h"
#include "shared/cleanup.h"

int daemon_apply_overrides(struct config *c, const struct overrides *o, struct config_report *rep)
{
	if (o->has_sched)
		config_override_default(c, o->policy, o->priority);
	if (o->socket && config_override_socket(c, o->socket) < 0)
		return -ENAMETOOLONG;
	if (o->log_level >= 0)
		config_override_log_level(c, o->log_level);
	return config_validate(c, rep);
}

static void loop_configure(struct daemon *d);
static void daemon_follow(struct daemon *d);
static struct rtkit_ctx bus_ctx(struct daemon *d);

/* Log what reading the configuration found: each error, and each warning
 * (log_warnx says "warning" itself), which leaves it valid. */
static void log_report(const struct config_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct config_note *n = &rep->v[i];
		if (n->severity == CONFIG_WARNING)
			log_warnx("%s%s%s", n->at ? n->at : "", n->at ? ": " : "", n->text);
		else
			log_err("%s%s%s", n->at ? n->at : "", n->at ? ": " : "", n->text);
	}
	if (rep->oom)
		log_err("out of memory: some problems of the configuration are not listed");
}

int daemon_load_config(const char *path, bool required, const struct overrides *o, struct config **ret,
		       bool *cmdline_fault)
{
	struct config_report rep = { 0 };
	struct config *c = NULL;
	int r;

	r = config_load(path, required, &c, &rep);
	if (r == 0)
		r = daemon_apply_overrides(c, o, &rep);
	log_report(&rep);
	*cmdline_fault = rep.cmdline;
	config_report_free(&rep);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* Whether the running configuration was read from the main file (it is
 * the first file read when there is one). */
static bool main_file_read(const struct daemon *d)
{
	const struct config *c = d->svc.config;

	return c && c->n_files > 0 && strcmp(c->files[0], d->config_path) == 0;
}

/* A new config replaces the running one only if it is valid; then every
 * managed thread is brought in line with it. */
int daemon_reload(struct daemon *d, char *err, size_t len)
{
	struct config_report rep = { 0 };
	struct config *c = NULL;
	int r;

	sd_notify(0, "RELOADING=1\nSTATUS=Reloading configuration");
	accounts_flush(); /* users and groups may have changed too */
	/* a main file the running configuration was read from must be there:
	 * gone for a moment (an editor's or a package's replace), it is not
	 * "no file", which would put the built-in defaults in its place */
	r = config_load(d->config_path, d->config_required || main_file_read(d), &c, &rep);
	if (r == 0)
		r = daemon_apply_overrides(c, &d->overrides, &rep);
	if (r < 0) {
		/* the reply names the first error, not a warning before it */
		const struct config_note *e = config_report_first_error(&rep);
		if (e)
			config_note_format(e, err, len);
		else
			snprintf(err, len, "%s: %s", d->config_path, strerror(-r));
		log_report(&rep);
		config_report_free(&rep);
		config_free(c);
		log_warnx("reload: %s is not valid; keeping the running configuration", d->config_path);
		sd_notify(0, "READY=1\nSTATUS=Reload failed; running configuration kept");
		return -EINVAL;
	}
	log_report(&rep); /* the warnings of a valid file */
	config_report_free(&rep);
	if (strcmp(c->socket_path, d->svc.config->socket_path) != 0)
		log_warnx("reload: the socket path changed to %s; it takes effect at the next start",
			  c->socket_path);
	config_free(d->svc.config);
	d->svc.config = c;
	log_set_level(c->log_level);
	d->reloads++;
	rlimit_warn_incapable(c); /* CAP_SYS_RESOURCE is kept only if the start's config wanted it */
	diag_self_keep(); /* what `check` says of the daemon: looked at again */
	registry_reapply(d->svc.registry, c);
	observing_reconfigure(&d->svc);
	follow_scan(d->follow, true);
	irqmgr_reconfigure(d->svc.irq, c);
	jitter_apply_config(d->svc.jitter, d->svc.config);
	loop_configure(d);
	guard_configure(d->guard);
	struct rtkit_ctx rc = bus_ctx(d);
	rtkit_reconfigure(&d->rtkit, &rc, c);
	daemon_follow(d);
	log_info("configuration reloaded from %s (%zu file%s, %zu rule%s), %zu thread%s managed", d->config_path,
		 c->n_files, c->n_files == 1 ? "" : "s", c->n_rules, c->n_rules == 1 ? "" : "s",
		 registry_n_threads(d->svc.registry), registry_n_threads(d->svc.registry) == 1 ? "" : "s");
	sd_notify(0, "READY=1\nSTATUS=Running");
	return 0;
}

/* SIGUSR2 with RTSCHEDD_TEST_HOLD_LOCKS set (testhook.h): the main loop
 * blocks inside glibc's locks, for the watchdog test. */
static int on_sigusr2(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	testhook_hold_locks();
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	char err[512];

	daemon_reload(userdata, err, sizeof(err));
	return 0;
}

/* isolate = yes emptied cpus (or released them): the IRQ manager's hook. */
static void on_isolated(void *ud, const cpu_set_t *cpus)
{
	irqmgr_isolate(ud, cpus);
}

/* The event loop's own real-time priority and budget, from the config. */
static void loop_configure(struct daemon *d)
{
	const struct config *c = d->svc.config;
	struct rtloop_params p = { .priority = c->loop_priority, .budget_pct = c->loop_budget };
	int r = rtloop_apply(d->svc.loop, &p);

	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "event loop: cannot watch its CPU budget");
}

/* How a change flows. Every change of the registry reaches
 * on_registry_change(), which does at once what must not wait (the
 * journal line, the watchdog's and the BPF observer's view of that thread)
 * and arms the deferred `changed` source. That source, a reload, the tick,
 * the start, and the service hook `changed` (a request, a front end's reset,
 * a watchdog trip or promotion, the rescan fallback) all end in
 * daemon_follow(), once per loop iteration however many threads changed,
 * which brings everything that follows the registry in line, top-down:
 *   1. process events on or off (follow.c); turning them on rescans what was
 *      missed meanwhile, which may change the registry again: the steps
 *      below see that too, so the deferred source is disarmed after it and
 *      nothing calls daemon_follow() again for its own work;
 *   2. PM QoS (cpu/pmqos.c), isolation (cpu/isolate.c), the IRQ manager's
 *      irq-avoid-cpus = auto (irq/irqmgr.c);
 *   3. the watchdog's list within 100 ms (guard.c), STATUS= (metrics.c),
 *      the tick while there is something to report, the rescan timer
 *      without the connector (follow.c). */
static void daemon_follow(struct daemon *d)
{
	struct service *s = &d->svc;
	uint64_t now;

	follow_events(d->follow);
	if (d->changed)
		sd_event_source_set_enabled(d->changed, SD_EVENT_OFF);
	pmqos_update(s->pmqos, s->config, s->registry);
	isolate_update(s->isolate, s->config);
	irqmgr_threads_changed(s->irq);
	guard_follow(d->guard);
	metrics_notify_status(&d->metrics, s);
	/* the tick runs only while there is something to report: no idle wake-ups */
	if (d->tick && (s->config->metrics_file[0] || jitter_n_sources(s->jitter) > 0) &&
	    sd_event_source_get_enabled(d->tick, NULL) == 0) {
		sd_event_now(d->event, CLOCK_MONOTONIC, &now);
		sd_event_source_set_time(d->tick, now + (uint64_t)s->config->metrics_interval_s * 1000000u);
		sd_event_source_set_enabled(d->tick, SD_EVENT_ONESHOT);
	}
	follow_arm_rescan(d->follow);
}

static int on_changed(sd_event_source *s, void *userdata)
{
	daemon_follow(userdata);
	return 0;
}

/* Registry observer: what cannot wait for daemon_follow() (see above). */
static void on_registry_change(void *ud, int ev, struct reg_thread *t, struct reg_process *p)
{
	struct daemon *d = ud;

	/* before the write: the watchdog may demote the thread before the next
	 * publication (at most 100 ms away) lists it, and watches from now on */
	if (ev == REG_EV_THREAD_ARM) {
		safety_arm(d->svc.safety, t->tid, t->pid, t->starttime);
		return;
	}
	state_observe(d->state, ev, t, p);
	if (t)
		observing_thread(&d->svc, ev, t);
	if (t && ev == REG_EV_THREAD_GONE)
		isolate_thread_gone(d->svc.isolate);
	if (d->changed)
		sd_event_source_set_enabled(d->changed, SD_EVENT_ONESHOT);
}

/* Every metrics-interval-s while there is something to report: the
 * metrics file and STATUS=, then a follow (what moves without an event, a
 * CPU brought online, is picked up there), which arms the next tick. */
static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	metrics_sample(&d->metrics, &d->svc);
	metrics_write_file(&d->svc);
	daemon_follow(d); /* STATUS= with the new sample too */
	return 0;
}

/* Each managed thread can hold a pidfd: let the daemon use its whole hard
 * limit of open files (raising the soft limit needs no privilege). */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	d->keep_on_exit = si->ssi_signo == SIGTERM && unitjob_restarting();
	log_info("received %s, %s", strsignal((int)si->ssi_signo),
		 d->keep_on_exit ? "restarting: threads stay as they are for the next rtschedd" : "stopping");
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(d->event, EXIT_OK);
}

/* service_hooks: what the requests ask of the daemon itself. */
static int svc_reload(void *ud, char *err, size_t len)
{
	return daemon_reload(ud, err, len);
}

static void svc_changed(void *ud)
{
	daemon_follow(ud);
}

static void svc_status(void *ud, struct service_status *st)
{
	struct daemon *d = ud;
	struct rtkit_stats rs;

	st->start_usec = d->start_usec;
	st->config_path = d->config_path;
	st->reloads = d->reloads;
	st->clients = control_n_clients(d->control);
	st->socket_activated = control_activated(d->control);
	follow_status(d->follow, st);
	rtkit_stats(d->rtkit, &rs);
	st->rtkit = d->rtkit != NULL;
	st->rtkit_state = rs.state;
	snprintf(st->rtkit_detail, sizeof(st->rtkit_detail), "%s", rs.detail);
	st->rtkit_calls = rs.calls;
	st->rtkit_grants = rs.grants;
	st->rtkit_refusals = rs.refusals;
}

/* rtkit_ctx: the bus service's calls go to dispatch too (ud: &d->svc). */
static int rk_grant(void *ud, const struct peer *p, pid_t tid, const struct grant_request *req,
		    const struct frontend_task *known, struct frontend_grant *out, char *msg, size_t len)
{
	return dispatch_register(ud, p, tid, req, REG_SOURCE_RTKIT, known, out, msg, len);
}

static bool rk_privileged(void *ud, const struct peer *p)
{
	return dispatch_privileged(ud, p->uid, p->gid, p->pid, NULL);
}

static size_t rk_reset(void *ud, bool all)
{
	return dispatch_reset(ud, REG_SOURCE_RTKIT, all);
}

static void rk_refused(void *ud)
{
	struct service *s = ud;

	s->refusals++;
}

/* What the bus service is given (it keeps a copy). */
static struct rtkit_ctx bus_ctx(struct daemon *d)
{
	return (struct rtkit_ctx){ .event = d->event, .grant = rk_grant, .privileged = rk_privileged,
				   .reset = rk_reset, .refused = rk_refused, .ud = &d->svc };
}

/* control_handlers: the control socket's requests go to dispatch. */
static uint64_t on_request(void *ud, const struct peer *p, const void *data, size_t len, int *fd, reply_fn reply,
			   void *reply_ud)
{
	return dispatch_request(ud, p, data, len, fd, reply, reply_ud);
}

static bool on_privileged(void *ud, uid_t uid, gid_t gid, pid_t pid, gid_t *admin_gid)
{
	return dispatch_privileged(ud, uid, gid, pid, admin_gid);
}

static uid_t on_account(void *ud, uid_t uid)
{
	return grant_account(uid);
}

/* The closer finished a close: clients paused for it may be read again. */
static void on_closed(void *ud)
{
	struct daemon *d = ud;

	if (d->control)
		control_resume_closed(d->control);
}

/* Load the catcher of refused scheduling calls while CAP_BPF and
 * CAP_PERFMON are held (catch-refused = yes). Without it the daemon runs
 * on, and `rtschedctl check` says why. */
static void caught_load(struct daemon *d)
{
	struct service *s = &d->svc;
	int r;

	if (!s->config->catch_refused) {
		s->catcher_error = -ECANCELED;
		snprintf(s->catcher_why, sizeof(s->catcher_why), "catch-refused = no in the configuration");
		log_info("catcher of refused scheduling calls off (catch-refused = no)");
		return;
	}
	r = caught_start(&d->caught, d->event, s, s->catcher_why, sizeof(s->catcher_why));
	s->catcher_error = r;
	if (r < 0)
		log_notice("catcher of refused scheduling calls unavailable: %s", s->catcher_why);
	else
		log_info("catcher of refused scheduling calls loaded: a sched_setscheduler, sched_setparam or "
			 "sched_setattr refused with EPERM goes through the grant path as a register by its caller");
}

/* Load the watchdog's task iterators while CAP_BPF and CAP_PERFMON are
 * held (watchdog/scan.c says why it reads tasks through them); without
 * them it reads /proc. Loaded once: a watchdog turned on by a reload gets
 * them only if they were loaded at start-up. */
static void tasks_load(struct daemon *d)
{
	struct service *s = &d->svc;
	int r;

	if (!s->config->watchdog) {
		snprintf(s->tasks_why, sizeof(s->tasks_why), "the watchdog was off at start-up");
		return;
	}
	r = tasks_new(&s->tasks, s->tasks_why, sizeof(s->tasks_why));
	if (r < 0)
		log_notice("watchdog: reading tasks from /proc, whose lookups a starved task can hold up "
			   "(BPF task iterators unavailable: %s)", s->tasks_why);
	else
		log_debug("watchdog: reading tasks through BPF task iterators");
}

/* The event loop, its signals (through the loop, never a handler doing
 * work) and the systemd watchdog's pings. */
static int loop_new(struct daemon *d)
{
	sigset_t mask;
	int r;

	r = sd_event_default(&d->event);
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot create the event loop");
		return r;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (testhook_hold_armed())
		sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_exit_signal, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGINT, on_exit_signal, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d)) < 0 ||
	    (testhook_hold_armed() && (r = sd_event_add_signal(d->event, NULL, SIGUSR2, on_sigusr2, d)) < 0)) {
		log_errno(LOG_LEVEL_ERR, r, "cannot watch signals");
		return r;
	}
	/* sd-event pings the systemd watchdog at half of WatchdogSec= by itself. */
	r = sd_event_set_watchdog(d->event, true);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "cannot enable the systemd watchdog");
	sd_event_now(d->event, CLOCK_MONOTONIC, &d->start_usec);
	return 0;
}

/* The journal's part of the start: what a previous rtschedd managed (a
 * restart or a crash) comes first, so its recorded originals are the ones
 * restored later; then what follows the registry is subscribed, the
 * adopted registrations held to today's config, and the first scan made. */
static int takeover(struct daemon *d)
{
	const struct config *c = d->svc.config;
	char state_path[PATH_MAX];
	int r;

	config_state_path(c, state_path, sizeof(state_path));
	r = state_open(&d->state, d->svc.registry, c, state_path);
	if (r < 0)
		return r;
	/* PM QoS and isolation take over what a previous rtschedd left in the
	 * journal; a thread about to be managed gets isolated CPUs back first */
	if ((r = pmqos_new(&d->svc.pmqos, NULL, d->state)) < 0 ||
	    (r = isolate_new(&d->svc.isolate, NULL, d->state, d->svc.registry)) < 0)
		return r;
	registry_set_admit(d->svc.registry, isolate_admit, d->svc.isolate);
	if ((r = sd_event_add_defer(d->event, &d->changed, on_changed, d)) < 0)
		return r;
	if ((r = guard_new(&d->guard, d->event, &d->svc)) < 0)
		return r;
	sd_event_source_set_enabled(d->changed, SD_EVENT_OFF);
	registry_set_observer(d->svc.registry, on_registry_change, d);
	/* re-adopted registrations are held to today's config and limits */
	registry_reapply(d->svc.registry, c);
	registry_rescan(d->svc.registry, c);
	/* after subscribing, so no thread created meanwhile is missed */
	follow_scan(d->follow, false);
	/* interrupts and kernel threads: what the journal recorded, then the
	 * configuration's sections (irq-avoid-cpus = auto reads the registry),
	 * off the CPUs a re-adopted isolation holds from the first write */
	cpu_set_t isolated;
	isolate_cpus(d->svc.isolate, &isolated);
	if ((r = irqmgr_new(&d->svc.irq, d->event, NULL, d->state, d->svc.registry, c, &isolated)) < 0)
		return r;
	/* isolated CPUs lose the IRQs nobody claimed, as irq-avoid-cpus does */
	isolate_set_irq_hook(d->svc.isolate, on_isolated, d->svc.irq);
	return 0;
}

DEFINE_POINTER_CLEANUP(struct daemon *, daemon_free)

int daemon_new(struct daemon **ret, const char *config_path, bool config_required,
	       const struct overrides *o, struct config *c)
{
	/* a start that fails half-way is torn down here, as far as it got */
	_cleanup_(daemon_freep) struct daemon *d = calloc(1, sizeof(*d));
	int r;

	if (!d) {
		config_free(c);
		return -ENOMEM;
	}
	static const struct service_hooks hooks = { .reload = svc_reload, .changed = svc_changed,
						    .status = svc_status };
	d->svc.config = c;
	d->svc.hooks = &hooks;
	d->svc.ud = d;
	d->overrides = *o;
	d->config_required = config_required;
	metrics_init(&d->metrics);
	d->config_path = strdup(config_path);
	if (!d->config_path)
		return -ENOMEM;
	log_set_level(c->log_level);
	raise_nofile();

	if ((r = loop_new(d)) < 0)
		return r;
	if ((r = registry_new(&d->svc.registry, d->event)) < 0 || (r = ratelimit_new(&d->svc.ratelimit)) < 0 ||
	    (r = ratelimit_new(&d->svc.free_ratelimit)) < 0 || (r = rtloop_new(&d->svc.loop, d->event)) < 0)
		return r;
	if ((r = follow_new(&d->follow, d->event, &d->svc)) < 0)
		return r;
	if ((r = jitter_new(&d->svc.jitter, d->svc.registry)) < 0)
		return r;
	r = sd_event_add_time(d->event, &d->tick, CLOCK_MONOTONIC, 0, 0, on_tick, d);
	if (r < 0)
		return r;
	sd_event_source_set_enabled(d->tick, SD_EVENT_OFF);
	/* the socket before the journal: a second rtschedd on the same socket
	 * must stop here, before it touches the first one's threads or state */
	if ((r = closer_new(&d->closer, d->event, on_closed, d)) < 0)
		return r;
	static const struct control_handlers ch = { .request = on_request, .privileged = on_privileged,
						    .account = on_account };
	r = control_new(&d->control, d->event, c->socket_path, &ch, &d->svc, d->closer);
	if (r < 0)
		return r;
	if ((r = takeover(d)) < 0)
		return r;
	daemon_follow(d);
	privs_check_nice(c);
	/* the bus last of the front ends: its first call finds the registry
	 * complete (re-adopted threads, the first scan) */
	struct rtkit_ctx rc = bus_ctx(d);
	if ((r = rtkit_start(&d->rtkit, &rc, c)) < 0)
		return r;
	/* the BPF observer while CAP_BPF and CAP_PERFMON are still held; from
	 * here on_registry_change() keeps it in step */
	observing_start(&d->svc, d->event);
	caught_load(d);
	tasks_load(d);
	/* the socket, the connector, the state, the bus and the BPF observer
	 * are open: keep only what the work needs from here on (CAP_BPF,
	 * CAP_PERFMON go) */
	r = privs_drop(c, follow_connected(d->follow));
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot drop privileges");
		return r;
	}
	rlimit_warn_incapable(c);
	/* what `check` and a refused apply's explanation say of the daemon
	 * itself, with its capabilities final: looked at once here (and at
	 * each reload), not per request on the loop; a target's unit is asked
	 * of systemd over one connection, attached to the loop */
	if ((r = diag_bus_attach(d->event)) < 0)
		return r;
	diag_self_keep();
	/* threads only now: capabilities are per thread, and a thread started
	 * before the drop would keep every one of them */
	jitter_apply_config(d->svc.jitter, d->svc.config);
	/* the watchdog before the loop turns real-time: threads that kept a
	 * real-time grant across a restart (the journal's) and spin would
	 * starve a FIFO 1 loop before it could start the watchdog; then again
	 * once the loop is bounded, which the watchdog leaves out of blame */
	guard_configure(d->guard);
	loop_configure(d);
	guard_configure(d->guard);
	d->started = true;
	*ret = TAKE_PTR(d);
	return 0;
}

int daemon_run(struct daemon *d)
{
	const struct config *c = d->svc.config;
	int r;

	log_info("rtschedd %s started: default policy %s priority %d, max-priority %d, %zu rule%s",
		 PACKAGE_VERSION, policy_to_string(c->dflt.policy), c->dflt.priority,
		 c->max_priority, c->n_rules, c->n_rules == 1 ? "" : "s");
	sd_notify(0, "READY=1\nSTATUS=Running");
	r = sd_event_loop(d->event);
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "event loop failed");
		return EXIT_OSERR;
	}
	return r;
}

void daemon_free(struct daemon *d)
{
	if (!d)
		return;
	rtkit_stop(d->rtkit);
	control_free(d->control);
	d->control = NULL;
	/* after the clients: their connections are closed through it */
	closer_free(d->closer);
	/* a start that failed half-way leaves threads and journal to the next
	 * rtschedd (or to the one already running) */
	if (!d->started)
		d->keep_on_exit = true;
	/* every managed thread gets its original scheduling back, unless the
	 * next rtschedd takes them over from the state journal */
	if (d->svc.registry && registry_n_threads(d->svc.registry) && !d->keep_on_exit)
		log_info("restoring %zu managed thread%s", registry_n_threads(d->svc.registry),
			 registry_n_threads(d->svc.registry) == 1 ? "" : "s");
	/* isolated CPUs and per-CPU latency bounds go back too (or stay for
	 * the next rtschedd, which reads them from the journal) */
	if (d->svc.registry)
		registry_set_admit(d->svc.registry, NULL, NULL);
	isolate_free(d->svc.isolate, !d->keep_on_exit);
	pmqos_free(d->svc.pmqos, !d->keep_on_exit);
	/* interrupts and kernel threads get their own settings back (or stay
	 * for the next rtschedd, which reads the journal) */
	irqmgr_free(d->svc.irq, !d->keep_on_exit);
	d->svc.irq = NULL;
	if (!d->keep_on_exit)
		state_discard(d->state);
	if (d->svc.registry)
		registry_set_observer(d->svc.registry, NULL, NULL);
	state_free(d->state);
	sd_event_source_disable_unref(d->changed);
	jitter_free(d->svc.jitter);
	caught_free(d->caught);
	observer_free(d->svc.observer);
	sd_event_source_disable_unref(d->tick);
	registry_free(d->svc.registry, !d->keep_on_exit);
	/* after the registry: restored threads can't starve its canaries */
	if (guard_free(d->guard))
		tasks_free(d->svc.tasks);
	follow_free(d->follow);
	ratelimit_free(d->svc.ratelimit);
	ratelimit_free(d->svc.free_ratelimit);
	rtloop_free(d->svc.loop);
	diag_bus_detach();
	diag_self_forget();
	sd_event_unref(d->event);
	config_free(d->svc.config);
	accounts_finish();
	free(d->config_path);
	free(d);
}
