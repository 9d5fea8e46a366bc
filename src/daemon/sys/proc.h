/* proc.h: what rtschedd reads from /proc about a task. The parsers take a
 * buffer so they can be tested and fuzzed without a live /proc. */
#ifndef RTSCHED_PROC_H
#define RTSCHED_PROC_H

#include <stdint.h>
#include <sys/types.h>

#define PROC_COMM_MAX 16

struct proc_stat {
	char comm[PROC_COMM_MAX + 1];
	char state;
	pid_t ppid;
	uint64_t starttime; /* field 22: clock ticks after boot; pins a tid's identity */
};

struct proc_status {
	pid_t tgid;
	uid_t uid;  /* real uid */
	uid_t euid; /* effective uid */
	gid_t gid;  /* real gid */
};

/* Parse /proc/.../stat text; comm may hold spaces and parentheses. */
int proc_parse_stat(const char *buf, struct proc_stat *out);
/* Parse /proc/.../status text for Tgid, Uid and Gid. */
int proc_parse_status(const char *buf, struct proc_status *out);
/* Read /proc/PID/NAME whole (a small file: limits, cgroup...); -ESRCH if gone. */
int proc_read_text(pid_t pid, const char *name, char *buf, size_t len);
/* /proc/PID/task/TID/schedstat: time on CPU, time waiting to run (ns), runs. */
int proc_read_schedstat(pid_t pid, pid_t tid, uint64_t *run_ns, uint64_t *delay_ns, uint64_t *count);
/* Read a thread's own stat (/proc/TID/task/TID/stat). -ESRCH if gone. */
int proc_read_stat(pid_t tid, struct proc_stat *out);
/* Read /proc/TID/status. -ESRCH if gone. */
int proc_read_status(pid_t tid, struct proc_status *out);
/* The tids of a process; *tids is malloc'd. */
int proc_list_tasks(pid_t pid, pid_t **tids, size_t *n);

#endif
