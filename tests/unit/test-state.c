/* test-state.c: the state journal (state.h) read back at start. Journals
 * are written into a private temporary directory (0700), naming real
 * threads of the test process, and state_open() decides what to re-adopt:
 * what the registry then holds, and what was written to the kernel (the
 * write is recorded, never made: sched-record.h), show which entries were
 * adopted, which dropped, and which got their recorded original back.
 * Covered: a journal the registry wrote read by a new registry, forged
 * originals (above max-priority, invalid), an owner that no longer runs the
 * thread, malformed and truncated lines, removals, a journal in a directory
 * or a file others can write, start-time mismatches, a role that is gone,
 * and the journal compacted to what was adopted. */
#include "autoconfig.h"

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/proc.h"
#include "sched-record.h"
#include "unit-util.h"

/* Any uid may hold real time here, so the tests decide the same as root or
 * as another user; admission by limits is test-grant's subject. */
#define CONFIG_TEXT                                                            \
	"[daemon]\nmax-priority = 80\n"                                        \
	"[rule audio]\npolicy = fifo\npriority = 30\n"                         \
	"[user *]\nmax-priority = 80\npolicies = fifo,rr,other,batch,idle\n"   \
	"max-threads = 1000\nmin-nice = -20\n"

static char dir[PATH_MAX], path[PATH_MAX + 16];
/* What state_open() is given: the event loop, configuration and registry. */
static struct {
	sd_event *event;
	struct config *config;
	struct registry *registry;
} d;
static struct state *st;
static uid_t me, stranger;

static void setup(void)
{
	sched_record_check_wrapped();
	unit_tmpdir(dir, "test-state");
	snprintf(path, sizeof(path), "%s/state", dir);
	memset(&d, 0, sizeof(d));
	d.config = unit_config(dir, CONFIG_TEXT);
	ck_assert_int_ge(sd_event_new(&d.event), 0);
	ck_assert_int_eq(registry_new(&d.registry, d.event), 0);
	st = NULL;
	me = getuid();
	stranger = me == 65534 ? 65533 : 65534;   /* not us, not root, not in an admin group */
}

static void teardown(void)
{
	state_free(st);
	registry_free(d.registry, false);
	sd_event_unref(d.event);
	config_free(d.config);
	unit_rmdir(dir);
}

static void forward(void *ud, int ev, struct reg_thread *t, struct reg_process *p)
{
	state_observe(ud, ev, t, p);
}

/* Open the journal at `path` as the daemon does at start; the registry's
 * changes are journalled from then on. */
static void open_state(void)
{
	state_free(st);
	st = NULL;
	ck_assert_int_eq(state_open(&st, d.registry, d.config, path), 0);
	ck_assert_ptr_nonnull(st);
	registry_set_observer(d.registry, forward, st);
}

/* What a restart does: the old daemon leaves its threads as they are, a new
 * one reads the journal into a new registry. */
static void restart(void)
{
	registry_free(d.registry, false);
	state_free(st);
	st = NULL;
	ck_assert_int_eq(registry_new(&d.registry, d.event), 0);
	sched_record_reset();
	open_state();
}

static size_t adopted_threads(void)
{
	size_t t, p;

	state_adopted(st, &t, &p);
	return t;
}

static size_t adopted_procs(void)
{
	size_t t, p;

	state_adopted(st, &t, &p);
	return p;
}

/* The current affinity of tid as a CPU list. */
static void cpus_of(pid_t tid, char *buf, size_t len)
{
	struct task_sched s;

	ck_assert_int_eq(task_sched_read(tid, &s), 0);
	ck_assert_int_eq(cpulist_format(&s.cpus, buf, len), 0);
}

/* A thread line: T tid pid starttime owner source procpid REQ ORIG changed,
 * REQ and ORIG given as text ("- - - - -", "1 50 0 0"; the cpus of ORIG are
 * the thread's own). */
