/* bpfobs-tool.c: the BPF wake-up observer (src/daemon/observe/bpf) on its
 * own, as rtschedd will use it: load with CAP_BPF + CAP_PERFMON, optionally
 * drop those (and CAP_SYS_ADMIN) for good, then watch threads, wait, and
 * print each thread's two histograms with hist.c's percentiles.
 *
 *   bpfobs-tool [options] TID...          watch these threads
 *   bpfobs-tool [options] -x -- CMD ARG... run CMD under ptrace; watch each
 *                                          of its threads but the main one
 *                                          before it runs (clone events)
 * Options:
 *   -d        drop CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN from every set
 *             (bounding too) after loading and before watching; prints the
 *             capabilities left and what the bpf() syscall says afterwards
 *   -c NS     culprit tracking: wake-ups later than NS ns are late; their
 *             records are read (after -d's drop too) and counted
 *   -m        with -x, watch the main thread too
 *   -n N      slots (max_threads), default 64
 *   -o FILE   write the report there instead of stdout
 *   -s SECS   stop after SECS seconds (default: when every watched thread
 *             has exited, or the command of -x has)
 * Output, one record per line, key=value: "loaded", "caps", "caps_held
 * bpf=0 perfmon=0 sys_admin=0" (after -d), "bpf_after_drop",
 * "watch tid= comm= slot= nvcsw= t=" (nvcsw: voluntary context switches the
 * thread had made when watching began; t: CLOCK_MONOTONIC seconds), "thread tid= sleeps=" (voluntary
 * switches while watched; -1 if it exited), "hist tid= kind=timer|wakeup
 * count= lost= early= p50_ns= p90_ns= p99_ns= p999_ns= max_ns= mean_ns=", "stats",
 * "prog", with -c "late tid= timer= wakeup= dropped= records= segments="
 * (records: those read for the thread; segments: the ones they held inside
 * their windows), and with -x "child exit=". Exit 0, 1 on a failure, 2 on
 * bad usage. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "shared/hist.h"
#include "daemon/observe/bpf/bpfobs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define MAX_WATCH 1024

static volatile sig_atomic_t stop;
static FILE *out;
static pid_t watched[MAX_WATCH];
static long long nvcsw0[MAX_WATCH]; /* voluntary switches when watching began */
static int nwatched;
static uint64_t late_ns;             /* -c: the threshold, 0: no culprit tracking */
static long long records[MAX_WATCH]; /* -c: late wake-ups' records read, per thread */
static long long segments[MAX_WATCH];

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: bpfobs-tool [-d] [-c LATE_NS] [-n MAX_THREADS] [-o FILE] [-s SECONDS] TID...\n"
			"       bpfobs-tool [-d] [-c LATE_NS] [-m] [-n MAX_THREADS] [-o FILE] [-s SECONDS] -x -- COMMAND [ARG...]\n");
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line of /proc/TID/status ("voluntary_ctxt_switches:"), -1 if gone. */
static long long status_field(pid_t tid, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtoll(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void comm_of(pid_t tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	buf[0] = '\0';
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
}

static int watch(struct bpfobs *o, pid_t tid)
{
	char comm[32];
	unsigned slot;
	int r;

	if (nwatched >= MAX_WATCH)
		return -ENOSPC;
	r = bpfobs_watch(o, tid, &slot);
	if (r == 0 && late_ns)
		r = bpfobs_set_late(o, tid, late_ns);
	if (r < 0) {
		fprintf(stderr, "bpfobs-tool: cannot watch tid %d: %s\n", (int)tid, strerror(-r));
		return r;
	}
	nvcsw0[nwatched] = status_field(tid, "voluntary_ctxt_switches:");
	watched[nwatched++] = tid;
	comm_of(tid, comm, sizeof(comm));
	fprintf(out, "watch tid=%d comm=%s slot=%u nvcsw=%lld t=%.6f\n", (int)tid, comm[0] ? comm : "?", slot,
		nvcsw0[nwatched - 1], now_s());
	fflush(out);
	return 0;
}

static bool is_watched(pid_t tid)
{
	for (int i = 0; i < nwatched; i++)
		if (watched[i] == tid)
			return true;
	return false;
}

/* -x runs the command under ptrace with PTRACE_O_TRACECLONE: each new
 * thread starts stopped and is watched before it runs an instruction of its
 * own, then let go (detached), so no wake-up escapes the count. Only the
 * main thread stays traced, for its clone events; its signals are passed
 * on. Returns the child, or -1. */
static pid_t start_traced(char **argv)
{
	pid_t child = fork();
	int st;

	if (child < 0)
		return -1;
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(127);
		raise(SIGSTOP);
		execvp(argv[0], argv);
		fprintf(stderr, "bpfobs-tool: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_SETOPTIONS, child, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0 ||
	    ptrace(PTRACE_CONT, child, NULL, NULL) < 0) {
		kill(child, SIGKILL);
		return -1;
	}
	return child;
}

/* Handle the ptrace stops that are pending: 1 once the child has exited
 * (its wait status in *status), 0 otherwise. */
static int trace_step(struct bpfobs *o, pid_t child, bool main_too, int *status)
{
	int st;
	pid_t t;

	while ((t = waitpid(-1, &st, __WALL | WNOHANG)) > 0) {
		int sig = WIFSTOPPED(st) ? WSTOPSIG(st) : 0;
		unsigned event = (unsigned)st >> 16;
		unsigned long nt = 0;

		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t == child) {
				*status = st;
				return 1;
			}
			continue;
		}
		if (t != child) {
			/* a new thread's first stop (the auto-attach SIGSTOP) */
			if (!is_watched(t))
				watch(o, t);
			ptrace(PTRACE_DETACH, t, NULL, (void *)(long)(sig == SIGSTOP ? 0 : sig));
			continue;
		}
		if (event == PTRACE_EVENT_CLONE) {
			if (ptrace(PTRACE_GETEVENTMSG, child, NULL, &nt) == 0 && !is_watched((pid_t)nt))
				watch(o, (pid_t)nt); /* stopped until its first stop is handled */
			sig = 0;
		} else if (event == PTRACE_EVENT_EXEC) {
			if (main_too && !is_watched(child))
				watch(o, child);
			sig = 0;
		}
		ptrace(PTRACE_CONT, child, NULL, (void *)(long)sig);
	}
	return 0;
}

