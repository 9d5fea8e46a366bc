/* bench-startup.c: how long rtschedd takes to start (issue 28): exec to
 * READY=1, the moment systemd's Type=notify counts the service as started
 * (the control socket listens, the BPF observer is loaded, the privileges
 * are dropped), against its floors, in interleaved rounds so a load burst
 * hits every series alike:
 *
 *   bench-startup [-n ROUNDS] [-o CSV] [-c CDF] -d RTSCHEDD -s DIR CONF_ON CONF_OFF
 *
 * Per round, in turn:
 *   exec floor       this program re-executed (linked with libsystemd as the
 *                    daemon is) sending READY=1 as its first act: fork, exec,
 *                    dynamic linking, one notification;
 *   BPF load alone   the observer loaded in this process (bpfobs_new, 64
 *                    slots as the daemon's default, timed; then freed,
 *                    untimed; needs CAP_BPF + CAP_PERFMON: run as root);
 *   iterators alone  the watchdog's BPF task iterators loaded in this
 *                    process (tasks_new; the daemon loads them whenever its
 *                    watchdog is on, the default, observer or not);
 *   rtschedd off     RTSCHEDD --config CONF_OFF (observe-threads = 0);
 *   rtschedd on      RTSCHEDD --config CONF_ON (the observer loads).
 * The daemons run with NOTIFY_SOCKET set to a datagram socket of this
 * program and --socket DIR/control; each is stopped with SIGTERM once ready
 * and must exit 0. Prints p50, p90 and max per series; writes CSV rows
 * (series,samples,failed,p50_us,p90_us,p99_us,max_us,mean_us) and a CDF.
 * Exits 1 if a daemon failed to start or to stop cleanly, 2 on usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "bench-common.h"
#include "daemon/observe/bpf/bpfobs.h"
#include "daemon/observe/bpf/tasks.h"

#define READY_TIMEOUT_MS 20000

extern char **environ;

enum series { S_FLOOR, S_BPF, S_TASKS, S_OFF, S_ON, S__MAX };
static const char *const names[S__MAX] = {
	[S_FLOOR] = "exec floor (exec + READY=1)",
	[S_BPF] = "BPF load alone (bpfobs_new)",
	[S_TASKS] = "task iterators alone (tasks_new)",
	[S_OFF] = "rtschedd, observer off",
	[S_ON] = "rtschedd, observer on",
};
static const char *const keys[S__MAX] = { "floor-exec", "bpf-load", "tasks-load", "rtschedd-off", "rtschedd-on" };

/* Wait for a datagram holding the line READY=1; 0, or -ETIMEDOUT, or
 * -ECHILD if pid exited first (its status in *st). */
static int wait_ready(int fd, pid_t pid, int *st)
{
	double t0 = bench_now_us();
	char buf[4096];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = READY_TIMEOUT_MS - (int)((bench_now_us() - t0) / 1000);
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, left < 50 ? left : 50) == 0) {
			if (pid > 0 && waitpid(pid, st, WNOHANG) == pid)
				return -ECHILD;
			continue;
		}
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			continue;
		buf[n] = '\0';
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (strncmp(l, "READY=1", 7) == 0 && (l[7] == '\n' || l[7] == '\0'))
				return 0;
	}
}

/* Spawn argv with NOTIFY_SOCKET=path, time exec -> READY=1 in us (-1 on
 * failure, said on stderr), then stop it with SIGTERM (if stop) and check
 * that it exits 0. */
static double time_start(char *const argv[], const char *notify, int fd, int stop)
{
	char env_notify[256], *env[64];
	posix_spawn_file_actions_t fa;
	size_t k = 0;
	double t0, t;
	pid_t pid;
	int st = 0, r;

	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", notify);
	env[k++] = env_notify;
	for (char **e = environ; *e && k < 63; e++)
		if (strncmp(*e, "NOTIFY_SOCKET=", 14) != 0)
			env[k++] = *e;
	env[k] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = bench_now_us();
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		fprintf(stderr, "bench-startup: %s: %s\n", argv[0], strerror(r));
		return -1;
	}
	r = wait_ready(fd, pid, &st);
	t = bench_now_us() - t0;
	if (r == -ECHILD) {
		fprintf(stderr, "bench-startup: %s exited before READY=1 (status %d)\n", argv[0], st);
		return -1;
	}
	if (r < 0) {
		fprintf(stderr, "bench-startup: %s sent no READY=1 within %d ms\n", argv[0], READY_TIMEOUT_MS);
		kill(pid, SIGKILL);
		t = -1;
	} else if (stop) {
		kill(pid, SIGTERM);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (t >= 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		fprintf(stderr, "bench-startup: %s did not exit cleanly (status %d)\n", argv[0], st);
		return -1;
	}
	return t;
}

/* The BPF observer loaded and freed here, in us; -1 (said once) if it cannot load. */
static double time_bpf(void)
{
	static int said;
	struct bpfobs *o = NULL;
	char why[256] = "";
	double t0 = bench_now_us(), t;
	/* as the daemon loads it by default: with culprit tracking */
	int r = bpfobs_new(&o, 64, true, why, sizeof(why));

	t = bench_now_us() - t0;
	if (r < 0) {
		if (!said++)
			fprintf(stderr, "bench-startup: the BPF observer does not load here: %s\n", why);
		return -1;
	}
	bpfobs_free(o); /* not timed: a start-up only loads */
	return t;
}

