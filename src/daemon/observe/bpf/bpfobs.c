/* bpfobs.c: loads bpfobs.bpf.c (through the skeleton bpftool generated at
 * build time), maps its two maps into the daemon, and keeps the slot
 * bookkeeping; see bpfobs.h for the API and bpfobs_abi.h for the protocol.
 * After bpfobs_new() nothing here makes a bpf() syscall. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif

#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfobs.h"
#include "bpfobs_abi.h"
#include "bpfload.h"
#include "bpfobs.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define SNAP_TRIES 1000

/* The BPF side writes struct hist through its own copy of the layout. */
#define SAME_FIELD(f) \
	_Static_assert(offsetof(struct bpfobs_hist, f) == offsetof(struct hist, f), "bpfobs_hist." #f)
SAME_FIELD(magic);
SAME_FIELD(version);
SAME_FIELD(size);
SAME_FIELD(nbuckets);
SAME_FIELD(seq);
SAME_FIELD(count);
SAME_FIELD(early);
SAME_FIELD(overruns);
SAME_FIELD(min);
SAME_FIELD(max);
SAME_FIELD(sum);
SAME_FIELD(sumsq_lo);
SAME_FIELD(sumsq_hi);
SAME_FIELD(bucket);
_Static_assert(sizeof(struct bpfobs_hist) == sizeof(struct hist), "bpfobs_hist size");
_Static_assert(BPFOBS_HIST_MAGIC == HIST_MAGIC && BPFOBS_HIST_VERSION == HIST_VERSION &&
	       BPFOBS_HIST_SUB_BITS == HIST_SUB_BITS && BPFOBS_HIST_MAX_NS == (__u64)HIST_MAX_NS &&
	       BPFOBS_HIST_OVERFLOW == HIST_OVERFLOW && BPFOBS_HIST_NBUCKETS == HIST_NBUCKETS,
	       "bpfobs_hist.h constants differ from hist.h");
_Static_assert(offsetof(struct bpfobs_slot, hist) % 8 == 0 && sizeof(struct bpfobs_slot) % 8 == 0,
	       "slot histograms must be 8-byte aligned");
_Static_assert(sizeof(struct bpfobs_filter) == 2 * BPFOBS_TIDS_PER_ENTRY,
	       "the filter must be a plain array of u16 indexed by tid");
_Static_assert(BPFOBS_KIND_TIMER == BPFOBS_TIMER && BPFOBS_KIND_WAKEUP == BPFOBS_WAKEUP, "kinds");

/* The ring buffer of late wake-ups, with culprit tracking: room for 200
 * records (5 KiB each) between two reads by the daemon. */
#define LATE_RING_BYTES (1u << 20)

struct bpfobs {
	struct bpfobs_bpf *skel;
	struct ring_buffer *rb;      /* late wake-ups; NULL without culprit tracking */
	void (*rb_fn)(void *ud, const struct bpfobs_late *ev);
	void *rb_ud;
	unsigned rb_n;  /* records handed on in this read */
	uint64_t epoch;              /* the last one given to the programs */
	__u16 *filter;               /* mmapped: filter[tid] = slot + 1 */
	size_t filter_len;
	struct bpfobs_slot *slots;   /* mmapped: max_threads of them */
	size_t slots_len;
	pid_t tid_limit;
	unsigned max_threads, watched;
	unsigned *freeq;             /* free slots, oldest-freed first */
	unsigned fhead, nfree;
};

/* --- libbpf's messages, kept for the reason instead of printed ------------ */

static char lb_first[256]; /* libbpf's first warning: usually the cause */
static char lb_last[256];  /* the verifier's last complaint, if any */
static int lb_in_log;

/* Copy one line of s without its newline. */
static void keep_line(char *dst, size_t len, const char *s)
{
	size_t n = strcspn(s, "\n");

	if (n >= len)
		n = len - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

__attribute__((format(printf, 2, 0)))
static int lb_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (strstr(line, "-- BEGIN PROG LOAD LOG --")) {
		lb_in_log = 1;
		return 0;
	}
	if (strstr(line, "-- END PROG LOAD LOG --")) {
		lb_in_log = 0;
		return 0;
	}
	if (lb_in_log) {
		/* the verifier's summary line says nothing about the cause */
		if (strncmp(line, "processed ", 10) && strncmp(line, "verification time", 17) && line[0] != '\n')
			keep_line(lb_last, sizeof(lb_last), line);
		return 0;
	}
	if (!lb_first[0])
		keep_line(lb_first, sizeof(lb_first), line);
	return 0;
}

libbpf_print_fn_t bpfobs_capture_begin(void)
{
	lb_first[0] = lb_last[0] = '\0';
	lb_in_log = 0;
	return libbpf_set_print(lb_capture);
}

/* --- why it cannot work ---------------------------------------------------- */

/* printf into why; returns r, a -errno. */
__attribute__((format(printf, 4, 5)))
static int fail(int r, char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Whether the effective set has cap; false if it can't be read. */
static bool have_cap(cap_value_t cap)
{
	cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (!c)
		return false;
	if (cap_get_flag(c, cap, CAP_EFFECTIVE, &v) < 0)
		v = CAP_CLEAR;
	cap_free(c);
	return v == CAP_SET;
}

/* Which of the capabilities loading needs are missing, as text ("" if none). */
static const char *missing_caps(void)
{
	bool b = have_cap(CAP_BPF), p = have_cap(CAP_PERFMON);

	if ((b && p) || have_cap(CAP_SYS_ADMIN))
		return "";
	return !b && !p ? "CAP_BPF and CAP_PERFMON" : !b ? "CAP_BPF" : "CAP_PERFMON";
}

/* Read a small file into buf; -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	return 0;
}

/* The checks that need no bpf(): BTF, lockdown, kernel version. */
int bpfobs_precheck(char *why, size_t len)
{
	char buf[256];
	struct utsname u;
	unsigned maj = 0, min = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return fail(-ENOENT, why, len,
			    "the kernel has no BTF type information (/sys/kernel/btf/vmlinux: %s); "
			    "it needs CONFIG_DEBUG_INFO_BTF=y, as Debian's kernels since 11 have",
			    strerror(errno));
	if (read_small("/sys/kernel/security/lockdown", buf, sizeof(buf)) == 0 &&
	    strstr(buf, "[confidentiality]"))
		return fail(-EACCES, why, len,
			    "kernel lockdown is in confidentiality mode, which forbids BPF programs "
			    "reading kernel memory (boot with lockdown=integrity or none)");
	if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &maj, &min) == 2 &&
	    (maj < 5 || (maj == 5 && min < 12)))
		return fail(-EOPNOTSUPP, why, len,
			    "kernel %s is too old: BPF wake-up observation needs Linux 5.12 "
			    "(BTF tracepoints, atomic instructions)", u.release);
	return 0;
}

