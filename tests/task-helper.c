/* task-helper.c: real threads for the integration tests, driven over stdin.
 *
 *   task-helper                 command loop (see below)
 *   task-helper query TID       print what the kernel reports for TID
 *   task-helper query-all TID...  the same for each, one "TID ..." line each
 *   task-helper raw SOCKET TEXT send one raw message, print each reply
 *
 * Commands, one per line; each answer is one line on stdout:
 *   spawn NAME            -> "tid NAME TID"    a thread named NAME
 *   rename NAME NEW       -> "ok"              the thread renames itself
 *   exit NAME             -> "ok"              the thread exits (joined)
 *   register NAME ROLE    -> "ok POLICY PRIO" | "err ERRNO MESSAGE"
 *                            the thread registers itself with librtsched (ROLE "-": default)
 *   register-tid TID ROLE -> same, for any tid (tests refusals)
 *   unregister NAME       -> "ok" | "err ..."
 *   pid                   -> "pid PID"
 *   quit
 * Queries use sched_getscheduler, sched_getparam and sched_getaffinity. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rtsched.h"

#define MAX_THREADS 256

struct worker {
	char name[16];
	pid_t tid;
	pthread_t th;
	int cmd[2];   /* main -> worker */
	int done[2];  /* worker -> main: one line */
	int used;
};

static struct worker workers[MAX_THREADS];

/* The kernel's view of a task, in one line. */
static void query(pid_t tid, char *buf, size_t len)
{
	struct sched_param sp;
	cpu_set_t set;
	char cpus[256] = "";
	size_t off = 0;
	int pol = sched_getscheduler(tid);

	if (pol < 0 || sched_getparam(tid, &sp) < 0 || sched_getaffinity(tid, sizeof(set), &set) < 0) {
		snprintf(buf, len, "error %s", strerror(errno));
		return;
	}
	for (int c = 0; c < CPU_SETSIZE && off < sizeof(cpus) - 8; c++)
		if (CPU_ISSET(c, &set))
			off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", off ? "," : "", c);
	int p = pol & ~SCHED_RESET_ON_FORK;
	snprintf(buf, len, "policy=%s priority=%d cpus=%s rfork=%d",
		 p == SCHED_FIFO ? "fifo" : p == SCHED_RR ? "rr" : p == SCHED_BATCH ? "batch" :
		 p == SCHED_IDLE ? "idle" : "other", sp.sched_priority, cpus, !!(pol & SCHED_RESET_ON_FORK));
}

static void reply_reg(int r, const struct rtsched_grant *g, char *out, size_t len)
{
	if (r < 0 && rtsched_last_diag()[0]) /* the diagnosis last: "err 5 MSG [diag rtprio-zero]" */
		snprintf(out, len, "err %d %s [diag %s]", -r, rtsched_last_message(), rtsched_last_diag());
	else if (r < 0)
		snprintf(out, len, "err %d %s", -r, rtsched_last_message());
	else if (g)
		snprintf(out, len, "ok %s %d", g->policy, g->priority);
	else
		snprintf(out, len, "ok");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char line[256], out[1024];

	w->tid = gettid();
	pthread_setname_np(pthread_self(), w->name);
	if (write(w->done[1], "ready\n", 6) < 0)
		return NULL;
	for (;;) {
		ssize_t n = read(w->cmd[0], line, sizeof(line) - 1);
		if (n <= 0)
			return NULL;
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		out[0] = '\0';
		if (strcmp(line, "exit") == 0) {
			return NULL;
		} else if (strncmp(line, "rename ", 7) == 0) {
			pthread_setname_np(pthread_self(), line + 7);
			snprintf(out, sizeof(out), "ok");
		} else if (strncmp(line, "register ", 9) == 0) {
			struct rtsched_request req = RTSCHED_REQUEST_INIT;
			struct rtsched_grant g;
			req.role = strcmp(line + 9, "-") ? line + 9 : NULL;
			int r = rtsched_register(&req, &g);
			reply_reg(r, &g, out, sizeof(out));
		} else if (strcmp(line, "unregister") == 0) {
			reply_reg(rtsched_unregister_self(), NULL, out, sizeof(out));
		}
		strcat(out, "\n");
		if (write(w->done[1], out, strlen(out)) < 0)
			return NULL;
	}
}

