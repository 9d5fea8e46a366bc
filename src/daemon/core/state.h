/* state.h: the registry on disk, so registrations and rule matches survive a
 * restart or a crash of rtschedd. An append-only journal under /run
 * (one line per change, compacted when it grows), read back at start: each
 * thread is re-adopted only if its start time still matches. */
#ifndef RTSCHED_STATE_H
#define RTSCHED_STATE_H

#include <stdbool.h>
#include <stdio.h>

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
/* Other modules' entries share the journal (the IRQ manager's: IRQ
 * affinities and kernel threads; PM QoS and CPU isolation's originals,
 * src/daemon/cpu): one line each, "K ID ..." with a kind
 * letter other than T and P and a number, removed with "-K ID". */
/* Append a line (fmt without the newline); it is compacted away when its
 * owner's writer no longer writes it. */
void state_put(struct state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the line fn writes to f (one, ending in a newline) for arg. */
void state_put_with(struct state *s, void (*fn)(FILE *f, const void *arg), const void *arg);
/* Append the removal of entry kind/id. */
void state_put_gone(struct state *s, char kind, long id);
/* At compaction, each module's fn writes every live line of the module
 * (each ending in a newline) and returns how many. Up to STATE_WRITERS_MAX
 * modules: 0, or -ENOSPC. A module removes its writer before it goes. */
#define STATE_WRITERS_MAX 4
typedef size_t (*state_writer)(void *ud, FILE *f);
int state_add_writer(struct state *s, state_writer fn, void *ud);
void state_remove_writer(struct state *s, state_writer fn, void *ud);
/* The lines of the kinds in `kinds` that the journal held at start, handed
 * to fn once each (without the newline, writable); until taken they are
 * kept in the journal. */
void state_take(struct state *s, const char *kinds, void (*fn)(void *ud, char *line), void *ud);
/* Forget everything: the daemon restored all threads and is stopping. */
void state_discard(struct state *s);
/* How many threads and processes the last start re-adopted. */
void state_adopted(const struct state *s, size_t *threads, size_t *processes);
void state_free(struct state *s);

#endif
