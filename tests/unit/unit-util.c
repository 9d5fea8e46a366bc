/* unit-util.c: helpers of the core unit tests (see unit-util.h). */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/sys/proc.h"
#include "unit-util.h"
#include "config-text.h"

void unit_tmpdir(char *dir, const char *tag)
{
	snprintf(dir, PATH_MAX, "/tmp/rtschedd-%s.XXXXXX", tag);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0700), 0);
}

void unit_rmdir(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

void unit_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fchmod(fileno(f), 0600), 0);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	ck_assert_int_eq(fclose(f), 0);
}

struct config *unit_config(const char *dir, const char *text)
{
	char path[PATH_MAX * 2], *err = NULL;
	struct config *c = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	int r;

	ck_assert_ptr_nonnull(f);
	unit_write(dir, "rtschedd.conf", text);
	snprintf(path, sizeof(path), "%s/rtschedd.conf", dir);
	r = config_load_text(path, true, &c, f);
	if (r == 0)
		r = config_validate_text(c, f, NULL);
	fclose(f);
	ck_assert_msg(r == 0, "config rejected: %s\n%s", err, text);
	free(err);
	return c;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char b;

	if (w->as && getuid() != w->uid && syscall(SYS_setresuid, w->uid, w->uid, w->uid) < 0)
		w->err = errno;
	w->tid = gettid();
	sem_post(&w->up);
	/* until worker_stop() closes the write end */
	while (read(w->fd[0], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Start w, its fields already set by the caller. */
static void worker_run(struct worker *w)
{
	ck_assert_int_eq(pipe(w->fd), 0);
	ck_assert_int_eq(sem_init(&w->up, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&w->th, NULL, worker_main, w), 0);
	while (sem_wait(&w->up) < 0)
		ck_assert_int_eq(errno, EINTR);
	ck_assert_int_gt(w->tid, 0);
}

void worker_start(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	worker_run(w);
}

void worker_start_as(struct worker *w, uid_t uid)
{
	memset(w, 0, sizeof(*w));
	w->as = true;
	w->uid = uid;
	worker_run(w);
	ck_assert_msg(w->err == 0, "worker: setresuid(%u): %s", (unsigned)uid, strerror(w->err));
}

void worker_stop(struct worker *w)
{
	struct proc_stat st;

	close(w->fd[1]);
	ck_assert_int_eq(pthread_join(w->th, NULL), 0);
	close(w->fd[0]);
	sem_destroy(&w->up);
	/* pthread_join returns when the kernel clears the tid word, a little
	 * before it releases the task: wait for that, however long it takes */
	while (proc_read_stat(w->tid, &st) == 0)
		usleep(1000);
}

uint64_t unit_starttime(pid_t tid)
{
	struct proc_stat st;

	ck_assert_int_eq(proc_read_stat(tid, &st), 0);
	return st.starttime;
}

static int saved_stderr = -1;
static char log_path[] = "/tmp/rtschedd-unit-log.XXXXXX";

void unit_log_capture(void)
{
	int fd;

	strcpy(log_path, "/tmp/rtschedd-unit-log.XXXXXX");
	fd = mkstemp(log_path);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved_stderr = dup(2);
	ck_assert_int_ge(saved_stderr, 0);
	dup2(fd, 2);
	close(fd);
}

const char *unit_log_captured(void)
{
	static char text[16384];
	ssize_t n;
	int fd;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	fd = open(log_path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	unlink(log_path);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

int unit_count(const char *text, const char *what)
{
	int k = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		k++;
	return k;
}

static unsigned skipped;

void unit_skip(const char *what)
{
	fprintf(stderr, "SKIP: %s\n", what);
	skipped++;
}

/* A thread that tries to make itself SCHED_FIFO 10, and goes. */
static void *try_realtime(void *arg)
{
	struct sched_param sp = { .sched_priority = 10 };

	*(int *)arg = sched_setscheduler(0, SCHED_FIFO, &sp);
	return NULL;
}

bool unit_can_realtime(void)
{
	pthread_t th;
	int r = -1;

	/* a thread of its own, not a child process: the kernel checks the
	 * thread's privilege, and a child would end under valgrind with
	 * memcheck's exit code for check's memory it never frees */
	if (pthread_create(&th, NULL, try_realtime, &r) != 0)
		return false;
	pthread_join(th, NULL);
	return r == 0;
}

int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return 1;
	return skipped ? 77 : 0;
}
