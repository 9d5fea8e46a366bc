/* test-safefile.c: the files a privileged daemon writes or trusts
 * (sys/safefile.h): the directory walk and its strict ownership and mode
 * checks, trusted opens that refuse symlinks, FIFOs, other people's and
 * group-writable files without blocking, temporary files created with
 * O_EXCL at the mode asked whatever the umask, and the rename that replaces
 * a symlink rather than writing through it. Runs as any user; the case with
 * a file of another owner needs root (to chown it) and is skipped without. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/safefile.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static char why[512];

static void setup(void)
{
	umask(022);
	unit_tmpdir(dir, "test-safefile");
	why[0] = '\0';
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* dir/NAME, formatted. */
__attribute__((format(printf, 1, 2)))
static const char *at(const char *fmt, ...)
{
	static char path[4][PATH_MAX * 2];
	static int k;
	char name[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

/* The directory fd's own path, from /proc. */
static void fd_path(int fd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len - 1);
	ck_assert_int_gt(n, 0);
	out[n] = '\0';
}

/* Paths it refuses before touching anything, and the walk's result. */
START_TEST(test_dir_walk)
{
	char base[64], real[PATH_MAX], got[PATH_MAX];
	int fd;

	ck_assert_int_eq(safefile_dir("relative/file", false, false, base, sizeof(base), why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "not an absolute path"), "%s", why);
	ck_assert_int_eq(safefile_dir(at("sub/"), false, false, base, sizeof(base), why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, "no file name"), "%s", why);
	/* a name longer than the caller's buffer is refused, not cut */
	ck_assert_int_eq(safefile_dir(at("a-long-file-name"), false, false, base, 8, why, sizeof(why)), -EINVAL);
	/* a missing directory: refused, or made (0755) when asked */
	ck_assert_int_eq(safefile_dir(at("no/such/file"), false, false, base, sizeof(base), why, sizeof(why)),
			 -ENOENT);
	ck_assert_msg(strstr(why, "No such file"), "%s", why);
	fd = safefile_dir(at("made/here/state"), true, true, base, sizeof(base), why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_str_eq(base, "state");
	ck_assert_ptr_nonnull(realpath(at("made/here"), real));
	fd_path(fd, got, sizeof(got));
	ck_assert_str_eq(got, real);
	close(fd);
	struct stat st;
	ck_assert_int_eq(stat(at("made/here"), &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	/* a symlink the administrator made in the path (/var/run -> /run) is
	 * resolved once; the descriptor is the real directory */
	ck_assert_int_eq(mkdir(at("real"), 0700), 0);
	ck_assert_int_eq(symlink(at("real"), at("link")), 0);
	fd = safefile_dir(at("link/file"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	ck_assert_ptr_nonnull(realpath(at("real"), real));
	fd_path(fd, got, sizeof(got));
	ck_assert_str_eq(got, real);
	close(fd);
	/* the root directory itself */
	fd = safefile_dir("/file", false, false, base, sizeof(base), why, sizeof(why));
	ck_assert_int_ge(fd, 0);
	fd_path(fd, got, sizeof(got));
	ck_assert_str_eq(got, "/");
	close(fd);
}
END_TEST

/* strict: the file's directory writable by its owner alone; the ones above
 * may be others' to add to only if sticky (/tmp). */
START_TEST(test_dir_strict)
{
	char base[64], real[PATH_MAX], want[PATH_MAX + 128];
	int fd;

	ck_assert_int_eq(mkdir(at("d"), 0700), 0);
	fd = safefile_dir(at("d/f"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	close(fd);
	/* the last directory group- or world-writable, even sticky: refused */
	ck_assert_int_eq(chmod(at("d"), 0770), 0);
	ck_assert_int_eq(safefile_dir(at("d/f"), true, false, base, sizeof(base), why, sizeof(why)), -EPERM);
	ck_assert_msg(strstr(why, "has mode 0770") && strstr(why, "can be replaced by others"), "%s", why);
	ck_assert_int_eq(chmod(at("d"), 01777), 0);
	ck_assert_int_eq(safefile_dir(at("d/f"), true, false, base, sizeof(base), why, sizeof(why)), -EPERM);
	/* not strict: anything goes */
	fd = safefile_dir(at("d/f"), false, false, base, sizeof(base), why, sizeof(why));
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* an ancestor writable by others: only if sticky */
	ck_assert_int_eq(chmod(at("d"), 0777), 0);
	ck_assert_int_eq(mkdir(at("d/e"), 0700), 0);
	ck_assert_int_eq(safefile_dir(at("d/e/f"), true, false, base, sizeof(base), why, sizeof(why)), -EPERM);
	snprintf(want, sizeof(want), "directory %s belongs to uid %u and has mode 0777", realpath(at("d"), real),
		 (unsigned)geteuid());
	ck_assert_msg(strstr(why, want), "%s", why);
	ck_assert_int_eq(chmod(at("d"), 01777), 0);
	fd = safefile_dir(at("d/e/f"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_msg(fd >= 0, "%s", why);
	close(fd);
}
END_TEST

/* A file to trust: regular, ours or root's, written by nobody else; what
 * is not is refused with the reason, and opening never blocks. */
START_TEST(test_open_trusted)
{
	char base[64], buf[16];
	int dfd, fd;

	unit_write(dir, "good", "ok\n");
	unit_write(dir, "shared", "x\n");
	ck_assert_int_eq(chmod(at("shared"), 0666), 0);
	ck_assert_int_eq(symlink(at("good"), at("link")), 0);
	ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
	ck_assert_int_eq(mkdir(at("sub"), 0700), 0);
	dfd = safefile_dir(at("x"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_msg(dfd >= 0, "%s", why);

	fd = safefile_open_trusted(dfd, "good", why, sizeof(why));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	ck_assert_int_eq(safefile_open_trusted(dfd, "missing", why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(safefile_open_trusted(dfd, "link", why, sizeof(why)), -EPERM);
	ck_assert_msg(strstr(why, "link is a symlink"), "%s", why);
	ck_assert_int_eq(safefile_open_trusted(dfd, "shared", why, sizeof(why)), -EPERM);
	ck_assert_msg(strstr(why, "mode 0666"), "%s", why);
	/* a FIFO with no writer would block an open without O_NONBLOCK */
	ck_assert_int_eq(safefile_open_trusted(dfd, "fifo", why, sizeof(why)), -EPERM);
	ck_assert_msg(strstr(why, "not a regular file"), "%s", why);
	ck_assert_int_eq(safefile_open_trusted(dfd, "sub", why, sizeof(why)), -EPERM);
	close(dfd);
}
END_TEST

/* Root only (main): a file of another owner is not trusted. */
START_TEST(test_open_trusted_owner)
{
	char base[64];
	int dfd;

	unit_write(dir, "theirs", "x\n");
	ck_assert_int_eq(chown(at("theirs"), 65534, 65534), 0);
	dfd = safefile_dir(at("x"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(safefile_open_trusted(dfd, "theirs", why, sizeof(why)), -EPERM);
	ck_assert_msg(strstr(why, "owner 65534"), "%s", why);
	close(dfd);
}
END_TEST

/* A temporary file: a new name beside base, the mode asked whatever the
 * umask, never an existing file; committed by a rename that replaces a
 * symlink at base instead of writing where it points. */
START_TEST(test_create_commit)
{
	char base[64], tmp[128], tmp2[128], buf[16];
	struct stat st;
	mode_t old;
	int dfd, fd, fd2;

	unit_write(dir, "outside", "keep\n");
	dfd = safefile_dir(at("state"), true, false, base, sizeof(base), why, sizeof(why));
	ck_assert_int_ge(dfd, 0);
	old = umask(077);
	fd = safefile_create_tmp(dfd, base, 0644, tmp, sizeof(tmp));
	umask(old);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(strlen(tmp), strlen(".state.") + 8);
	ck_assert_int_eq(strncmp(tmp, ".state.", 7), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(write(fd, "new\n", 4), 4);
	close(fd);
	/* a second one gets another name */
	fd2 = safefile_create_tmp(dfd, base, 0600, tmp2, sizeof(tmp2));
	ck_assert_int_ge(fd2, 0);
	ck_assert_str_ne(tmp, tmp2);
	close(fd2);
	ck_assert_int_eq(unlinkat(dfd, tmp2, 0), 0);
	/* a name that does not fit the caller's buffer */
	ck_assert_int_eq(safefile_create_tmp(dfd, base, 0600, tmp2, 10), -ENAMETOOLONG);

	/* base is a symlink to a file outside: replaced, the target untouched */
	ck_assert_int_eq(symlink(at("outside"), at("state")), 0);
	ck_assert_int_eq(safefile_commit(dfd, tmp, base), 0);
	ck_assert_int_eq(lstat(at("state"), &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	fd = open(at("outside"), O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 5);
	ck_assert_int_eq(memcmp(buf, "keep\n", 5), 0);
	close(fd);
	fd = open(at("state"), O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	ck_assert_int_eq(faccessat(dfd, tmp, F_OK, 0), -1);

	/* a commit that fails (base is a non-empty directory) leaves no
	 * temporary file behind */
	ck_assert_int_eq(mkdir(at("busy"), 0700), 0);
	unit_write(dir, "busy/f", "x");
	fd = safefile_create_tmp(dfd, "busy", 0600, tmp, sizeof(tmp));
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_lt(safefile_commit(dfd, tmp, "busy"), 0);
	ck_assert_int_eq(faccessat(dfd, tmp, F_OK, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	close(dfd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("safefile");
	TCase *tc = tcase_create("safefile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_dir_walk);
	tcase_add_test(tc, test_dir_strict);
	tcase_add_test(tc, test_open_trusted);
	if (geteuid() == 0)
		tcase_add_test(tc, test_open_trusted_owner);
	else
		unit_skip("test_open_trusted_owner: needs root, to give a file to another owner");
	tcase_add_test(tc, test_create_commit);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
