/* test-cpu.c: PM QoS and CPU isolation (src/daemon/cpu) on fixture trees:
 * a private directory stands for /sys/devices/system/cpu, the cgroup root
 * and the workqueue mask, so what pmqos and isolate write is read back from
 * plain files. Covered: a probe's resume latency held and given back, "n/a"
 * for 0, a CPU already stricter left alone, a value someone else wrote
 * meanwhile left alone, the originals taken over from a crashed run's
 * journal (and malformed lines dropped), a restart leaving them in place;
 * isolation taken over from a journal and released: the workqueue mask, the
 * root group's load balancing, a narrowed group's CPUs and a thread's
 * affinity put back, forged paths
 * refused; a housekeeping group that is not this run's (isolate-busy) and
 * probes that want every CPU (isolate-no-housekeeping) change nothing. The
 * real kernel's side is tests/isolate.sh. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/sys/kfile.h"
#include "unit-util.h"

static char dir[PATH_MAX], sys[PATH_MAX + 8], cg[PATH_MAX + 8];
static sd_event *event;
static struct registry *reg;

/* dir/rel with its parent directories, holding text. */
static void mkfile(const char *rel, const char *text)
{
	char p[3 * PATH_MAX], cmd[3 * PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	*strrchr(p, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	ck_assert_int_eq(system(cmd), 0);
	unit_write(p, strrchr(rel, '/') + 1, text);
}

static void setup(void)
{
	unit_tmpdir(dir, "test-cpu");
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	mkfile("sys/sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us", "0\n");
	mkfile("sys/sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us", "0\n");
	mkfile("sys/sys/devices/virtual/workqueue/cpumask", "3\n");
	mkfile("cg/cpuset/cpuset.cpus", "0-1\n");
	mkfile("cg/cpuset/cpuset.mems", "0\n");
	mkfile("cg/cpuset/cpuset.sched_load_balance", "1\n");
	mkfile("cg/cpuset/tasks", "");
	mkfile("cg/cpuset/docker/cpuset.cpus", "0\n");
	mkfile("cg/cpuset/docker/tasks", "");
	ck_assert_int_ge(sd_event_new(&event), 0);
	ck_assert_int_eq(registry_new(&reg, event), 0);
}

static void teardown(void)
{
	registry_free(reg, false);
	sd_event_unref(event);
	unit_rmdir(dir);
}

/* The text of a fixture file, relative to dir. */
static const char *file(const char *rel)
{
	static char buf[256];
	char p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (kfile_read(AT_FDCWD, p, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(none)");
	return buf;
}

static void put(const char *rel, const char *text)
{
	char p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	ck_assert_int_eq(kfile_write(AT_FDCWD, p, text), 0);
}

#define QOS1 "sys/sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us"
#define QOS0 "sys/sys/devices/system/cpu/cpu0/power/pm_qos_resume_latency_us"
#define WQ "sys/sys/devices/virtual/workqueue/cpumask"

/* A configuration with a probe on CPU 1 and the given keys. */
static struct config *probe_config(const char *keys)
{
	char text[256];

	snprintf(text, sizeof(text), "[probe p]\ncpu = 1\n%s", keys);
	return unit_config(dir, text);
}

/* A state journal with text in it, opened as at start. */
static struct state *journal(const char *text, const struct config *c)
{
	struct state *st = NULL;
	char p[PATH_MAX + 16];

	unit_write(dir, "state", text);
	snprintf(p, sizeof(p), "%s/state", dir);
	ck_assert_int_eq(state_open(&st, reg, c, p), 0);
	return st;
}

START_TEST(test_resume_latency)
{
	struct pmqos_env env = { .sys = sys, .dma_latency = "/nonexistent" };
	struct config *c = probe_config("resume-latency-us = 0\n"), *none = unit_config(dir, "[daemon]\n");
	struct pmqos *q;
	char buf[256];

	ck_assert_int_eq(pmqos_new(&q, &env, NULL), 0);
	pmqos_update(q, c, reg);
	ck_assert_str_eq(file(QOS1), "n/a");         /* 0: no idle state at all */
	ck_assert_str_eq(file(QOS0), "0");           /* the other CPU keeps its idle states */
	pmqos_cpus_state(q, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "cpu 1 at n/a: no idle state (was 0)"), "%s", buf);
	pmqos_update(q, none, reg);
	ck_assert_str_eq(file(QOS1), "0");           /* given back */
	pmqos_cpus_state(q, buf, sizeof(buf));
	ck_assert_str_eq(buf, "off");
	/* a CPU already as strict: nothing taken, nothing given back */
	put(QOS1, "5");
	config_free(c);
	c = probe_config("resume-latency-us = 20\n");
	pmqos_update(q, c, reg);
	ck_assert_str_eq(file(QOS1), "5");
	pmqos_update(q, none, reg);
	ck_assert_str_eq(file(QOS1), "5");
	/* looser than asked: held at 20 and back to 50; a value someone else
	 * writes meanwhile is theirs */
	put(QOS1, "50");
	pmqos_update(q, c, reg);
	ck_assert_str_eq(file(QOS1), "20");
	put(QOS1, "7");
	pmqos_update(q, none, reg);
	ck_assert_str_eq(file(QOS1), "7");
	pmqos_cpus_state(q, buf, sizeof(buf));
	ck_assert_str_eq(buf, "off");
	/* cpu-dma-latency: not held without real-time threads */
	ck_assert_str_eq(pmqos_global_state(q, none, buf, sizeof(buf)), "off");
	pmqos_free(q, true);
	config_free(c);
	config_free(none);
}
END_TEST

START_TEST(test_resume_latency_journal)
{
	struct pmqos_env env = { .sys = sys, .dma_latency = "/nonexistent" };
	struct config *none = unit_config(dir, "[daemon]\n"), *c = probe_config("resume-latency-us = 0\n");
	struct state *st;
	struct pmqos *q;

	/* a crashed run held CPU 1 (it was 25) and wrote junk */
	put(QOS1, "n/a");
	st = journal("Q 1 25\nQ 9999 3\nQ 0 x\nQ 0\n", none);
	ck_assert_int_eq(pmqos_new(&q, &env, st), 0);
	pmqos_update(q, none, reg);
	ck_assert_str_eq(file(QOS1), "25");
	ck_assert_str_eq(file(QOS0), "0");
	pmqos_free(q, true);
	state_free(st);
	/* held again, and a restart leaves it for the next run: the journal has
	 * its original */
	st = journal("", none);
	ck_assert_int_eq(pmqos_new(&q, &env, st), 0);
	pmqos_update(q, c, reg);
	ck_assert_str_eq(file(QOS1), "n/a");
	pmqos_free(q, false);
	state_free(st);
	ck_assert_str_eq(file(QOS1), "n/a");
	ck_assert_msg(strstr(file("state"), "Q 1 25"), "journal: %s", file("state"));
	config_free(c);
	config_free(none);
}
END_TEST

START_TEST(test_isolate_journal)
{
	struct isolate_env env = { .cgroup = cg, .sys = sys };
	struct config *none = unit_config(dir, "[daemon]\n");
	struct isolate_status is;
	struct worker w;
	struct isolate *m;
	struct state *st;
	cpu_set_t one, aff;
	char text[2 * PATH_MAX];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	/* a crashed run isolated CPU 1: the mask, a narrowed group, a thread's
	 * affinity; and forged lines, which must not be followed */
	worker_start(&w);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ck_assert_int_eq(sched_setaffinity(w.tid, sizeof(one), &one), 0);
	put(WQ, "1");
	put("cg/cpuset/cpuset.sched_load_balance", "0");
	put("cg/cpuset/docker/cpuset.cpus", "0");
	ck_assert_int_eq(mkdir(strcat(strcpy(text, dir), "/cg/cpuset/rtschedd.housekeeping"), 0755), 0);
	snprintf(text, sizeof(text), "S 0 v1 1\nW 0 3\nL 0 1\nG 0 0-1 /docker\nA %d %" PRIu64 " 0-1\n"
		 "G 1 0-1 /../../etc\nM 7 x /a\nG 2 0-1 relative\nU 3 - a/b\nZ 1 2\n", (int)w.tid,
		 unit_starttime(w.tid));
	st = journal(text, none);
	ck_assert_int_eq(isolate_new(&m, &env, st, reg), 0);
	ck_assert(isolate_active(m));
	isolate_update(m, none);
	ck_assert(!isolate_active(m));
	ck_assert_str_eq(file(WQ), "3");
	ck_assert_str_eq(file("cg/cpuset/cpuset.sched_load_balance"), "1");
	ck_assert_str_eq(file("cg/cpuset/docker/cpuset.cpus"), "0-1");
	ck_assert_int_eq(access(strcat(strcpy(text, dir), "/cg/cpuset/rtschedd.housekeeping"), F_OK), -1);
	ck_assert_int_eq(sched_getaffinity(w.tid, sizeof(aff), &aff), 0);
	ck_assert_int_ge(CPU_COUNT(&aff), 2);
	isolate_status(m, &is);
	ck_assert_str_eq(is.cpus, "");
	ck_assert_ptr_null(is.code);
	isolate_free(m, true);
	state_free(st);
	/* the journal holds nothing of it any more */
	char p[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/state", dir);
	ck_assert_int_eq(state_open(&st, reg, none, p), 0);
	ck_assert_int_eq(isolate_new(&m, &env, st, reg), 0);
	ck_assert(!isolate_active(m));
	isolate_free(m, true);
	state_free(st);
	worker_stop(&w);
	config_free(none);
}
END_TEST

/* What cannot be isolated gets its code and changes nothing. (Isolating
 * on the kernel's own files is tests/isolate.sh's: cgroupfs makes a new
 * group's files itself, a fixture directory cannot.) */
START_TEST(test_isolate_refused)
{
	struct isolate_env env = { .cgroup = cg, .sys = sys };
	struct config *c = probe_config("isolate = yes\n");
	struct config *both = unit_config(dir, "[probe p]\ncpu = 1\nisolate = yes\n[probe q]\ncpu = 0\nisolate = yes\n");
	struct isolate_status is;
	struct isolate *m;
	char hk[2 * PATH_MAX];

	if (sysconf(_SC_NPROCESSORS_ONLN) != 2)
		return; /* probes on CPUs 0 and 1 are every CPU only here */
	ck_assert_int_eq(isolate_new(&m, &env, NULL, reg), 0);
	/* a housekeeping group this run did not make: someone else's */
	snprintf(hk, sizeof(hk), "%s/cg/cpuset/rtschedd.housekeeping", dir);
	ck_assert_int_eq(mkdir(hk, 0755), 0);
	isolate_update(m, c);
	ck_assert(!isolate_active(m));
	isolate_status(m, &is);
	ck_assert_str_eq(is.code, ISOLATE_CODE_BUSY);
	ck_assert_str_eq(is.who, "probe p");
	ck_assert_str_eq(file(WQ), "3");
	/* two probes that want every CPU between them */
	isolate_update(m, both);
	ck_assert(!isolate_active(m));
	isolate_status(m, &is);
	ck_assert_str_eq(is.code, ISOLATE_CODE_NO_HOUSEKEEPING);
	isolate_free(m, true);
	ck_assert_int_eq(access(hk, F_OK), 0);       /* not ours: left alone */
	ck_assert_str_eq(file(WQ), "3");
	config_free(c);
	config_free(both);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_resume_latency);
	tcase_add_test(tc, test_resume_latency_journal);
	tcase_add_test(tc, test_isolate_journal);
	tcase_add_test(tc, test_isolate_refused);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
