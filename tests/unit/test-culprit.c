/* test-culprit.c: late wake-ups worked out into culprits (observe/culprit.c),
 * from records built here the way bpfobs.bpf.c writes them: a CPU's ring
 * of contiguous segments, the newest at head - 1, and the window from the
 * timer's expiry (or the wake-up) to the switch-in. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/observe/culprit.h"

/* A record being built: segments appended oldest first, each starting
 * where the last ended. */
struct rec {
	struct bpfobs_late ev;
	uint64_t at;
};

static struct rec *rec_new(uint64_t since, int prio)
{
	struct rec *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->ev.tid = 100;
	r->ev.cpu = 1;
	r->ev.kind = BPFOBS_KIND_TIMER;
	r->ev.prio = (__u32)prio;
	r->ev.since_ns = since;
	r->at = since;
	return r;
}

static void seg(struct rec *r, int kind, int id, uint64_t dur, int prio, const char *comm)
{
	struct bpfobs_seg *g = &r->ev.ring[r->ev.head & (BPFOBS_RING - 1)];

	memset(g, 0, sizeof(*g));
	g->start = r->at;
	g->dur = (__u32)dur;
	g->kind = (__u8)kind;
	g->id = id;
	if (kind == BPFOBS_SEG_TASK) {
		g->tgid = id;
		g->prio = (__u16)prio;
		g->policy = prio < 100 ? SCHED_FIFO : SCHED_OTHER;
		strncpy(g->comm, comm, sizeof(g->comm) - 1);
	}
	r->ev.head++;
	r->at += dur;
}

/* The window: from start to the end of the last segment. */
static void window(struct rec *r, uint64_t start)
{
	r->ev.start_ns = start;
	r->ev.run_ns = r->at;
}

/* FIFO 10 is kernel priority 89; FIFO 50 is 49; SCHED_OTHER nice 0 is 120. */
#define FIFO10 89
#define FIFO50 49
#define OTHER 120

START_TEST(test_spinner)
{
	/* idle, the spinner from before the deadline, the timer callback,
	 * then the thread: the window is clipped at the deadline */
	struct rec *r = rec_new(1000, FIFO10);
	struct culprit_window w;

	seg(r, BPFOBS_SEG_IDLE, 0, 5000, 0, NULL);
	seg(r, BPFOBS_SEG_TASK, 77, 3000, FIFO50, "spinner");  /* 6000..9000 */
	seg(r, BPFOBS_SEG_TIMER, 0, 20, 0, NULL);              /* 9000..9020 */
	seg(r, BPFOBS_SEG_TASK, 77, 1980, FIFO50, "spinner");  /* ..11000 */
	window(r, 7000);
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_uint_eq(w.delay_ns, 4000);
	ck_assert_uint_eq(w.n, 2);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_TASK);
	ck_assert_str_eq(w.part[0].key.comm, "spinner");
	ck_assert_uint_eq(w.part[0].ns, 2000 + 1980);
	ck_assert_int_eq(w.part[1].key.kind, CULPRIT_TIMER);
	ck_assert_uint_eq(w.part[1].ns, 20);
	/* the timeline, in time order, from the window's start */
	ck_assert_uint_eq(w.npieces, 3);
	ck_assert_uint_eq(w.piece[0].offset_ns, 0);
	ck_assert_uint_eq(w.piece[0].ns, 2000);
	ck_assert_int_eq(w.piece[1].key.kind, CULPRIT_TIMER);
	ck_assert_uint_eq(w.piece[1].offset_ns, 2000);
	ck_assert_uint_eq(w.piece[2].offset_ns, 2020);
	ck_assert_uint_eq(w.piece[2].ns, 1980);
	free(r);
}
END_TEST

START_TEST(test_kernel_vs_task)
{
	/* for a FIFO 10 thread, a SCHED_OTHER task that ran could only have
	 * held the CPU in the kernel; for a SCHED_OTHER thread it just ran */
	struct rec *r = rec_new(1, FIFO10);
	struct culprit_window w;
	char buf[200];

	seg(r, BPFOBS_SEG_TASK, 55, 9000, OTHER, "reader");
	window(r, 2000);
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_KERNEL);
	culprit_label(&w.part[0].key, NULL, NULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "reader (pid 55, other) in the kernel");
	r->ev.prio = OTHER;
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_TASK);
	/* equal priority runs first, no kernel about it */
	r->ev.prio = FIFO10;
	r->ev.ring[0].prio = FIFO10;
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_TASK);
	free(r);
}
END_TEST