/* kernel.pid_max: tids are below it. */
static int pid_max(pid_t *ret)
{
	char buf[32];
	long v;
	int r = read_small("/proc/sys/kernel/pid_max", buf, sizeof(buf));

	if (r < 0)
		return r;
	v = strtol(buf, NULL, 10);
	if (v < 2 || v > (1L << 22)) /* PID_MAX_LIMIT on 64-bit */
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

/* Turn a libbpf load/attach error into this module's reasons. */
int bpfobs_load_error(int err, const char *stage, char *why, size_t len)
{
	const char *m = missing_caps();
	const char *detail = lb_last[0] ? lb_last : lb_first;

	err = err < 0 ? -err : err;
	switch (err) {
	case EPERM:
		return fail(-EPERM, why, len,
			    "the kernel refused to %s BPF programs (EPERM): %s%s%s", stage,
			    m[0] ? "missing " : "loading tracing programs needs CAP_BPF and CAP_PERFMON",
			    m, m[0] ? "; give the daemon CAP_BPF and CAP_PERFMON at start" : "");
	case ENOSYS:
		return fail(-ENOSYS, why, len, "the kernel has no bpf() system call (CONFIG_BPF_SYSCALL=n)");
	case ENOMEM:
	case E2BIG:
		return fail(-ENOMEM, why, len, "could not %s the BPF maps: %s (%s)", stage, strerror(err), detail);
	case ENOENT:
		/* libbpf reads a tracepoint's id from tracefs (the catcher's
		 * syscall tracepoints; the observer's BTF ones need none) */
		if (access("/sys/kernel/tracing/events", F_OK) < 0 && access("/sys/kernel/debug/tracing/events", F_OK) < 0)
			return fail(-EOPNOTSUPP, why, len,
				    "tracefs is not mounted, and libbpf reads the tracepoints' ids there (%s: %s): mount "
				    "it (mount -t tracefs tracefs /sys/kernel/tracing; systemd does at boot, "
				    "sys-kernel-tracing.mount) and restart rtschedd", stage, strerror(err));
		/* fall through */
	case ESRCH:
	case EOPNOTSUPP:
	case 524: /* ENOTSUPP, the kernel's internal "not supported" */
		return fail(-EOPNOTSUPP, why, len,
			    "the kernel lacks a tracepoint or BPF feature this needs (%s: %s): %s",
			    stage, strerror(err), detail);
	default:
		return fail(-ENOEXEC, why, len, "the kernel's verifier rejected the BPF programs (%s: %s): %s",
			    stage, strerror(err), detail);
	}
}

/* Map a BPF_F_MMAPABLE array map, shared and writable. */
static int map_map(struct bpf_map *m, size_t bytes, void **addr, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);

	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	*len = n;
	return 0;
}

