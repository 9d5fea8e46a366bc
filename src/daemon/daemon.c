/* daemon.c: the daemon object and its one sd-event loop. Signals arrive as
 * event sources (never as handlers doing work): SIGTERM and SIGINT end the
 * loop, SIGHUP reloads the configuration. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/sys/log.h"
#include "shared/escape.h"
#include "daemon/sys/policy.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/caught.h"
#include "daemon/core/grant.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/observer.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/privs.h"
#include "daemon/sys/accounts.h"
#include "daemon/sys/closer.h"
#include "daemon/sys/procev.h"
#include "daemon/core/registry.h"
#include "daemon/core/rules.h"
#include "daemon/sys/rtloop.h"
#include "daemon/sys/safefile.h"
#include "daemon/rtkit/rtkit.h"
#include "daemon/testhook.h"
#include "daemon/watchdog/safety.h"
#include "daemon/core/state.h"


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

static void safety_configure(struct daemon *d);
static void loop_configure(struct daemon *d);
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

/* A new config replaces the running one only if it is valid; then every
 * managed thread is brought in line with it. */
int daemon_reload(struct daemon *d, char *err, size_t len)
{
	struct config_report rep = { 0 };
	struct config *c = NULL;
	int r;

	sd_notify(0, "RELOADING=1\nSTATUS=Reloading configuration");
	accounts_flush(); /* users and groups may have changed too */
	r = config_load(d->config_path, d->config_required, &c, &rep);
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
	registry_reapply(d->svc.registry, c);
	/* budgets and the late threshold of threads whose rule did not change */
	for (struct reg_thread *t = registry_threads(d->svc.registry); t; t = t->next)
		observer_watch_thread(d->svc.observer, c, t);
	daemon_scan(d, true);
	irqmgr_reconfigure(d->svc.irq, c);
	jitter_apply_config(d->svc.jitter, d->svc.config);
	loop_configure(d);
	safety_configure(d);
	struct rtkit_ctx rc = bus_ctx(d);
	rtkit_reconfigure(&d->rtkit, &rc, c);
	daemon_changed(d);
	log_info("configuration reloaded from %s (%zu file%s, %zu rule%s), %zu thread%s managed", d->config_path,
		 c->n_files, c->n_files == 1 ? "" : "s", c->n_rules, c->n_rules == 1 ? "" : "s",
		 registry_n_threads(d->svc.registry), registry_n_threads(d->svc.registry) == 1 ? "" : "s");
	sd_notify(0, "READY=1\nSTATUS=Running");
	return 0;
}

/* What a rule's grant goes through (rules.h). */
static struct rules_ctx rules_of(struct daemon *d)
{
	return (struct rules_ctx){ d->svc.registry, d->svc.config, d->svc.ratelimit };
}

void daemon_scan(struct daemon *d, bool force)
{
	struct rules_ctx x = rules_of(d);
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	d->scan_tasks = rules_scan(&x, force);
	clock_gettime(CLOCK_MONOTONIC, &b);
	d->scan_usec = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000);
	if (d->svc.config->n_auto_rules)
		log_info("scanned %zu tasks for %zu matching rule%s in %.1f ms, %zu thread%s managed", d->scan_tasks,
			 d->svc.config->n_auto_rules, d->svc.config->n_auto_rules == 1 ? "" : "s",
			 d->scan_usec / 1000.0,
			 registry_n_threads(d->svc.registry), registry_n_threads(d->svc.registry) == 1 ? "" : "s");
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

static void ev_fork(void *ud, pid_t tid, pid_t tgid)
{
	struct daemon *d = ud;
	struct rules_ctx x = rules_of(d);

	if (tid != tgid)
		registry_on_new_thread(d->svc.registry, d->svc.config, tid, tgid);
	rules_on_task(&x, tid, tgid, NULL, false);
	/* what is not managed now leaves isolated CPUs */
	isolate_on_fork(d->svc.isolate, tid, tgid);
}

static void ev_exec(void *ud, pid_t tid, pid_t tgid)
{
	struct daemon *d = ud;
	struct rules_ctx x = rules_of(d);

	registry_on_exec(d->svc.registry, tgid);
	rules_on_process(&x, tgid);
}

/* A thread renamed itself; the main thread's name is the process name too. */
static void ev_comm(void *ud, pid_t tid, pid_t tgid, const char *comm)
{
	struct daemon *d = ud;
	struct rules_ctx x = rules_of(d);

	if (tid == tgid && (d->svc.config->match_needs & MATCH_NEED_PROCESS_NAME))
		rules_on_process(&x, tgid);
	else
		rules_on_task(&x, tid, tgid, comm, false);
}

