/* cpucheck.c: the findings about resume-latency-us and isolate = yes (see
 * cpucheck.h). */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cpu/cpucheck.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/diag/diag.h"
#include "daemon/sys/cgroupfs.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/proc.h"

/* What the configuration asks: the CPUs isolate = yes may empty, and the
 * strictest and loosest resume-latency-us (-1: none). */
static void asked(const struct config *c, cpu_set_t *iso, int *lat_min, int *lat_max)
{
	CPU_ZERO(iso);
	*lat_min = *lat_max = -1;
#define LAT(v) do { if ((v) >= 0) { if (*lat_min < 0 || (v) < *lat_min) *lat_min = (v); if ((v) > *lat_max) *lat_max = (v); } } while (0)
	for (size_t i = 0; i < c->n_rules; i++) {
		if (c->rules[i].quiet.isolate)
			CPU_OR(iso, iso, &c->rules[i].spec.cpus);
		LAT(c->rules[i].quiet.resume_latency_us);
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		if (c->probes[i].quiet.isolate)
			CPU_SET(c->probes[i].cpu, iso);
		LAT(c->probes[i].quiet.resume_latency_us);
	}
#undef LAT
}

/* The kernel's own per-CPU threads bound to CPUs in iso: "ksoftirqd/1, ...". */
static size_t kthreads_on(const char *sys, const cpu_set_t *iso, char *names, size_t len)
{
	char proc[PATH_MAX];
	struct dirent *e;
	size_t n = 0, off = 0;
	DIR *d;

	names[0] = '\0';
	if (kfile_path(proc, sizeof(proc), sys, "/proc") < 0 || !(d = opendir(proc)))
		return 0;
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		struct proc_stat st;
		cpu_set_t aff, out;

		if (pid <= 0 || proc_read_stat_at(proc, pid, 0, &st) < 0 || !(st.flags & PROC_PF_KTHREAD) ||
		    !(st.flags & PROC_PF_NO_SETAFFINITY) || sched_getaffinity(pid, sizeof(aff), &aff) < 0)
			continue;
		cpulist_missing(&aff, iso, &out);
		if (CPU_COUNT(&out) || !CPU_COUNT(&aff))
			continue; /* also on other CPUs: the unbound ones */
		n++;
		if (off + strlen(st.comm) + 8 < len)
			off += (size_t)snprintf(names + off, len - off, "%s%s", off ? ", " : "", st.comm);
		else if (!strstr(names, "..."))
			snprintf(names + off, len - off, ", ...");
	}
	closedir(d);
	return n;
}

/* isolate-boot-params: the tick and RCU's callbacks, which only the kernel
 * command line moves off a CPU. */
static int boot_params(const char *sys, const cpu_set_t *iso, const char *isos, struct diag_report *rep)
{
	char p[PATH_MAX], buf[4096], cmd[4096] = "", arg[256], msg[2 * DIAG_TEXT_MAX], fix[2 * DIAG_TEXT_MAX];
	cpu_set_t nohz, nocb, miss;
	bool has_nohz = false, nohz_ok = false, nocb_ok = false;

	CPU_ZERO(&nohz);
	CPU_ZERO(&nocb);
	if (kfile_path(p, sizeof(p), sys, "/sys/devices/system/cpu/nohz_full") == 0 &&
	    kfile_read(AT_FDCWD, p, buf, sizeof(buf)) == 0) {
		has_nohz = true;
		if (strcmp(buf, "(null)") && cpulist_parse(buf, &nohz, NULL) == 0)
			nohz_ok = cpulist_missing(iso, &nohz, &miss) == 0;
	}
	if (kfile_path(p, sizeof(p), sys, "/proc/cmdline") == 0)
		kfile_read(AT_FDCWD, p, cmd, sizeof(cmd));
	if (diag_cmdline_param(cmd, "rcu_nocbs", arg, sizeof(arg)) == 0 && diag_parse_cpu_param(arg, &nocb) == 0)
		nocb_ok = cpulist_missing(iso, &nocb, &miss) == 0;
	if (nohz_ok && nocb_ok)
		return diag_report_add(rep, "isolate-boot-params", DIAG_OK, "the isolated CPUs are nohz_full and "
				       "rcu_nocbs: their tick stops and RCU callbacks run elsewhere", NULL);
	snprintf(msg, sizeof(msg), "isolate = yes empties CPU %s of what can move at runtime; %s%s%s stay%s, "
		 "which only the kernel command line changes", isos,
		 nohz_ok ? "" : has_nohz ? "the scheduler tick" : "the scheduler tick (this kernel has no "
		 "CONFIG_NO_HZ_FULL)", nohz_ok || nocb_ok ? "" : " and ", nocb_ok ? "" : "RCU callbacks",
		 nohz_ok || nocb_ok ? "s" : "");
	snprintf(fix, sizeof(fix), "boot with%s%s%s%s (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub)%s",
		 nohz_ok || !has_nohz ? "" : " nohz_full=", nohz_ok || !has_nohz ? "" : isos,
		 nocb_ok ? "" : " rcu_nocbs=", nocb_ok ? "" : isos,
		 has_nohz ? "" : "; nohz_full= needs a kernel built with CONFIG_NO_HZ_FULL");
	return diag_report_add(rep, "isolate-boot-params", DIAG_INFO, msg, fix);
}

