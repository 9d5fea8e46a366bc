/* proc.c: /proc readers (see proc.h). */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/proc.h"

int proc_parse_stat(const char *buf, struct proc_stat *out)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	unsigned long long start;
	size_t n;
	int ppid;
	char state;

	if (!open || !close || close < open)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > PROC_COMM_MAX)
		return -EINVAL;
	/* after ") ": state ppid pgrp session tty_nr tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	if (sscanf(close + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &state, &ppid, &start) != 3)
		return -EINVAL;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = '\0';
	out->state = state;
	out->ppid = ppid;
	out->starttime = start;
	return 0;
}

int proc_parse_status(const char *buf, struct proc_status *out)
{
	const char *t = strstr(buf, "\nTgid:"), *u = strstr(buf, "\nUid:"), *g = strstr(buf, "\nGid:");
	int tgid;
	unsigned uid, euid, gid;

	if (!t || !u || !g || sscanf(t, "\nTgid: %d", &tgid) != 1 || sscanf(u, "\nUid: %u %u", &uid, &euid) != 2 ||
	    sscanf(g, "\nGid: %u", &gid) != 1 || tgid <= 0)
		return -EINVAL;
	out->tgid = tgid;
	out->uid = uid;
	out->euid = euid;
	out->gid = gid;
	return 0;
}

/* Read a small /proc file whole; -ESRCH when the task is gone. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = errno;
		close(fd);
		return e == ESRCH ? -ESRCH : -e;
	}
	close(fd);
	buf[n] = '\0';
	return n == 0 ? -ESRCH : 0;
}

int proc_read_stat(pid_t tid, struct proc_stat *out)
{
	char path[64], buf[1024];
	int r;

	/* /proc/TID/task/TID/stat, not /proc/TID/stat: the latter is the
	 * thread-group view, which sums over every thread of the process
	 * (O(threads) per read, O(n^2) for a list of one big process) */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)tid, (int)tid);
	if ((r = read_small(path, buf, sizeof(buf))) < 0)
		return r;
	return proc_parse_stat(buf, out);
}

int proc_read_status(pid_t tid, struct proc_status *out)
{
	char path[64], buf[4096];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((r = read_small(path, buf, sizeof(buf))) < 0)
		return r;
	return proc_parse_status(buf, out);
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

int proc_read_text(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return read_small(path, buf, len);
}

int proc_read_schedstat(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count)
{
	char path[64], buf[128];
	unsigned long long a, b, c;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	if ((r = read_small(path, buf, sizeof(buf))) < 0)
		return r;
	if (sscanf(buf, "%llu %llu %llu", &a, &b, &c) != 3)
		return -EINVAL;
	*run_ns = a;
	*delay_ns = b;
	*count = c;
	return 0;
}