/* Drop what loading needed, from every set, as the daemon will. */
static int drop_caps(void)
{
	const cap_value_t caps[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN };
	cap_t c = cap_get_proc();
	char *before, *after;
	int r = 0;

	if (!c)
		return -errno;
	before = cap_to_text(c, NULL);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		/* the bounding set needs CAP_SETPCAP, which a daemon that
		 * starts with only CAP_BPF + CAP_PERFMON does not have */
		if (CAP_IS_SUPPORTED(caps[i]) && cap_drop_bound(caps[i]) < 0 && errno != EPERM)
			fprintf(stderr, "bpfobs-tool: cannot drop capability %d from the bounding set: %s\n",
				(int)caps[i], strerror(errno));
		prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, caps[i], 0, 0);
	}
	cap_set_flag(c, CAP_EFFECTIVE, 3, caps, CAP_CLEAR);
	cap_set_flag(c, CAP_PERMITTED, 3, caps, CAP_CLEAR);
	cap_set_flag(c, CAP_INHERITABLE, 3, caps, CAP_CLEAR);
	if (cap_set_proc(c) < 0)
		r = -errno;
	cap_free(c);
	c = cap_get_proc();
	after = c ? cap_to_text(c, NULL) : NULL;
	fprintf(out, "caps before=\"%s\" after=\"%s\"\n", before ? before : "?", after ? after : "?");
	fprintf(out, "caps_held");
	for (size_t i = 0; c && i < sizeof(caps) / sizeof(caps[0]); i++) {
		static const char *const names[] = { "bpf", "perfmon", "sys_admin" };
		cap_flag_value_t e = CAP_CLEAR, p = CAP_CLEAR;

		cap_get_flag(c, caps[i], CAP_EFFECTIVE, &e);
		cap_get_flag(c, caps[i], CAP_PERMITTED, &p);
		fprintf(out, " %s=%d", names[i], e == CAP_SET || p == CAP_SET);
		if (e == CAP_SET || p == CAP_SET) {
			fprintf(stderr, "bpfobs-tool: capability %d is still held\n", (int)caps[i]);
			r = -EPERM;
		}
	}
	fputc('\n', out);
	cap_free(before);
	cap_free(after);
	cap_free(c);
	return r;
}

