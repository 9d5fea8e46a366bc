/* bench-isolate.c: a 1 kHz worker's wake-up lateness with and without
 * isolate = yes and resume-latency-us (issue 29). The worker registers
 * with a role whose rule pins it to one CPU as SCHED_FIFO; it waits until
 * what the rule asks for is in force (the CPU's resume latency, the CPU
 * emptied: a process started before the registration, the sentinel, no
 * longer may run there), runs PERIODS periods of librtsched's sleep timer,
 * and unregisters, timing how long the sentinel takes to get the CPU
 * back. Meanwhile it counts the CPU time everything else used (/proc/stat
 * minus its own), which is what isolation takes from the rest.
 *
 *   bench-isolate -n PERIODS -r ROLE -c CPU -w SENTINEL [-i] [-q] -l LABEL [-o CSV] [-x FILE]
 *
 * -x: append "LABEL: NAME N, ..." to FILE, the interrupts and softirqs the
 * CPU took while the worker measured (largest first), what ran under it.
 * -i: the rule isolates (wait for the sentinel to leave the CPU, and to
 * come back after); -q: it sets resume-latency-us = 0 (wait for "n/a").
 * Prints one row and appends it to CSV; exits 1 if what the rule asks for
 * never came into force (within 5 s), or the worker was not SCHED_FIFO on
 * CPU alone while it measured. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"
#include "rtsched.h"

#define CSV_HEADER "label,samples,overruns,p50_us,p99_us,p999_us,max_us,apply_ms,release_ms,others_cpus,worker_cpu_pct"

/* May the sentinel run on cpu? (its Cpus_allowed_list, as the kernel has it) */
static int sentinel_on(pid_t pid, int cpu)
{
	char path[64], line[512];
	cpu_set_t set;
	FILE *f;
	int on = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
			CPU_ZERO(&set);
			for (char *p = line + 18, *end; *p && *p != '\n';) {
				long a = strtol(p, &end, 10), b = a;
				if (end == p) {
					p++;
					continue;
				}
				if (*end == '-')
					b = strtol(end + 1, &end, 10);
				for (long c = a; c <= b && c < CPU_SETSIZE; c++)
					CPU_SET((int)c, &set);
				p = *end == ',' ? end + 1 : end;
			}
			on = CPU_ISSET(cpu, &set);
		}
	fclose(f);
	return on;
}

/* Poll until the sentinel's access to cpu is `want`; ms waited, or -1 after 5 s. */
static double wait_sentinel(pid_t pid, int cpu, int want)
{
	double t0 = bench_now_us();

	while (sentinel_on(pid, cpu) != want) {
		if (bench_now_us() - t0 > 5e6)
			return -1;
		usleep(100);
	}
	return (bench_now_us() - t0) / 1e3;
}

/* Where the sentinel is, for a run that failed: its cpuset group and CPUs. */
static void tell_sentinel(pid_t pid)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cpuset", (int)pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(line, sizeof(line), f))
			fprintf(stderr, "bench-isolate: the sentinel %d is in cpuset group %s", (int)pid, line);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
				fprintf(stderr, "bench-isolate: the sentinel's %s", line);
		fclose(f);
	}
}

/* What else ran on the worker's CPU: each interrupt and softirq count of
 * one CPU's column (/proc/interrupts, /proc/softirqs), by name. */
#define NCOUNT 96
struct counts {
	size_t n;
	char name[NCOUNT][40];
	unsigned long long v[NCOUNT];
};