static void t_line(char *buf, size_t len, pid_t tid, uint64_t start, uid_t owner, pid_t procpid, const char *req,
		   const char *orig)
{
	char cpus[256];

	int n;

	cpus_of(tid, cpus, sizeof(cpus));
	n = snprintf(buf, len, "T %d %d %" PRIu64 " %u 0 %d %s %s %s 0\n", (int)tid, (int)getpid(), start,
		     (unsigned)owner, (int)procpid, req, orig, cpus);
	ck_assert(n > 0 && (size_t)n < len);
}

/* The journal as a string (caller frees). */
static char *journal(void)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 65536);

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_lt(fread(text, 1, 65535, f), 65535);
	fclose(f);
	return text;
}

/* How many lines of the journal start with prefix. */
static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');

		n += strncmp(p, prefix, strlen(prefix)) == 0;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

/* What the registry journals, a new registry adopts: the same thread, owner,
 * request and recorded original; each gets its grant written again. */
START_TEST(test_round_trip)
{
	struct sched_spec fifo = { .policy = SCHED_FIFO, .priority = 10 };
	struct grant_request q = { .role = "audio" }, qb;
	struct reg_saved saved;
	struct reg_thread *t;
	struct worker a, b;
	struct task_sched orig_a;
	char msg[512], *text;

	worker_start(&a);
	worker_start(&b);
	open_state();                                   /* no journal yet: an empty one */
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_int_eq(task_sched_read(a.tid, &orig_a), 0);
	ck_assert_int_eq(registry_add_thread(d.registry, a.tid, getpid(), me, REG_SOURCE_THREAD, &q, &fifo, NULL, NULL,
					     msg, sizeof(msg)), 0);
	/* b's original, as a previous rtschedd recorded it: rr 3 on CPUs 0 and 1 */
	memset(&saved, 0, sizeof(saved));
	saved.starttime = unit_starttime(b.tid);
	ck_assert_int_eq(task_sched_read(b.tid, &saved.original), 0);
	saved.original.policy = SCHED_RR;
	saved.original.priority = 3;
	saved.cpus_changed = true;
	qb = q;
	qb.has_cpus = true;
	CPU_ZERO(&qb.cpus);
	CPU_SET(0, &qb.cpus);
	ck_assert_int_eq(registry_adopt_thread(d.registry, b.tid, getpid(), me, REG_SOURCE_RULE, &qb, &fifo, NULL, &saved,
					       msg, sizeof(msg)), 0);
	text = journal();
	ck_assert_uint_eq(count_lines(text, "T "), 2);
	free(text);

	restart();
	ck_assert_uint_eq(adopted_threads(), 2);
	t = registry_find(d.registry, a.tid);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->owner, me);
	ck_assert_int_eq(t->source, REG_SOURCE_THREAD);
	ck_assert_str_eq(t->req.role, "audio");
	ck_assert_int_eq(t->original.policy, orig_a.policy);
	ck_assert_int_eq(t->original.nice, orig_a.nice);
	ck_assert(CPU_EQUAL(&t->original.cpus, &orig_a.cpus));
	ck_assert_int_eq(sched_record_last(a.tid)->s.priority, 30);   /* [rule audio], resolved again */
	t = registry_find(d.registry, b.tid);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->source, REG_SOURCE_RULE);
	ck_assert_int_eq(t->original.policy, SCHED_RR);
	ck_assert_int_eq(t->original.priority, 3);
	ck_assert(t->req.has_cpus && CPU_ISSET(0, &t->req.cpus) && CPU_COUNT(&t->req.cpus) == 1);
	ck_assert(sched_record_last(b.tid)->set_cpus);
	/* the new journal holds what was adopted */
	text = journal();
	ck_assert_uint_eq(count_lines(text, "T "), 2);
	free(text);

	/* let go with restore: the journal forgets them, the next start adopts nothing */
	registry_remove_thread(d.registry, registry_find(d.registry, a.tid), true);
	registry_remove_thread(d.registry, registry_find(d.registry, b.tid), true);
	ck_assert_int_eq(sched_record_last(b.tid)->s.policy, SCHED_RR);
	restart();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_uint_eq(sched_record_n(), 0);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* An original whose CPU list is long (every other CPU of CPU_SETSIZE, as
 * one SMT sibling per core numbers on some machines) survives the journal. */