static void ev_exit(void *ud, pid_t tid, pid_t tgid)
{
	struct daemon *d = ud;

	registry_on_exit(d->svc.registry, tid);
	jitter_on_exit(d->svc.jitter, tid);
}

static void ev_overrun(void *ud)
{
	struct daemon *d = ud;
	struct rules_ctx x = rules_of(d);

	registry_rescan(d->svc.registry, d->svc.config);
	rules_scan(&x, false);
	isolate_thread_gone(d->svc.isolate); /* forks were lost too: sweep again */
}

/* Fallback for a kernel or a sandbox without the connector: rescan the task
 * lists of registered processes while there are any, and sleep otherwise. */
static int on_rescan(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	struct rules_ctx x = rules_of(d);

	registry_rescan(d->svc.registry, d->svc.config);
	rules_scan(&x, false);
	daemon_changed(d);
	return 0;
}

/* isolate = yes emptied cpus (or released them): the IRQ manager's hook. */
static void on_isolated(void *ud, const cpu_set_t *cpus)
{
	irqmgr_isolate(ud, cpus);
}

static int on_changed(sd_event_source *s, void *userdata)
{
	daemon_changed(userdata);
	return 0;
}

/* The IRQ manager took or let go a kernel thread: the BPF observer follows
 * it as it follows the registry's threads, in half of its slots at most (a
 * [kthread] section for every ksoftirqd/N of a 64-CPU machine must not leave the
 * managed threads unobserved). */
static void on_kthread_held(void *ud, pid_t tid, bool held)
{
	struct daemon *d = ud;
	unsigned max;

	if (!held)
		observer_unwatch(d->svc.observer, tid);
	else if (observer_watched(d->svc.observer, &max) < max / 2) {
		struct observer_limits lim;
		observer_limits_of(d->svc.config, NULL, &lim); /* no rule: the daemon's late-threshold-us */
		observer_watch(d->svc.observer, tid, &lim);
	}
}

/* Registry observer: the journal line now, the rest (PM QoS, isolation,
 * STATUS=) once per loop iteration however many threads changed. */
static void on_registry_change(void *ud, int ev, struct reg_thread *t, struct reg_process *p)
{
	struct daemon *d = ud;

	state_observe(d->state, ev, t, p);
	/* the watchdog may demote a new real-time thread before the next
	 * publication (at most 100 ms away) lists it */
	if (t && ev == REG_EV_THREAD_SET && policy_is_realtime(t->applied.policy))
		safety_granted(d->svc.safety, t->tid, t->pid, t->starttime);
	/* the BPF observer's tid filter follows the registry */
	if (t && ev == REG_EV_THREAD_SET)
		observer_watch_thread(d->svc.observer, d->svc.config, t);
	else if (t && ev == REG_EV_THREAD_GONE)
		observer_unwatch(d->svc.observer, t->tid);
	if (t && ev == REG_EV_THREAD_GONE)
		isolate_thread_gone(d->svc.isolate);
	if (d->changed)
		sd_event_source_set_enabled(d->changed, SD_EVENT_ONESHOT);
}

/* STATUS= for systemctl status: what is managed and the worst p99 seen,
 * with its source's name, which a thread chose: escaped, or a newline in it
 * would be an assignment of its own (STOPPING=1) to systemd. */
static void notify_status(struct daemon *d)
{
	char who[4 * sizeof(d->worst_who)];

	if (d->worst_p99_ns >= 0)
		sd_notifyf(0, "STATUS=%zu thread%s managed, worst p99 %.1f us (%s)",
			   registry_n_threads(d->svc.registry), registry_n_threads(d->svc.registry) == 1 ? "" : "s",
			   d->worst_p99_ns / 1000.0, escape_text(who, sizeof(who), d->worst_who));
	else
		sd_notifyf(0, "STATUS=%zu thread%s managed", registry_n_threads(d->svc.registry),
			   registry_n_threads(d->svc.registry) == 1 ? "" : "s");
}

/* The watchdog's trips, -1 when it is off. */
static long watchdog_trips(struct daemon *d)
{
	struct safety_status ss;

	if (!d->svc.safety)
		return -1;
	safety_get_status(d->svc.safety, &ss);
	return (long)ss.trips;
}

/* Write the Prometheus file atomically: a new file under a random name
 * (O_EXCL, O_NOFOLLOW: the textfile directory is often group-writable, and a
 * name planted there must never be followed), then renamed over the old. */
