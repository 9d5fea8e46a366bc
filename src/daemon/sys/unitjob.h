/* unitjob.h: what systemd is doing to the unit rtschedd runs in, asked on
 * the system bus: a SIGTERM that is part of a restart leaves the managed
 * threads to the next rtschedd (the state journal); a plain stop restores
 * them. */
#ifndef RTSCHED_UNITJOB_H
#define RTSCHED_UNITJOB_H

#include <stdbool.h>

/* True if systemd runs a restart (or try-restart) job on our own unit now;
 * false without systemd, outside a unit, or if the bus cannot say. */
bool unitjob_restarting(void);

#endif
