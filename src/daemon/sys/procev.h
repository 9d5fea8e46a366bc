/* procev.h: the kernel's process events connector (netlink, CN_IDX_PROC):
 * fork (including new threads), exec, comm (a thread renamed itself) and
 * exit, delivered into the event loop. Needs CAP_NET_ADMIN. */
#ifndef RTSCHED_PROCEV_H
#define RTSCHED_PROCEV_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

/* What one turn of the event loop reads (procev.c, on_readable): at most
 * PROCEV_BATCH datagrams, and no more once PROCEV_SLICE_US have passed
 * since the turn began: what a turn may run past the loop's budget. A rule
 * refused to a thread costs some 50 us (its name, owner, the user's entry,
 * the refusal noted), so 64 of them would be 3 ms; events that match no
 * rule cost about 1 us and fill the batch. */
#define PROCEV_BATCH 64u
#define PROCEV_SLICE_US 200u

struct procev_handlers {
	void (*on_fork)(void *ud, pid_t tid, pid_t tgid);       /* new task tid in process tgid */
	void (*on_exec)(void *ud, pid_t tid, pid_t tgid);
	void (*on_comm)(void *ud, pid_t tid, pid_t tgid, const char *comm);
	void (*on_exit)(void *ud, pid_t tid, pid_t tgid);
	void (*on_overrun)(void *ud);                           /* events were lost (ENOBUFS) */
};

struct procev;

/* Subscribe; -errno (e.g. -EPERM without CAP_NET_ADMIN) when the connector
 * can't be used, so the caller falls back to rescans. */
int procev_new(struct procev **ret, sd_event *e, const struct procev_handlers *h, void *ud);
/* The next message of a netlink datagram buf of len bytes, from *off: its
 * header copied into *nh (never cast: buf has no alignment), *data its
 * payload, *off moved to the next aligned one. False at the end or at a
 * header that does not fit. */
bool nlmsg_next(const char *buf, size_t len, size_t *off, struct nlmsghdr *nh, const char **data);
/* Parse one netlink datagram and dispatch its events (exposed for tests and fuzzing). */
int procev_dispatch(const struct procev_handlers *h, void *ud, const void *buf, size_t len);
/* Let events through or drop them in the kernel (no wake-ups) while nothing
 * needs them. */
int procev_set_active(struct procev *p, bool active);
bool procev_active(const struct procev *p);
/* Events received and overruns seen so far. */
void procev_stats(const struct procev *p, unsigned long *events, unsigned long *overruns);
void procev_free(struct procev *p);

#endif