START_TEST(test_irqs_nested_sum)
{
	/* the parts always add up to the delay: nothing invented, nothing lost */
	struct rec *r = rec_new(1, FIFO10);
	struct culprit_window w;
	uint64_t sum = 0;

	for (int i = 0; i < 40; i++) {
		seg(r, BPFOBS_SEG_TASK, 9, 100, OTHER, "sender");
		seg(r, BPFOBS_SEG_SOFTIRQ, 3, 700, 0, NULL);
		if (i % 10 == 0)
			seg(r, BPFOBS_SEG_HARDIRQ, 38, 50, 0, NULL);
	}
	window(r, 1 + 100); /* from the first softirq on */
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	for (size_t i = 0; i < w.n; i++)
		sum += w.part[i].ns;
	ck_assert_uint_eq(sum, w.delay_ns);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_SOFTIRQ);
	ck_assert_str_eq(culprit_softirq_name(w.part[0].key.id), "NET_RX");
	ck_assert_uint_eq(w.part[0].ns, 40 * 700);
	ck_assert_int_eq(w.part[1].key.kind, CULPRIT_KERNEL);
	ck_assert_uint_eq(w.part[1].ns, 39 * 100);
	ck_assert_int_eq(w.part[2].key.kind, CULPRIT_HARDIRQ);
	ck_assert_uint_eq(w.part[2].ns, 4 * 50);
	/* the timeline is capped; its pieces still cover the window */
	sum = 0;
	ck_assert_uint_eq(w.npieces, CULPRIT_TIMELINE);
	for (size_t i = 0; i < w.npieces; i++) {
		ck_assert_uint_eq(w.piece[i].offset_ns, sum);
		sum += w.piece[i].ns;
	}
	ck_assert_uint_eq(sum, w.delay_ns);
	ck_assert_int_eq(w.piece[0].key.kind, CULPRIT_OTHER);
	free(r);
}
END_TEST

START_TEST(test_unrecorded)
{
	/* a window reaching back past the ring's oldest segment (it wrapped,
	 * or tracking began inside it) has that part unrecorded */
	struct rec *r = rec_new(5000, FIFO10);
	struct culprit_window w;

	seg(r, BPFOBS_SEG_TASK, 77, 1000, FIFO50, "spinner");
	window(r, 4000);
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_uint_eq(w.delay_ns, 2000);
	ck_assert_uint_eq(w.n, 2);
	ck_assert_uint_eq(w.part[0].ns, 1000);
	ck_assert_uint_eq(w.part[1].ns, 1000);
	ck_assert(w.part[0].key.kind == CULPRIT_UNRECORDED || w.part[1].key.kind == CULPRIT_UNRECORDED);
	/* a full ring of short segments: the oldest are overwritten */
	free(r);
	r = rec_new(1, FIFO10);
	for (int i = 0; i < BPFOBS_RING + 10; i++)
		seg(r, BPFOBS_SEG_TIMER, 0, 10, 0, NULL);
	window(r, 1);
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_uint_eq(w.delay_ns, (BPFOBS_RING + 10) * 10);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_TIMER);
	ck_assert_uint_eq(w.part[0].ns, BPFOBS_RING * 10);
	ck_assert_int_eq(w.part[1].key.kind, CULPRIT_UNRECORDED);
	ck_assert_uint_eq(w.part[1].ns, 100);
	/* not a window at all */
	r->ev.run_ns = r->ev.start_ns;
	ck_assert_int_eq(culprit_window(&r->ev, &w), -EINVAL);
	free(r);
}
END_TEST

START_TEST(test_slack)
{
	/* a SCHED_OTHER thread's timer is due 50 us after its expiry: that
	 * much is its own timer slack, whatever the CPU did (here: idle) */
	struct rec *r = rec_new(1, OTHER);
	struct culprit_window w;

	seg(r, BPFOBS_SEG_IDLE, 0, 60000, 0, NULL);  /* 1..60001 */
	seg(r, BPFOBS_SEG_TIMER, 0, 3000, 0, NULL);  /* ..63001 */
	window(r, 1001);
	r->ev.hard_ns = 1001 + 50000;
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_uint_eq(w.delay_ns, 62000);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_SLACK);
	ck_assert_uint_eq(w.part[0].ns, 50000);
	ck_assert_int_eq(w.part[1].key.kind, CULPRIT_IDLE);
	ck_assert_uint_eq(w.part[1].ns, 9000);
	ck_assert_uint_eq(w.part[2].ns, 3000);
	ck_assert_uint_eq(w.npieces, 3);
	ck_assert_int_eq(w.piece[0].key.kind, CULPRIT_SLACK);
	ck_assert_uint_eq(w.piece[1].offset_ns, 50000);
	ck_assert_uint_eq(w.piece[2].offset_ns, 59000);
	/* a wake-up by anything else has no timer, so no slack */
	r->ev.kind = BPFOBS_KIND_WAKEUP;
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_int_eq(w.part[0].key.kind, CULPRIT_IDLE);
	free(r);
}
END_TEST

