/* scan.c: the watchdog thread's view of the machine (see safety_int.h):
 * every real-time thread, its run time, where it may run, whose it is. It
 * runs at SCHED_FIFO 99 while the main loop may be stopped inside any of
 * glibc's locks, so it calls no function that could take one: no stdio, no
 * malloc, no opendir (which mallocs); only system calls, the lock-free
 * parser of /proc's stat (procparse.c) and its own number formatting and
 * parsing, into memory allocated before the thread began.
 *
 * Where the daemon could load them, it reads the tasks through BPF task
 * iterators (observe/bpf/tasks.h): no path lookup, so no wait on a lookup
 * of the same name that a starved task has in flight (d_alloc_parallel),
 * which can hold a /proc reader for as long as that task is starved. Else
 * it reads /proc, which such a wait can delay. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon/observe/bpf/tasks.h"
#include "daemon/sys/proc.h"
#include "daemon/watchdog/safety_int.h"

/* struct linux_dirent64, as getdents64(2) returns it */
struct dent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Digits only, into *v; false otherwise. */
static bool parse_id(const char *s, pid_t *v)
{
	long n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > 0x3fffffff)
			return false;
		n = n * 10 + (*s - '0');
	}
	*v = (pid_t)n;
	return n > 0;
}

/* n in decimal at p; returns the end. */
static char *put_id(char *p, pid_t n)
{
	char tmp[16];
	int k = 0;

	do
		tmp[k++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	while (k)
		*p++ = tmp[--k];
	return p;
}

/* "PID/task/TID/NAME" (tid 0: "PID/NAME") into buf, relative to /proc. */
static void task_rel(char *buf, pid_t pid, pid_t tid, const char *name)
{
	char *p = put_id(buf, pid);

	if (tid) {
		memcpy(p, "/task/", 6);
		p = put_id(p + 6, tid);
	}
	*p++ = '/';
	strcpy(p, name);
}

/* Read a small file relative to dirfd whole into buf; its length or -errno. */
static ssize_t read_at(int dirfd, const char *rel, char *buf, size_t len)
{
	int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

/* The first number of a schedstat line: time on the CPU, ns. */
static bool parse_run(const char *p, uint64_t *v)
{
	uint64_t n = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (uint64_t)(*p - '0');
	*v = n;
	return true;
}

/* A task's stat, relative to /proc; -errno if gone. */
static int read_stat(int proc, pid_t pid, pid_t tid, struct proc_stat *st)
{
	char rel[64], buf[1024];

	task_rel(rel, pid, tid, "stat");
	if (read_at(proc, rel, buf, sizeof(buf)) <= 0)
		return -ESRCH;
	return proc_parse_stat(buf, st);
}

int safety_scan_init(struct scan *sc)
{
	long tck = sysconf(_SC_CLK_TCK);

	/* /proc's start times are in clock ticks, an iterator's in ns */
	sc->tick_ns = NSEC / (uint64_t)(tck > 0 ? tck : 100);
	sc->proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sc->proc < 0)
		return -errno;
	safety_scan_end(sc);
	return 0;
}

void safety_scan_end(struct scan *sc)
{
	sc->on = false;
	sc->duty = false;
	sc->n = 0;
	sc->untracked = 0;
	memset(sc->slot, 0xff, sizeof(sc->slot));
}

void safety_scan_begin(struct scan *sc, uint64_t mono, uint64_t boot_ticks)
{
	safety_scan_end(sc);
	sc->on = true;
	sc->since_mono = mono;
	sc->since_boot_ticks = boot_ticks;
}

/* The table's entry for tid (a new one if `add`), or NULL. */
static struct track *track_of(struct scan *sc, pid_t tid, bool add)
{
	unsigned h = ((unsigned)tid * 2654435761u) & (TRACK_SLOTS - 1);

	for (;; h = (h + 1) & (TRACK_SLOTS - 1)) {
		int32_t i = sc->slot[h];

		if (i >= 0 && sc->t[i].tid == tid)
			return &sc->t[i];
		if (i < 0) {
			if (!add || sc->n == TRACK_MAX) {
				sc->untracked += add;
				return NULL;
			}
			sc->slot[h] = (int32_t)sc->n;
			memset(&sc->t[sc->n], 0, sizeof(sc->t[0]));
			return &sc->t[sc->n++];
		}
	}
}

/* Charge ns of run time to cpu. */
static void track_charge(struct track *t, int cpu, uint64_t ns)
{
	for (size_t i = 0; i < TRACK_CPUS; i++)
		if (t->on[i].ns && t->on[i].cpu == cpu) {
			t->on[i].ns += ns;
			return;
		}
	for (size_t i = 0; i < TRACK_CPUS; i++)
		if (!t->on[i].ns) {
			t->on[i].cpu = cpu;
			t->on[i].ns = ns;
			return;
		}
	t->on_more += ns;
}

/* The table's entry for the thread tid started at starttime, emptied if it
 * is new to the episode (or the tid was reused: a new thread in the old
 * slot); *fresh tells which. NULL if the table is full. */
static struct track *track_get(struct scan *sc, pid_t tid, uint64_t starttime, bool *fresh)
{
	struct track *t = track_of(sc, tid, true);

	if (!t)
		return NULL;
	if (t->tid && t->starttime != starttime)
		t->tid = 0;
	*fresh = !t->tid;
	return t;
}

/* A look at thread t of process pid: run time `run`, on `cpu`. */
static void track_look(struct scan *sc, struct track *t, bool fresh, pid_t tid, pid_t pid,
		       uint64_t starttime, uint64_t run, int cpu)
{
	if (fresh) {
		t->tid = tid;
		t->pid = pid;
		t->starttime = starttime;
		/* born during the episode: everything it ran counts; else from now */
		t->run0 = starttime >= sc->since_boot_ticks ? 0 : run;
		t->run = t->run0;
		memset(t->on, 0, sizeof(t->on));
		t->on_more = 0;
		t->pcomm[0] = '\0';
		t->seen0 = sc->look_mono;
	}
	t->seen = sc->look_mono;
	/* since the last look: where it is now (a look every tick/4 or so
	 * during an episode, so a thread that moves is mostly charged right) */
	if (run > t->run)
		track_charge(t, cpu, run - t->run);
	t->run = run;
	t->processor = cpu;
	t->alive = true;
}

/* One real-time task seen in /proc now: record where it stands. */
static void track_task(struct scan *sc, int taskdir, pid_t pid, const struct proc_stat *st)
{
	struct track *t;
	char rel[32], buf[128];
	struct stat sb;
	uint64_t run;
	bool fresh;

	if (!(t = track_get(sc, st->tid, st->starttime, &fresh)))
		return;
	task_rel(rel, st->tid, 0, "schedstat");
	if (read_at(taskdir, rel + 0, buf, sizeof(buf)) <= 0 || !parse_run(buf, &run))
		return;
	if (fresh) {
		put_id(rel, st->tid)[0] = '\0';
		t->uid = fstatat(taskdir, rel, &sb, 0) == 0 ? sb.st_uid : (uid_t)-1;
	}
	track_look(sc, t, fresh, st->tid, pid, st->starttime, run, st->processor);
	t->policy = st->policy;
	t->priority = st->rt_priority;
	t->state = st->state;
	memcpy(t->comm, st->comm, sizeof(t->comm));
}

/* A task's iterator record, as a NUL-terminated name into dst. */
static void rec_name(char dst[PROC_COMM_MAX + 1], const char src[TASKS_COMM_LEN])
{
	size_t n = strnlen(src, TASKS_COMM_LEN);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* One real-time task as the iterator wrote it. Its uid is the one it acts
 * with (its effective uid), also for a process that made itself
 * non-dumpable, whose /proc directory root owns. */
static void track_rec(struct scan *sc, const struct tasks_rec *r)
{
	uint64_t starttime = r->start_ns / sc->tick_ns;
	struct track *t;
	bool fresh;

	if (r->tid <= 0 || !(t = track_get(sc, r->tid, starttime, &fresh)))
		return;
	if (fresh)
		t->uid = r->euid;
	track_look(sc, t, fresh, r->tid, r->pid, starttime, r->run_ns, r->cpu);
	t->policy = (int)r->policy;
	t->priority = (int)r->priority;
	t->state = r->running ? 'R' : 'S';
	rec_name(t->comm, r->comm);
	rec_name(t->pcomm, r->pcomm);
}

/* Every record an iterator's descriptor gives, to fn; closes fd. False if
 * the read failed (the records so far were handed on). */
static bool iter_read(struct scan *sc, int fd, void (*fn)(struct scan *, const struct tasks_rec *, void *),
		      void *ud)
{
	size_t have = 0, off;
	ssize_t n;

	/* whole records come out of a read whose buffer holds the kernel's
	 * (8 pages); a larger kernel page could cut one, kept for the next */
	while ((n = read(fd, sc->dents + have, sizeof(sc->dents) - have)) > 0) {
		have += (size_t)n;
		for (off = 0; off + sizeof(struct tasks_rec) <= have; off += sizeof(struct tasks_rec)) {
			struct tasks_rec r;

			memcpy(&r, sc->dents + off, sizeof(r));
			fn(sc, &r, ud);
		}
		have -= off;
		memmove(sc->dents, sc->dents + off, have);
	}
	close(fd);
	return n == 0;
}

static void on_rt_rec(struct scan *sc, const struct tasks_rec *r, void *ud)
{
	(void)ud;
	if (r->policy == SCHED_FIFO || r->policy == SCHED_RR)
		track_rec(sc, r);
}

/* Every task of process pid. */
static void scan_process(struct scan *sc, pid_t pid)
{
	char rel[32], buf[1024];
	int taskdir;
	long n;

	task_rel(rel, pid, 0, "task");
	taskdir = openat(sc->proc, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (taskdir < 0)
		return;
	while ((n = syscall(SYS_getdents64, taskdir, sc->tdents, sizeof(sc->tdents))) > 0) {
		for (long off = 0; off < n;) {
			const struct dent *d = (const void *)(sc->tdents + off);
			struct proc_stat st;
			pid_t tid;
			int pol;

			off += d->reclen;
			if (!parse_id(d->name, &tid))
				continue;
			/* the policy first, in one system call with no path to look
			 * up: most tasks are not real-time, and only a real-time
			 * one's stat is worth opening (a scan of 10,000 tasks costs
			 * their count in calls, not in files) */
			pol = sched_getscheduler(tid);
			if (pol < 0 || ((pol & ~SCHED_RESET_ON_FORK) != SCHED_FIFO &&
					(pol & ~SCHED_RESET_ON_FORK) != SCHED_RR))
				continue;
			put_id(rel, tid)[0] = '\0';
			strcat(rel, "/stat");
			if (read_at(taskdir, rel, buf, sizeof(buf)) <= 0 || proc_parse_stat(buf, &st) < 0)
				continue;
			if (st.policy == SCHED_FIFO || st.policy == SCHED_RR)
				track_task(sc, taskdir, pid, &st);
		}
	}
	close(taskdir);
}

void safety_scan_run(struct scan *sc)
{
	long n;

	if (sc->test_stall_ns) {
		struct timespec ts = { (time_t)(sc->test_stall_ns / NSEC), (long)(sc->test_stall_ns % NSEC) };
		nanosleep(&ts, NULL);
	}

	sc->look_mono = clock_nsec(CLOCK_MONOTONIC);
	for (size_t i = 0; i < sc->n; i++)
		sc->t[i].alive = false;
	if (sc->tasks) {
		int fd = tasks_open(sc->tasks);

		if (fd >= 0 && iter_read(sc, fd, on_rt_rec, NULL))
			return;
		sc->iter_failed++;   /* /proc for this look: it still answers, later */
	}
	if (lseek(sc->proc, 0, SEEK_SET) < 0)
		return;
	while ((n = syscall(SYS_getdents64, sc->proc, sc->dents, sizeof(sc->dents))) > 0) {
		for (long off = 0; off < n;) {
			const struct dent *d = (const void *)(sc->dents + off);
			pid_t pid;

			off += d->reclen;
			if (parse_id(d->name, &pid))
				scan_process(sc, pid);
		}
	}
}

bool safety_track_on(const struct track *t, int cpu)
{
	cpu_set_t cpus;

	if (t->alive && sched_getaffinity(t->tid, sizeof(cpus), &cpus) == 0)
		return CPU_ISSET(cpu, &cpus);
	return t->processor == cpu;
}

uint64_t safety_track_span(const struct track *t, uint64_t ran)
{
	uint64_t span = t->seen - t->seen0;

	/* seen once (born since the last look, or at the trip's own): not
	 * less than it ran, so it never looks idle */
	return span > ran ? span : ran;
}

uint64_t safety_track_ran(const struct track *t)
{
	return t->run > t->run0 ? t->run - t->run0 : 0;
}

uint64_t safety_track_ran_on(const struct track *t, int cpu)
{
	uint64_t v = 0;

	for (size_t i = 0; i < TRACK_CPUS; i++)
		if (t->on[i].ns && t->on[i].cpu == cpu)
			v += t->on[i].ns;
	if (t->on_more && safety_track_on(t, cpu))
		v += t->on_more;
	return v;
}

void safety_read_pcomm(struct scan *sc, pid_t pid, char *buf, size_t len)
{
	struct proc_stat st;

	if (read_stat(sc->proc, pid, 0, &st) == 0 && len > 0) {
		size_t n = strnlen(st.comm, len - 1);
		memcpy(buf, st.comm, n);
		buf[n] = '\0';
	} else if (len >= 2) {
		buf[0] = '?';
		buf[1] = '\0';
	}
}

/* Set tid to SCHED_OTHER if it is real-time (keeping reset-on-fork). */
static int demote_now(pid_t tid)
{
	struct sched_param sp = { .sched_priority = 0 };
	int pol = sched_getscheduler(tid);

	if (pol < 0)
		return -errno;
	if ((pol & ~SCHED_RESET_ON_FORK) != SCHED_FIFO && (pol & ~SCHED_RESET_ON_FORK) != SCHED_RR)
		return 0;
	/* sched_setscheduler keeps the nice value; keep reset-on-fork too */
	if (sched_setscheduler(tid, SCHED_OTHER | (pol & SCHED_RESET_ON_FORK), &sp) < 0)
		return -errno;
	return 0;
}

/* Demote tid if it is still the thread started at starttime (safety.h):
 * system calls only, so the watchdog thread may call it. */
int safety_demote_tid(pid_t tid, uint64_t starttime)
{
	char path[80] = "/proc/", buf[1024];
	struct proc_stat st;

	task_rel(path + 6, tid, tid, "stat");
	if (read_at(AT_FDCWD, path, buf, sizeof(buf)) <= 0 || proc_parse_stat(buf, &st) < 0 ||
	    st.starttime != starttime)
		return -ESRCH;
	return demote_now(tid);
}

struct identity {
	pid_t tid;
	uint64_t starttime;
	bool seen, same;
};

static void on_any_rec(struct scan *sc, const struct tasks_rec *r, void *ud)
{
	struct identity *id = ud;

	if (r->tid == id->tid) {
		id->seen = true;
		id->same = r->start_ns / sc->tick_ns == id->starttime;
	}
}

int safety_scan_demote(struct scan *sc, pid_t tid, pid_t pid, uint64_t starttime)
{
	struct identity id = { .tid = tid, .starttime = starttime };
	int fd;

	/* the identity from the process's own tasks, not from /proc/TID */
	if (sc->tasks && (fd = tasks_open_process(sc->tasks, pid)) >= 0) {
		if (iter_read(sc, fd, on_any_rec, &id))
			return id.seen && id.same ? demote_now(tid) : -ESRCH;
		sc->iter_failed++;
	}
	return safety_demote_tid(tid, starttime);
}
