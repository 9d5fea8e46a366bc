/* procev.c: process events connector (see procev.h). */
#include "autoconfig.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/sys/procev.h"
#include "daemon/sys/clock.h"

struct procev {
	bool active;  /* false: a socket filter drops every event */
	int fd;
	sd_event_source *src;
	struct procev_handlers h;
	void *ud;
	unsigned long events, overruns;
};

/* Tell the connector to start (or stop) multicasting to us. The message is
 * assembled in bytes: struct cn_msg ends in a flexible array, so it cannot
 * sit inside another struct in ISO C. */
static int send_listen(int fd, enum proc_cn_mcast_op op)
{
	char buf[NLMSG_SPACE(sizeof(struct cn_msg) + sizeof(op))];
	struct nlmsghdr nl = {
		.nlmsg_len = NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(op)),
		.nlmsg_type = NLMSG_DONE,
		.nlmsg_pid = (unsigned)getpid(),
	};
	struct cn_msg cn = {
		.id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
		.len = sizeof(op),
	};

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &nl, sizeof(nl));
	memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
	memcpy(buf + NLMSG_HDRLEN + sizeof(cn), &op, sizeof(op));
	if (send(fd, buf, nl.nlmsg_len, 0) < 0)
		return -errno;
	return 0;
}

/* Bytes of a proc_event that an event of type `what` carries; 0 for the
 * types nobody here handles. */
static size_t event_size(unsigned what)
{
	const size_t head = offsetof(struct proc_event, event_data);
	const struct proc_event *ev = NULL;

	switch (what) {
	case PROC_EVENT_FORK:
		return head + sizeof(ev->event_data.fork);
	case PROC_EVENT_EXEC:
		return head + sizeof(ev->event_data.exec);
	case PROC_EVENT_COMM:
		return head + sizeof(ev->event_data.comm);
	case PROC_EVENT_EXIT:
		return head + sizeof(ev->event_data.exit);
	}
	return 0;
}

/* The datagram is walked by offsets and each header copied out: nothing in
 * it is trusted to be aligned (proc_event needs 8 bytes and sits at 4), to
 * be as long as its type says, or to be padded at the end. */
bool nlmsg_next(const char *buf, size_t len, size_t *off, struct nlmsghdr *nh, const char **data)
{
	if (*off > len || len - *off < sizeof(*nh))
		return false;
	memcpy(nh, buf + *off, sizeof(*nh));
	if (nh->nlmsg_len < sizeof(*nh) || nh->nlmsg_len > len - *off)
		return false;
	*data = buf + *off + NLMSG_HDRLEN;
	/* the next message starts at the aligned end of this one, if any is left */
	*off += NLMSG_ALIGN(nh->nlmsg_len) < len - *off ? NLMSG_ALIGN(nh->nlmsg_len) : len - *off;
	return true;
}

int procev_dispatch(const struct procev_handlers *h, void *ud, const void *buf, size_t len)
{
	struct nlmsghdr nl;
	const char *data;
	size_t off = 0;
	int n = 0;

	while (nlmsg_next(buf, len, &off, &nl, &data)) {
		struct cn_msg cn;
		struct proc_event ev;

		if (nl.nlmsg_type == NLMSG_ERROR || nl.nlmsg_type == NLMSG_NOOP)
			continue;
		if (nl.nlmsg_len < NLMSG_LENGTH(sizeof(cn)))
			return -EINVAL;
		memcpy(&cn, data, sizeof(cn));
		if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC ||
		    NLMSG_LENGTH(sizeof(cn) + cn.len) > nl.nlmsg_len)
			continue;
		memset(&ev, 0, sizeof(ev));
		memcpy(&ev, data + sizeof(cn), cn.len < sizeof(ev) ? cn.len : sizeof(ev));
		if (event_size(ev.what) == 0 || cn.len < event_size(ev.what))
			continue;
		n++;
		switch (ev.what) {
		case PROC_EVENT_FORK:
			if (h->on_fork)
				h->on_fork(ud, ev.event_data.fork.child_pid, ev.event_data.fork.child_tgid);
			break;
		case PROC_EVENT_EXEC:
			if (h->on_exec)
				h->on_exec(ud, ev.event_data.exec.process_pid, ev.event_data.exec.process_tgid);
			break;
		case PROC_EVENT_COMM: {
			char comm[sizeof(ev.event_data.comm.comm) + 1];

			memcpy(comm, ev.event_data.comm.comm, sizeof(ev.event_data.comm.comm));
			comm[sizeof(comm) - 1] = '\0';
			if (h->on_comm)
				h->on_comm(ud, ev.event_data.comm.process_pid, ev.event_data.comm.process_tgid, comm);
			break;
		}
		case PROC_EVENT_EXIT:
			if (h->on_exit)
				h->on_exit(ud, ev.event_data.exit.process_pid, ev.event_data.exit.process_tgid);
			break;
		default:
			break;
		}
	}
	return n;
}

