/* kfeat.c: probe the running kernel for the features in kfeat.h by trying
 * each one on this process (a socket pair, our own pid and tid). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/sys/kfeat.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* 1 if fd is a descriptor (closed here), 0 if errno names a missing
 * feature (one of the two given), else -errno. */
static int verdict(int fd, int missing1, int missing2)
{
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == missing1 || errno == missing2 ? 0 : -errno;
}

static int probe_pidfd(unsigned flags)
{
	pid_t id = flags ? (pid_t)syscall(SYS_gettid) : getpid();

	return verdict((int)syscall(SYS_pidfd_open, id, flags), ENOSYS, EINVAL);
}

static int probe_peerpidfd(void)
{
	int sv[2], fd = -1, r;
	socklen_t len = sizeof(fd);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	r = getsockopt(sv[0], SOL_SOCKET, SO_PEERPIDFD, &fd, &len);
	r = verdict(r == 0 ? fd : -1, ENOPROTOOPT, ENOPROTOOPT);
	close(sv[0]);
	close(sv[1]);
	return r;
}

/* The connector's socket with the process events group bound. Subscribing
 * (PROC_CN_MCAST_LISTEN) is not tried: before Linux 6.6 it needs
 * CAP_NET_ADMIN, which says nothing about the kernel. */
static int probe_connector(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR), r;

	if (fd < 0)
		return errno == EPROTONOSUPPORT || errno == EAFNOSUPPORT ? 0 : -errno;
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 1;
	close(fd);
	return r;
}

void kfeat_probe(struct kfeat f[KFEAT_N])
{
	f[KFEAT_PIDFD_OPEN] = (struct kfeat){
		"pidfd_open", "Linux 5.3",
		"registered processes are watched through pidfds; clients are pinned with one at accept "
		"where SO_PEERPIDFD is missing",
		"processes are found gone by rescans of /proc, and clients are identified by pid alone",
		probe_pidfd(0) };
	f[KFEAT_SO_PEERPIDFD] = (struct kfeat){
		"SO_PEERPIDFD", "Linux 6.5",
		"each client's process is pinned by the kernel at connect: a connection handed on cannot act "
		"for whoever reuses the pid",
		"the client is pinned with pidfd_open() of its SO_PEERCRED pid at accept, kept only if that "
		"process still has the client's uid",
		probe_peerpidfd() };
	f[KFEAT_PIDFD_THREAD] = (struct kfeat){
		"PIDFD_THREAD", "Linux 6.9",
		"a managed thread's exit wakes the daemon through its own thread pidfd",
		"thread exits are seen through the process events connector and rescans of /proc",
		probe_pidfd(PIDFD_THREAD) };
	f[KFEAT_PROC_CONNECTOR] = (struct kfeat){
		"process events connector", "CONFIG_PROC_EVENTS; unprivileged from Linux 6.6",
		"new threads, renames and exits are seen as they happen (rtschedd subscribes with "
		"CAP_NET_ADMIN, then drops it)",
		"rescans of /proc every rescan-ms",
		probe_connector() };
}

/* struct sched_attr, which glibc 2.36 does not declare (as core/task.c). */
struct probe_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

/* The probe thread: 0 or the errno of its one call. */
static void *rt_probe_main(void *arg)
{
	struct probe_attr a = { .size = sizeof(a), .policy = SCHED_FIFO, .priority = 1 };

	*(int *)arg = syscall(SYS_sched_setattr, 0, &a, 0) < 0 ? errno : 0;
	return NULL;   /* the thread ends here: nothing to put back */
}

int kfeat_rt_allowed(void)
{
	sigset_t all, old;
	pthread_t th;
	int err = -1, r;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&th, NULL, rt_probe_main, &err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	pthread_join(th, NULL);
	if (err == 0)
		return 1;
	return err == EPERM ? 0 : -err;
}