/* What bpf() does after the drop on a map fd the process already holds:
 * Linux 6.5+ allows it, Linux < 6.5 with unprivileged_bpf_disabled refuses
 * every command. The observer itself never calls bpf() after loading. */
static void probe_bpf_syscall(int map_fd)
{
	__u32 key = 0, val = 0;
	struct utsname u;
	int r = bpf_map_lookup_elem(map_fd, &key, &val);

	uname(&u);
	fprintf(out, "bpf_after_drop kernel=%s map_lookup=%s\n", u.release, r < 0 ? strerror(errno) : "ok");
}

static void print_hist(pid_t tid, enum bpfobs_kind kind, const struct hist *h, uint64_t lost)
{
	static const double qs[] = { 50, 90, 99, 99.9 };
	static const char *const qn[] = { "p50_ns", "p90_ns", "p99_ns", "p999_ns" };
	double mean = 0;

	fprintf(out, "hist tid=%d kind=%s count=%llu lost=%llu early=%llu", (int)tid, bpfobs_kind_name(kind),
		(unsigned long long)hist_count(h), (unsigned long long)lost, (unsigned long long)hist_early(h));
	if (hist_count(h)) {
		for (int i = 0; i < 4; i++) {
			int64_t v = -1;

			hist_percentile(h, qs[i], &v);
			fprintf(out, " %s=%lld", qn[i], (long long)v);
		}
		hist_mean(h, &mean);
		fprintf(out, " max_ns=%lld mean_ns=%.0f", (long long)hist_max(h), mean);
	}
	fputc('\n', out);
}

/* -c: one late wake-up's record: count it and the segments inside its window. */
static void on_late(void *ud, const struct bpfobs_late *ev)
{
	for (int i = 0; i < nwatched; i++) {
		if (watched[i] != ev->tid)
			continue;
		records[i]++;
		for (unsigned k = 0; k < BPFOBS_RING; k++) {
			const struct bpfobs_seg *g = &ev->ring[k];
			if (g->start && g->start + g->dur > ev->start_ns && g->start < ev->run_ns)
				segments[i]++;
		}
	}
}

static int report(struct bpfobs *o)
{
	struct bpfobs_stats st;
	struct hist h;
	int r, rc = 0;

	for (int i = 0; i < nwatched; i++) {
		long long end = status_field(watched[i], "voluntary_ctxt_switches:");

		/* sleeps while watched, if the thread still exists to tell */
		fprintf(out, "thread tid=%d nvcsw_start=%lld nvcsw_end=%lld sleeps=%lld\n", (int)watched[i],
			nvcsw0[i], end, end >= 0 && nvcsw0[i] >= 0 ? end - nvcsw0[i] : -1);
		for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++) {
			uint64_t lost = 0;

			if ((r = bpfobs_read(o, watched[i], (enum bpfobs_kind)k, &h)) < 0 ||
			    (r = bpfobs_lost(o, watched[i], (enum bpfobs_kind)k, &lost)) < 0) {
				fprintf(stderr, "bpfobs-tool: reading tid %d: %s\n", (int)watched[i], strerror(-r));
				rc = 1;
				continue;
			}
			print_hist(watched[i], (enum bpfobs_kind)k, &h, lost);
		}
		if (late_ns) {
			uint64_t late[2], dropped;

			if (bpfobs_late(o, watched[i], late, &dropped) == 0)
				fprintf(out, "late tid=%d timer=%llu wakeup=%llu dropped=%llu records=%lld segments=%lld\n",
					(int)watched[i], (unsigned long long)late[BPFOBS_TIMER],
					(unsigned long long)late[BPFOBS_WAKEUP], (unsigned long long)dropped, records[i],
					segments[i]);
		}
	}
	if ((r = bpfobs_stats(o, &st)) < 0) {
		fprintf(stderr, "bpfobs-tool: stats: %s\n", strerror(-r));
		return 1;
	}
	fprintf(out, "stats bpf_stats_enabled=%d run_cnt=%llu run_time_ns=%llu ns_per_event=%.1f misses=%llu "
		"races=%llu watched=%u filter_bytes=%zu slot_bytes=%zu\n", st.enabled,
		(unsigned long long)st.run_cnt, (unsigned long long)st.run_time_ns,
		st.run_cnt ? (double)st.run_time_ns / (double)st.run_cnt : 0, (unsigned long long)st.misses,
		(unsigned long long)st.races, st.watched, st.filter_bytes, st.slot_bytes);
	for (int i = 0; i < BPFOBS_NPROGS && st.prog[i].name; i++)
		fprintf(out, "prog name=%s run_cnt=%llu run_time_ns=%llu ns_per_event=%.1f misses=%llu\n",
			st.prog[i].name, (unsigned long long)st.prog[i].run_cnt,
			(unsigned long long)st.prog[i].run_time_ns,
			st.prog[i].run_cnt ? (double)st.prog[i].run_time_ns / (double)st.prog[i].run_cnt : 0,
			(unsigned long long)st.prog[i].misses);
	for (int i = 0; i < nwatched; i++)
		if ((r = bpfobs_unwatch(o, watched[i])) < 0) {
			fprintf(stderr, "bpfobs-tool: unwatch %d: %s\n", (int)watched[i], strerror(-r));
			rc = 1;
		}
	return rc;
}