START_TEST(test_round_trip_long_cpu_list)
{
	struct sched_spec fifo = { .policy = SCHED_FIFO, .priority = 10 };
	struct reg_saved saved;
	struct reg_thread *t;
	struct grant_request q;
	struct worker a;
	char msg[512];

	memset(&q, 0, sizeof(q));
	worker_start(&a);
	open_state();
	memset(&saved, 0, sizeof(saved));
	saved.starttime = unit_starttime(a.tid);
	ck_assert_int_eq(task_sched_read(a.tid, &saved.original), 0);
	CPU_ZERO(&saved.original.cpus);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu += 2)
		CPU_SET(cpu, &saved.original.cpus);
	saved.cpus_changed = true;
	ck_assert_int_eq(registry_adopt_thread(d.registry, a.tid, getpid(), me, REG_SOURCE_THREAD, &q, &fifo, NULL, &saved,
					       msg, sizeof(msg)), 0);
	restart();
	t = registry_find(d.registry, a.tid);
	ck_assert_msg(t, "an original with a long CPU list was lost on restart");
	ck_assert(CPU_EQUAL(&t->original.cpus, &saved.original.cpus));
	worker_stop(&a);
}
END_TEST

/* A process registration comes back with its threads. */
START_TEST(test_process_round_trip)
{
	struct sched_spec fifo = { .policy = SCHED_FIFO, .priority = 10 };
	struct grant_request q;
	struct reg_process *p;
	struct worker a;
	size_t n;
	char msg[512];

	memset(&q, 0, sizeof(q));
	worker_start(&a);
	open_state();
	ck_assert_int_eq(registry_add_process(d.registry, getpid(), me, &q, &fifo, &p, msg, sizeof(msg)), 0);
	n = registry_n_threads(d.registry);
	ck_assert_uint_ge(n, 2);
	restart();
	ck_assert_uint_eq(adopted_procs(), 1);
	ck_assert_uint_eq(adopted_threads(), n);
	p = registry_find_process(d.registry, getpid());
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->n_threads, n);
	ck_assert_ptr_eq(registry_find(d.registry, a.tid)->proc, p);

	/* a process line whose start time is not the process's: neither it
	 * nor its threads are taken, and those threads keep what they have */
	char line[512], text[1024];
	snprintf(text, sizeof(text), "P %d %" PRIu64 " %u - - - - -\n", (int)getpid(), unit_starttime(getpid()) + 1,
		 (unsigned)me);
	t_line(line, sizeof(line), a.tid, unit_starttime(a.tid) + 1, me, getpid(), "- - - - -", "0 0 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	restart();
	ck_assert_uint_eq(adopted_procs(), 0);
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_uint_eq(sched_record_n(), 0);
	worker_stop(&a);
}
END_TEST

/* The recorded original is what restore will write: one rtschedd could
 * not have granted (above max-priority, an unknown policy, a nice out of
 * range) becomes other 0 nice 0; a plausible one is kept. */
