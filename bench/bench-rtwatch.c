/* bench-rtwatch.c: who else runs real-time on this machine while the
 * benchmarks run. A SCHED_FIFO or SCHED_RR task of some other program (a test
 * suite's runaway thread, an audio server) preempts everything the
 * benchmarks measure, so each section of run.sh says what it saw.
 *
 *   bench-rtwatch ROOT_PID LOG [INTERVAL_MS]
 *
 * Every INTERVAL_MS (default 500) it walks /proc and appends one line per
 * real-time task that is neither a kernel thread nor in a process descending
 * from ROOT_PID (run.sh itself), to LOG:
 *     <CLOCK_BOOTTIME seconds> <pid> <tid> <policy> <priority> <process comm>/<thread comm> <state>
 * (the clock of /proc/uptime, so the shell can cut the log by section). It
 * reads the threads of foreign processes only, forks nothing and exits when
 * ROOT_PID does. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Fields of /proc/.../stat we need: comm, state, ppid, rt_priority, policy. 0 or -1. */
static int read_stat(const char *path, char *comm, size_t len, char *state, int *ppid, int *prio, int *policy)
{
	char buf[1024], *open_paren, *close_paren, *p;
	size_t n;
	FILE *f = fopen(path, "r");
	int field = 3;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -1;
	n = (size_t)(close_paren - open_paren - 1);
	if (n >= len)
		n = len - 1;
	memcpy(comm, open_paren + 1, n);
	comm[n] = '\0';
	for (char *c = comm; *c; c++)
		if (!isgraph((unsigned char)*c))
			*c = '_';
	*ppid = *prio = *policy = -1;
	/* after ") ": field 3 is state; ppid is 4, rt_priority 40, policy 41 */
	for (p = strtok(close_paren + 2, " "); p; p = strtok(NULL, " "), field++) {
		if (field == 3)
			*state = *p;
		else if (field == 4)
			*ppid = atoi(p);
		else if (field == 40)
			*prio = atoi(p);
		else if (field == 41) {
			*policy = atoi(p);
			break;
		}
	}
	return *policy < 0 ? -1 : 0;
}

/* 1 if pid is root or descends from it, 0 if not, -1 for a kernel thread. */
static int ours(int pid, int root)
{
	char path[64], comm[64], state;
	int ppid, prio, policy;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		if (pid == root)
			return 1;
		if (pid == 2)
			return -1; /* kthreadd and its children */
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_stat(path, comm, sizeof(comm), &state, &ppid, &prio, &policy) < 0)
			return 0;
		if (ppid == 2 || ppid == 0)
			return ppid == 2 ? -1 : 0;
		pid = ppid;
	}
	return 0;
}

static double boottime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One pass over /proc: log the foreign real-time tasks. */
static void scan(int root, FILE *log)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	double now = boottime();

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[300], pcomm[64], tcomm[64], state = '?';
		int pid = atoi(de->d_name), ppid, prio, policy;
		struct dirent *te;
		DIR *td;

		if (pid <= 0 || ours(pid, root) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (read_stat(path, pcomm, sizeof(pcomm), &state, &ppid, &prio, &policy) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		if (!(td = opendir(path)))
			continue;
		while ((te = readdir(td))) {
			int tid = atoi(te->d_name);

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
			if (read_stat(path, tcomm, sizeof(tcomm), &state, &ppid, &prio, &policy) < 0)
				continue;
			policy &= ~SCHED_RESET_ON_FORK;
			if (policy == SCHED_FIFO || policy == SCHED_RR)
				fprintf(log, "%.2f %d %d %s %d %s/%s %c\n", now, pid, tid,
					policy == SCHED_FIFO ? "fifo" : "rr", prio, pcomm, tcomm, state);
		}
		closedir(td);
	}
	closedir(d);
	fflush(log);
}

int main(int argc, char **argv)
{
	struct timespec ts;
	int root, ms;
	FILE *log;

	if (argc < 3)
		return 64;
	root = atoi(argv[1]);
	ms = argc > 3 ? atoi(argv[3]) : 500;
	if (root <= 1 || ms < 10 || !(log = fopen(argv[2], "a")))
		return 64;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (kill(root, 0) == 0 || errno == EPERM) {
		scan(root, log);
		nanosleep(&ts, NULL);
	}
	return 0;
}
