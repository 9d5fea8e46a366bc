/* follow.h: how the daemon learns what tasks do: the process events
 * connector (forks, execs, renames, exits) while something needs its
 * events, or, without it, a rescan of /proc every rescan-ms; and the full
 * /proc scans for [rule] matches. What it learns goes to the registry, the
 * rules, isolation and jitter. */
#ifndef RTSCHED_FOLLOW_H
#define RTSCHED_FOLLOW_H

#include <stdbool.h>
#include <systemd/sd-event.h>

struct follow;
struct service;
struct service_status;

/* Open the connector (unless process-events = no) or, without it, set up
 * the rescan timer; either way is logged. */
int follow_new(struct follow **ret, sd_event *e, struct service *svc);
/* Scan /proc for threads the rules match (force: re-apply to those
 * matched), timing it for status. */
void follow_scan(struct follow *f, bool force);
/* Something changed (the registry, the rules, isolation): let the
 * connector's events through while something needs them, else drop them in
 * the kernel; what happened while they were dropped is rescanned. */
void follow_events(struct follow *f);
/* Without the connector: arm the next rescan while something needs one. */
void follow_arm_rescan(struct follow *f);
/* Whether the connector is open. */
bool follow_connected(const struct follow *f);
/* The connector's and the last scan's part of `status`. */
void follow_status(const struct follow *f, struct service_status *st);
/* NULL is fine. */
void follow_free(struct follow *f);

#endif
