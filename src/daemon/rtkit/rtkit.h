/* rtkit.h: rtschedd as rtkit's D-Bus service, org.freedesktop.RealtimeKit1 on
 * the system bus, so PipeWire, PulseAudio and the Realtime portal reach
 * rtschedd's grant path unchanged. Configured by [rtkit] in rtschedd.conf. */
#ifndef RTSCHED_RTKIT_H
#define RTSCHED_RTKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "daemon/config/config.h"
#include "daemon/frontend.h"

struct rtkit;

/* What the daemon gives the bus service: the event loop it runs on, and its
 * calls into the daemon's grant path (each with ud). */
struct rtkit_ctx {
	sd_event *event;
	/* Register thread tid for the caller p with req, as every front end's
	 * register (dispatch_register(), the one grant decision): 0 when
	 * granted (out->tid, pid, applied), else the refusal (> 0) or -errno,
	 * with out->code, out->diag and msg saying why. known: what the service
	 * has just read about tid for rtkit's RLIMIT_RTTIME contract (NULL:
	 * nothing), so the grant path does not read it again. */
	int (*grant)(void *ud, const struct peer *p, pid_t tid, const struct grant_request *req,
		     const struct frontend_task *known, struct frontend_grant *out, char *msg, size_t len);
	/* Whether p is root or a member of admin-group (dispatch_privileged()):
	 * who may call Reset* and Exit. */
	bool (*privileged)(void *ud, const struct peer *p);
	/* Give the threads granted over the bus (all: every managed thread)
	 * their scheduling back; returns how many. */
	size_t (*reset)(void *ud, bool all);
	/* A call was refused: the daemon counts it with its own refusals. */
	void (*refused)(void *ud);
	void *ud;
};

/* The bus side, for `rtschedctl status`. */
struct rtkit_stats {
	const char *state;     /* "off", "connecting", "owned", "not owned", "lost", "released", "failed" */
	char detail[192];      /* who holds the name, or why the bus failed; "" if nothing to say */
	unsigned long calls, grants, refusals;
};

/* Connect to the system bus on ctx's event loop, serve
 * /org/freedesktop/RealtimeKit1 and ask for the name (taking it from a
 * running rtkit only with replace-existing), as [rtkit] in c says. *ret is
 * NULL when [rtkit] is off. A bus that cannot be reached is logged and
 * reported in the stats, not an error: the control socket works without
 * it. Returns 0 or -ENOMEM. */
int rtkit_start(struct rtkit **ret, const struct rtkit_ctx *ctx, const struct config *c);
/* Release the name, leave the bus and free. The threads granted over the bus
 * stay managed (the daemon restores them when it stops). NULL is fine. */
void rtkit_stop(struct rtkit *rk);
/* After a reload to configuration c: start or stop the service when [rtkit]
 * enable changed, or with enable = yes ask for the name again after an Exit
 * call released it; the properties and limits follow c from now on. */
int rtkit_reconfigure(struct rtkit **rk, const struct rtkit_ctx *ctx, const struct config *c);
/* Counters and the name's state; rk may be NULL (the service is off). */
void rtkit_stats(const struct rtkit *rk, struct rtkit_stats *st);

#endif