int main(int argc, char **argv)
{
	bool drop = false, exec_mode = false, main_too = false;
	unsigned max_threads = 64;
	double seconds = 0, t0;
	const char *outfile = NULL;
	struct bpfobs *o = NULL;
	struct bpfobs_stats st;
	struct sigaction sa = { .sa_handler = on_signal };
	char why[512];
	pid_t child = -1;
	int c, r, probe_fd = -1, rc, status = 0;

	while ((c = getopt(argc, argv, "+c:dmn:o:s:xh")) != -1) {
		switch (c) {
		case 'c': late_ns = strtoull(optarg, NULL, 10); break;
		case 'd': drop = true; break;
		case 'm': main_too = true; break;
		case 'n': max_threads = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'o': outfile = optarg; break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 'x': exec_mode = true; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	out = stdout;
	if (outfile && !(out = fopen(outfile, "we"))) {
		fprintf(stderr, "bpfobs-tool: %s: %s\n", outfile, strerror(errno));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r = bpfobs_new(&o, max_threads, late_ns > 0, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "bpfobs-tool: cannot load the observer (%s): %s\n", strerror(-r), why);
		return 1;
	}
	bpfobs_stats(o, &st);
	fprintf(out, "loaded max_threads=%u tid_limit=%d filter_bytes=%zu slot_bytes=%zu\n", st.max_threads,
		(int)st.tid_limit, st.filter_bytes, st.slot_bytes);
	if (drop) {
		/* a map of our own, created while we may: does bpf() work after? */
		probe_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bpfobs_probe", 4, 4, 1, NULL);
		if ((r = drop_caps()) < 0) {
			fprintf(stderr, "bpfobs-tool: dropping capabilities failed: %s\n", strerror(-r));
			bpfobs_free(o);
			return 1;
		}
		if (probe_fd >= 0)
			probe_bpf_syscall(probe_fd);
	}
	fflush(out);

	if (exec_mode) {
		if ((child = start_traced(argv + optind)) < 0) {
			fprintf(stderr, "bpfobs-tool: cannot start %s under ptrace: %s\n", argv[optind],
				strerror(errno));
			bpfobs_free(o);
			return 1;
		}
	} else {
		for (int i = optind; i < argc; i++)
			if (watch(o, (pid_t)atoi(argv[i])) < 0) {
				bpfobs_free(o);
				return 1;
			}
	}

	t0 = now_s();
	while (!stop && (seconds <= 0 || now_s() - t0 < seconds)) {
		struct timespec ms = { 0, 1000000 };

		if (exec_mode) {
			if (trace_step(o, child, main_too, &status)) {
				fprintf(out, "child exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) :
					128 + WTERMSIG(status));
				child = -1;
				break;
			}
		} else {
			int alive = 0;

			for (int i = 0; i < nwatched; i++)
				alive += status_field(watched[i], "Pid:") > 0;
			if (!alive && seconds <= 0)
				break;
			ms.tv_nsec = 100000000;
		}
		nanosleep(&ms, NULL);
		bpfobs_events_read(o, on_late, NULL);
	}
	bpfobs_events_read(o, on_late, NULL);
	if (child > 0) {
		kill(child, SIGKILL);
		while (waitpid(-1, NULL, __WALL) > 0)
			;
	}
	rc = report(o);
	bpfobs_free(o);
	if (probe_fd >= 0)
		close(probe_fd);
	if (out != stdout && fclose(out) != 0)
		rc = 1;
	return rc;
}
