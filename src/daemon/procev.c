/* procev.c: process events connector (see procev.h). */
#include "autoconfig.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/log.h"
#include "procev.h"

struct procev {
	int fd;
	sd_event_source *src;
	struct procev_handlers h;
	void *ud;
	unsigned long events, overruns;
};

/* Tell the connector to start (or stop) multicasting to us. */
static int send_listen(int fd, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;

	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = (unsigned)getpid();
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(enum proc_cn_mcast_op);
	msg.op = op;
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		return -errno;
	return 0;
}

int procev_dispatch(const struct procev_handlers *h, void *ud, const void *buf, size_t len)
{
	const struct nlmsghdr *nl = buf;
	int n = 0;

	for (; NLMSG_OK(nl, len); nl = NLMSG_NEXT(nl, len)) {
		const struct cn_msg *cn;
		const struct proc_event *ev;

		if (nl->nlmsg_type == NLMSG_ERROR || nl->nlmsg_type == NLMSG_NOOP)
			continue;
		if (nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)))
			return -EINVAL;
		cn = NLMSG_DATA(nl);
		if (cn->id.idx != CN_IDX_PROC || cn->id.val != CN_VAL_PROC ||
		    cn->len < sizeof(*ev) - sizeof(ev->event_data) ||
		    NLMSG_LENGTH(sizeof(*cn) + cn->len) > nl->nlmsg_len)
			continue;
		ev = (const struct proc_event *)cn->data;
		n++;
		switch (ev->what) {
		case PROC_EVENT_FORK:
			if (h->on_fork)
				h->on_fork(ud, ev->event_data.fork.child_pid, ev->event_data.fork.child_tgid);
			break;
		case PROC_EVENT_EXEC:
			if (h->on_exec)
				h->on_exec(ud, ev->event_data.exec.process_pid, ev->event_data.exec.process_tgid);
			break;
		case PROC_EVENT_COMM: {
			char comm[sizeof(ev->event_data.comm.comm) + 1];

			memcpy(comm, ev->event_data.comm.comm, sizeof(ev->event_data.comm.comm));
			comm[sizeof(comm) - 1] = '\0';
			if (h->on_comm)
				h->on_comm(ud, ev->event_data.comm.process_pid, ev->event_data.comm.process_tgid, comm);
			break;
		}
		case PROC_EVENT_EXIT:
			if (h->on_exit)
				h->on_exit(ud, ev->event_data.exit.process_pid, ev->event_data.exit.process_tgid);
			break;
		default:
			break;
		}
	}
	return n;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct procev *p = userdata;
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			if (errno == ENOBUFS) {
				/* The kernel dropped events: whoever listens must rescan. */
				p->overruns++;
				log_notice("process events connector overrun: rescanning");
				if (p->h.on_overrun)
					p->h.on_overrun(p->ud);
				continue;
			}
			log_warn("process events connector");
			return 0;
		}
		int r = procev_dispatch(&p->h, p->ud, buf, (size_t)n);
		if (r > 0)
			p->events += (unsigned long)r;
	}
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