/* At most PROCEV_BATCH datagrams (one event each, as the kernel sends
 * them) per dispatch, for at most PROCEV_SLICE_US; the rest wait in the
 * socket, which stays readable, for the loop's next turn. A user who forks
 * or renames as fast as the machine allows keeps the socket full: without
 * the bound the loop would never come back from here, and its budget
 * (rtloop.h), checked between dispatches, would bound nothing. An overrun
 * ends the turn too (its rescan goes on in the loop's next turns). */
static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct procev *p = userdata;
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint64_t end = clock_usec(CLOCK_MONOTONIC) + PROCEV_SLICE_US;

	(void)s;
	(void)revents;
	for (unsigned i = 0; i < PROCEV_BATCH && (i == 0 || clock_usec(CLOCK_MONOTONIC) < end); i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			if (errno == ENOBUFS) {
				/* The kernel dropped events: whoever listens must rescan. */
				p->overruns++;
				log_notice("process events connector overrun: rescanning");
				if (p->h.on_overrun)
					p->h.on_overrun(p->ud);
				return 0;
			}
			log_warn("process events connector");
			return 0;
		}
		int r = procev_dispatch(&p->h, p->ud, buf, (size_t)n);
		if (r > 0)
			p->events += (unsigned long)r;
	}
	return 0;
}

int procev_new(struct procev **ret, sd_event *e, const struct procev_handlers *h, void *ud)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct procev *p;
	int r, size = 4 << 20;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->h = *h;
	p->ud = ud;
	p->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
	if (p->fd < 0) {
		r = -errno;
		free(p);
		return r;
	}
	/* A burst of thread creation must not overrun us; FORCE needs CAP_NET_ADMIN,
	 * which the connector needs anyway. */
	if (setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	sa.nl_pid = 0;
	if (bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = send_listen(p->fd, PROC_CN_MCAST_LISTEN)) < 0)
		goto fail;
	p->active = true;
	r = sd_event_add_io(e, &p->src, p->fd, EPOLLIN, on_readable, p);
	if (r < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	close(p->fd);
	free(p);
	return r;
}

int procev_set_active(struct procev *p, bool active)
{
	/* A classic BPF program of one instruction, "accept 0 bytes": the kernel
	 * drops every event before it reaches the socket, so the daemon is not
	 * woken by forks it has no use for. Attaching a socket filter needs no
	 * capability, unlike subscribing again after the drop. */
	static struct sock_filter drop[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	static const struct sock_fprog prog = { .len = 1, .filter = drop };
	int r;

	if (!p || p->active == active)
		return 0;
	int zero = 0;

	if (active) /* the kernel wants an option value here, though it ignores it */
		r = setsockopt(p->fd, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof(zero));
	else
		r = setsockopt(p->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
	if (r < 0)
		return -errno;
	p->active = active;
	return 0;
}

bool procev_active(const struct procev *p)
{
	return p && p->active;
}

void procev_stats(const struct procev *p, unsigned long *events, unsigned long *overruns)
{
	*events = p ? p->events : 0;
	*overruns = p ? p->overruns : 0;
}

void procev_free(struct procev *p)
{
	if (!p)
		return;
	send_listen(p->fd, PROC_CN_MCAST_IGNORE);
	sd_event_source_disable_unref(p->src);
	close(p->fd);
	free(p);
}