static void write_metrics(struct daemon *d)
{
	char base[256], tmp[300], why[512];
	int dirfd, fd, r;
	FILE *f;

	dirfd = safefile_dir(d->svc.config->metrics_file, false, false, base, sizeof(base), why, sizeof(why));
	if (dirfd < 0) {
		log_errno(LOG_LEVEL_WARNING, dirfd, "metrics-file %s", why[0] ? why : d->svc.config->metrics_file);
		return;
	}
	/* node_exporter reads it as another user: 0644 whatever the umask
	 * (rtschedd.service has UMask=0077) */
	fd = safefile_create_tmp(dirfd, base, 0644, tmp, sizeof(tmp));
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		log_errno(LOG_LEVEL_WARNING, fd < 0 ? fd : -errno, "metrics-file %s: a new file beside it",
			  d->svc.config->metrics_file);
		if (fd >= 0) {
			close(fd);
			unlinkat(dirfd, tmp, 0);
		}
		close(dirfd);
		return;
	}
	r = jitter_prometheus(d->svc.jitter, f, &(struct jitter_counters){
		.grants = d->svc.grants, .refusals = d->svc.refusals, .watchdog_trips = watchdog_trips(d),
		.interval_s = d->svc.config->metrics_interval_s, .timestamp = true });
	if (fclose(f) != 0 || r < 0) {
		log_warn("metrics-file %s", d->svc.config->metrics_file);
		unlinkat(dirfd, tmp, 0);
	} else if ((r = safefile_commit(dirfd, tmp, base)) < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "metrics-file %s", d->svc.config->metrics_file);
	}
	close(dirfd);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	d->worst_p99_ns = jitter_worst_p99(d->svc.jitter, d->worst_who, sizeof(d->worst_who));
	if (d->svc.config->metrics_file[0])
		write_metrics(d);
	notify_status(d);
	daemon_changed(d);
	return 0;
}

/* Tell the watchdog which real-time threads it guards and on which CPUs. */
static void safety_publish(struct daemon *d)
{
	struct safety_thread *v;
	size_t n = 0;

	if (!d->svc.safety)
		return;
	v = calloc(registry_n_threads(d->svc.registry) + 1, sizeof(*v));
	if (!v)
		return;
	for (struct reg_thread *t = registry_threads(d->svc.registry); t; t = t->next)
		if (policy_is_realtime(t->applied.policy))
			v[n++] = (struct safety_thread){ t->tid, t->pid, t->starttime, t->applied.cpus };
	safety_set_threads(d->svc.safety, v, n);
	free(v);
}

/* The watchdog demoted a runaway: record it in the registry, hold back its
 * user's grants (its rule's and its process's for a rule match, root's
 * process only; everyone's with watchdog-demote = all) and say who. */
static void on_demoted(void *ud, const struct safety_trip *trip)
{
	struct daemon *d = ud;
	char held[512];
	size_t n = 0;

	if (trip->demote_all) {
		n = registry_demote(d->svc.registry, &trip->starved);
		registry_hold_all(d->svc.registry);
	}
	for (size_t i = 0; i < trip->n; i++) {
		const struct safety_culprit *c = &trip->c[i];
		struct reg_thread *t;

		if (!c->managed)
			continue;
		t = c->demoted ? registry_demote_thread(d->svc.registry, c->tid, c->starttime) : NULL;
		if (t) {
			n++;
			registry_hold_thread(d->svc.registry, t);
		} else if (!trip->demote_all) {
			/* gone, or not the registry's any more: its user is held all the same */
			registry_hold(d->svc.registry, grant_account(c->uid), c->pid, "");
		}
	}
	registry_holds_text(d->svc.registry, held, sizeof(held));
	log_warnx("watchdog: %zu managed real-time thread%s now SCHED_OTHER; real-time grants held back for %s "
		  "for %u s", n, n == 1 ? "" : "s", held[0] ? held : "no one", d->svc.config->watchdog_cooldown_s);
	daemon_changed(d);
}

