/* proc.h: the one reader of each /proc file rtschedd looks at (stat,
 * status, limits, cgroup, comm, schedstat, timerslack_ns, task/), with
 * every field any module needs: the registry, rules, grants, the watchdog
 * and the diagnosis all read through here.
 *
 * The parsers (procparse.c) take a NUL-terminated buffer and trust nothing
 * in it, so they are unit-tested and fuzzed without a live /proc. The
 * readers (proc.c) open the file and hand its text to the parser; those
 * ending in _at take the directory /proc is mounted on (NULL: "/proc"), so
 * the diagnosis runs on fixture trees, and name pid 0 "self". Every function
 * returns 0 or -errno; -ESRCH means the task is gone. */
#ifndef RTSCHED_PROC_H
#define RTSCHED_PROC_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define PROC_COMM_MAX 16
#define PROC_GROUPS_MAX 64   /* supplementary groups kept of a status */

/* /proc/.../stat, fields as proc(5) numbers them. */
struct proc_stat {
	pid_t tid;                      /* 1 */
	char comm[PROC_COMM_MAX + 1];   /* 2, without its parentheses */
	char state;                     /* 3 */
	pid_t ppid;                     /* 4: 2 (kthreadd) for a kernel thread */
	unsigned flags;                 /* 9: PF_* (PROC_PF_KTHREAD...) */
	int nice;                       /* 19 */
	uint64_t cputime;               /* 14 + 15 (utime + stime), clock ticks */
	uint64_t starttime;             /* 22: clock ticks after boot; pins a tid's identity */
	int processor;                  /* 39: the CPU it last ran on */
	int rt_priority;                /* 40 */
	int policy;                     /* 41 */
};

/* Bits of a task's flags (stat field 9), from the kernel's PF_*. */
#define PROC_PF_KTHREAD 0x00200000u          /* a kernel thread */
#define PROC_PF_NO_SETAFFINITY 0x04000000u   /* its CPUs are the kernel's: sched_setaffinity fails */

/* /proc/.../status. */
struct proc_status {
	char name[PROC_COMM_MAX + 1];   /* Name:, "" if absent, cut at 16 bytes */
	pid_t tgid, pid;
	uid_t uid, euid;                /* real and effective */
	gid_t gid;                      /* real */
	size_t n_groups;                /* Groups:, the first PROC_GROUPS_MAX */
	gid_t groups[PROC_GROUPS_MAX];
	int seccomp;                    /* 0 none, 1 strict, 2 filter; -1 if the line is absent */
	bool have_capeff, have_capbnd;
	uint64_t capeff, capbnd;
	bool have_cpus;
	cpu_set_t cpus_allowed;         /* Cpus_allowed_list: */
};

/* /proc/.../limits: RLIMIT_RTPRIO and RLIMIT_RTTIME; RLIM_INFINITY for "unlimited". */
struct proc_rlimits {
	rlim_t rtprio_soft, rtprio_hard;
	rlim_t rttime_soft, rttime_hard;   /* microseconds */
};

/* /proc/.../cgroup: the cgroups of a task, paths relative to each hierarchy's root. */
struct proc_cgroup {
	bool has_cpu_v1, has_cpuset_v1, has_unified, has_systemd;
	char cpu_v1[1024], cpuset_v1[1024], unified[1024], systemd[1024];
};

/* --- parsers (procparse.c) ----------------------------------------------------- */

/* Parse stat text: fields 1 to 41 must be there; comm may hold spaces and
 * parentheses; rt_priority and policy must lie in 0..1000. -EINVAL otherwise. */
int proc_parse_stat(const char *buf, struct proc_stat *out);
/* Parse status text. -EINVAL without valid Tgid, Pid, Uid (real and
 * effective) and Gid lines; the other lines are optional. */
int proc_parse_status(const char *buf, struct proc_status *out);
/* Parse limits text. -EINVAL if a row is missing or malformed, -ERANGE for a
 * number past rlim_t. */
int proc_parse_limits(const char *buf, struct proc_rlimits *out);
/* Parse cgroup text. -EINVAL on a malformed line, -ENAMETOOLONG on a path
 * that does not fit. */
int proc_parse_cgroup(const char *buf, struct proc_cgroup *out);
/* The systemd unit a cgroup path belongs to: the innermost "*.service" or
 * "*.scope" component. *user_unit (if given) is set when it runs under a user
 * manager (below "user@UID.service"). -ENOENT if there is none, -ENOSPC if
 * it does not fit. */
int proc_unit_from_cgroup(const char *path, char *unit, size_t len, bool *user_unit);
/* The handlers' names of interrupt irq in /proc/interrupts text
 * ("virtio2-input.0", several joined by ", "), cut to len - 1 bytes:
 * whatever follows the per-CPU counts, the chip and the hardware irq.
 * -ENOENT if irq has no line, -EINVAL if its line is malformed. */
int proc_parse_irq_name(const char *buf, int irq, char *name, size_t len);

/* --- readers (proc.c) ------------------------------------------------------------ */

