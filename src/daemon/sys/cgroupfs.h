/* cgroupfs.h: the cpuset controller's cgroup files, where the kernel keeps
 * the CPUs each group of tasks may use: found under the cgroup root as
 * diag does (the v1 cpuset hierarchy at ROOT/cpuset; cgroup2 at ROOT, or
 * at ROOT/unified in systemd's hybrid layout), a task's group in it, a
 * group's CPUs, and the writes that move a task into a group. Paths of
 * groups are relative to the hierarchy's root and start with "/". */
#ifndef RTSCHED_CGROUPFS_H
#define RTSCHED_CGROUPFS_H

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

enum { CGROUPFS_NONE, CGROUPFS_V1, CGROUPFS_V2 };

struct cgroupfs {
	int version;            /* CGROUPFS_*: where the cpuset controller is */
	char mount[PATH_MAX];   /* the hierarchy's root directory */
};

/* Find the cpuset controller below root (NULL: /sys/fs/cgroup). cgroup2
 * counts only if its root lists cpuset in cgroup.controllers. 0, or
 * -ENOENT with version CGROUPFS_NONE. */
int cgroupfs_find(const char *root, struct cgroupfs *out);
/* The group of task tid in fs's hierarchy ("/" for the root), from
 * /proc/TID/cgroup. 0, -ENOENT if it has none there, -errno. */
int cgroupfs_task_group(const struct cgroupfs *fs, pid_t tid, char *path, size_t len);
/* The CPUs the group at path may use now (v1 cpuset.effective_cpus, v2
 * cpuset.cpus.effective of it or the nearest parent that has one). */
int cgroupfs_group_cpus(const struct cgroupfs *fs, const char *path, cpu_set_t *cpus);
/* The group isolate = yes moves the root group's tasks to (the v1
 * hierarchy), below the root. */
#define CGROUPFS_HOUSEKEEPING "rtschedd.housekeeping"
/* The CPUs of the calling process's own cpuset, or its affinity where no
 * cpuset tells; a process born in the housekeeping group (an rtschedd
 * started while CPUs are isolated) has the root group's. 0 or -errno. */
int cgroupfs_own_cpus(cpu_set_t *cpus);
/* A group path is one rtschedd writes to only if each component is a
 * plain name (no "." or "..", no blank or control character). */
bool cgroupfs_path_ok(const char *path);

#endif
