/* state.h: the registry on disk, so registrations and rule matches survive a
 * restart or a crash of rtschedd. An append-only journal under /run
 * (one line per change, compacted when it grows), read back at start: each
 * thread is re-adopted only if its start time still matches. */
#ifndef RTSCHED_STATE_H
#define RTSCHED_STATE_H

#include <stdbool.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"

struct state;

/* Read the journal at `path` (if any), re-adopt into r what still exists
 * and what the configuration c still grants, then start a fresh journal and
 * follow the registry from now on. */
int state_open(struct state **ret, struct registry *r, const struct config *c, const char *path);
/* One registry change, appended to the journal (the daemon forwards them). */
struct reg_thread;
struct reg_process;
void state_observe(struct state *s, int ev, struct reg_thread *t, struct reg_process *p);
/* Forget everything: the daemon restored all threads and is stopping. */
void state_discard(struct state *s);
/* How many threads and processes the last start re-adopted. */
void state_adopted(const struct state *s, size_t *threads, size_t *processes);
void state_free(struct state *s);

#endif
