/* sched-record.c: the recording wrapper of task_sched_write (see sched-record.h). */
#include "autoconfig.h"

#include <check.h>
#include <string.h>

#include "sched-record.h"

int __wrap_task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what);
int __real_task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what);

static struct sched_write writes[SCHED_RECORD_MAX];
static size_t n_writes;
static int fail_err;
static const char *fail_what;
static void (*on_write)(pid_t tid, void *ud);
static void *on_write_ud;
static void (*after_write)(pid_t tid, void *ud);
static void *after_write_ud;
static bool passthrough;

int __wrap_task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what)
{
	int r;

	if (on_write)
		on_write(tid, on_write_ud);
	ck_assert_msg(n_writes < SCHED_RECORD_MAX, "more than %d scheduling writes", SCHED_RECORD_MAX);
	writes[n_writes].tid = tid;
	writes[n_writes].s = *s;
	writes[n_writes].set_cpus = set_cpus;
	n_writes++;
	if (fail_err) {
		*what = fail_what;
		return fail_err;
	}
	r = passthrough ? __real_task_sched_write(tid, s, set_cpus, what) : 0;
	if (after_write)
		after_write(tid, after_write_ud);
	return r;
}

void sched_record_reset(void)
{
	memset(writes, 0, sizeof(writes));
	n_writes = 0;
	fail_err = 0;
	fail_what = NULL;
	on_write = NULL;
	on_write_ud = NULL;
	after_write = NULL;
	after_write_ud = NULL;
	passthrough = false;
}

size_t sched_record_n(void)
{
	return n_writes;
}

const struct sched_write *sched_record_get(size_t i)
{
	ck_assert_uint_lt(i, n_writes);
	return &writes[i];
}

size_t sched_record_count(pid_t tid)
{
	size_t n = 0;

	for (size_t i = 0; i < n_writes; i++)
		n += writes[i].tid == tid;
	return n;
}

const struct sched_write *sched_record_nth(pid_t tid, size_t k)
{
	for (size_t i = 0; i < n_writes; i++)
		if (writes[i].tid == tid && k-- == 0)
			return &writes[i];
	return NULL;
}

const struct sched_write *sched_record_last(pid_t tid)
{
	for (size_t i = n_writes; i > 0; i--)
		if (writes[i - 1].tid == tid)
			return &writes[i - 1];
	return NULL;
}

void sched_record_fail(int err, const char *what)
{
	fail_err = err;
	fail_what = what;
}

void sched_record_on_write(void (*fn)(pid_t tid, void *ud), void *ud)
{
	on_write = fn;
	on_write_ud = ud;
}

void sched_record_after_write(void (*fn)(pid_t tid, void *ud), void *ud)
{
	after_write = fn;
	after_write_ud = ud;
}

void sched_record_passthrough(bool on)
{
	passthrough = on;
}

void sched_record_check_wrapped(void)
{
	struct task_sched s;
	const char *what = NULL;

	/* a call from another object file, as registry.c makes: with the wrap
	 * it is recorded; without it, it would really set tid 0 (ourselves),
	 * so it asks for what we already have */
	sched_record_reset();
	ck_assert_int_eq(task_sched_read(0, &s), 0);
	ck_assert_int_eq(task_sched_write(0, &s, false, &what), 0);
	ck_assert_msg(n_writes == 1, "task_sched_write is not wrapped: link with -Wl,--wrap=task_sched_write");
	sched_record_reset();
}
