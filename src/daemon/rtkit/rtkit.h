/* rtkit.h: rtschedd as rtkit's D-Bus service, org.freedesktop.RealtimeKit1 on
 * the system bus, so PipeWire, PulseAudio and the Realtime portal reach
 * rtschedd's grant path unchanged. Configured by [rtkit] in rtschedd.conf. */
#ifndef RTSCHED_RTKIT_H
#define RTSCHED_RTKIT_H

#include <stdbool.h>

struct daemon;
struct rtkit;

/* The bus side, for `rtschedctl status`. */
struct rtkit_stats {
	const char *state;     /* "off", "connecting", "owned", "not owned", "lost", "released", "failed" */
	char detail[192];      /* who holds the name, or why the bus failed; "" if nothing to say */
	unsigned long calls, grants, refusals;
};

/* Connect to the system bus on the daemon's event loop, serve
 * /org/freedesktop/RealtimeKit1 and ask for the name (taking it from a
 * running rtkit only with replace-existing). *ret is NULL when [rtkit] is
 * off. A bus that cannot be reached is logged and reported in the stats,
 * not an error: the control socket works without it. Returns 0 or -ENOMEM. */
int rtkit_start(struct rtkit **ret, struct daemon *d);
/* Release the name, leave the bus and free. The threads granted over the bus
 * stay managed (the daemon restores them when it stops). NULL is fine. */
void rtkit_stop(struct rtkit *rk);
/* After a reload: start or stop the service when [rtkit] enable changed. */
int rtkit_reconfigure(struct rtkit **rk, struct daemon *d);
/* Counters and the name's state; rk may be NULL (the service is off). */
void rtkit_stats(const struct rtkit *rk, struct rtkit_stats *st);

#endif
