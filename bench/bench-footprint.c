/* bench-footprint.c: what rtschedd costs the machine.
 *
 *   bench-footprint [-o CSV] idle SECONDS PID[:LABEL]...
 *       Watches up to 8 processes together for SECONDS without starting any process (no
 *       fork/exec of its own that would wake a daemon listening to the
 *       process events connector) and reports its RSS, its CPU time (sum of
 *       every thread's schedstat run time, ns resolution), its wake-ups per
 *       second (context switches of all its threads) and, for context, how
 *       many tasks the whole machine created meanwhile (/proc/stat
 *       "processes").
 *
 *   bench-footprint -p PID -s SOCKET -C RTSCHEDCTL [-P PROCS] [-b SECS] [-l LABEL] [-N NOTIFY] [-o CSV] scale N
 *       Creates N idle threads (spread over PROCS processes, default 1),
 *       registers each through librtsched
 *       (rtsched_register with its tid, role bench-a: FIFO 10), then times
 *       `rtschedctl reload` (re-applies all), `rtschedctl list` and
 *       `rtschedctl --json jitter` (each run 3 times, the median; once if
 *       the first run takes over a second), with
 *       `rtschedctl version` as the cost of starting rtschedctl itself; with
 *       -N NOTIFY (the path of the daemon's NOTIFY_SOCKET, which this
 *       program binds) also SIGHUP -> READY=1 (the reload as systemd's
 *       Type=notify-reload sees it end: every thread re-applied, /proc
 *       rescanned), beside two floors: the reapply's kernel calls alone
 *       (sched_setattr + sched_getattr + sched_getaffinity per thread, as
 *       the daemon makes them, from here) and the rescan's walk alone (every
 *       /proc/PID/task directory listed), each the median of 3; and
 *       reports the daemon's RSS growth per managed thread and the daemon's
 *       own CPU time for each step. Finally lets the threads exit and times
 *       how long rtschedd takes to notice that all N are gone. Registering
 *       stops after SECS (default 60) so a slow daemon cannot stall the run;
 *       the table says so when it happens; waiting for rtschedd to forget
 *       the exited threads stops after -x SECS (default 20). LABEL is added to the layout
 *       column ("1000 in 1 proc LABEL").
 *       Checks with sched_getscheduler that every thread is FIFO after the
 *       registrations and after the reload; exits 1 if not. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"
#include "rtsched.h"

#define REPEAT 3

extern char **environ;

/* VmRSS of pid in KiB, or -1. */
static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

struct usage {
	uint64_t run_ns;   /* CPU time of all threads */
	uint64_t switches; /* voluntary + involuntary context switches of all threads */
	int threads;
};

/* Sum schedstat run time and context switches over pid's threads. */
static int usage_of(pid_t pid, struct usage *u)
{
	char path[320], line[256];
	struct dirent *de;
	DIR *d;

	memset(u, 0, sizeof(*u));
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long run = 0, v;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		u->threads++;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &run) == 1)
				u->run_ns += run;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
				    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
					u->switches += v;
			fclose(f);
		}
	}
	closedir(d);
	return 0;
}

