/* closer.h: closing descriptors off the event loop.
 *
 * close() runs the file's release in the thread that drops the last
 * reference, and for a file a client chose that can block for as long as
 * the client likes: a TCP socket with SO_LINGER and a full send queue waits
 * out its linger time, a file on the client's own FUSE mount waits for its
 * daemon to answer the flush, and an AF_UNIX socket releases the
 * descriptors in flight in its queue (such a TCP socket or file among them).
 * So every descriptor a client handed over (SCM_RIGHTS) that is not a sealed
 * memfd, and every client connection (whose queue may still hold such
 * descriptors in flight), is closed by the closer's threads, never by the
 * event loop; a socket is first set to reset rather than linger.
 *
 * A close can block only on what its owner (the user who handed the
 * descriptor over) made, so each owner has a queue of its own, served in
 * turn, and at most CLOSER_PER_OWNER threads close an owner's descriptors at
 * once: a user whose closes never finish holds that many threads and its
 * own queue, and the other users' closes get other threads. Who handed a
 * descriptor over is counted, so the control socket stops reading a user
 * whose descriptors pile up (closer_pending()) instead of letting them fill
 * the daemon's table. */
#ifndef RTSCHED_CLOSER_H
#define RTSCHED_CLOSER_H

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define CLOSER_PER_OWNER 2        /* threads closing one user's descriptors at once, at most */
#define CLOSER_THREADS 256        /* in all: 128 users' closes may block before another's wait */
#define CLOSER_PENDING_MAX 8      /* a user's descriptors waiting before its clients are not read */

struct closer;

/* The closer, its threads started as closes come; `drained` (may be NULL) is
 * called in the event loop when a close finished, so the caller can read
 * again from users it stopped reading. Returns 0 or -errno. */
int closer_new(struct closer **ret, sd_event *e, void (*drained)(void *ud), void *ud);
/* Close fd off the loop, in owner's queue. Never blocks; if no thread can
 * be had at all (out of memory), the descriptor is closed here. */
void closer_close(struct closer *c, int fd, uid_t owner);
/* How many of owner's descriptors wait to be closed or are being closed. */
unsigned closer_pending(const struct closer *c, uid_t owner);
/* Stop: what is queued is closed by the threads; one still blocked in a
 * close is left to the process's exit. NULL is fine. */
void closer_free(struct closer *c);

#endif
