/* cgroupfs.c: the cpuset controller's files (see cgroupfs.h). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/cgroupfs.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/proc.h"

int cgroupfs_find(const char *root, struct cgroupfs *out)
{
	char p[PATH_MAX], ctl[512];

	if (!root)
		root = "/sys/fs/cgroup";
	out->version = CGROUPFS_NONE;
	out->mount[0] = '\0';
	if (kfile_path(p, sizeof(p), root, "/cpuset/cpuset.cpus") == 0 && access(p, F_OK) == 0) {
		out->version = CGROUPFS_V1;
		return kfile_path(out->mount, sizeof(out->mount), root, "/cpuset");
	}
	for (int i = 0; i < 2; i++) {
		const char *sub = i ? "/unified" : "";

		if (kfile_path(p, sizeof(p), root, "%s/cgroup.controllers", sub) < 0 ||
		    kfile_read(AT_FDCWD, p, ctl, sizeof(ctl)) < 0)
			continue;
		for (char *save = NULL, *w = strtok_r(ctl, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (strcmp(w, "cpuset") == 0) {
				out->version = CGROUPFS_V2;
				return kfile_path(out->mount, sizeof(out->mount), root, "%s", sub);
			}
	}
	return -ENOENT;
}

int cgroupfs_task_group(const struct cgroupfs *fs, pid_t tid, char *path, size_t len)
{
	struct proc_cgroup cg;
	const char *g;
	int r;

	if ((r = proc_read_cgroup(tid, &cg)) < 0)
		return r;
	if (fs->version == CGROUPFS_V1 && cg.has_cpuset_v1)
		g = cg.cpuset_v1;
	else if (fs->version == CGROUPFS_V2 && cg.has_unified)
		g = cg.unified;
	else
		return -ENOENT;
	return snprintf(path, len, "%s", g) >= (int)len ? -ENAMETOOLONG : 0;
}

int cgroupfs_group_cpus(const struct cgroupfs *fs, const char *path, cpu_set_t *cpus)
{
	char p[PATH_MAX], g[PATH_MAX], buf[4096];
	int r;

	if (snprintf(g, sizeof(g), "%s", strcmp(path, "/") ? path : "") >= (int)sizeof(g))
		return -ENAMETOOLONG;
	for (;;) {
		r = kfile_path(p, sizeof(p), fs->mount, "%s/%s", g,
			       fs->version == CGROUPFS_V1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective");
		if (r == 0 && (r = kfile_read(AT_FDCWD, p, buf, sizeof(buf))) == 0)
			return buf[0] ? cpulist_parse(buf, cpus, NULL) : -ENOENT;
		/* a v2 group without the controller enabled has no file: its parent's CPUs hold */
		char *slash = strrchr(g, '/');
		if (fs->version != CGROUPFS_V2 || r != -ENOENT || !slash)
			return r;
		*slash = '\0';
	}
}

int cgroupfs_own_cpus(cpu_set_t *cpus)
{
	struct cgroupfs fs;
	char g[PATH_MAX];

	if (cgroupfs_find(NULL, &fs) == 0 && cgroupfs_task_group(&fs, getpid(), g, sizeof(g)) == 0) {
		if (fs.version == CGROUPFS_V1 && strcmp(g, "/" CGROUPFS_HOUSEKEEPING) == 0)
			snprintf(g, sizeof(g), "/");
		if (cgroupfs_group_cpus(&fs, g, cpus) == 0)
			return 0;
	}
	return sched_getaffinity(0, sizeof(*cpus), cpus) < 0 ? -errno : 0;
}

bool cgroupfs_path_ok(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *p = path + 1; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
				return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}