/* The exit latency of the slowest idle state CPU cpu has, µs; -1 if it
 * has none (no cpuidle driver); the governor into gov. */
static int slowest_state(const char *sys, int cpu, char *drv, size_t dlen, char *gov, size_t glen)
{
	char p[PATH_MAX], v[32];
	int worst = -1;

	drv[0] = gov[0] = '\0';
	if (kfile_path(p, sizeof(p), sys, "/sys/devices/system/cpu/cpuidle/current_driver") == 0)
		kfile_read(AT_FDCWD, p, drv, dlen);
	if (kfile_path(p, sizeof(p), sys, "/sys/devices/system/cpu/cpuidle/current_governor_ro") == 0)
		kfile_read(AT_FDCWD, p, gov, glen);
	for (int s = 0; s < 16; s++) {
		if (kfile_path(p, sizeof(p), sys, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/latency", cpu, s) < 0 ||
		    kfile_read(AT_FDCWD, p, v, sizeof(v)) < 0)
			break;
		if (atoi(v) > worst)
			worst = atoi(v);
	}
	return worst;
}

/* resume-latency-ignored: a bound that excludes no idle state here. */
static int latency_effect(const char *sys, int lat_min, int lat_max, struct diag_report *rep)
{
	char drv[64], gov[64], msg[DIAG_TEXT_MAX];
	int worst = slowest_state(sys, 0, drv, sizeof(drv), gov, sizeof(gov));

	if (worst < 0 || !strcmp(drv, "none") || !drv[0]) {
		snprintf(msg, sizeof(msg), "resume-latency-us has nothing to bound here: no cpuidle driver (%s), "
			 "the idle CPUs halt", drv[0] ? drv : "none");
		return diag_report_add(rep, "resume-latency-ignored", DIAG_WARNING, msg,
				       "nothing to do on this machine; remove the key, or use cpu-dma-latency = 0");
	}
	if (!strcmp(gov, "haltpoll") && lat_max > 0) {
		snprintf(msg, sizeof(msg), "the haltpoll cpuidle governor (driver %s) looks at a CPU's resume "
			 "latency only when it is 0: resume-latency-us = %d changes nothing here", drv, lat_max);
		return diag_report_add(rep, "resume-latency-ignored", DIAG_WARNING, msg,
				       "use resume-latency-us = 0 (the CPU polls instead of halting)");
	}
	if (lat_min >= worst) {
		snprintf(msg, sizeof(msg), "resume-latency-us = %d excludes no idle state here: the slowest to "
			 "leave (driver %s) takes %d us", lat_min, drv, worst);
		return diag_report_add(rep, "resume-latency-ignored", DIAG_WARNING, msg, "use a lower value, or 0");
	}
	return 0;
}

int cpucheck_run(const char *sys, const struct config *c, const struct pmqos *q, const struct isolate *m,
		 struct diag_report *rep)
{
	char isos[256], names[DIAG_TEXT_MAX - 128], msg[DIAG_TEXT_MAX], held[512];
	int lat_min, lat_max, r = 0;
	cpu_set_t iso;

	if (!c->n_quiet)
		return 0;
	asked(c, &iso, &lat_min, &lat_max);
	if (lat_min >= 0 && (r = latency_effect(sys, lat_min, lat_max, rep)) < 0)
		return r;
	if (q) {
		pmqos_cpus_state(q, held, sizeof(held));
		if (strcmp(held, "off") && (r = diag_report_add(rep, "resume-latency", DIAG_OK, held, NULL)) < 0)
			return r;
	}
	if (!CPU_COUNT(&iso))
		return 0;
	cpulist_format(&iso, isos, sizeof(isos));
	if (m) {
		struct isolate_status is;
		isolate_status(m, &is);
		if (is.code) {
			r = diag_report_add(rep, is.code, DIAG_WARNING, is.why,
					    !strcmp(is.code, "isolate-refused") ? "see the message; rtschedd.conf(5) says what "
					    "isolate = yes needs" : NULL);
		} else if (is.cpus[0]) {
			snprintf(msg, sizeof(msg), "CPU %s isolated for %s (%s): %zu tasks on the other CPUs, %zu kernel "
				 "threads moved by affinity, %zu other groups narrowed", is.cpus, is.who, is.backend,
				 is.moved, is.kthreads, is.groups);
			r = diag_report_add(rep, "isolate", DIAG_OK, msg, NULL);
		}
	} else {
		struct cgroupfs fs;
		if (cgroupfs_find(NULL, &fs) < 0)
			r = diag_report_add(rep, "isolate-unavailable", DIAG_WARNING, "isolate = yes: no cpuset "
					    "controller here (neither the v1 cpuset hierarchy nor cgroup2 with cpuset)",
					    "mount the cpuset controller, or run rtschedd where it is");
	}
	if (r < 0 || (r = boot_params(sys, &iso, isos, rep)) < 0)
		return r;
	size_t n = kthreads_on(sys, &iso, names, sizeof(names));
	if (n) {
		snprintf(msg, sizeof(msg), "%zu of the kernel's per-CPU threads stay on CPU %s whatever rtschedd "
			 "does: %s; they run when something there needs them (its interrupts, timers and per-CPU work)",
			 n, isos, names);
		r = diag_report_add(rep, "isolate-kthreads", DIAG_INFO, msg, NULL);
	}
	return r < 0 ? r : 0;
}
