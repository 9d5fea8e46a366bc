/* guard.h: the starvation watchdog (src/daemon/watchdog) as the daemon runs
 * it: started, retuned and stopped from the configuration, told which
 * real-time threads to guard (at most every 100 ms, however many change),
 * and what its trips do to the registry: the culprits recorded as demoted,
 * their users' grants held back, and everything promoted back after the
 * cooldown. The watchdog itself is svc->safety (NULL when off). */
#ifndef RTSCHED_GUARD_H
#define RTSCHED_GUARD_H

#include <systemd/sd-event.h>

struct guard;
struct service;

/* Set up, the watchdog not started yet (guard_configure() does). */
int guard_new(struct guard **ret, sd_event *e, struct service *svc);
/* Start, retune or stop the watchdog to match svc->config, and give it
 * the managed real-time threads. */
void guard_configure(struct guard *g);
/* The registry changed: the watchdog's list follows within 100 ms. */
void guard_follow(struct guard *g);
/* Stop the watchdog; after the registry is freed, so restored threads
 * cannot starve its canaries. NULL is fine. False if its thread is left
 * running (safety_free()): the service's task iterators must then stay. */
bool guard_free(struct guard *g);

#endif