static void on_promote(void *ud)
{
	struct daemon *d = ud;
	size_t n = registry_promote(d->svc.registry);

	log_notice("watchdog: %zu thread%s promoted back to real-time", n, n == 1 ? "" : "s");
	daemon_changed(d);
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

/* Start (or restart) the watchdog to match the config. */
static void safety_configure(struct daemon *d)
{
	static const struct safety_ops ops = { .demoted = on_demoted, .promote = on_promote };
	const struct config *c = d->svc.config;
	struct safety_params p = { .enabled = c->watchdog, .threshold_ms = c->watchdog_threshold_ms,
				   .cooldown_s = c->watchdog_cooldown_s, .demote_all = c->watchdog_demote_all,
				   .loop_tid = rtloop_bounded_tid(d->svc.loop) };
	int r;

	if (d->svc.safety && !p.enabled) {
		safety_free(d->svc.safety);
		d->svc.safety = NULL;
	} else if (d->svc.safety) {
		safety_set_params(d->svc.safety, &p);
	} else if (p.enabled) {
		r = safety_new(&d->svc.safety, d->event, &p, &ops, d);
		if (r < 0) {
			log_errno(LOG_LEVEL_WARNING, r, "watchdog unavailable (it needs CAP_SYS_NICE for its FIFO 99 "
				  "thread, and a cpu cgroup with real-time budget); runaway real-time threads are not caught");
			d->svc.safety = NULL;
		}
	}
	safety_publish(d);
}

static int on_publish(sd_event_source *s, uint64_t usec, void *userdata)
{
	safety_publish(userdata);
	return 0;
}

void daemon_changed(struct daemon *d)
{
	/* process events are needed by match rules, by registered processes
	 * (their new threads) and, without PIDFD_THREAD, to see threads exit;
	 * otherwise every fork on the machine would wake the daemon for nothing */
	bool events = d->svc.config->n_auto_rules > 0 || registry_n_processes(d->svc.registry) > 0 ||
		      (!registry_thread_pidfds(d->svc.registry) && registry_n_threads(d->svc.registry) > 0) ||
		      isolate_active(d->svc.isolate);
	if (d->procev && events != procev_active(d->procev)) {
		int r = procev_set_active(d->procev, events);
		if (r < 0)
			log_errno(LOG_LEVEL_WARNING, r, "process events connector: cannot %s the drop filter",
				  events ? "remove" : "set");
		else if (events) /* what happened while events were dropped */
			registry_rescan(d->svc.registry, d->svc.config);
	}
	pmqos_update(d->svc.pmqos, d->svc.config, d->svc.registry);
	isolate_update(d->svc.isolate, d->svc.config);
	irqmgr_threads_changed(d->svc.irq);
	/* the watchdog's copy of the real-time set is rebuilt at most every
	 * 100 ms: rebuilding it per registration made registering n threads O(n^2) */
	if (d->svc.safety && d->publish && sd_event_source_get_enabled(d->publish, NULL) == 0) {
		uint64_t now;
		sd_event_now(d->event, CLOCK_MONOTONIC, &now);
		sd_event_source_set_time(d->publish, now + 100000);
		sd_event_source_set_enabled(d->publish, SD_EVENT_ONESHOT);
	}
	notify_status(d);
	/* the tick runs only while there is something to report: no idle wake-ups */
	if (d->tick && (d->svc.config->metrics_file[0] || jitter_n_sources(d->svc.jitter) > 0) &&
	    sd_event_source_get_enabled(d->tick, NULL) == 0) {
		uint64_t now;
		sd_event_now(d->event, CLOCK_MONOTONIC, &now);
		sd_event_source_set_time(d->tick, now + (uint64_t)d->svc.config->metrics_interval_s * 1000000u);
		sd_event_source_set_enabled(d->tick, SD_EVENT_ONESHOT);
	}
	bool need = !d->procev && (registry_n_processes(d->svc.registry) > 0 || d->svc.config->n_auto_rules > 0 ||
				   (!registry_thread_pidfds(d->svc.registry) &&
				    registry_n_threads(d->svc.registry) > 0) || isolate_active(d->svc.isolate));
	uint64_t now;

	if (!d->rescan_timer || !need)
		return;
	if (sd_event_source_get_enabled(d->rescan_timer, NULL) > 0)
		return;
	sd_event_now(d->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(d->rescan_timer, now + (uint64_t)d->svc.config->rescan_ms * 1000u);
	sd_event_source_set_enabled(d->rescan_timer, SD_EVENT_ONESHOT);
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

/* Under systemd, is this SIGTERM part of a restart? Then the threads stay as
 * they are and the next rtschedd re-adopts them from the state journal;
 * on a plain stop they get their original scheduling back. systemd tells us
 * through the Job of our own unit. */
static bool restart_pending(void)
{
	sd_bus *bus = NULL;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *unit = NULL, *upath = NULL, *jtype = NULL;
	const char *jpath = NULL;
	sd_bus_message *reply = NULL;
	uint32_t jid = 0;
	bool restart = false;

	if (!getenv("NOTIFY_SOCKET") || sd_pid_get_unit(0, &unit) < 0)
		return false;
	if (sd_bus_open_system(&bus) < 0 ||
	    sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &upath) < 0 ||
	    sd_bus_get_property(bus, "org.freedesktop.systemd1", upath, "org.freedesktop.systemd1.Unit", "Job",
				&err, &reply, "(uo)") < 0 ||
	    sd_bus_message_read(reply, "(uo)", &jid, &jpath) < 0)
		goto out;
	if (jid && sd_bus_get_property_string(bus, "org.freedesktop.systemd1", jpath, "org.freedesktop.systemd1.Job",
					      "JobType", &err, &jtype) >= 0)
		restart = strcmp(jtype, "restart") == 0 || strcmp(jtype, "try-restart") == 0;
out:
	if (err.message)
		log_debug("asking systemd about %s: %s", unit, err.message);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(bus);
	free(unit);
	free(upath);
	free(jtype);
	return restart;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	d->keep_on_exit = si->ssi_signo == SIGTERM && restart_pending();
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
	daemon_changed(ud);
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
	st->scan_tasks = d->scan_tasks;
	st->scan_usec = d->scan_usec;
	st->procev = d->procev != NULL;
	st->procev_active = d->procev && procev_active(d->procev);
	procev_stats(d->procev, &st->procev_events, &st->procev_overruns);
	st->procev_error = d->procev_error;
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
	return dispatch_privileged(ud, p->uid, p->gid, p->pid);
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
static void on_request(void *ud, const struct peer *p, const void *data, size_t len, int *fd, reply_fn reply,
		       void *reply_ud)
{
	dispatch_request(ud, p, data, len, fd, reply, reply_ud);
}

static bool on_privileged(void *ud, uid_t uid, gid_t gid, pid_t pid)
{
	return dispatch_privileged(ud, uid, gid, pid);
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

/* Load the BPF observer while CAP_BPF and CAP_PERFMON are still held, and
 * watch every thread managed so far; from here on_registry_change() keeps
 * it in step. Without it the daemon runs on: schedstat rows only, and
 * `rtschedctl check` says why. */
static void observer_start(struct daemon *d)
{
	int r;

	if (!d->svc.config->observe_threads) {
		d->svc.observer_error = -ECANCELED;
		snprintf(d->svc.observer_why, sizeof(d->svc.observer_why), "observe-threads = 0 in the configuration");
		log_info("BPF wake-up observer off (observe-threads = 0)");
		return;
	}
	r = observer_new(&d->svc.observer, d->svc.config->observe_threads, d->svc.config->culprits,
			 d->svc.observer_why, sizeof(d->svc.observer_why));
	if (r == 0 && (r = observer_attach(d->svc.observer, d->event)) < 0) {
		snprintf(d->svc.observer_why, sizeof(d->svc.observer_why), "cannot watch its ring buffer: %s",
			 strerror(-r));
		observer_free(d->svc.observer);
		d->svc.observer = NULL;
	}
	if (r < 0) {
		d->svc.observer_error = r;
		log_notice("BPF wake-up observer unavailable, jitter shows schedstat means only: %s",
			   d->svc.observer_why);
		return;
	}
	jitter_set_observer(d->svc.jitter, d->svc.observer);
	for (struct reg_thread *t = registry_threads(d->svc.registry); t; t = t->next)
		observer_watch_thread(d->svc.observer, d->svc.config, t);
	/* and the IRQ and kernel threads [irq]/[kthread] sections hold */
	for (const struct kt_entry *k = irqmgr_kthreads(d->svc.irq); k; k = k->next)
		on_kthread_held(d, k->tid, true);
	irqmgr_set_watch(d->svc.irq, on_kthread_held, d);
	log_info("BPF wake-up observer loaded: timer lateness and wake-up latency of up to %u managed threads%s",
		 d->svc.config->observe_threads, d->svc.config->culprits ? ", and the culprits of late wake-ups" : "");
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

int daemon_new(struct daemon **ret, const char *config_path, bool config_required,
	       const struct overrides *o, struct config *c)
{
	struct daemon *d;
	sigset_t mask;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d) {
		config_free(c);
		return -ENOMEM;
	}
	static const struct service_hooks hooks = { .reload = svc_reload, .changed = svc_changed,
						    .status = svc_status };
	*ret = d;
	d->svc.config = c;
	d->svc.hooks = &hooks;
	d->svc.ud = d;
	d->overrides = *o;
	d->config_required = config_required;
	d->worst_p99_ns = -1;
	d->config_path = strdup(config_path);
	if (!d->config_path)
		return -ENOMEM;
	log_set_level(c->log_level);
	raise_nofile();

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

	if ((r = registry_new(&d->svc.registry, d->event)) < 0 || (r = ratelimit_new(&d->svc.ratelimit)) < 0 ||
	    (r = ratelimit_new(&d->svc.free_ratelimit)) < 0 || (r = rtloop_new(&d->svc.loop, d->event)) < 0)
		return r;
	static const struct procev_handlers h = { .on_fork = ev_fork, .on_exec = ev_exec, .on_comm = ev_comm,
						  .on_exit = ev_exit, .on_overrun = ev_overrun };
	r = c->process_events ? procev_new(&d->procev, d->event, &h, d) : -ENOTSUP;
	if (r < 0) {
		d->procev_error = r;
		log_errno(LOG_LEVEL_NOTICE, r == -ENOTSUP ? 0 : r, "process events connector %s; new and renamed "
			  "threads are found by rescanning /proc every %u ms", r == -ENOTSUP ? "off (process-events = no)" : "unavailable",
			  d->svc.config->rescan_ms);
		r = sd_event_add_time(d->event, &d->rescan_timer, CLOCK_MONOTONIC, 0, 0, on_rescan, d);
		if (r < 0)
			return r;
		sd_event_source_set_enabled(d->rescan_timer, SD_EVENT_OFF);
	}
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
	/* what a previous rtschedd managed (a restart or a crash) comes first,
	 * so its recorded originals are the ones restored later */
	char state_path[PATH_MAX];
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
	if ((r = sd_event_add_time(d->event, &d->publish, CLOCK_MONOTONIC, 0, 0, on_publish, d)) < 0)
		return r;
	sd_event_source_set_enabled(d->publish, SD_EVENT_OFF);
	sd_event_source_set_enabled(d->changed, SD_EVENT_OFF);
	registry_set_observer(d->svc.registry, on_registry_change, d);
	/* re-adopted registrations are held to today's config and limits */
	registry_reapply(d->svc.registry, c);
	registry_rescan(d->svc.registry, c);
	/* after subscribing, so no thread created meanwhile is missed */
	daemon_scan(d, false);
	/* interrupts and kernel threads: what the journal recorded, then the
	 * configuration's sections (irq-avoid-cpus = auto reads the registry) */
	if ((r = irqmgr_new(&d->svc.irq, d->event, NULL, d->state, d->svc.registry, c)) < 0)
		return r;
	/* isolated CPUs lose the IRQs nobody claimed, as irq-avoid-cpus does */
	isolate_set_irq_hook(d->svc.isolate, on_isolated, d->svc.irq);
	daemon_changed(d);
	privs_check_nice(c);
	/* the bus last of the front ends: its first call finds the registry
	 * complete (re-adopted threads, the first scan) */
	struct rtkit_ctx rc = bus_ctx(d);
	if ((r = rtkit_start(&d->rtkit, &rc, c)) < 0)
		return r;
	observer_start(d);
	caught_load(d);
	/* the socket, the connector, the state, the bus and the BPF observer
	 * are open: keep only what the work needs from here on (CAP_BPF,
	 * CAP_PERFMON go) */
	r = privs_drop(c, d->procev != NULL);
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot drop privileges");
		return r;
	}
	/* threads only now: capabilities are per thread, and a thread started
	 * before the drop would keep every one of them */
	jitter_apply_config(d->svc.jitter, d->svc.config);
	loop_configure(d);
	safety_configure(d);
	d->started = true;
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
	sd_event_source_disable_unref(d->publish);
	jitter_free(d->svc.jitter);
	caught_free(d->caught);
	observer_free(d->svc.observer);
	sd_event_source_disable_unref(d->tick);
	registry_free(d->svc.registry, !d->keep_on_exit);
	/* after the registry: restored threads can't starve its canaries */
	safety_free(d->svc.safety);
	procev_free(d->procev);
	ratelimit_free(d->svc.ratelimit);
	ratelimit_free(d->svc.free_ratelimit);
	rtloop_free(d->svc.loop);
	sd_event_source_disable_unref(d->rescan_timer);
	sd_event_unref(d->event);
	config_free(d->svc.config);
	accounts_finish();
	free(d->config_path);
	free(d);
}