static void read_counts(const char *path, int cpu, const char *prefix, struct counts *c)
{
	char line[4096], want[16], *tok, *save;
	int col = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	snprintf(want, sizeof(want), "CPU%d", cpu);
	if (fgets(line, sizeof(line), f)) {
		int i = 0;
		for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++)
			if (strcmp(tok, want) == 0)
				col = i;
	}
	while (col >= 0 && c->n < NCOUNT && fgets(line, sizeof(line), f)) {
		char *name = strtok_r(line, " \t\n", &save), *last = NULL;
		unsigned long long v = 0;
		bool have = false;

		for (int i = 0; name && (tok = strtok_r(NULL, " \t\n", &save)); i++) {
			if (i == col) {
				v = strtoull(tok, NULL, 10);
				have = true;
			}
			last = tok;
		}
		if (!name || !have)
			continue;
		/* a numbered interrupt goes by its device (the last word) */
		snprintf(c->name[c->n], sizeof(c->name[0]), "%s%.*s%s%s", prefix, (int)strcspn(name, ":"), name,
			 last && name[0] >= '0' && name[0] <= '9' ? "/" : "",
			 last && name[0] >= '0' && name[0] <= '9' ? last : "");
		c->v[c->n++] = v;
	}
	fclose(f);
}

static void snap_counts(int cpu, struct counts *c)
{
	c->n = 0;
	read_counts("/proc/interrupts", cpu, "", c);
	read_counts("/proc/softirqs", cpu, "softirq ", c);
}

/* The counts that grew between a and b, largest first: "NAME N, ..." */
static void counts_diff(const struct counts *a, const struct counts *b, char *out, size_t len)
{
	unsigned long long d[NCOUNT];
	size_t off = 0;

	out[0] = '\0';
	for (size_t i = 0; i < b->n; i++)
		d[i] = i < a->n && strcmp(a->name[i], b->name[i]) == 0 && b->v[i] >= a->v[i] ? b->v[i] - a->v[i] : 0;
	for (;;) {
		size_t best = b->n;
		for (size_t i = 0; i < b->n; i++)
			if (d[i] && (best == b->n || d[i] > d[best]))
				best = i;
		if (best == b->n || off >= len)
			break;
		off += (size_t)snprintf(out + off, len - off, "%s%s %llu", off ? ", " : "", b->name[best], d[best]);
		d[best] = 0;
	}
}

static bool qos_held(int cpu)
{
	char path[96], v[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us", cpu);
	if (!(f = fopen(path, "re")))
		return false;
	if (!fgets(v, sizeof(v), f))
		v[0] = '\0';
	fclose(f);
	return strncmp(v, "n/a", 3) == 0;
}

/* Busy and total jiffies of all CPUs (/proc/stat's cpu line). */
static void cpu_times(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "re");

	*busy = *total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7], &v[8], &v[9]) >= 8) {
		for (int i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* idle, iowait */
	}
	fclose(f);
}

/* The calling thread's time on CPU, ns. */
static unsigned long long own_ns(void)
{
	unsigned long long run = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (f) {
		if (fscanf(f, "%llu", &run) != 1)
			run = 0;
		fclose(f);
	}
	return run;
}