/* The watchdog's task iterators loaded and freed here, in us; -1 (said
 * once) if they cannot load. */
static double time_tasks(void)
{
	static int said;
	struct tasks *t = NULL;
	char why[256] = "";
	double t0 = bench_now_us(), t1;
	int r = tasks_new(&t, why, sizeof(why));

	t1 = bench_now_us() - t0;
	if (r < 0) {
		if (!said++)
			fprintf(stderr, "bench-startup: the task iterators do not load here: %s\n", why);
		return -1;
	}
	tasks_free(t);
	return t1;
}

struct samples {
	double *v;
	size_t n, failed;
};

static void add(struct samples *s, double t)
{
	if (t < 0)
		s->failed++;
	else
		s->v[s->n++] = t;
}

int main(int argc, char **argv)
{
	const char *csv = NULL, *cdf = NULL, *daemon = NULL, *dir = NULL;
	char notify[200], sock[200], self[4096], ready_now[] = "--ready-now", config[] = "--config",
		socket_opt[] = "--socket";
	struct samples s[S__MAX];
	int rounds = 10, opt, fd, bad = 0;
	ssize_t n;
	FILE *out;

	if (argc == 2 && strcmp(argv[1], "--ready-now") == 0)
		return sd_notify(0, "READY=1") > 0 ? 0 : 1;
	while ((opt = getopt(argc, argv, "n:o:c:d:s:")) != -1) {
		switch (opt) {
		case 'n': rounds = atoi(optarg); break;
		case 'o': csv = optarg; break;
		case 'c': cdf = optarg; break;
		case 'd': daemon = optarg; break;
		case 's': dir = optarg; break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || !daemon || !dir || rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: bench-startup [-n ROUNDS] [-o CSV] [-c CDF] -d RTSCHEDD -s DIR CONF_ON CONF_OFF\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 1;
	self[n] = '\0';
	snprintf(notify, sizeof(notify), "%s/notify", dir);
	snprintf(sock, sizeof(sock), "%s/control", dir);
	fd = bench_notify_socket(notify);
	if (fd < 0) {
		fprintf(stderr, "bench-startup: %s: %s\n", notify, strerror(-fd));
		return 1;
	}
	for (int k = 0; k < S__MAX; k++) {
		s[k].v = calloc((size_t)rounds, sizeof(double));
		s[k].n = s[k].failed = 0;
		if (!s[k].v)
			return 1;
	}
	char *floor_argv[] = { self, ready_now, NULL };
	char *on_argv[] = { (char *)daemon, config, argv[optind], socket_opt, sock, NULL };
	char *off_argv[] = { (char *)daemon, config, argv[optind + 1], socket_opt, sock, NULL };
	/* one untimed start of each: the page cache and the dynamic linker's
	 * caches warm, as on a machine that has run rtschedd before */
	time_start(floor_argv, notify, fd, 0);
	time_bpf();
	time_tasks();
	time_start(off_argv, notify, fd, 1);
	time_start(on_argv, notify, fd, 1);
	for (int i = 0; i < rounds; i++) {
		add(&s[S_FLOOR], time_start(floor_argv, notify, fd, 0));
		add(&s[S_BPF], time_bpf());
		add(&s[S_TASKS], time_tasks());
		add(&s[S_OFF], time_start(off_argv, notify, fd, 1));
		add(&s[S_ON], time_start(on_argv, notify, fd, 1));
	}
	out = bench_open_csv(csv, "series,samples,failed,p50_us,p90_us,p99_us,max_us,mean_us");
	printf("%-38s %8s %6s %10s %10s %10s %10s\n", "series", "samples", "failed", "p50_ms", "p90_ms", "max_ms",
	       "mean_ms");
	for (int k = 0; k < S__MAX; k++) {
		struct samples *x = &s[k];

		qsort(x->v, x->n, sizeof(double), bench_cmp);
		if (k != S_BPF && k != S_TASKS)
			bad += x->failed > 0;
		if (x->n == 0) {
			printf("%-38s %8zu %6zu %10s\n", names[k], x->n, x->failed, "-");
			continue;
		}
		printf("%-38s %8zu %6zu %10.2f %10.2f %10.2f %10.2f\n", names[k], x->n, x->failed,
		       bench_pct(x->v, x->n, 50) / 1000, bench_pct(x->v, x->n, 90) / 1000, x->v[x->n - 1] / 1000,
		       bench_mean(x->v, x->n) / 1000);
		if (out)
			fprintf(out, "%s,%zu,%zu,%.1f,%.1f,%.1f,%.1f,%.1f\n", keys[k], x->n, x->failed,
				bench_pct(x->v, x->n, 50), bench_pct(x->v, x->n, 90), bench_pct(x->v, x->n, 99),
				x->v[x->n - 1], bench_mean(x->v, x->n));
		bench_write_cdf(cdf, keys[k], x->v, x->n);
	}
	if (out)
		fclose(out);
	for (int k = 0; k < S__MAX; k++)
		free(s[k].v);
	close(fd);
	unlink(notify);
	return bad ? 1 : 0;
}