static struct worker *find(const char *name)
{
	for (int i = 0; i < MAX_THREADS; i++)
		if (workers[i].used && strcmp(workers[i].name, name) == 0)
			return &workers[i];
	return NULL;
}

/* Send a command to a worker and print its one-line answer. */
static void ask(struct worker *w, const char *cmd)
{
	char buf[1024];
	ssize_t n;

	if (write(w->cmd[1], cmd, strlen(cmd)) < 0)
		return;
	n = read(w->done[0], buf, sizeof(buf) - 1);
	if (n > 0)
		fwrite(buf, 1, (size_t)n, stdout);
}

static int raw(const char *path, const char *text)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[8192];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ssize_t n;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 2;
	}
	if (send(fd, text, strlen(text), 0) < 0) {
		perror("send");
		return 2;
	}
	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		printf("%s\n", buf);
		if (strncmp(buf, "ROW", 3) != 0)
			break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char line[512], a[64], b[64], out[512];

	if (argc == 3 && strcmp(argv[1], "query") == 0) {
		query(atoi(argv[2]), out, sizeof(out));
		printf("%s\n", out);
		return strncmp(out, "error", 5) == 0;
	}
	if (argc >= 3 && strcmp(argv[1], "query-all") == 0) {
		int bad = 0;

		for (int i = 2; i < argc; i++) {
			query(atoi(argv[i]), out, sizeof(out));
			printf("%s %s\n", argv[i], out);
			bad |= strncmp(out, "error", 5) == 0;
		}
		return bad;
	}
	if (argc == 4 && strcmp(argv[1], "raw") == 0)
		return raw(argv[2], argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		struct worker *w;

		a[0] = b[0] = '\0';
		if (sscanf(line, "spawn %15s", a) == 1) {
			int i;
			for (i = 0; i < MAX_THREADS && workers[i].used; i++)
				;
			if (i == MAX_THREADS || pipe(workers[i].cmd) < 0 || pipe(workers[i].done) < 0) {
				printf("err spawn\n");
				continue;
			}
			w = &workers[i];
			w->used = 1;
			snprintf(w->name, sizeof(w->name), "%s", a);
			pthread_create(&w->th, NULL, worker_main, w);
			if (read(w->done[0], line, 6) != 6)
				return 1;
			printf("tid %s %d\n", a, w->tid);
		} else if (sscanf(line, "rename %63s %63s", a, b) == 2 && (w = find(a))) {
			snprintf(line, sizeof(line), "rename %s\n", b);
			ask(w, line);
			snprintf(w->name, sizeof(w->name), "%s", b);
		} else if (sscanf(line, "exit %63s", a) == 1 && (w = find(a))) {
			if (write(w->cmd[1], "exit\n", 5) < 0)
				return 1;
			pthread_join(w->th, NULL);
			close(w->cmd[0]); close(w->cmd[1]); close(w->done[0]); close(w->done[1]);
			w->used = 0;
			printf("ok\n");
		} else if (sscanf(line, "register-tid %63s %63s", a, b) == 2) {
			struct rtsched_request req = RTSCHED_REQUEST_INIT;
			struct rtsched_grant g;
			req.tid = atoi(a);
			req.role = strcmp(b, "-") ? b : NULL;
			reply_reg(rtsched_register(&req, &g), &g, out, sizeof(out));
			printf("%s\n", out);
		} else if (sscanf(line, "register %63s %63s", a, b) == 2 && (w = find(a))) {
			snprintf(line, sizeof(line), "register %s\n", b);
			ask(w, line);
		} else if (sscanf(line, "unregister %63s", a) == 1 && (w = find(a))) {
			ask(w, "unregister\n");
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
