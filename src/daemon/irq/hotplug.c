/* hotplug.c: device events (see hotplug.h). */
#include "autoconfig.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-device.h>

#include "daemon/irq/hotplug.h"
#include "daemon/sys/log.h"
#include "daemon/sys/procev.h"

/* The kernel's own uevent group (udev's is 2). */
#define UEVENT_GROUP_KERNEL 1

static const char *const subsystems[] = { "usb", "pci", "sound", "net" };

struct hotplug {
	sd_device_monitor *monitor;       /* udev's events */
	int fd;                           /* or the kernel's, -1 */
	sd_event_source *src;
	int link_fd;                      /* rtnetlink's link changes, -1 */
	sd_event_source *link_src;
	hotplug_fn fn;
	void *ud;
};

static bool wanted(const char *subsystem)
{
	for (size_t i = 0; i < sizeof(subsystems) / sizeof(subsystems[0]); i++)
		if (strcmp(subsystem, subsystems[i]) == 0)
			return true;
	return false;
}

static int on_device(sd_device_monitor *mon, sd_device *dev, void *userdata)
{
	static const char *const names[] = { "add", "remove", "change", "move", "online", "offline", "bind", "unbind" };
	struct hotplug *h = userdata;
	sd_device_action_t a;
	const char *path = "?";

	if (sd_device_get_action(dev, &a) < 0 || a < 0 || a >= _SD_DEVICE_ACTION_MAX)
		return 0;
	sd_device_get_devpath(dev, &path);
	h->fn(h->ud, names[a], path);
	return 0;
}

int hotplug_parse_uevent(const char *buf, size_t len, const char **action, const char **devpath)
{
	const char *end = buf + len, *at, *p;
	bool ok = false;

	/* "ACTION@DEVPATH" first; a message with udev's "libudev" header is not the kernel's */
	if (len < 3 || memchr(buf, '\0', len) == NULL || !(at = strchr(buf, '@')) || at == buf)
		return -EINVAL;
	*action = buf;
	*devpath = at + 1;
	for (p = buf + strlen(buf) + 1; p < end; p += strlen(p) + 1) {
		if (!memchr(p, '\0', (size_t)(end - p)))
			return -EINVAL;
		if (strncmp(p, "SUBSYSTEM=", 10) == 0)
			ok = wanted(p + 10);
	}
	return ok ? 1 : 0;
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct hotplug *h = userdata;
	char buf[8192 + 1], ctl[CMSG_SPACE(sizeof(struct ucred))];
	struct sockaddr_nl from;

	for (;;) {
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		const char *action, *devpath;
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
		struct cmsghdr *c;

		if (n < 0)
			return 0;
		/* from the kernel only (port 0), as root: the same test sd-device makes */
		c = CMSG_FIRSTHDR(&msg);
		if (from.nl_pid != 0 || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
		    ((struct ucred *)(void *)CMSG_DATA(c))->uid != 0 || (msg.msg_flags & MSG_TRUNC))
			continue;
		buf[n] = '\0';
		if (hotplug_parse_uevent(buf, (size_t)n + 1, &action, &devpath) > 0) {
			char a[32];
			snprintf(a, sizeof(a), "%.*s", (int)(devpath - 1 - action), action);
			h->fn(h->ud, a, devpath);
		}
	}
}

/* A network interface came up or went down: most NIC drivers request their
 * vectors when the interface is brought up, with no uevent for it. */
static int on_link(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct hotplug *h = userdata;
	char buf[8192];
	struct sockaddr_nl from;

	for (;;) {
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		struct nlmsghdr nh;
		const char *data;
		size_t off = 0;
		bool up = false;

		if (n < 0)
			return 0;
		if (from.nl_pid != 0)
			continue;

		while (nlmsg_next(buf, (size_t)n, &off, &nh, &data))
			if (nh.nlmsg_type == RTM_NEWLINK && nh.nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
				struct ifinfomsg ifi;
				memcpy(&ifi, data, sizeof(ifi));
				up |= (ifi.ifi_change & IFF_UP) != 0;
			}
		if (up)
			h->fn(h->ud, "link", "(a network interface came up or went down)");
	}
}

static int start_links(struct hotplug *h, sd_event *e)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };

	h->link_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (h->link_fd < 0)
		return -errno;
	if (bind(h->link_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return sd_event_add_io(e, &h->link_src, h->link_fd, EPOLLIN, on_link, h);
}

static int start_kernel(struct hotplug *h, sd_event *e)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = UEVENT_GROUP_KERNEL };
	int one = 1, r;

	h->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (h->fd < 0)
		return -errno;
	if (setsockopt(h->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(h->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	if ((r = sd_event_add_io(e, &h->src, h->fd, EPOLLIN, on_uevent, h)) < 0)
		return r;
	return 0;
}

static int start_udev(struct hotplug *h, sd_event *e)
{
	int r;

	if ((r = sd_device_monitor_new(&h->monitor)) < 0)
		return r;
	for (size_t i = 0; i < sizeof(subsystems) / sizeof(subsystems[0]); i++)
		if ((r = sd_device_monitor_filter_add_match_subsystem_devtype(h->monitor, subsystems[i], NULL)) < 0)
			return r;
	if ((r = sd_device_monitor_attach_event(h->monitor, e)) < 0 ||
	    (r = sd_device_monitor_start(h->monitor, on_device, h)) < 0)
		return r;
	return 0;
}

int hotplug_new(struct hotplug **ret, sd_event *e, hotplug_fn fn, void *ud)
{
	struct hotplug *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	h->fd = h->link_fd = -1;
	h->fn = fn;
	h->ud = ud;
	/* udev's monitor hears nothing where udev does not run (sd-device
	 * subscribes to udev's group, which only udevd sends to) */
	r = access("/run/udev/control", F_OK) == 0 ? start_udev(h, e) : start_kernel(h, e);
	if (r < 0) {
		hotplug_free(h);
		return r;
	}
	/* a NIC's vectors come with its link, not with a device event */
	if ((r = start_links(h, e)) < 0)
		log_errno(LOG_LEVEL_NOTICE, r, "hotplug: no rtnetlink link events; a NIC's vectors requested when "
			  "its link comes up are matched at the next device event or reload");
	*ret = h;
	return 0;
}

const char *hotplug_source(const struct hotplug *h)
{
	return !h ? "off" : h->monitor ? "udev (sd-device monitor)" : "kernel uevents (no udev)";
}

void hotplug_free(struct hotplug *h)
{
	if (!h)
		return;
	sd_device_monitor_unref(h->monitor);
	sd_event_source_disable_unref(h->src);
	sd_event_source_disable_unref(h->link_src);
	if (h->fd >= 0)
		close(h->fd);
	if (h->link_fd >= 0)
		close(h->link_fd);
	free(h);
}