START_TEST(test_hostile_comm)
{
	/* a thread names itself with 16 bytes and no NUL: the label stays
	 * bounded and NUL-terminated */
	struct rec *r = rec_new(1, FIFO10);
	struct culprit_window w;
	char buf[64];

	seg(r, BPFOBS_SEG_TASK, 5, 100, FIFO50, "x");
	memset(r->ev.ring[0].comm, 'A', sizeof(r->ev.ring[0].comm));
	window(r, 1);
	ck_assert_int_eq(culprit_window(&r->ev, &w), 0);
	ck_assert_uint_eq(strlen(w.part[0].key.comm), 15);
	culprit_label(&w.part[0].key, NULL, NULL, buf, sizeof(buf));
	ck_assert_str_eq(buf, "AAAAAAAAAAAAAAA (pid 5, fifo 50)");
	free(r);
}
END_TEST

/* One window with a part per culprit given (ns each; the first the largest). */
static void add_window(struct culprit_table *t, const int *ids, const uint64_t *ns, size_t n)
{
	static struct culprit_window w;

	memset(&w, 0, sizeof(w));
	w.cpu = 1;
	w.prio = FIFO10;
	for (size_t i = 0; i < n; i++) {
		w.part[i].key.kind = CULPRIT_TASK;
		w.part[i].key.id = w.part[i].key.tgid = ids[i];
		w.part[i].key.prio = FIFO50;
		w.part[i].key.policy = SCHED_FIFO;
		snprintf(w.part[i].key.comm, sizeof(w.part[i].key.comm), "t%d", ids[i]);
		w.part[i].ns = ns[i];
		w.delay_ns += ns[i];
	}
	w.n = n;
	culprit_table_add(t, &w, 1000);
}

START_TEST(test_table_bounded_monotonic)
{
	struct culprit_table *t = calloc(1, sizeof(*t));
	const struct culprit_entry *e[CULPRIT_TOP];
	struct culprit_entry other;
	uint64_t prev_other = 0, sum;

	ck_assert_ptr_nonnull(t);
	/* culprit 1 is in every window and the largest; 100 others come and go */
	for (int i = 0; i < 100; i++) {
		int ids[2] = { 1, 1000 + i };
		uint64_t ns[2] = { 500, 10 + (uint64_t)i };

		add_window(t, ids, ns, 2);
		ck_assert_uint_le(t->n, CULPRIT_TOP);
		culprit_table_other(t, &other);
		/* other never goes down: exported as a counter */
		ck_assert_uint_ge(other.total_ns, prev_other);
		prev_other = other.total_ns;
		sum = other.total_ns;
		for (size_t k = 0; k < t->n; k++)
			sum += t->top[k].total_ns;
		ck_assert_uint_eq(sum, t->delay_ns);
	}
	ck_assert_uint_eq(culprit_table_sorted(t, e, CULPRIT_TOP), CULPRIT_TOP);
	ck_assert_int_eq(e[0]->key.id, 1);
	ck_assert_uint_eq(e[0]->first, 100);
	ck_assert_uint_eq(e[0]->late, 100);
	ck_assert_uint_eq(e[0]->total_ns, 50000);
	for (size_t k = 1; k < CULPRIT_TOP; k++)
		ck_assert_uint_ge(e[k - 1]->total_ns, e[k]->total_ns);
	culprit_table_other(t, &other);
	ck_assert_uint_eq(other.first, 0);
	ck_assert_uint_gt(other.total_ns, 0);
	ck_assert_uint_eq(t->late, 100);
	free(t);
}
END_TEST

/* The few largest, whatever order they came in: the budget log asks for
 * the top one only, after an early small culprit (why.sh saw "bash, 0% of
 * the delay" named top while a spinner held the rest). */