START_TEST(test_forged_originals)
{
	static const struct {
		const char *orig;
		int policy, priority, nice;
	} t[] = {
		{ "1 50 0 0", SCHED_FIFO, 50, 0 },     /* fifo 50: kept */
		{ "2 80 0 1", SCHED_RR, 80, 0 },       /* rr at max-priority: kept */
		{ "3 0 -20 0", SCHED_BATCH, 0, -20 },  /* batch nice -20: kept */
		{ "1 81 0 0", SCHED_OTHER, 0, 0 },     /* above max-priority 80 */
		{ "1 99 0 0", SCHED_OTHER, 0, 0 },
		{ "6 0 0 0", SCHED_OTHER, 0, 0 },      /* SCHED_DEADLINE: not a reservation of ours */
		{ "42 0 0 0", SCHED_OTHER, 0, 0 },     /* no such policy */
		{ "1 0 0 0", SCHED_OTHER, 0, 0 },      /* fifo needs 1..99 */
		{ "0 5 0 0", SCHED_OTHER, 0, 0 },      /* other takes 0 */
		{ "0 0 -21 0", SCHED_OTHER, 0, 0 },    /* nice out of range */
		{ "0 0 20 0", SCHED_OTHER, 0, 0 },
		{ "0 0 0 2", SCHED_OTHER, 0, 0 },      /* reset-on-fork is 0 or 1 */
	};
	enum { N = sizeof(t) / sizeof(t[0]) };
	struct worker w[N];
	char text[N * 256], line[256];

	text[0] = '\0';
	for (size_t i = 0; i < N; i++) {
		worker_start(&w[i]);
		t_line(line, sizeof(line), w[i].tid, unit_starttime(w[i].tid), me, 0, "- - - - -", t[i].orig);
		strcat(text, line);
	}
	unit_write(dir, "state", text);
	open_state();
	ck_assert_uint_eq(adopted_threads(), N);
	for (size_t i = 0; i < N; i++) {
		struct reg_thread *th = registry_find(d.registry, w[i].tid);

		ck_assert_msg(th, "%s: not adopted", t[i].orig);
		ck_assert_msg(th->original.policy == t[i].policy && th->original.priority == t[i].priority &&
			      th->original.nice == t[i].nice,
			      "%s: original %d/%d nice %d", t[i].orig, th->original.policy, th->original.priority,
			      th->original.nice);
	}
	/* and it is what goes back */
	registry_remove_thread(d.registry, registry_find(d.registry, w[4].tid), true);
	ck_assert_int_eq(sched_record_last(w[4].tid)->s.policy, SCHED_OTHER);
	ck_assert_int_eq(sched_record_last(w[4].tid)->s.priority, 0);
	for (size_t i = 0; i < N; i++)
		worker_stop(&w[i]);
}
END_TEST

/* An entry whose recorded owner no longer runs the thread: not re-adopted,
 * and nothing written (not the recorded owner's to give back either). */
START_TEST(test_owner_changed)
{
	struct worker a, b;
	char text[1024], line[512];

	worker_start(&a);
	worker_start(&b);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), stranger, 0, "- 1 20 - -", "1 60 0 0");
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- 1 20 - -", "0 0 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_ptr_null(registry_find(d.registry, a.tid));
	ck_assert_uint_eq(sched_record_count(a.tid), 0);
	ck_assert_ptr_nonnull(registry_find(d.registry, b.tid));
	ck_assert_uint_eq(adopted_threads(), 1);
	/* nor a process line for a process someone else runs */
	snprintf(text, sizeof(text), "P %d %" PRIu64 " %u - - - - -\n", (int)getpid(), unit_starttime(getpid()),
		 (unsigned)stranger);
	unit_write(dir, "state", text);
	restart();
	ck_assert_uint_eq(adopted_procs(), 0);
	ck_assert_ptr_null(registry_find_process(d.registry, getpid()));
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* Lines that do not parse are dropped whole: not adopted, nothing written;
 * the good lines beside them are adopted. */