/* ring_buffer's callback: one record, handed on if it is one. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct bpfobs *o = ctx;

	if (size >= sizeof(struct bpfobs_late) && o->rb_fn)
		o->rb_fn(o->rb_ud, data);
	return ++o->rb_n >= RB_BATCH ? RB_BATCH_END : 0;
}

int bpfobs_new(struct bpfobs **ret, unsigned max_threads, bool culprits, char *why, size_t len)
{
	libbpf_print_fn_t old_print;
	struct bpfobs *o;
	void *p;
	int r;

	if (why && len)
		why[0] = '\0';
	if (max_threads < 1 || max_threads > BPFOBS_MAX_SLOTS)
		return fail(-EINVAL, why, len, "max_threads %u is out of range 1..%u", max_threads,
			    BPFOBS_MAX_SLOTS);
	if ((r = bpfobs_precheck(why, len)) < 0)
		return r;
	o = calloc(1, sizeof(*o));
	if (!o)
		return fail(-ENOMEM, why, len, "out of memory");
	o->max_threads = max_threads;
	o->freeq = calloc(max_threads, sizeof(*o->freeq));
	if (!o->freeq) {
		free(o);
		return fail(-ENOMEM, why, len, "out of memory");
	}
	for (unsigned i = 0; i < max_threads; i++)
		o->freeq[i] = i;
	o->nfree = max_threads;
	if ((r = pid_max(&o->tid_limit)) < 0) {
		r = fail(r, why, len, "cannot read kernel.pid_max: %s", strerror(-r));
		goto out;
	}

	old_print = bpfobs_capture_begin();
	o->skel = bpfobs_bpf__open();
	if (!o->skel) {
		r = bpfobs_load_error(errno, "open", why, len);
		goto restore;
	}
	if ((r = bpf_map__set_max_entries(o->skel->maps.filter,
					  ((unsigned)o->tid_limit + BPFOBS_TIDS_PER_ENTRY - 1) /
					  BPFOBS_TIDS_PER_ENTRY)) < 0 ||
	    (r = bpf_map__set_max_entries(o->skel->maps.slots, max_threads)) < 0 ||
	    (culprits && (r = bpf_map__set_max_entries(o->skel->maps.late, LATE_RING_BYTES)) < 0)) {
		r = bpfobs_load_error(r, "size", why, len);
		goto restore;
	}
	/* without culprit tracking the segment code is dead (the verifier
	 * drops it) and the interrupt programs stay out of the kernel */
	o->skel->rodata->track_culprits = culprits;
	if (!culprits) {
		bpf_program__set_autoload(o->skel->progs.bpfobs_irq_entry, false);
		bpf_program__set_autoload(o->skel->progs.bpfobs_irq_exit, false);
		bpf_program__set_autoload(o->skel->progs.bpfobs_softirq_entry, false);
		bpf_program__set_autoload(o->skel->progs.bpfobs_softirq_exit, false);
	}
	if ((r = bpfobs_bpf__load(o->skel)) < 0) {
		r = bpfobs_load_error(r, "load", why, len);
		goto restore;
	}
	if ((r = bpfobs_bpf__attach(o->skel)) < 0) {
		r = bpfobs_load_error(r, "attach", why, len);
		goto restore;
	}
restore:
	libbpf_set_print(old_print);
	if (r < 0)
		goto out;

	if ((r = map_map(o->skel->maps.filter, (size_t)bpf_map__max_entries(o->skel->maps.filter) *
			 sizeof(struct bpfobs_filter), &p, &o->filter_len)) < 0) {
		r = fail(-ENOMEM, why, len, "cannot mmap the tid filter: %s", strerror(-r));
		goto out;
	}
	o->filter = p;
	if ((r = map_map(o->skel->maps.slots, (size_t)max_threads * sizeof(struct bpfobs_slot), &p,
			 &o->slots_len)) < 0) {
		r = fail(-ENOMEM, why, len, "cannot mmap the histogram slots: %s", strerror(-r));
		goto out;
	}
	o->slots = p;
	if (culprits && !(o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.late), on_record, o, NULL))) {
		int e = errno ? errno : ENOMEM;
		r = fail(-e, why, len, "cannot map the ring buffer of late wake-ups: %s", strerror(e));
		goto out;
	}
	*ret = o;
	return 0;