int main(int argc, char **argv)
{
	const char *role = NULL, *label = "worker", *csvpath = NULL, *countpath = NULL;
	int n = 10000, cpu = -1, opt, r;
	bool isolate = false, qos = false;
	pid_t sentinel = 0;
	double apply_ms = -1, release_ms = -1;

	while ((opt = getopt(argc, argv, "n:r:c:w:iql:o:x:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'r': role = optarg; break;
		case 'c': cpu = atoi(optarg); break;
		case 'w': sentinel = (pid_t)atoi(optarg); break;
		case 'i': isolate = true; break;
		case 'q': qos = true; break;
		case 'l': label = optarg; break;
		case 'o': csvpath = optarg; break;
		case 'x': countpath = optarg; break;
		default: return 64;
		}
	}
	if (n < 1 || !role || cpu < 0 || cpu >= CPU_SETSIZE || sentinel <= 0)
		return 64;
	if (sentinel_on(sentinel, cpu) != 1) {
		fprintf(stderr, "bench-isolate: the sentinel %d may not run on CPU %d to begin with\n", (int)sentinel, cpu);
		return 1;
	}
	if ((r = rtsched_register_self(role)) < 0) {
		fprintf(stderr, "bench-isolate: rtsched_register_self(%s): %s: %s\n", role, rtsched_strerror(r),
			rtsched_last_message());
		return 1;
	}
	if (isolate && (apply_ms = wait_sentinel(sentinel, cpu, 0)) < 0) {
		fprintf(stderr, "bench-isolate: CPU %d was not isolated within 5 s of the registration\n", cpu);
		tell_sentinel(sentinel);
		return 1;
	}
	for (int i = 0; qos && !qos_held(cpu); i++) {
		if (i > 5000) {
			fprintf(stderr, "bench-isolate: CPU %d's resume latency is not n/a within 5 s\n", cpu);
			return 1;
		}
		usleep(1000);
	}
	cpu_set_t aff;
	if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_FIFO || sched_getaffinity(0, sizeof(aff), &aff) < 0 ||
	    CPU_COUNT(&aff) != 1 || !CPU_ISSET(cpu, &aff)) {
		fprintf(stderr, "bench-isolate: registered, but not SCHED_FIFO on CPU %d alone\n", cpu);
		return 1;
	}

	struct rtsched_timer *t;
	struct rtsched_timer_stats st;
	unsigned long long b0, t0, b1, t1, own0, own1;
	double w0, w1;
	if ((r = rtsched_timer_create(&t, 1000000, "sleep")) < 0) {
		fprintf(stderr, "bench-isolate: timer: %s\n", rtsched_strerror(r));
		return 1;
	}
	static struct counts c0, c1;
	snap_counts(cpu, &c0);
	cpu_times(&b0, &t0);
	own0 = own_ns();
	w0 = bench_now_us();
	for (int i = 0; i < n; i++)
		if ((r = rtsched_timer_wait(t)) < 0) {
			fprintf(stderr, "bench-isolate: timer: %s\n", rtsched_strerror(r));
			return 1;
		}
	w1 = bench_now_us();
	own1 = own_ns();
	cpu_times(&b1, &t1);
	snap_counts(cpu, &c1);
	int tries = 0;
	while ((r = rtsched_timer_stats(t, &st)) == -EAGAIN && tries++ < 100)
		;
	rtsched_timer_free(t);
	if (r < 0) {
		fprintf(stderr, "bench-isolate: timer stats: %s\n", rtsched_strerror(r));
		return 1;
	}
	if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_FIFO) {
		fprintf(stderr, "bench-isolate: the worker was demoted while it measured\n");
		return 1;
	}
	if ((r = rtsched_unregister_self()) < 0) {
		fprintf(stderr, "bench-isolate: rtsched_unregister_self: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
		return 1;
	}
	if (isolate && (release_ms = wait_sentinel(sentinel, cpu, 1)) < 0) {
		fprintf(stderr, "bench-isolate: CPU %d was not released within 5 s of the unregistration\n", cpu);
		tell_sentinel(sentinel);
		return 1;
	}
	/* everything else's CPU time: all busy time but the worker's own, in CPUs */
	double hz = (double)sysconf(_SC_CLK_TCK), wall = (w1 - w0) / 1e6;
	double others = ((double)(b1 - b0) / hz - (double)(own1 - own0) / 1e9) / wall;
	if (others < 0) /* /proc/stat counts in clock ticks, the worker's own time in ns */
		others = 0;
	double mine = 100.0 * (double)(own1 - own0) / 1e9 / wall;
	printf("%-22s %8llu %6llu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f\n", label, (unsigned long long)st.count,
	       (unsigned long long)st.overruns, st.p50_ns / 1e3, st.p99_ns / 1e3, st.p999_ns / 1e3, st.max_ns / 1e3,
	       apply_ms, release_ms, others, mine);
	fflush(stdout);
	if (countpath) {
		char what[2048];
		FILE *cf = fopen(countpath, "ae");

		counts_diff(&c0, &c1, what, sizeof(what));
		if (cf) {
			fprintf(cf, "%s: %s\n", label, what[0] ? what : "none");
			fclose(cf);
		}
	}
	FILE *csv = bench_open_csv(csvpath, CSV_HEADER);
	if (csv) {
		fprintf(csv, "%s,%llu,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f\n", label, (unsigned long long)st.count,
			(unsigned long long)st.overruns, st.p50_ns / 1e3, st.p99_ns / 1e3, st.p999_ns / 1e3, st.max_ns / 1e3,
			apply_ms, release_ms, others, mine);
		fclose(csv);
	}
	return 0;
}
