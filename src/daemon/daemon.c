/* daemon.c: the daemon object and its one sd-event loop. Signals arrive as
 * event sources (never as handlers doing work): SIGTERM and SIGINT end the
 * loop, SIGHUP reloads the configuration. */
#include "autoconfig.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "../common/log.h"
#include "../common/policy.h"
#include "daemon.h"

struct daemon {
	sd_event *event;
	struct config *config;
	char *config_path;
	bool config_required;
	struct overrides overrides;
};

int daemon_apply_overrides(struct config *c, const struct overrides *o, FILE *errors)
{
	if (o->has_sched)
		config_override_default(c, o->policy, o->priority);
	if (o->socket && config_override_socket(c, o->socket) < 0)
		return -ENAMETOOLONG;
	if (o->log_level >= 0)
		config_override_log_level(c, o->log_level);
	return config_validate(c, errors);
}

/* Log each line of a memstream buffer as one error. */
static void log_lines(char *text)
{
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		log_err("%s", l);
}

int daemon_load_config(const char *path, bool required, const struct overrides *o, struct config **ret)
{
	struct config *c = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *errors = open_memstream(&text, &len);
	int r;

	if (!errors)
		return -errno;
	r = config_load(path, required, &c, errors);
	if (r == 0)
		r = daemon_apply_overrides(c, o, errors);
	fclose(errors);
	log_lines(text);
	free(text);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* SIGHUP: a new config replaces the running one only if it is valid. */
static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct config *c = NULL;
	int r;

	sd_notify(0, "RELOADING=1\nSTATUS=Reloading configuration");
	r = daemon_load_config(d->config_path, d->config_required, &d->overrides, &c);
	if (r < 0) {
		log_warnx("reload: %s is not valid; keeping the running configuration", d->config_path);
		sd_notify(0, "READY=1\nSTATUS=Reload failed; running configuration kept");
		return 0;
	}
	if (strcmp(c->socket_path, d->config->socket_path) != 0)
		log_warnx("reload: the socket path changed to %s; it takes effect at the next start",
			  c->socket_path);
	config_free(d->config);
	d->config = c;
	log_set_level(c->log_level);
	log_info("configuration reloaded from %s (%zu file%s, %zu rule%s)", d->config_path,
		 c->n_files, c->n_files == 1 ? "" : "s", c->n_rules, c->n_rules == 1 ? "" : "s");
	sd_notify(0, "READY=1\nSTATUS=Running");
	return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	log_info("received %s, stopping", strsignal((int)si->ssi_signo));
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(d->event, EXIT_OK);
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
	*ret = d;
	d->config = c;
	d->overrides = *o;
	d->config_required = config_required;
	d->config_path = strdup(config_path);
	if (!d->config_path)
		return -ENOMEM;
	log_set_level(c->log_level);

	r = sd_event_default(&d->event);
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot create the event loop");
		return r;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_exit_signal, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGINT, on_exit_signal, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d)) < 0) {
		log_errno(LOG_LEVEL_ERR, r, "cannot watch signals");
		return r;
	}
	/* sd-event pings the systemd watchdog at half of WatchdogSec= by itself. */
	r = sd_event_set_watchdog(d->event, true);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "cannot enable the systemd watchdog");
	return 0;
}

int daemon_run(struct daemon *d)
{
	const struct config *c = d->config;
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
	sd_event_unref(d->event);
	config_free(d->config);
	free(d->config_path);
	free(d);
}
