/* bpfobs.h: an eBPF observer of chosen threads' wake-ups, for threads that
 * record nothing themselves (olad, GStreamer, PipeWire, cyclictest). Per
 * watched thread the kernel fills two histograms in src/shared/hist.h's
 * layout:
 *
 *   BPFOBS_TIMER   timer lateness: from the requested expiry of the hrtimer
 *                  whose callback woke the thread (cyclictest's deadline:
 *                  clock_nanosleep, nanosleep, the timeouts of poll, select,
 *                  epoll_wait and futex waits, timerfd, POSIX timers) to the
 *                  thread getting the CPU. Only wake-ups by a timer count:
 *                  a poll that returns for data gives no sample.
 *   BPFOBS_WAKEUP  wake-up latency: from any wake-up (sched_wakeup,
 *                  sched_wakeup_new) to getting the CPU, as runqlat
 *                  measures it, but without runqlat's preempted-and-waiting
 *                  intervals.
 *
 * Privileges. bpfobs_new() needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN).
 * Everything after it works with no capability at all, on every kernel:
 * watch, unwatch and read go through mmap()ed maps, never the bpf() syscall
 * (which on Linux < 6.5 with kernel.unprivileged_bpf_disabled refuses every
 * command, even on an fd the process holds), and stats come from
 * /proc/self/fdinfo. So the daemon loads, then drops both capabilities.
 *
 * Late wake-ups and their culprits. A watched thread given a threshold
 * (bpfobs_set_late) has its wake-ups later than that counted (timer
 * lateness if a timer woke it, else wake-up latency); loaded with culprit
 * tracking, each such wake-up also arrives as a struct bpfobs_late (see
 * bpfobs_abi.h) through bpfobs_events_read(), with the segments its CPU ran
 * meanwhile. Reading needs no capability either (a mmapped ring buffer).
 *
 * Memory (kernel, vmalloc, charged to the daemon's cgroup): 2 bytes per
 * possible tid (kernel.pid_max at load: 64 KiB for 32768, 8 MiB for
 * systemd's 4194304) plus 29,120 bytes per slot (two struct hist), each map
 * rounded up to pages; with culprit tracking 5.2 KiB per CPU and a 1 MiB
 * ring buffer. bpfobs_stats() reports them. Threads whose tid is >= pid_max
 * at load (pid_max raised later) cannot be watched: -ERANGE.
 *
 * Tids are those of the initial pid namespace, as the kernel's task->pid. A
 * tid is reused after its thread exits: unwatch it when the thread leaves.
 * Not thread-safe: one thread of the daemon calls all of these. */
#ifndef RTSCHED_BPFOBS_H
#define RTSCHED_BPFOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "shared/hist.h"
#include "daemon/observe/bpf/bpfobs_abi.h"

enum bpfobs_kind {
	BPFOBS_TIMER = 0,
	BPFOBS_WAKEUP = 1,
};
#define BPFOBS_NPROGS 10

struct bpfobs;

struct bpfobs_prog_stats {
	const char *name;     /* the program (bpftool prog show calls it so) */
	uint64_t run_time_ns; /* total time spent in it, if stats are on */
	uint64_t run_cnt;     /* times it ran, i.e. events, if stats are on */
	uint64_t misses;      /* events it missed: it was already running on that CPU */
};

struct bpfobs_stats {
	bool enabled;         /* kernel.bpf_stats_enabled: else run_* are 0 */
	uint64_t run_time_ns; /* over all programs */
	uint64_t run_cnt;
	uint64_t misses;      /* events lost to the kernel's recursion guard */
	struct bpfobs_prog_stats prog[BPFOBS_NPROGS];
	size_t filter_bytes;  /* kernel memory of the tid filter */
	size_t slot_bytes;    /* kernel memory of the histogram slots */
	size_t cpu_bytes;     /* kernel memory of the per-CPU state (with culprit tracking, the segment rings) */
	size_t ring_bytes;    /* kernel memory of the ring buffer of late wake-ups */
	bool culprits;        /* loaded with culprit tracking */
	unsigned watched, max_threads;
	pid_t tid_limit;      /* tids below it can be watched (pid_max at load) */
	uint64_t races;       /* writer overlaps seen in the kernel (0 expected) */
};

