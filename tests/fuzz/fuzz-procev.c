/* fuzz-procev.c: libFuzzer target for the process events connector parser
 * (procev_dispatch() in procev.h), and for the kernel's uevent messages as
 * the IRQ manager's hotplug watch reads them without udev
 * (hotplug_parse_uevent() in irq/hotplug.h): the same datagram, read as one.
 *
 * The input is one datagram as recv() returns it from the NETLINK_CONNECTOR
 * socket: netlink headers, cn_msg headers and proc_event payloads. It is
 * copied to a heap buffer of exactly its length, so any read past the
 * datagram is an AddressSanitizer report. The handlers check that a comm is
 * NUL-terminated and count the events, which must match the return value. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/irq/hotplug.h"
#include "daemon/sys/procev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-procev: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                       \
			abort();                                                  \
		}                                                                 \
	} while (0)

static unsigned long seen;
static volatile pid_t sink;

static void on_fork(void *ud, pid_t tid, pid_t tgid) { seen++; sink = tid ^ tgid; }
static void on_exec(void *ud, pid_t tid, pid_t tgid) { seen++; sink = tid ^ tgid; }
static void on_exit_ev(void *ud, pid_t tid, pid_t tgid) { seen++; sink = tid ^ tgid; }
static void on_overrun(void *ud) { CHECK(!"procev_dispatch() never reports overruns"); }

/* The daemon hands comm to rule matching as a C string of at most 16 bytes. */
static void on_comm(void *ud, pid_t tid, pid_t tgid, const char *comm)
{
	CHECK(memchr(comm, '\0', 17) != NULL);
	seen++;
	sink = tid ^ tgid;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct procev_handlers h = { .on_fork = on_fork, .on_exec = on_exec, .on_comm = on_comm,
						  .on_exit = on_exit_ev, .on_overrun = on_overrun };
	static const struct procev_handlers none = { 0 };
	void *buf;
	int n;

	/* malloc() aligns as recv()'s buffer is (NLMSG_ALIGNTO and better) */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	seen = 0;
	n = procev_dispatch(&h, NULL, buf, size);
	CHECK(n == -EINVAL || (n >= 0 && (unsigned long)n >= seen));
	/* handlers are optional */
	procev_dispatch(&none, NULL, buf, size);
	/* as a uevent: action and devpath point into the message */
	const char *action, *devpath;
	int u = hotplug_parse_uevent(buf, size, &action, &devpath);
	CHECK(u == -EINVAL || u == 0 || u == 1);
	if (u >= 0)
		CHECK(action == buf && devpath > action && devpath < (const char *)buf + size &&
		      memchr(devpath, '\0', (size_t)((const char *)buf + size - devpath)));
	free(buf);
	return 0;
}