out:
	bpfobs_free(o);
	return r;
}

void bpfobs_free(struct bpfobs *o)
{
	if (!o)
		return;
	ring_buffer__free(o->rb);
	if (o->filter)
		munmap(o->filter, o->filter_len);
	if (o->slots)
		munmap(o->slots, o->slots_len);
	bpfobs_bpf__destroy(o->skel);
	free(o->freeq);
	free(o);
}

/* The histogram of a slot, in hist.c's type (same layout, checked above). */
static struct hist *slot_hist(struct bpfobs_slot *s, enum bpfobs_kind kind)
{
	return (struct hist *)(void *)&s->hist[kind];
}

/* The slot + 1 of tid, 0 if not watched or out of range. */
static unsigned filter_get(const struct bpfobs *o, pid_t tid)
{
	if (tid <= 0 || tid >= o->tid_limit)
		return 0;
	return __atomic_load_n(&o->filter[tid], __ATOMIC_RELAXED);
}

/* The programs look at the filter first and check the slot's tid after:
 * the slot is complete before the filter entry (release) points to it. */
int bpfobs_watch(struct bpfobs *o, pid_t tid, unsigned *slot)
{
	struct bpfobs_slot *s;
	unsigned n, cur;

	if (tid <= 0 || tid >= o->tid_limit)
		return -ERANGE;
	if ((cur = filter_get(o, tid))) {
		if (slot)
			*slot = cur - 1;
		return -EEXIST;
	}
	if (!o->nfree)
		return -ENOSPC;
	n = o->freeq[o->fhead];
	o->fhead = (o->fhead + 1) % o->max_threads;
	o->nfree--;
	s = &o->slots[n];
	s->wake_ns = 0;
	s->deadline_ns = 0;
	s->hard_ns = 0;
	s->races = 0;
	s->lost[BPFOBS_TIMER] = s->lost[BPFOBS_WAKEUP] = 0;
	s->where = 0;
	s->dropped = 0;
	s->late_ns = 0;
	s->late[BPFOBS_TIMER] = s->late[BPFOBS_WAKEUP] = 0;
	hist_init(slot_hist(s, BPFOBS_TIMER));
	hist_init(slot_hist(s, BPFOBS_WAKEUP));
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELEASE);
	__atomic_store_n(&o->filter[tid], (__u16)(n + 1), __ATOMIC_RELEASE);
	/* the first watched thread starts the CPUs' segment rings afresh */
	if (o->watched++ == 0)
		__atomic_store_n(&o->skel->bss->epoch, ++o->epoch, __ATOMIC_RELEASE);
	if (slot)
		*slot = n;
	return 0;
}

/* The freed slot goes to the back of the queue: reused as late as possible,
 * long after any program that still saw the old filter entry returned. */
int bpfobs_unwatch(struct bpfobs *o, pid_t tid)
{
	unsigned cur = filter_get(o, tid);

	if (!cur)
		return -ENOENT;
	__atomic_store_n(&o->filter[tid], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&o->slots[cur - 1].tid, 0, __ATOMIC_RELEASE);
	o->freeq[(o->fhead + o->nfree) % o->max_threads] = cur - 1;
	o->nfree++;
	if (--o->watched == 0)
		__atomic_store_n(&o->skel->bss->epoch, 0, __ATOMIC_RELEASE);
	return 0;
}

int bpfobs_slot(struct bpfobs *o, pid_t tid)
{
	unsigned cur = filter_get(o, tid);

	return cur ? (int)cur - 1 : -ENOENT;
}

int bpfobs_set_late(struct bpfobs *o, pid_t tid, uint64_t late_ns)
{
	unsigned cur = filter_get(o, tid);

	if (!cur)
		return -ENOENT;
	__atomic_store_n(&o->slots[cur - 1].late_ns, late_ns, __ATOMIC_RELAXED);
	return 0;
}

int bpfobs_late(struct bpfobs *o, pid_t tid, uint64_t late[2], uint64_t *dropped)
{
	unsigned cur = filter_get(o, tid);
	struct bpfobs_slot *s;

	if (!cur)
		return -ENOENT;
	s = &o->slots[cur - 1];
	late[BPFOBS_TIMER] = __atomic_load_n(&s->late[BPFOBS_TIMER], __ATOMIC_RELAXED);
	late[BPFOBS_WAKEUP] = __atomic_load_n(&s->late[BPFOBS_WAKEUP], __ATOMIC_RELAXED);
	*dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
	return 0;
}