START_TEST(test_malformed_lines)
{
	static const char *const bad[] = {
		"T %d %d %s %u 0 0 - - - - - 0 0 0 0 %s\n",             /* no cpus_changed */
		"T %d %d %s %u 0 0 - - - - - 0 0 0 0 %s 2\n",           /* cpus_changed 2 */
		"T %d %d %s %u 0 0 - x - - - 0 0 0 0 %s 0\n",           /* a policy that is no number */
		"T %d %d %s %u 0 0 - 1 100 - - 0 0 0 0 %s 0\n",         /* a priority out of range */
		"T %d %d %s %u 0 0 - - - - zz 0 0 0 0 %s 0\n",          /* a request CPU list that is none */
		"T %d %d %s %u 0 0 - - - - - 0 0 0 0 %s-x 0\n",         /* a bad original CPU list */
		"T %d %d %s %u 17 0 - - - - - 0 0 0 0 %s 0\n",          /* source out of range */
		"T %d %d %s %u 0 -1 - - - - - 0 0 0 0 %s 0\n",          /* a negative process */
		"T %d %d %s %u 0 0 - - - - - 0 0 0 0x %s 0\n",          /* trailing garbage in a number */
		"T %d %d %s %u 0 0 - - - - - 0 0 99999999999 0 %s 0\n", /* nice past int */
		"T %d %d %s %u 0 0 - - - - - -1 0 0 0 %s 0\n",          /* a negative policy */
		"T %d %d -%s %u 0 0 - - - - - 0 0 0 0 %s 0\n",          /* a negative start time */
	};
	enum { N = sizeof(bad) / sizeof(bad[0]) };
	struct worker w[N], good;
	char text[N * 256 + 512], line[256], start[32], cpus[256];

	text[0] = '\0';
	for (size_t i = 0; i < N; i++) {
		worker_start(&w[i]);
		snprintf(start, sizeof(start), "%" PRIu64, unit_starttime(w[i].tid));
		cpus_of(w[i].tid, cpus, sizeof(cpus));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(line, sizeof(line), bad[i], (int)w[i].tid, (int)getpid(), start, (unsigned)me, cpus);
#pragma GCC diagnostic pop
		strcat(text, line);
	}
	worker_start(&good);
	t_line(line, sizeof(line), good.tid, unit_starttime(good.tid), me, 0, "- - - - -", "0 0 0 0");
	strcat(text, line);
	/* lines that are no entry at all */
	strcat(text, "\n# comment\nX 1 2 3\nT\nP\n-T\n-P x\nT 0 0 0 0 0 0 - - - - - 0 0 0 0 0 0\n");
	unit_write(dir, "state", text);
	open_state();
	ck_assert_uint_eq(adopted_threads(), 1);
	ck_assert_uint_eq(adopted_procs(), 0);
	ck_assert_ptr_nonnull(registry_find(d.registry, good.tid));
	for (size_t i = 0; i < N; i++) {
		ck_assert_msg(!registry_find(d.registry, w[i].tid), "adopted: %s", bad[i]);
		ck_assert_msg(sched_record_count(w[i].tid) == 0, "written: %s", bad[i]);
	}
	ck_assert_uint_eq(sched_record_n(), 1);
	for (size_t i = 0; i < N; i++)
		worker_stop(&w[i]);
	worker_stop(&good);
}
END_TEST

/* A journal cut short (a crash in the middle of a write): every whole line
 * counts, the cut one does not, wherever the cut falls. */
START_TEST(test_truncated)
{
	struct worker a, b;
	char full[1024], line[1100];
	size_t head;

	worker_start(&a);
	worker_start(&b);
	t_line(full, sizeof(full), a.tid, unit_starttime(a.tid), me, 0, "- - - - -", "0 0 0 0");
	head = strlen(full);
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- - - - -", "0 0 0 0");
	strcat(full, line);
	/* every cut inside b's line but the one before its newline */
	for (size_t cut = head + 1; cut < strlen(full) - 1; cut++) {
		char text[1024];

		snprintf(text, sizeof(text), "%.*s", (int)cut, full);
		unit_write(dir, "state", text);
		restart();
		ck_assert_msg(registry_find(d.registry, a.tid), "cut at %zu: the whole line was lost: %s", cut, text);
		ck_assert_msg(!registry_find(d.registry, b.tid), "cut at %zu: a cut line was adopted: %s", cut,
			      text + head);
		ck_assert_msg(sched_record_count(b.tid) == 0, "cut at %zu: written", cut);
	}
	/* a removal cut short */
	snprintf(line, sizeof(line), "%s-", full);
	unit_write(dir, "state", line);
	restart();
	ck_assert_uint_eq(adopted_threads(), 2);
	/* an empty journal */
	unit_write(dir, "state", "");
	restart();
	ck_assert_uint_eq(adopted_threads(), 0);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* A crash in the middle of an update: the entry's last whole line counts. */
START_TEST(test_truncated_update)
{
	struct worker a;
	char text[1024], line[512];

	worker_start(&a);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), me, 0, "- 1 10 - -", "2 5 0 0");
	t_line(line, sizeof(line), a.tid, unit_starttime(a.tid), me, 0, "- 1 40 - -", "2 5 0 0");
	line[strlen(line) / 2] = '\0';
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_msg(registry_find(d.registry, a.tid), "a cut update lost the entry: %s", text);
	ck_assert_int_eq(registry_find(d.registry, a.tid)->original.priority, 5);
	ck_assert_int_eq(sched_record_last(a.tid)->s.priority, 10);
	worker_stop(&a);
}
END_TEST

