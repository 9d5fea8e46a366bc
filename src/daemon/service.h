/* service.h: what the requests of every front end act on: the parts of the
 * daemon they read and change (the configuration, the registry, the rate
 * limiter, the observers, the watchdog, the counters) and hooks for what
 * only the daemon does (reload, follow a change, report its own state). The
 * daemon embeds one; a unit test or a fuzzer fills its own. Types only, so
 * that dispatch, the ops and the daemon share it without including one
 * another's headers. */
#ifndef RTSCHED_SERVICE_H
#define RTSCHED_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct config;
struct registry;
struct ratelimit;
struct rtloop;
struct jitter;
struct observer;
struct safety;
struct pmqos;
struct isolate;
struct irqmgr;

/* What `status` reports of the parts only the daemon holds. */
struct service_status {
	uint64_t start_usec;            /* CLOCK_MONOTONIC */
	const char *config_path;
	unsigned long reloads;
	unsigned clients;               /* connected to the control socket */
	bool socket_activated;
	size_t scan_tasks;              /* tasks the last full /proc scan looked at */
	uint64_t scan_usec;             /* and how long it took */
	bool procev;                    /* the process events connector is open */
	bool procev_active;             /* and something needs its events now */
	unsigned long procev_events, procev_overruns;
	int procev_error;               /* why it is not open (-ENOTSUP: process-events = no) */
	bool rtkit;                     /* the rtkit bus service is on */
	const char *rtkit_state;        /* as struct rtkit_stats */
	char rtkit_detail[192];
	unsigned long rtkit_calls, rtkit_grants, rtkit_refusals;
};

/* What only the daemon does; each is called with the service's ud. */
struct service_hooks {
	/* Reload the configuration: 0, or -errno with the first error in err. */
	int (*reload)(void *ud, char *err, size_t len);
	/* The registry or the jitter sources changed: bring what follows them
	 * (process events, PM QoS, isolation, the watchdog's list, the tick)
	 * in line. */
	void (*changed)(void *ud);
	/* The daemon's own state, for `status`. */
	void (*status)(void *ud, struct service_status *st);
};

struct service {
	struct config *config;          /* the running configuration (the daemon swaps it on reload) */
	struct registry *registry;
	struct ratelimit *ratelimit;
	struct ratelimit *free_ratelimit; /* version, status, list: free-rate-limit */
	struct rtloop *loop;            /* the event loop's own scheduling (sys/rtloop.h) */
	struct jitter *jitter;
	struct observer *observer;      /* BPF wake-up observer; NULL: unavailable */
	int observer_error;             /* why (-errno as bpfobs_new()), 0 if loaded */
	char observer_why[256];
	int catcher_error;              /* the catcher of refused calls: as observer_error, -ECANCELED when off */
	char catcher_why[256];
	struct safety *safety;          /* the starvation watchdog; NULL when off */
	struct tasks *tasks;            /* the watchdog's BPF task iterators; NULL: it reads /proc */
	char tasks_why[256];            /* why NULL */
	struct pmqos *pmqos;            /* cpu-dma-latency, resume-latency-us (src/daemon/cpu) */
	struct isolate *isolate;        /* isolate = yes (src/daemon/cpu) */
	struct irqmgr *irq;             /* [irq]/[kthread] sections, irq-avoid-cpus (src/daemon/irq) */
	unsigned long grants, refusals;
	const struct service_hooks *hooks;
	void *ud;
};

#endif