/* Tasks created on the whole machine since boot (/proc/stat "processes"). */
static unsigned long long forks_total(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "processes %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int cmd_idle(int argc, char **argv, const char *csv)
{
	int n = argc - 2;
	pid_t pid[8];
	const char *label[8];
	struct usage a[8], b[8];
	unsigned long long f0, f1;
	struct timespec ts;
	double secs, t0, t1;
	FILE *f;

	if (n < 1 || n > 8)
		return 64;
	secs = atof(argv[1]);
	for (int i = 0; i < n; i++) {
		char *colon = strchr(argv[2 + i], ':');
		pid[i] = atoi(argv[2 + i]);
		label[i] = colon ? colon + 1 : "rtschedd";
		if (usage_of(pid[i], &a[i]) < 0) {
			fprintf(stderr, "bench-footprint: no process %d\n", (int)pid[i]);
			return 1;
		}
	}
	f0 = forks_total();
	t0 = bench_now_us();
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	t1 = bench_now_us();
	f1 = forks_total();
	secs = (t1 - t0) / 1e6;
	f = bench_open_csv(csv, "daemon,seconds,rss_kib,threads,cpu_ms,cpu_percent,wakeups_per_s,machine_forks_per_s");
	for (int i = 0; i < n; i++) {
		long rss = rss_kib(pid[i]);
		double cpu_ms;

		usage_of(pid[i], &b[i]);
		cpu_ms = (double)(b[i].run_ns - a[i].run_ns) / 1e6;
		printf("%-30s %8ld %7d %10.3f %9.4f %9.2f %10.1f\n", label[i], rss, b[i].threads, cpu_ms,
		       cpu_ms / 10 / secs, (double)(b[i].switches - a[i].switches) / secs, (double)(f1 - f0) / secs);
		if (f)
			fprintf(f, "%s,%.1f,%ld,%d,%.3f,%.4f,%.2f,%.1f\n", label[i], secs, rss, b[i].threads, cpu_ms,
				cpu_ms / 10 / secs, (double)(b[i].switches - a[i].switches) / secs,
				(double)(f1 - f0) / secs);
	}
	if (f)
		fclose(f);
	return 0;
}

/* --- scale ------------------------------------------------------------------ */

/* Shared with the child processes that hold the threads. */
struct shared {
	atomic_int started;
	pid_t tids[];
};

static struct shared *sh;
static double exit_cap_s = 20; /* -x: how long to wait for rtschedd to forget exited threads */
static int release[2]; /* the threads block reading [0] until every [1] is closed */

static void *idle_main(void *arg)
{
	char c;

	sh->tids[(intptr_t)arg] = gettid();
	atomic_fetch_add(&sh->started, 1);
	while (read(release[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* A child process holding threads [from, to): it exits when they are released. */
static void holder(int from, int to)
{
	pthread_attr_t attr;
	pthread_t th;
	char c;

	close(release[1]);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = from; i < to; i++)
		if (pthread_create(&th, &attr, idle_main, (void *)(intptr_t)i) != 0) {
			fprintf(stderr, "bench-footprint: only %d threads\n", i);
			_exit(1);
		}
	while (read(release[0], &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* Run `ctl --socket sock ARGS...` with stdout to /dev/null; wall time in us,
 * or -1 if it failed. */
static double run_ctl(const char *ctl, const char *sock, const char *a1, const char *a2)
{
	const char *argv[] = { ctl, "--socket", sock, a1, a2, NULL };
	posix_spawn_file_actions_t fa;
	double t0, t;
	pid_t child;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, release[1]);
	t0 = bench_now_us();
	if (posix_spawn(&child, ctl, &fa, NULL, (char **)argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	t = bench_now_us() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

/* Median of REPEAT runs of a command, and the daemon's CPU time per run;
 * -1 if a run failed (then no more runs). */
static double time_ctl(const char *ctl, const char *sock, pid_t dpid, const char *a1, const char *a2, double *cpu_ms)
{
	double t[REPEAT];
	struct usage u0, u1;
	int i;

	usage_of(dpid, &u0);
	for (i = 0; i < REPEAT; i++) {
		if ((t[i] = run_ctl(ctl, sock, a1, a2)) < 0)
			break;
		if (i == 0 && t[0] > 1e6) { /* slow: once is enough */
			usage_of(dpid, &u1);
			*cpu_ms = (double)(u1.run_ns - u0.run_ns) / 1e6;
			return t[0];
		}
	}
	usage_of(dpid, &u1);
	*cpu_ms = (double)(u1.run_ns - u0.run_ns) / 1e6 / (i < REPEAT ? i + 1 : REPEAT);
	if (i < REPEAT)
		return -1;
	qsort(t, REPEAT, sizeof(double), bench_cmp);
	return t[REPEAT / 2];
}

/* Threads of ours that the kernel reports as SCHED_FIFO. */
/* -N: the daemon's NOTIFY_SOCKET, bound and read here all along, as
 * systemd does: sd_notify() blocks once the socket's queue is full (the
 * daemon sends STATUS= as its thread count changes), which stalled the
 * registrations before this thread drained it. It counts the READY=1 that
 * end a reload (the first after a RELOADING=1) and when the last came. */
static int notify_fd = -1;
static atomic_int reloads_ready;
static _Atomic double ready_at_us;

static void *notify_drain(void *arg)
{
	char buf[4096];
	int reloading = 0;

	(void)arg;
	for (;;) {
		ssize_t n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
		double t = bench_now_us();

		if (n < 0 && errno != EINTR)
			return NULL;
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (strstr(buf, "RELOADING=1"))
			reloading = 1;
		if (reloading && (strncmp(buf, "READY=1", 7) == 0 || strstr(buf, "\nREADY=1"))) {
			reloading = 0;
			atomic_store(&ready_at_us, t);
			atomic_fetch_add(&reloads_ready, 1);
		}
	}
}

/* Bind the daemon's notification socket and start draining it; 0 or -errno. */
static int notify_bind(const char *path)
{
	pthread_t th;

	notify_fd = bench_notify_socket(path);
	if (notify_fd < 0)
		return notify_fd;
	if (pthread_create(&th, NULL, notify_drain, NULL) != 0)
		return -EAGAIN;
	pthread_detach(th);
	return 0;
}

/* SIGHUP to the daemon, then the time until it says READY=1 after its
 * RELOADING=1 (when the drain thread received it), in us; -1 if that takes
 * over 60 s. */
static double sighup_ready(pid_t dpid)
{
	int before;
	double t0;

	usleep(50000); /* what an earlier reload sent is counted by now */
	before = atomic_load(&reloads_ready);
	t0 = bench_now_us();

	if (kill(dpid, SIGHUP) < 0)
		return -1;
	while (atomic_load(&reloads_ready) == before) {
		if (bench_now_us() - t0 > 60e6)
			return -1;
		usleep(200);
	}
	return atomic_load(&ready_at_us) - t0;
}

/* The kernel's struct sched_attr, SCHED_ATTR_SIZE_VER0 (as task.c). */
struct bench_sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

/* The reapply's kernel calls alone, from here: per thread what the daemon
 * sets (its policy as read, written back) and reads back; in us. */
static double reapply_floor(int n)
{
	double t0 = bench_now_us();
	cpu_set_t cpus;

	for (int i = 0; i < n; i++) {
		struct bench_sched_attr a = { .size = sizeof(a) };

		if (syscall(SYS_sched_getattr, sh->tids[i], &a, sizeof(a), 0) < 0)
			return -1;
		a.size = sizeof(a);
		if (syscall(SYS_sched_setattr, sh->tids[i], &a, 0) < 0 ||
		    syscall(SYS_sched_getattr, sh->tids[i], &a, sizeof(a), 0) < 0 ||
		    sched_getaffinity(sh->tids[i], sizeof(cpus), &cpus) < 0)
			return -1;
	}
	return bench_now_us() - t0;
}

/* The rescan's walk alone: every task's directory listed under /proc (what
 * any rescan must read; the daemon reads the name only of tasks it does
 * not manage yet); in us. */
static double scan_floor(void)
{
	double t0 = bench_now_us();
	struct dirent *de;
	DIR *proc = opendir("/proc"), *task;
	char path[300];
	long n = 0;

	if (!proc)
		return -1;
	while ((de = readdir(proc))) {
		int fd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/task", de->d_name);
		if ((fd = openat(dirfd(proc), path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (!(task = fdopendir(fd))) {
			close(fd);
			continue;
		}
		while (readdir(task))
			n++;
		closedir(task);
	}
	closedir(proc);
	return n > 0 ? bench_now_us() - t0 : -1;
}

/* Median of REPEAT runs of f (us), and the daemon's CPU time per run; -1
 * if one failed. */
static double median3(double (*f)(void *), void *arg, pid_t dpid, double *cpu_ms)
{
	double t[REPEAT];
	struct usage u0, u1;

	usage_of(dpid, &u0);
	for (int i = 0; i < REPEAT; i++)
		if ((t[i] = f(arg)) < 0)
			return -1;
	usage_of(dpid, &u1);
	*cpu_ms = (double)(u1.run_ns - u0.run_ns) / 1e6 / REPEAT;
	qsort(t, REPEAT, sizeof(double), bench_cmp);
	return t[REPEAT / 2];
}

static double f_sighup(void *arg) { return sighup_ready(*(pid_t *)arg); }
static double f_reapply(void *arg) { return reapply_floor(*(int *)arg); }
static double f_scan(void *arg) { (void)arg; return scan_floor(); }

static int count_fifo(int n)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		if ((sched_getscheduler(sh->tids[i]) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO)
			c++;
	return c;
}

/* Threads rtschedd reports managing ("threads" of `--json status`), or -1. */
static long managed(const char *ctl, const char *sock)
{
	char cmd[1024], buf[4096], *p;
	long v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --socket '%s' --json status 2>/dev/null", ctl, sock);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strstr(buf, "\"threads\":")))
		v = strtol(p + 10, NULL, 10);
	pclose(f);
	return v;
}

static void print_step(FILE *csv, const char *layout, const char *step, double ms, double cpu_ms, const char *note)
{
	if (ms < 0)
		printf("%-18s %-36s %11s %10.1f  %s\n", layout, step, "failed", cpu_ms, note);
	else
		printf("%-18s %-36s %11.1f %10.1f  %s\n", layout, step, ms, cpu_ms, note);
	if (csv)
		fprintf(csv, "%s,%s,%.3f,%.3f,%s\n", layout, step, ms, cpu_ms, note);
}

static int cmd_scale(int argc, char **argv, const char *csvpath, pid_t dpid, const char *sock, const char *ctl,
		     int nproc, double budget_s, const char *suffix)
{
	struct rtsched_request req = RTSCHED_REQUEST_INIT;
	struct usage u0, u1;
	double t0, t_reg, ms, cpu;
	int n, fails = 0, fifo, bad = 0, done = 0, unanswered = 0;
	long rss0, rss1, m;
	char note[160], layout[96];
	FILE *csv;

	if (argc < 2 || !sock || !ctl || dpid <= 0 || nproc < 1)
		return 64;
	n = atoi(argv[1]);
	if (n < nproc)
		return 64;
	sh = mmap(NULL, sizeof(*sh) + sizeof(pid_t) * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED || pipe(release) < 0)
		return 1;
	snprintf(layout, sizeof(layout), "%d in %d proc%s%s%s", n, nproc, nproc > 1 ? "s" : "", suffix ? " " : "",
		 suffix ? suffix : "");
	fflush(stdout);
	for (int k = 0; k < nproc; k++) {
		pid_t c = fork();
		if (c < 0)
			return 1;
		if (c == 0)
			holder((int)((long)n * k / nproc), (int)((long)n * (k + 1) / nproc));
	}
	close(release[0]);
	while (atomic_load(&sh->started) < n)
		usleep(1000);
	usleep(300000); /* let rtschedd digest the fork events first */
	csv = bench_open_csv(csvpath, "layout,step,wall_ms,daemon_cpu_ms,note");

	rss0 = rss_kib(dpid);
	usage_of(dpid, &u0);
	req.role = "bench-a";
	req.socket = sock;
	t0 = bench_now_us();
	for (done = 0; done < n; done++) {
		req.tid = sh->tids[done];
		int r = rtsched_register(&req, NULL);
		if (r < 0 && fails++ == 0)
			fprintf(stderr, "bench-footprint: register %d: %s: %s\n", (int)req.tid, rtsched_strerror(r),
				rtsched_last_message());
		if (bench_now_us() - t0 > budget_s * 1e6) {
			done++;
			break;
		}
	}
	t_reg = bench_now_us() - t0;
	usage_of(dpid, &u1);
	rss1 = rss_kib(dpid);
	fifo = count_fifo(n);
	bad += fails || fifo != n;
	if (done < n)
		snprintf(note, sizeof(note), "STOPPED after %.0f s budget: %d of %d registered (%.0f us each)",
			 budget_s, done, n, t_reg / done);
	else
		snprintf(note, sizeof(note), "%.1f us each; %d failed; %d of %d FIFO after", t_reg / n, fails, fifo, n);
	print_step(csv, layout, "register all (librtsched one by one)", t_reg / 1000,
		   (double)(u1.run_ns - u0.run_ns) / 1e6, note);

	ms = time_ctl(ctl, sock, dpid, "version", NULL, &cpu);
	print_step(csv, layout, "rtschedctl version (process start)", ms / 1000, cpu, "the floor under the rows below");
	ms = time_ctl(ctl, sock, dpid, "reload", NULL, &cpu);
	fifo = count_fifo(n);
	bad += ms < 0 || (done == n && fifo != n);
	snprintf(note, sizeof(note), "re-applies all; %d of %d FIFO after", fifo, n);
	print_step(csv, layout, "rtschedctl reload", ms < 0 ? -1 : ms / 1000, cpu, note);
	if (notify_fd >= 0) {
		ms = median3(f_sighup, &dpid, dpid, &cpu);
		fifo = count_fifo(n);
		bad += ms < 0 || (done == n && fifo != n);
		snprintf(note, sizeof(note), "Type=notify-reload's view; %d of %d FIFO after", fifo, n);
		print_step(csv, layout, "SIGHUP -> READY=1 (reapplied)", ms < 0 ? -1 : ms / 1000, cpu, note);
		ms = median3(f_reapply, &done, dpid, &cpu);
		bad += ms < 0;
		print_step(csv, layout, "floor: reapply's kernel calls alone", ms < 0 ? -1 : ms / 1000, cpu,
			   "sched_setattr + sched_getattr + sched_getaffinity per thread, from the bench");
		ms = median3(f_scan, NULL, dpid, &cpu);
		bad += ms < 0;
		print_step(csv, layout, "floor: rescan's walk alone", ms < 0 ? -1 : ms / 1000, cpu,
			   "every /proc/PID/task listed, from the bench");
	}
	ms = time_ctl(ctl, sock, dpid, "list", NULL, &cpu);
	print_step(csv, layout, "rtschedctl list", ms < 0 ? -1 : ms / 1000, cpu,
		   ms < 0 ? "rtschedctl gave up (its 5 s reply timeout?)" : "");
	ms = time_ctl(ctl, sock, dpid, "--json", "jitter", &cpu);
	print_step(csv, layout, "rtschedctl --json jitter", ms < 0 ? -1 : ms / 1000, cpu,
		   ms < 0 ? "failed (unsupported by this rtschedd, or timed out)" : "schedstat of every managed thread");
	snprintf(note, sizeof(note), "daemon RSS %ld -> %ld KiB", rss0, rss1);
	printf("%-18s %-36s %11.0f %10s  %s\n", layout, "memory per managed thread (bytes)",
	       (double)(rss1 - rss0) * 1024 / done, "", note);
	if (csv)
		fprintf(csv, "%s,memory per managed thread (bytes),%.0f,,%s\n", layout,
			(double)(rss1 - rss0) * 1024 / done, note);

	/* release the threads (EOF on their pipe) and time how long rtschedd
	 * takes to notice that all of them exited */
	usage_of(dpid, &u0);
	t0 = bench_now_us();
	close(release[1]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	/* rtschedctl status may time out while rtschedd digests the exits: retry */
	while ((m = managed(ctl, sock)) != 0 && bench_now_us() - t0 < exit_cap_s * 1e6) {
		if (m < 0)
			unanswered++;
		usleep(10000);
	}
	usage_of(dpid, &u1);
	if (unanswered)
		snprintf(note, sizeof(note), "%ld still managed after; %d status requests went unanswered meanwhile", m,
			 unanswered);
	else
		snprintf(note, sizeof(note), "%ld still managed after", m);
	bad += m != 0;
	print_step(csv, layout, "all exit -> rtschedd forgets them", (bench_now_us() - t0) / 1000,
		   (double)(u1.run_ns - u0.run_ns) / 1e6, note);
	if (csv)
		fclose(csv);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *csv = NULL, *sock = NULL, *ctl = NULL, *suffix = NULL;
	double budget = 60;
	int opt, nproc = 1;
	pid_t dpid = 0;

	while ((opt = getopt(argc, argv, "+o:p:s:C:P:b:l:x:N:")) != -1) {
		switch (opt) {
		case 'N':
			if (notify_bind(optarg) < 0) {
				perror(optarg);
				return 1;
			}
			break;
		case 'x': exit_cap_s = atof(optarg); break;
		case 'l': suffix = optarg; break;
		case 'P': nproc = atoi(optarg); break;
		case 'b': budget = atof(optarg); break;
		case 'o': csv = optarg; break;
		case 'p': dpid = atoi(optarg); break;
		case 's': sock = optarg; break;
		case 'C': ctl = optarg; break;
		default: return 64;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		return 64;
	if (strcmp(argv[0], "idle") == 0)
		return cmd_idle(argc, argv, csv);
	if (strcmp(argv[0], "scale") == 0)
		return cmd_scale(argc, argv, csv, dpid, sock, ctl, nproc, budget, suffix);
	return 64;
}