/* ROOT/PID/task/TID/stat (ROOT/PID/stat with tid 0). */
int proc_read_stat_at(const char *root, pid_t pid, pid_t tid, struct proc_stat *out);
/* ROOT/PID/status. */
int proc_read_status_at(const char *root, pid_t pid, struct proc_status *out);
/* ROOT/PID/limits. */
int proc_read_limits_at(const char *root, pid_t pid, struct proc_rlimits *out);
/* ROOT/PID/cgroup. */
int proc_read_cgroup_at(const char *root, pid_t pid, struct proc_cgroup *out);
/* ROOT/PID/timerslack_ns, in ns. -ENOENT before Linux 4.6, -EACCES without
 * the right to read it. */
int proc_read_timerslack_at(const char *root, pid_t pid, long long *ns);

/* A thread's own stat (/proc/TID/task/TID/stat, not the thread group's). */
int proc_read_stat(pid_t tid, struct proc_stat *out);
/* /proc/TID/status. */
int proc_read_status(pid_t tid, struct proc_status *out);
/* /proc/PID/task/TID/status: one thread's own credentials (a thread may
 * change its uids alone, by the raw system call). -ESRCH if tid is not a
 * thread of pid (or either is gone). */
int proc_read_task_status(pid_t pid, pid_t tid, struct proc_status *out);
/* Is tid a thread of process pid, and whom does it run as? One stat(2) of
 * the directory /proc/PID/task/TID, far cheaper than its status: *owner is
 * the thread's effective uid (the kernel gives a task's directories its
 * euid whether or not it is dumpable; ps reads it so). -ESRCH if tid is not
 * a thread of pid (or either is gone). */
int proc_task_owner(pid_t pid, pid_t tid, uid_t *owner);
/* The limits of /proc/PID/limits, by prlimit(2) where the kernel allows it
 * (CAP_SYS_RESOURCE; or root, for root's processes), else from the file. */
int proc_read_limits(pid_t pid, struct proc_rlimits *out);
/* /proc/PID/cgroup. */
int proc_read_cgroup(pid_t pid, struct proc_cgroup *out);
/* The name of a thread (/proc/PID/task/TID/comm) or with tid 0 of a process
 * (/proc/PID/comm), up to its first newline and cut to len - 1 bytes.
 * -ENODATA if empty. */
int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* /proc/PID/task/TID/schedstat: time on CPU, time waiting to run (ns), runs. */
int proc_read_schedstat(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count);
/* The names of an interrupt's handlers, from /proc/interrupts (as
 * proc_parse_irq_name()). */
int proc_read_irq_name(int irq, char *name, size_t len);
/* The tids of a process; *tids is malloc'd. */
int proc_list_tasks(pid_t pid, pid_t **tids, size_t *n);

/* Read an open file to its end into buf (NUL-terminated); /proc files may
 * come in several reads. *used gets the length. -EFBIG if it does not fit. */
int proc_read_fd(int fd, char *buf, size_t len, size_t *used);
/* A whole file (/proc/interrupts, a sysfs table) into a malloc'd *out,
 * NUL-terminated, its buffer doubled from 16 KiB up to max. 0, or the -errno
 * of open or read, -EFBIG over max, -ENOMEM. */
int proc_read_alloc(const char *path, size_t max, char **out);

/* A process held open for repeated reads of its rlimits: /proc/PID and
 * /proc/PID/limits opened once (opening and closing a /proc file is ~3 us of
 * a ~8 us read). The descriptors name that process, never a later one given
 * its pid: once it is gone they answer ESRCH. fds -1: not open. */
struct proc_pin {
	int dir_fd, limits_fd;
	pid_t pid;
};
#define PROC_PIN_NONE ((struct proc_pin){ -1, -1, 0 })
/* Open pin on process pid. 0 or -errno (-ESRCH: no such process). */
int proc_pin_open(struct proc_pin *pin, pid_t pid);
/* Close it (an unopened pin is fine) and mark it unopened. */
void proc_pin_close(struct proc_pin *pin);
/* The rlimits of the pinned process, if tid is one of its threads now (one
 * fstatat of task/TID, then the limits read again at offset 0, or before
 * it by prlimit(2) as proc_read_limits() would): what
 * /proc/TID/limits would say; *owner (if not NULL) gets what
 * proc_task_owner() would, the thread's effective uid. With starttime (not
 * NULL), the thread's start time too, read first: task/TID is opened once
 * and both its stat and its owner are read through that descriptor, so
 * they are one thread's, pinned before its owner is known, whatever
 * happens to the id meanwhile. -ESRCH if tid is not its thread, or it is
 * gone, or pin is not open; else as proc_read_limits(). */
int proc_pin_read_limits(const struct proc_pin *pin, pid_t tid, struct proc_rlimits *out, uid_t *owner,
			 uint64_t *starttime);
/* The status of the pinned process (its main thread's, through the pinned
 * directory: never a later process given its pid). -ESRCH if it is gone or
 * pin is not open. */
int proc_pin_read_status(const struct proc_pin *pin, struct proc_status *out);

#endif
