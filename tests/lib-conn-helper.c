/* lib-conn-helper.c: a librtsched client for tests/lib-conn.sh, driven over
 * stdin, one answer line per command on stdout. Every check of the calling
 * thread's scheduling reads what the kernel reports (sched_getscheduler,
 * sched_getparam), never what the library replied.
 *
 *   reg ROLE N         the main thread registers itself N times with ROLE
 *                      -> "ok N" | "err I ERRNO MESSAGE" (call I failed)
 *                      | "wrong I POLICY PRIO" (kernel disagrees after call I)
 *   alt ROLE1 ROLE2 N  N registrations alternating ROLE1 (fifo 10) and ROLE2
 *                      (fifo 11), the kernel checked after each -> as reg
 *   threads T N        T threads at once, each registering itself N times,
 *                      alternating bench roles a (fifo 10) / b (fifo 11) and
 *                      checking the kernel after each -> "ok" | "err ..."
 *   fork ROLE          fork(); the child registers its own main thread with
 *                      ROLE and waits -> "child PID ok" | "child PID err E MSG"
 *   release            let the child exit and reap it -> "ok"
 *   clobber            close the library's socket behind its back and put
 *                      /dev/null on that descriptor number, as a program
 *                      closing every descriptor would -> "ok FD" | "err ..."
 *   disconnect         rtsched_disconnect() -> "ok"
 *   pid                -> "pid PID"
 *   quit */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtsched.h"

/* The calling thread is SCHED_FIFO at prio, as the kernel reports it. */
static int is_fifo(int prio)
{
	struct sched_param sp;
	int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;

	return pol == SCHED_FIFO && sched_getparam(0, &sp) == 0 && sp.sched_priority == prio;
}

/* n registrations cycling through roles[] (whose FIFO priorities are
 * prios[]); an answer line into out. 0 or -1. */
static int reg_loop(const char *const *roles, const int *prios, int nroles, int n, char *out, size_t len)
{
	for (int i = 0; i < n; i++) {
		int k = i % nroles, r = rtsched_register_self(roles[k]);

		if (r < 0) {
			snprintf(out, len, "err %d %d %s", i, -r, rtsched_last_message());
			return -1;
		}
		if (prios[k] > 0 && !is_fifo(prios[k])) {
			snprintf(out, len, "wrong %d policy %d", i, sched_getscheduler(0));
			return -1;
		}
	}
	snprintf(out, len, "ok %d", n);
	return 0;
}

/* The first socket among this process's descriptors, or -1. */
static int find_socket(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[64];
	int fd = -1;

	while (d && (e = readdir(d))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = '\0', strncmp(target, "socket:", 7) == 0)) {
			fd = atoi(e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	return fd;
}

struct worker {
	pthread_t th;
	int n;
	char out[256];
};

static void *worker_main(void *arg)
{
	static const char *const roles[] = { "bench-a", "bench-b" };
	static const int prios[] = { 10, 11 };
	struct worker *w = arg;

	reg_loop(roles, prios, 2, w->n, w->out, sizeof(w->out));
	rtsched_unregister_self();
	return NULL;
}

int main(void)
{
	char line[512], a[64], b[64], out[1024];
	int release[2] = { -1, -1 };
	pid_t child = -1;
	int n, t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "reg %63s %d", a, &n) == 2) {
			const char *roles[] = { a };
			int prios[] = { 0 };

			reg_loop(roles, prios, 1, n, out, sizeof(out));
			printf("%s\n", out);
		} else if (sscanf(line, "alt %63s %63s %d", a, b, &n) == 3) {
			const char *roles[] = { a, b };
			int prios[] = { 10, 11 };

			reg_loop(roles, prios, 2, n, out, sizeof(out));
			printf("%s\n", out);
		} else if (sscanf(line, "threads %d %d", &t, &n) == 2 && t > 0) {
			struct worker *ws = calloc((size_t)t, sizeof(*ws));

			for (int i = 0; ws && i < t; i++) {
				ws[i].n = n;
				pthread_create(&ws[i].th, NULL, worker_main, &ws[i]);
			}
			snprintf(out, sizeof(out), "ok");
			for (int i = 0; ws && i < t; i++) {
				pthread_join(ws[i].th, NULL);
				if (strncmp(ws[i].out, "ok", 2) != 0)
					snprintf(out, sizeof(out), "thread %d: %.256s", i, ws[i].out);
			}
			free(ws);
			printf("%s\n", ws ? out : "err calloc");
		} else if (sscanf(line, "fork %63s", a) == 1) {
			if (pipe(release) < 0) {
				printf("err pipe\n");
				continue;
			}
			fflush(stdout);
			child = fork();
			if (child == 0) {
				int r = rtsched_register_self(a);
				char c;

				if (r < 0)
					snprintf(out, sizeof(out), "child %d err %d %s", getpid(), -r, rtsched_last_message());
				else
					snprintf(out, sizeof(out), "child %d ok", getpid());
				printf("%s\n", out);
				fflush(stdout);
				close(release[1]);
				if (read(release[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
			close(release[0]);
			if (child < 0)
				printf("err fork\n");
			/* the child's line is the answer */
		} else if (strncmp(line, "release", 7) == 0) {
			close(release[1]);
			if (child > 0)
				waitpid(child, NULL, 0);
			child = -1;
			printf("ok\n");
		} else if (strncmp(line, "clobber", 7) == 0) {
			int fd = find_socket(), nul = open("/dev/null", O_WRONLY | O_CLOEXEC);

			if (fd < 0 || nul < 0 || close(fd) < 0 || dup2(nul, fd) < 0)
				printf("err clobber\n");
			else
				printf("ok %d\n", fd);
			if (nul >= 0 && nul != fd)
				close(nul);
		} else if (strncmp(line, "disconnect", 10) == 0) {
			printf("%s\n", rtsched_disconnect() == 0 ? "ok" : "err");
		} else if (strncmp(line, "pid", 3) == 0) {
			printf("pid %d\n", getpid());
		} else if (strncmp(line, "quit", 4) == 0) {
			return 0;
		} else {
			printf("err unknown command\n");
		}
	}
	return 0;
}