/* Load and attach the programs, sized for max_threads (1..65535) watched
 * threads, with culprit tracking if culprits. On failure a -errno, one per
 * reason, and the reason in why:
 *   -EINVAL      max_threads out of range
 *   -ENOENT      the kernel has no BTF (/sys/kernel/btf/vmlinux)
 *   -EPERM       missing CAP_BPF / CAP_PERFMON (or the kernel refused them)
 *   -EACCES      kernel lockdown (confidentiality) forbids BPF tracing
 *   -EOPNOTSUPP  kernel too old (before 5.12) or lacking a tracepoint
 *   -ENOSYS      no bpf() syscall (CONFIG_BPF_SYSCALL off)
 *   -ENOEXEC     the verifier rejected a program (why has its last words)
 *   -ENOMEM      could not allocate or map the maps
 *   -ENOPKG      built without BPF support (bpfobs_none.c)
 *   other        from libbpf, with its message. */
int bpfobs_new(struct bpfobs **ret, unsigned max_threads, bool culprits, char *why, size_t len);
/* Detach everything and free; NULL is fine. Needs no capability. */
void bpfobs_free(struct bpfobs *o);

/* Start observing tid with fresh histograms; its slot in *slot (may be
 * NULL). -EEXIST if already watched (*slot still set), -ENOSPC if all
 * max_threads slots are in use, -ERANGE if tid <= 0 or >= the tid limit. */
int bpfobs_watch(struct bpfobs *o, pid_t tid, unsigned *slot);
/* Stop observing tid; its histograms are gone. -ENOENT if not watched. */
int bpfobs_unwatch(struct bpfobs *o, pid_t tid);
/* A consistent copy of tid's histogram of this kind (hist_snapshot, so
 * hist.c's queries work on it). -ENOENT if not watched, -EINVAL for a bad
 * kind, -EAGAIN if the kernel kept writing during every attempt. */
int bpfobs_read(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, struct hist *out);
/* Samples of this kind tid lost since it was watched: wake-ups after which
 * it ran, then slept again, without the kernel tracing its switch-in (seen
 * on this project's test VM when the CPU came from certain tasks; stock
 * kernels trace every switch). -ENOENT if not watched. */
int bpfobs_lost(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, uint64_t *lost);
/* tid's slot number (as bpfobs_watch() gave it), or -ENOENT. */
int bpfobs_slot(struct bpfobs *o, pid_t tid);
/* Wake-ups of tid later than late_ns are late from now on (0: none). */
int bpfobs_set_late(struct bpfobs *o, pid_t tid, uint64_t late_ns);
/* tid's late wake-ups since it was watched, by kind, and how many of them
 * found the ring buffer full (their culprits are not known). */
int bpfobs_late(struct bpfobs *o, pid_t tid, uint64_t late[2], uint64_t *dropped);
/* The descriptor to poll for late wake-ups' records; -1 without culprit
 * tracking. */
int bpfobs_events_fd(struct bpfobs *o);
/* Hand the records waiting to fn, oldest first, at most RB_BATCH
 * (bpfload.h) of them; the number handed, or -errno. A record is valid only during the call. */
int bpfobs_events_read(struct bpfobs *o, void (*fn)(void *ud, const struct bpfobs_late *ev), void *ud);
/* Run time and event counts per program (when kernel.bpf_stats_enabled is
 * 1), memory and slots. -EIO if /proc/self/fdinfo could not be read. */
int bpfobs_stats(struct bpfobs *o, struct bpfobs_stats *st);
/* "timer" or "wakeup". */
const char *bpfobs_kind_name(enum bpfobs_kind kind);

#endif
