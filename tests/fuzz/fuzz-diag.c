/* fuzz-diag.c: libFuzzer target for the parsers of /proc and kernel text
 * that the diagnosis reads (diag.h): /proc/PID/limits, status and cgroup,
 * the unit of a cgroup path, the kernel command line, isolcpus-style CPU
 * lists and the policy fields of stat.
 *
 * Some of that text is shaped by unprivileged users: a thread names itself
 * (Name: in status) and a user manager names its own cgroups. The input is
 * given to every parser as the NUL-terminated buffer their readers hand
 * them; results must keep the promises of diag.h. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diag/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz-diag: check failed: %s (%s:%d)\n", \
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
	if (diag_unit_from_cgroup(path, unit, sizeof(unit), &user) == 0)
		CHECK(strlen(unit) < sizeof(unit) && strchr(unit, '/') == NULL);
}

static void fuzz_diag(const char *s)
{
	static struct diag_cgroup cg;
	struct diag_rlimits lim;
	struct diag_status ds;
	char val[64];
	cpu_set_t set;
	int r, policy, prio;

	r = diag_parse_limits(s, &lim);
	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);

	r = diag_parse_status(s, &ds);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(ds.pid > 0);
		CHECK(memchr(ds.name, '\0', sizeof(ds.name)) != NULL);
		/* diag.h: 0 none, 1 strict, 2 filter; -1 if the line is absent */
		CHECK(ds.seccomp >= -1 && ds.seccomp <= 2);
	}

	r = diag_parse_cgroup(s, &cg);
	CHECK(r == 0 || r == -EINVAL || r == -ENAMETOOLONG);
	if (r == 0) {
		check_cg_path(cg.has_unified, cg.unified, sizeof(cg.unified));
		check_cg_path(cg.has_cpu_v1, cg.cpu_v1, sizeof(cg.cpu_v1));
		check_cg_path(cg.has_cpuset_v1, cg.cpuset_v1, sizeof(cg.cpuset_v1));
		check_cg_path(cg.has_systemd, cg.systemd, sizeof(cg.systemd));
	}
	/* the input as one cgroup path, too */
	r = diag_unit_from_cgroup(s, val, sizeof(val), NULL);
	CHECK(r == 0 || r == -ENOENT || r == -ENOSPC);
	if (r == 0)
		CHECK(strlen(val) < sizeof(val));

	r = diag_cmdline_param(s, "isolcpus", val, sizeof(val));
	CHECK(r == 0 || r == -ENOENT || r == -ENOSPC);
	if (r == 0) {
		CHECK(strlen(val) < sizeof(val));
		r = diag_parse_cpu_param(val, &set);
		CHECK(r == 0 || r < 0);
	}
	r = diag_parse_cpu_param(s, &set);
	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);

	r = diag_parse_stat_policy(s, &policy, &prio);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		CHECK(policy >= 0 && policy <= 1000 && prio >= 0 && prio <= 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* the readers' buffers hold at most a few KiB */
	if (size > 16384)
		return 0;
	/* exactly size + 1 bytes, so a read past the NUL is an ASan report */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_diag(s);
	free(s);
	return 0;
}