int bpfobs_events_fd(struct bpfobs *o)
{
	return o->rb ? ring_buffer__epoll_fd(o->rb) : -1;
}

int bpfobs_events_read(struct bpfobs *o, void (*fn)(void *ud, const struct bpfobs_late *ev), void *ud)
{
	int r;

	if (!o->rb)
		return 0;
	o->rb_fn = fn;
	o->rb_ud = ud;
	o->rb_n = 0;
	r = ring_buffer__consume(o->rb);
	o->rb_fn = NULL;
	return r == RB_BATCH_END ? (int)o->rb_n : r;
}

int bpfobs_read(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, struct hist *out)
{
	unsigned cur = filter_get(o, tid);

	if (kind != BPFOBS_TIMER && kind != BPFOBS_WAKEUP)
		return -EINVAL;
	if (!cur)
		return -ENOENT;
	return hist_snapshot(slot_hist(&o->slots[cur - 1], kind), out, SNAP_TRIES);
}

int bpfobs_lost(struct bpfobs *o, pid_t tid, enum bpfobs_kind kind, uint64_t *lost)
{
	unsigned cur = filter_get(o, tid);

	if (kind != BPFOBS_TIMER && kind != BPFOBS_WAKEUP)
		return -EINVAL;
	if (!cur)
		return -ENOENT;
	*lost = __atomic_load_n(&o->slots[cur - 1].lost[kind], __ATOMIC_RELAXED);
	return 0;
}

const char *bpfobs_kind_name(enum bpfobs_kind kind)
{
	return kind == BPFOBS_TIMER ? "timer" : kind == BPFOBS_WAKEUP ? "wakeup" : "?";
}

/* One "key:\tvalue" number of /proc/self/fdinfo/FD; 0 if absent. */
static uint64_t fdinfo_get(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* /proc/self/fdinfo/FD, which needs no capability (the bpf() syscall would). */
static int fdinfo(int fd, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return read_small(path, buf, len);
}

int bpfobs_stats(struct bpfobs *o, struct bpfobs_stats *st)
{
	struct bpf_program *prog;
	char buf[1024];
	unsigned i = 0;

	memset(st, 0, sizeof(*st));
	if (read_small("/proc/sys/kernel/bpf_stats_enabled", buf, sizeof(buf)) == 0)
		st->enabled = buf[0] == '1';
	bpf_object__for_each_program(prog, o->skel->obj) {
		if (i >= BPFOBS_NPROGS)
			break;
		if (!bpf_program__autoload(prog)) /* not loaded: no culprit tracking */
			continue;
		if (fdinfo(bpf_program__fd(prog), buf, sizeof(buf)) < 0)
			return -EIO;
		st->prog[i].name = bpf_program__name(prog);
		st->prog[i].run_time_ns = fdinfo_get(buf, "run_time_ns:");
		st->prog[i].run_cnt = fdinfo_get(buf, "run_cnt:");
		st->prog[i].misses = fdinfo_get(buf, "recursion_misses:");
		st->misses += st->prog[i].misses;
		st->run_time_ns += st->prog[i].run_time_ns;
		st->run_cnt += st->prog[i].run_cnt;
		i++;
	}
	if (fdinfo(bpf_map__fd(o->skel->maps.filter), buf, sizeof(buf)) < 0)
		return -EIO;
	st->filter_bytes = fdinfo_get(buf, "memlock:");
	if (fdinfo(bpf_map__fd(o->skel->maps.slots), buf, sizeof(buf)) < 0)
		return -EIO;
	st->slot_bytes = fdinfo_get(buf, "memlock:");
	if (fdinfo(bpf_map__fd(o->skel->maps.cpus), buf, sizeof(buf)) < 0)
		return -EIO;
	st->cpu_bytes = fdinfo_get(buf, "memlock:");
	if (o->rb) {
		if (fdinfo(bpf_map__fd(o->skel->maps.late), buf, sizeof(buf)) < 0)
			return -EIO;
		st->ring_bytes = fdinfo_get(buf, "memlock:");
	}
	st->culprits = o->rb != NULL;
	st->watched = o->watched;
	st->max_threads = o->max_threads;
	st->tid_limit = o->tid_limit;
	for (unsigned n = 0; n < o->max_threads; n++)
		st->races += __atomic_load_n(&o->slots[n].races, __ATOMIC_RELAXED);
	return 0;
}