START_TEST(test_table_sorted_fewer)
{
	struct culprit_table *t = calloc(1, sizeof(*t));
	const struct culprit_entry *e[3];
	int ids[5] = { 7, 8, 9, 10, 11 };
	uint64_t ns[5] = { 1, 40, 5, 900, 60 };

	ck_assert_ptr_nonnull(t);
	add_window(t, ids, ns, 5);
	ck_assert_uint_eq(culprit_table_sorted(t, e, 1), 1);
	ck_assert_int_eq(e[0]->key.id, 10);
	ck_assert_uint_eq(culprit_table_sorted(t, e, 3), 3);
	ck_assert_int_eq(e[0]->key.id, 10);
	ck_assert_int_eq(e[1]->key.id, 11);
	ck_assert_int_eq(e[2]->key.id, 8);
	ck_assert_uint_eq(culprit_table_sorted(t, e, 0), 0);
	free(t);
}
END_TEST

START_TEST(test_recent_and_worst)
{
	struct culprit_table *t = calloc(1, sizeof(*t));
	const struct culprit_recent *r[CULPRIT_RECENT];
	size_t n;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 20; i++) {
		int ids[1] = { i };
		uint64_t ns[1] = { i == 7 ? 99999 : 100 + (uint64_t)i };
		add_window(t, ids, ns, 1);
	}
	ck_assert_uint_eq(t->worst.delay_ns, 99999);
	ck_assert_int_eq(t->worst.part[0].key.id, 7);
	n = culprit_table_recent(t, r, CULPRIT_RECENT);
	ck_assert_uint_eq(n, CULPRIT_RECENT);
	/* oldest first: windows 12 to 19 */
	ck_assert_int_eq(r[0]->top.id, 20 - CULPRIT_RECENT);
	ck_assert_int_eq(r[n - 1]->top.id, 19);
	free(t);
}
END_TEST

START_TEST(test_verdicts)
{
	struct culprit_entry e = { .key = { .kind = CULPRIT_HARDIRQ, .id = 24 }, .total_ns = 78, .cpu = 1 };
	struct culprit_verdict_in in = { .top = &e, .share = 0.78, .threshold_ns = 200000, .thread_prio = FIFO10,
					 .cpu = 1, .preempt = "none", .irq_name = "virtio0-input" };
	char buf[640];

	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert_str_eq(buf, "78% of the delay over 200 us: irq 24 virtio0-input; move it off CPU 1 "
			      "(/proc/irq/24/smp_affinity_list)");
	/* the [irq] section hook names it and moves the advice there */
	in.irq_section = "nic";
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert_str_eq(buf, "78% of the delay over 200 us: irq 24 virtio0-input ([irq nic]); [irq nic] places it: "
			      "give it CPUs other than 1 there");
	e.key = (struct culprit_key){ .kind = CULPRIT_SOFTIRQ, .id = 3 };
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert(strstr(buf, "softirq NET_RX; move the network interrupts") != NULL);
	e.key = (struct culprit_key){ .kind = CULPRIT_TASK, .id = 7, .tgid = 7, .prio = FIFO50,
				      .policy = SCHED_FIFO, .comm = "spinner" };
	in.share = 0.961;
	in.threshold_ns = 1500000;
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert_str_eq(buf, "96% of the delay over 1.5 ms: spinner (pid 7, fifo 50); it runs at a higher priority "
			      "(fifo 50) on CPU 1: lower it below 10, or move one of them to another CPU");
	/* 99.7% is rounded down: "100%" would say nothing else ran */
	in.share = 0.997;
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "99% of the delay", 16) == 0, "%s", buf);
	in.share = 1.0;
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "100% of the delay", 17) == 0, "%s", buf);
	in.share = 0.961;
	e.key = (struct culprit_key){ .kind = CULPRIT_KERNEL, .id = 8, .tgid = 3, .prio = OTHER,
				      .policy = SCHED_OTHER, .comm = "reader" };
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert(strstr(buf, "reader (tid 8 of pid 3, other) in the kernel; under preemption none") != NULL);
	e.key = (struct culprit_key){ .kind = CULPRIT_IDLE };
	culprit_verdict(&in, buf, sizeof(buf));
	ck_assert(strstr(buf, "cpu-dma-latency = 0") != NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("culprit");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_spinner);
	tcase_add_test(tc, test_kernel_vs_task);
	tcase_add_test(tc, test_irqs_nested_sum);
	tcase_add_test(tc, test_unrecorded);
	tcase_add_test(tc, test_slack);
	tcase_add_test(tc, test_hostile_comm);
	tcase_add_test(tc, test_table_bounded_monotonic);
	tcase_add_test(tc, test_table_sorted_fewer);
	tcase_add_test(tc, test_recent_and_worst);
	tcase_add_test(tc, test_verdicts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