/* cpus_changed: whether the affinity was ours to put back. */
START_TEST(test_cpus_changed_read)
{
	struct worker a, b;
	char text[1024], line[512];

	worker_start(&a);
	worker_start(&b);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), me, 0, "- - - - -", "0 0 0 0");
	text[strlen(text) - 2] = '1';                 /* cpus_changed = 1 */
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- - - - -", "0 0 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_uint_eq(adopted_threads(), 2);
	/* a request without cpus: the first write puts the original affinity
	 * back where rtschedd had changed it, and leaves it alone elsewhere */
	ck_assert(sched_record_last(a.tid)->set_cpus);
	ck_assert(CPU_EQUAL(&sched_record_last(a.tid)->s.cpus, &registry_find(d.registry, a.tid)->original.cpus));
	ck_assert(!sched_record_last(b.tid)->set_cpus);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* "-T tid" and "-P pid" forget an entry; the last line of an entry wins. */
START_TEST(test_removals_and_updates)
{
	struct worker a, b;
	char text[2048], line[512];

	worker_start(&a);
	worker_start(&b);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), me, 0, "- - - - -", "0 0 0 0");
	snprintf(line, sizeof(line), "-T %d\n", (int)a.tid);
	strcat(text, line);
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- 1 10 - -", "0 0 0 0");
	strcat(text, line);
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- 1 40 - -", "2 7 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_ptr_null(registry_find(d.registry, a.tid));
	ck_assert_uint_eq(sched_record_count(a.tid), 0);
	ck_assert_ptr_nonnull(registry_find(d.registry, b.tid));
	ck_assert_int_eq(registry_find(d.registry, b.tid)->original.priority, 7);
	ck_assert_int_eq(sched_record_last(b.tid)->s.priority, 40);
	ck_assert_uint_eq(adopted_threads(), 1);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* A journal where others could have written it is not read, and is replaced. */
START_TEST(test_untrusted_journal)
{
	struct worker a;
	char text[512], *now;
	struct stat sb;

	worker_start(&a);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), me, 0, "- - - - -", "1 50 0 0");

	/* the directory is writable by others: nothing read, nothing written there */
	unit_write(dir, "state", text);
	ck_assert_int_eq(chmod(dir, 0777), 0);
	open_state();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_ptr_null(registry_find(d.registry, a.tid));
	ck_assert_uint_eq(sched_record_n(), 0);
	now = journal();
	ck_assert_str_eq(now, text);                   /* not replaced either */
	free(now);
	ck_assert_int_eq(chmod(dir, 0700), 0);

	/* the file is writable by its group: not read, replaced by a fresh one */
	unit_write(dir, "state", text);
	ck_assert_int_eq(chmod(path, 0620), 0);
	restart();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_uint_eq(sched_record_n(), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	now = journal();
	ck_assert_str_eq(now, "");
	free(now);

	/* a symlink to a journal is not followed */
	char target[PATH_MAX + 16];
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	unit_write(dir, "elsewhere", text);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(target, path), 0);
	restart();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_int_eq(lstat(path, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));                /* replaced, the target untouched */
	snprintf(path, sizeof(path), "%s/elsewhere", dir);
	now = journal();
	ck_assert_str_eq(now, text);
	free(now);
	snprintf(path, sizeof(path), "%s/state", dir);

	/* and the same journal, private, is read (the control) */
	unit_write(dir, "state", text);
	restart();
	ck_assert_uint_eq(adopted_threads(), 1);
	worker_stop(&a);
}
END_TEST

