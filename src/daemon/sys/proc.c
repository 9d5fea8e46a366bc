/* proc.c: the readers of /proc files (see proc.h); the text goes to the
 * parsers of procparse.c. */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/caps.h"
#include "daemon/sys/proc.h"

#define STAT_MAX 2048          /* a stat line: 52 numbers of up to 20 digits and a name */
#define SMALL_MAX 4096         /* limits */
#define GROW_MAX (1u << 20)    /* status (Groups: may list 65536 gids) and cgroup */

/* ROOT/PID[/task/TID]/NAME into path; -ENAMETOOLONG rather than a cut. */
static int task_path(char *path, size_t size, const char *root, pid_t pid, pid_t tid, const char *name)
{
	char who[16];
	int n;

	if (pid)
		snprintf(who, sizeof(who), "%d", (int)pid);
	else
		snprintf(who, sizeof(who), "self");
	if (tid)
		n = snprintf(path, size, "%s/%s/task/%d/%s", root ? root : "/proc", who, (int)tid, name);
	else
		n = snprintf(path, size, "%s/%s/%s", root ? root : "/proc", who, name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int proc_read_fd(int fd, char *buf, size_t len, size_t *used)
{
	size_t off = 0;

	for (;;) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		off += (size_t)n;
		if (off == len - 1) {
			char extra;

			n = read(fd, &extra, 1);
			if (n != 0)
				return n < 0 ? -errno : -EFBIG;
			break;
		}
	}
	buf[off] = '\0';
	*used = off;
	return 0;
}

/* Whether what was read of a /proc file is all of it that matters, so the
 * read that would find its end is not made: for a /proc file the kernel
 * formats the whole file again to find that offset. */
typedef bool (*whole_fn)(const char *buf, size_t n);

/* A one-line file (stat, schedstat): whole at its newline. */
static bool whole_line(const char *buf, size_t n)
{
	return buf[n - 1] == '\n';
}

/* limits: whole at its last line, Max realtime timeout. */
static bool whole_limits(const char *buf, size_t n)
{
	return buf[n - 1] == '\n' && strstr(buf, "\nMax realtime timeout");
}

/* fd's file into buf from offset 0 (pread: a kept descriptor), up to its end
 * or until whole() says so (NULL: to the end): -ESRCH if there is nothing in
 * it, -EFBIG if it does not fit. */
static int read_whole(int fd, bool kept, char *buf, size_t len, whole_fn whole)
{
	size_t off = 0;

	for (;;) {
		ssize_t n = kept ? pread(fd, buf + off, len - 1 - off, (off_t)off) : read(fd, buf + off, len - 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
		buf[off] = '\0';
		if (whole && whole(buf, off))
			break;
		if (off == len - 1)
			return -EFBIG;
	}
	buf[off] = '\0';
	return off ? 0 : -ESRCH;
}

/* Open path (relative to dirfd) to read: the descriptor, or -ESRCH when
 * there is no such file (the task is gone), or -errno. */
static int open_at(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

/* The same for a file of a task (task_path()). */
static int open_task(const char *root, pid_t pid, pid_t tid, const char *name)
{
	char path[PATH_MAX];
	int r;

	if ((r = task_path(path, sizeof(path), root, pid, tid, name)) < 0)
		return r;
	return open_at(AT_FDCWD, path);
}

/* Read a file of a task into buf (read_whole()): -ESRCH when the task is
 * gone (no such file, or nothing in it), -EFBIG if it does not fit. */
static int read_task(const char *root, pid_t pid, pid_t tid, const char *name, char *buf, size_t len, whole_fn whole)
{
	int fd = open_task(root, pid, tid, name), r;

	if (fd < 0)
		return fd;
	r = read_whole(fd, false, buf, len, whole);
	close(fd);
	return r;
}

/* fd's file (read_whole(), from offset 0 each time) into a malloc'd buffer
 * that grows up to GROW_MAX, for files whose size depends on what the task
 * is (its groups, its cgroups); fd is closed. A negative fd (open_at()'s
 * error) is returned as it is. */
static int read_alloc(int fd, char **out)
{
	size_t len = 4096;
	char *buf = NULL;
	int r;

	if (fd < 0)
		return fd;
	for (;;) {
		char *nb = realloc(buf, len);

		if (!nb) {
			r = -ENOMEM;
			break;
		}
		buf = nb;
		r = read_whole(fd, true, buf, len, NULL);
		if (r != -EFBIG || len >= GROW_MAX)
			break;
		len *= 2;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*out = buf;
	return 0;
}

/* A status file, fd (read_alloc()), parsed. */
static int read_status(int fd, struct proc_status *out)
{
	char *buf;
	int r;

	if ((r = read_alloc(fd, &buf)) < 0)
		return r;
	r = proc_parse_status(buf, out);
	free(buf);
	return r;
}

int proc_read_stat_at(const char *root, pid_t pid, pid_t tid, struct proc_stat *out)
{
	char buf[STAT_MAX];
	int r;

	if ((r = read_task(root, pid, tid, "stat", buf, sizeof(buf), whole_line)) < 0)
		return r;
	return proc_parse_stat(buf, out);
}

int proc_read_status_at(const char *root, pid_t pid, struct proc_status *out)
{
	return read_status(open_task(root, pid, 0, "status"), out);
}

int proc_read_limits_at(const char *root, pid_t pid, struct proc_rlimits *out)
{
	char buf[SMALL_MAX];
	int r;

	if ((r = read_task(root, pid, 0, "limits", buf, sizeof(buf), whole_limits)) < 0)
		return r;
	return proc_parse_limits(buf, out);
}

/* RLIMIT_RTPRIO and RLIMIT_RTTIME of pid by prlimit(2): two system calls,
 * where /proc/PID/limits costs three and the kernel formats sixteen rows
 * (9 to 14 µs of a rule's match, rename -> applied, bench section 5). The
 * kernel answers for another user's process only with CAP_SYS_RESOURCE,
 * so it is tried only with that capability or as root (root's own
 * processes): -EPERM otherwise, and the caller reads the file. */
static int prlimit_read(pid_t pid, struct proc_rlimits *out)
{
	static int may = -1;
	struct rlimit prio, time;

	if (may < 0)
		may = caps_effective(CAP_SYS_RESOURCE) || geteuid() == 0;
	if (!may)
		return -EPERM;
	if (prlimit(pid, RLIMIT_RTPRIO, NULL, &prio) < 0 || prlimit(pid, RLIMIT_RTTIME, NULL, &time) < 0) {
		/* the capability was dropped since: the file from now on */
		if (errno == EPERM && geteuid() != 0)
			may = 0;
		return -errno;
	}
	out->rtprio_soft = prio.rlim_cur;
	out->rtprio_hard = prio.rlim_max;
	out->rttime_soft = time.rlim_cur;
	out->rttime_hard = time.rlim_max;
	return 0;
}

int proc_pin_open(struct proc_pin *pin, pid_t pid)
{
	char path[32];
	int r;

	*pin = PROC_PIN_NONE;
	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	pin->dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pin->dir_fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* relative to the directory: the same process, even if pid was reused
	 * between the two opens */
	if ((r = open_at(pin->dir_fd, "limits")) < 0) {
		proc_pin_close(pin);
		return r;
	}
	pin->limits_fd = r;
	pin->pid = pid;
	return 0;
}

void proc_pin_close(struct proc_pin *pin)
{
	if (pin->limits_fd >= 0)
		close(pin->limits_fd);
	if (pin->dir_fd >= 0)
		close(pin->dir_fd);
	*pin = PROC_PIN_NONE;
}

/* task/TID of a pinned process: its start time, then (through the same
 * descriptor, so the same thread) its owner in *st. */
static int pin_read_task(const struct proc_pin *pin, const char *path, uint64_t *starttime, struct stat *st)
{
	char buf[STAT_MAX];
	struct proc_stat ps;
	int tfd, fd, r;

	tfd = openat(pin->dir_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
	if ((fd = open_at(tfd, "stat")) < 0) {
		r = fd;
	} else {
		r = read_whole(fd, false, buf, sizeof(buf), whole_line);
		close(fd);
	}
	if (r == 0)
		r = proc_parse_stat(buf, &ps);
	if (r == 0 && fstat(tfd, st) < 0)
		r = errno == ENOENT ? -ESRCH : -errno;
	close(tfd);
	if (r == 0)
		*starttime = ps.starttime;
	return r;
}

int proc_pin_read_limits(const struct proc_pin *pin, pid_t tid, struct proc_rlimits *out, uid_t *owner,
			 uint64_t *starttime)
{
	char path[32], buf[SMALL_MAX];
	struct stat st;
	bool by_pid;

	if (pin->dir_fd < 0 || pin->limits_fd < 0 || tid <= 0)
		return -ESRCH;
	/* by its pid first, where the kernel allows it: the fstatat below, in
	 * the directory that names the process, then says the process was
	 * alive after it, so the pid was still its own (a pid is not given
	 * again while its process exists) */
	by_pid = prlimit_read(pin->pid, out) == 0;
	snprintf(path, sizeof(path), "task/%d", (int)tid);
	if (starttime) {
		int r = pin_read_task(pin, path, starttime, &st);
		if (r < 0)
			return r;
	} else if (fstatat(pin->dir_fd, path, &st, 0) < 0) {
		return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
	}
	if (owner)
		*owner = st.st_uid;
	if (by_pid)
		return 0;
	/* the kernel formats the file afresh for a read from offset 0 */
	int r = read_whole(pin->limits_fd, true, buf, sizeof(buf), whole_limits);

	return r < 0 ? r : proc_parse_limits(buf, out);
}

int proc_pin_read_status(const struct proc_pin *pin, struct proc_status *out)
{
	if (pin->dir_fd < 0)
		return -ESRCH;
	return read_status(open_at(pin->dir_fd, "status"), out);
}

int proc_read_cgroup_at(const char *root, pid_t pid, struct proc_cgroup *out)
{
	char *buf;
	int r;

	if ((r = read_alloc(open_task(root, pid, 0, "cgroup"), &buf)) < 0)
		return r;
	r = proc_parse_cgroup(buf, out);
	free(buf);
	return r;
}

int proc_read_timerslack_at(const char *root, pid_t pid, long long *ns)
{
	char path[PATH_MAX], buf[64], *end;
	size_t n;
	int fd, r;

	/* errors as they are: ENOENT here means a kernel before 4.6 */
	if ((r = task_path(path, sizeof(path), root, pid, 0, "timerslack_ns")) < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = proc_read_fd(fd, buf, sizeof(buf), &n);
	close(fd);
	if (r < 0)
		return r;
	errno = 0;
	*ns = strtoll(buf, &end, 10);
	if (end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return errno ? -errno : 0;
}

int proc_read_stat(pid_t tid, struct proc_stat *out)
{
	/* /proc/TID/task/TID/stat, not /proc/TID/stat: the latter is the
	 * thread-group view, which sums over every thread of the process
	 * (O(threads) per read, O(n^2) for a list of one big process) */
	return proc_read_stat_at(NULL, tid, tid, out);
}

int proc_read_status(pid_t tid, struct proc_status *out)
{
	return proc_read_status_at(NULL, tid, out);
}

int proc_read_task_status(pid_t pid, pid_t tid, struct proc_status *out)
{
	if (pid <= 0 || tid <= 0)
		return -ESRCH;
	return read_status(open_task(NULL, pid, tid, "status"), out);
}

int proc_task_owner(pid_t pid, pid_t tid, uid_t *owner)
{
	char path[64];
	struct stat st;

	if (pid <= 0 || tid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
	*owner = st.st_uid;
	return 0;
}

int proc_read_limits(pid_t pid, struct proc_rlimits *out)
{
	int r = pid > 0 ? prlimit_read(pid, out) : -EPERM;

	return r == 0 || r == -ESRCH ? r : proc_read_limits_at(NULL, pid, out);
}

int proc_read_cgroup(pid_t pid, struct proc_cgroup *out)
{
	return proc_read_cgroup_at(NULL, pid, out);
}

int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	ssize_t n;
	int fd, r;

	if (len < 2)
		return -ENOSPC;
	if ((fd = open_task(NULL, pid, tid, "comm")) < 0)
		return fd;
	/* one read, cut to the buffer: a kernel worker's name may be longer
	 * than the 16 bytes of comm */
	n = read(fd, buf, len - 1);
	r = n < 0 ? -errno : n == 0 ? -ENODATA : 0;
	close(fd);
	if (r < 0)
		return r;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int proc_read_schedstat(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count)
{
	char buf[128];
	unsigned long long a, b, c;
	int r;

	if ((r = read_task(NULL, pid, tid, "schedstat", buf, sizeof(buf), whole_line)) < 0)
		return r;
	if (sscanf(buf, "%llu %llu %llu", &a, &b, &c) != 3)
		return -EINVAL;
	*run_ns = a;
	*delay_ns = b;
	*count = c;
	return 0;
}

int proc_read_alloc(const char *path, size_t max, char **out)
{
	size_t cap = 16384, used;
	char *buf = NULL;
	int fd, r;

	*out = NULL;
	for (;;) {
		char *nb = realloc(buf, cap);

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
			r = -errno;
			break;
		}
		r = proc_read_fd(fd, buf, cap, &used);
		close(fd);
		if (r != -EFBIG || cap >= max)
			break;
		cap *= 2;
	}
	if (r < 0) {
		free(buf);
		return r;
	}
	*out = buf;
	return 0;
}

int proc_read_irq_name(int irq, char *name, size_t len)
{
	char *buf;
	/* a line per interrupt, a column per CPU: it grows with both */
	int r = proc_read_alloc("/proc/interrupts", 4 * GROW_MAX, &buf);

	if (r == 0)
		r = proc_parse_irq_name(buf, irq, name, len);
	free(buf);
	return r;
}

int proc_list_tasks(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *de;
	pid_t *v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		char *end;
		long t = strtol(de->d_name, &end, 10);

		if (*end || t <= 0)
			continue;
		if (cnt == cap) {
			pid_t *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[cnt++] = (pid_t)t;
	}
	closedir(d);
	*tids = v;
	*n = cnt;
	return 0;
}
