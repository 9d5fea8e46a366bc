/* daemon.h: the daemon object: its event loop, configuration and the
 * command-line overrides that every reload keeps. */
#ifndef RTSCHED_DAEMON_H
#define RTSCHED_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/config/config.h"
#include "daemon/metrics.h"
#include "daemon/service.h"

/* Exit codes, documented in rtschedd(8). */
enum {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,   /* the configuration is invalid */
	EXIT_USAGE = 64,   /* EX_USAGE: bad command line */
	EXIT_OSERR = 71,   /* EX_OSERR: the event loop or socket could not be set up */
};

/* What the command line says, applied on top of every configuration loaded. */
struct overrides {
	bool has_sched;
	int policy;
	int priority;
	const char *socket;
	int log_level; /* -1: not given */
};

struct follow;
struct guard;
struct control;
struct closer;
struct state;
struct rtkit;
struct caught;

struct daemon {
	sd_event *event;
	/* what the requests act on: the configuration, the registry, the rate
	 * limiter, the jitter sources, the BPF observer, the watchdog, the
	 * counts of grants and refusals; the daemon owns all of it */
	struct service svc;
	char *config_path;
	bool config_required;
	struct overrides overrides;
	struct follow *follow;          /* process events, or rescans without them; the /proc scans */
	struct guard *guard;            /* the watchdog's wiring (svc.safety is the watchdog) */
	struct metrics metrics;         /* what the tick reports: the metrics file, STATUS= */
	struct control *control;
	struct closer *closer;          /* closes what clients handed over, off the loop */
	struct state *state;
	struct rtkit *rtkit;            /* the RealtimeKit1 bus service; NULL when [rtkit] is off */
	struct caught *caught;          /* refused scheduling calls granted; NULL when off or unavailable */
	sd_event_source *tick;          /* metrics file and STATUS=, only while there is something to say */
	sd_event_source *changed;       /* deferred follow after registry changes (daemon.c) */
	bool keep_on_exit;              /* a restart: leave threads for the next rtschedd */
	bool started;                   /* daemon_new() finished */
	uint64_t start_usec;            /* CLOCK_MONOTONIC */
	unsigned long reloads;
};

/* Command-line overrides onto a freshly loaded config, then validation. */
int daemon_apply_overrides(struct config *c, const struct overrides *o, struct config_report *rep);
/* Load, override and validate the config at `path`; errors are logged, and
 * *cmdline_fault says whether one of them is a command-line value's. */
int daemon_load_config(const char *path, bool required, const struct overrides *o, struct config **ret,
		       bool *cmdline_fault);
/* Create the daemon around a loaded config (ownership moves to it, and
 * on failure it is freed: nothing is left to the caller). */
int daemon_new(struct daemon **ret, const char *config_path, bool config_required,
	       const struct overrides *o, struct config *c);
/* Reload the config; on failure the first error goes to err and the running
 * config stays. Returns 0 or -EINVAL. */
int daemon_reload(struct daemon *d, char *err, size_t len);
/* Run until SIGTERM/SIGINT; returns an exit code. */
int daemon_run(struct daemon *d);
/* Tear everything down in reverse order of set-up; NULL is fine. */
void daemon_free(struct daemon *d);

#endif