/* A start time that is not the thread's: the tid is another thread now. */
START_TEST(test_starttime_mismatch)
{
	struct worker a, b;
	char text[1024], line[512];
	pid_t gone_tid;

	worker_start(&a);
	worker_start(&b);
	gone_tid = b.tid;
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid) + 1, me, 0, "- - - - -", "1 50 0 0");
	/* a role that is gone sends an entry back to its original, unless it is
	 * another thread now */
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid) - 1, me, 0, "gone - - - -", "1 50 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_uint_eq(sched_record_n(), 0);
	worker_stop(&b);

	/* and a thread that is gone is simply dropped */
	snprintf(text, sizeof(text), "T %d %d 1 %u 0 0 - - - - - 0 0 0 0 0 0\n", (int)gone_tid, (int)getpid(),
		 (unsigned)me);
	unit_write(dir, "state", text);
	restart();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_uint_eq(sched_record_n(), 0);
	worker_stop(&a);
}
END_TEST

/* Entries the current configuration refuses get their recorded original
 * back (vetted first), and are not adopted. */
START_TEST(test_refused_restored)
{
	struct worker a, b;
	char text[1024], line[512];

	worker_start(&a);
	worker_start(&b);
	t_line(text, sizeof(text), a.tid, unit_starttime(a.tid), me, 0, "gone - - - -", "2 9 0 0");
	t_line(line, sizeof(line), b.tid, unit_starttime(b.tid), me, 0, "- 1 90 - -", "1 99 0 0");
	strcat(text, line);
	unit_write(dir, "state", text);
	open_state();
	ck_assert_uint_eq(adopted_threads(), 0);
	ck_assert_ptr_null(registry_find(d.registry, a.tid));
	ck_assert_uint_eq(sched_record_count(a.tid), 1);
	ck_assert_int_eq(sched_record_last(a.tid)->s.policy, SCHED_RR);
	ck_assert_int_eq(sched_record_last(a.tid)->s.priority, 9);
	/* priority 90 is above max-priority 80; the forged fifo 99 is not written */
	ck_assert_uint_eq(sched_record_count(b.tid), 1);
	ck_assert_int_eq(sched_record_last(b.tid)->s.policy, SCHED_OTHER);
	ck_assert_int_eq(sched_record_last(b.tid)->s.priority, 0);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* state_discard: the daemon restored everything; no journal is left. */
START_TEST(test_discard)
{
	open_state();
	ck_assert_int_eq(access(path, F_OK), 0);
	state_discard(st);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* Another module's 3000 live lines (the registry has none). */
static size_t many_lines(void *ud, FILE *f)
{
	(void)ud;
	for (int i = 0; i < 3000; i++)
		fprintf(f, "Z %d x\n", i);
	return 3000;
}

/* Compaction counts every module's live lines: 100 lines appended after
 * other modules' 3000 rewrite the journal once at most, not at each line
 * (the registry's live lines alone, none here, made it compact at every
 * one: 100 rewrites of 3000 lines on the daemon's loop). */
START_TEST(test_compaction_counts_writers)
{
	struct stat sb;
	ino_t last = 0;
	int rewrites = 0;

	open_state();
	ck_assert_int_eq(state_add_writer(st, many_lines, NULL), 0);
	for (int i = 0; i < 1100; i++)
		state_put(st, "Z %d y", i); /* past 1024: the first compaction */
	ck_assert_int_eq(stat(path, &sb), 0);
	last = sb.st_ino;
	for (int i = 0; i < 100; i++) {
		state_put(st, "Z %d z", i);
		ck_assert_int_eq(stat(path, &sb), 0);
		rewrites += sb.st_ino != last;
		last = sb.st_ino;
	}
	ck_assert_int_le(rewrites, 1);
	state_remove_writer(st, many_lines, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_round_trip_long_cpu_list);
	tcase_add_test(tc, test_process_round_trip);
	tcase_add_test(tc, test_forged_originals);
	tcase_add_test(tc, test_owner_changed);
	tcase_add_test(tc, test_malformed_lines);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_truncated_update);
	tcase_add_test(tc, test_cpus_changed_read);
	tcase_add_test(tc, test_removals_and_updates);
	tcase_add_test(tc, test_untrusted_journal);
	tcase_add_test(tc, test_starttime_mismatch);
	tcase_add_test(tc, test_refused_restored);
	tcase_add_test(tc, test_discard);
	tcase_add_test(tc, test_compaction_counts_writers);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
