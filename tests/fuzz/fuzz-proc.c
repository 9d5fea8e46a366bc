/* fuzz-proc.c: libFuzzer target for the /proc parsers of proc.h, the one
 * parser of each file: proc_parse_stat(), proc_parse_status(),
 * proc_parse_limits(), proc_parse_cgroup(), proc_unit_from_cgroup() and
 * proc_parse_irq_name() (/proc/interrupts: drivers name their handlers),
 * and of /proc/interrupts as sys/irqinfo.h reads it (irqinfo_parse_interrupts(),
 * the action-name splitter and the queue number of a vector's name, which
 * drivers make of interface names an administrator chose).
 *
 * Some of that text is shaped by unprivileged users: any process names its
 * threads (comm in stat, Name: in status: prctl PR_SET_NAME, up to 15
 * bytes, spaces and parentheses included) and a user manager names its own
 * cgroups. The input goes to every parser as the NUL-terminated buffer
 * their readers hand them; results must keep the promises of proc.h. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/irqinfo.h"
#include "daemon/sys/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz-proc: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                     \
			abort();                                                \
		}                                                               \
	} while (0)

/* A path the parser copied must be a NUL-terminated absolute path. */
static void check_cg_path(bool has, const char *path, size_t size)
{
	char unit[256];
	bool user;

	if (!has)
		return;
	CHECK(memchr(path, '\0', size) != NULL);
	CHECK(path[0] == '/');
	if (proc_unit_from_cgroup(path, unit, sizeof(unit), &user) == 0)
		CHECK(strlen(unit) < sizeof(unit) && strchr(unit, '/') == NULL);
}

static bool count_action(const char *name, void *ud)
{
	CHECK(name[0] != '\0' && name[0] != ' ' && strchr(name, ',') == NULL);
	(*(size_t *)ud)++;
	return false;
}

/* The input as /proc/interrupts, as an action list and as a vector's name. */
static void fuzz_interrupts(const char *s)
{
	struct irq_line *l;
	size_t n, names = 0;
	int r = irqinfo_parse_interrupts(s, &l, &n);

	CHECK(r == 0 || r == -EINVAL);
	for (size_t i = 0; r == 0 && i < n; i++) {
		CHECK(l[i].irq >= 0 && l[i].hwirq >= -1);
		CHECK(memchr(l[i].actions, '\0', sizeof(l[i].actions)) && memchr(l[i].chip, '\0', sizeof(l[i].chip)));
		CHECK(strchr(l[i].actions, '\n') == NULL);
		irqinfo_each_action(l[i].actions, count_action, &names);
	}
	if (r == 0)
		free(l);
	irqinfo_each_action(s, count_action, &names);
	r = irqinfo_queue_of(s, s[0] ? s + 1 : NULL);
	CHECK(r >= -1 && r < 100000);
}

static void fuzz_proc(const char *s)
{
	static struct proc_cgroup cg;
	struct proc_status status;
	struct proc_rlimits lim;
	struct proc_stat st;
	char unit[64];
	int r;

	memset(&st, 0xa5, sizeof(st));
	r = proc_parse_stat(s, &st);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(memchr(st.comm, '\0', sizeof(st.comm)) && strlen(st.comm) <= PROC_COMM_MAX);
		CHECK(st.tid > 0 && st.processor >= 0);
		CHECK(st.policy >= 0 && st.policy <= 1000 && st.rt_priority >= 0 && st.rt_priority <= 1000);
	}

	memset(&status, 0xa5, sizeof(status));
	r = proc_parse_status(s, &status);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(status.tgid > 0 && status.pid > 0);
		CHECK(memchr(status.name, '\0', sizeof(status.name)) != NULL);
		CHECK(status.n_groups <= PROC_GROUPS_MAX);
		/* proc.h: 0 none, 1 strict, 2 filter; -1 if the line is absent */
		CHECK(status.seccomp >= -1 && status.seccomp <= 2);
	}

	r = proc_parse_limits(s, &lim);
	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);

	r = proc_parse_cgroup(s, &cg);
	CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
	if (r == 0) {
		check_cg_path(cg.has_unified, cg.unified, sizeof(cg.unified));
		check_cg_path(cg.has_cpu_v1, cg.cpu_v1, sizeof(cg.cpu_v1));
		check_cg_path(cg.has_cpuset_v1, cg.cpuset_v1, sizeof(cg.cpuset_v1));
		check_cg_path(cg.has_systemd, cg.systemd, sizeof(cg.systemd));
	}
	/* as /proc/interrupts: a few irqs, and a name buffer of each size */
	for (int irq = 0; irq < 3; irq++) {
		char name[32];

		memset(name, 0xa5, sizeof(name));
		r = proc_parse_irq_name(s, irq, name, (size_t)irq * 7 + 1);
		CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
		if (r == 0)
			CHECK(strlen(name) < (size_t)irq * 7 + 1);
	}
	/* the input as one cgroup path, too */
	r = proc_unit_from_cgroup(s, unit, sizeof(unit), NULL);
	CHECK(r == 0 || r == -ENOENT || r == -ENOSPC);
	if (r == 0)
		CHECK(strlen(unit) < sizeof(unit));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* the readers' buffers: 2 KiB (stat), 4 KiB (limits); status and
	 * cgroup grow, but their text is a few KiB */
	if (size > 16384)
		return 0;
	/* exactly size + 1 bytes, so a read past the NUL is an ASan report */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_proc(s);
	fuzz_interrupts(s);
	free(s);
	return 0;
}
