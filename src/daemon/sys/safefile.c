/* safefile.c: directory-relative, no-follow file handling (see safefile.h). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/safefile.h"

/* Owned by root or by us, and writable by nobody else. */
static bool private_dir(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Above the last directory: root's or ours, and private or sticky (/tmp):
 * others may add names there but not move ours. */
static bool safe_ancestor(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

int safefile_dir(const char *path, bool strict, bool create, char *base, size_t baselen, char *why, size_t whylen)
{
	char dir[PATH_MAX], real[PATH_MAX], at[PATH_MAX] = "/", *slash, *comp, *save = NULL;
	int fd, r;

	why[0] = '\0';
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) || path[0] != '/') {
		snprintf(why, whylen, "%s: not an absolute path", path);
		return -EINVAL;
	}
	slash = strrchr(dir, '/');
	if (!slash[1] || snprintf(base, baselen, "%s", slash + 1) >= (int)baselen) {
		snprintf(why, whylen, "%s: no file name", path);
		return -EINVAL;
	}
	*slash = '\0';
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	/* resolve symlinks the administrator made (/var/run -> /run) once, then
	 * walk the real path without following anything, checking each step */
	if (!realpath(dir, real)) {
		if (errno != ENOENT || !create) {
			r = -errno;
			snprintf(why, whylen, "%s: %s", dir, strerror(-r));
			return r;
		}
		snprintf(real, sizeof(real), "%s", dir);
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (comp = strtok_r(real, "/", &save);; comp = strtok_r(NULL, "/", &save)) {
		struct stat st;
		bool last = !comp; /* fd is the file's own directory */

		if (fstat(fd, &st) < 0) {
			r = -errno;
			goto fail;
		}
		if (strict && (last ? !private_dir(&st) : !safe_ancestor(&st))) {
			snprintf(why, whylen, "%s: directory %s belongs to uid %u and has mode %04o; a file there can "
				 "be replaced by others (make it root's and not group- or world-writable, or choose "
				 "another path)", path, at, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
			r = -EPERM;
			goto fail;
		}
		if (last)
			return fd;
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				r = -errno;
				snprintf(why, whylen, "%s: cannot create %s: %s", path, comp, strerror(-r));
				goto fail;
			}
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			r = -errno;
			snprintf(why, whylen, "%s: %s: %s", path, comp,
				 r == -ELOOP || r == -ENOTDIR ? "not a directory (a symlink?)" : strerror(-r));
			goto fail;
		}
		close(fd);
		fd = nfd;
		/* the path walked so far, for the message */
		size_t n = strlen(at);
		snprintf(at + n, sizeof(at) - n, "%s%s", n > 1 ? "/" : "", comp);
	}
fail:
	close(fd);
	return r;
}

int safefile_open_trusted(int dirfd, const char *base, char *why, size_t whylen)
{
	struct stat st;
	int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	why[0] = '\0';
	if (fd < 0) {
		int r = errno == ELOOP ? -EPERM : -errno;
		if (r == -EPERM)
			snprintf(why, whylen, "%s is a symlink", base);
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, whylen, "%s is not a regular file of root or uid %u writable by nobody else "
			 "(owner %u, mode %04o)", base, (unsigned)geteuid(), (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

int safefile_create_tmp(int dirfd, const char *base, mode_t mode, char *tmp, size_t tmplen)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[8];
		char suffix[9];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		suffix[8] = '\0';
		if (snprintf(tmp, tmplen, ".%s.%s", base, suffix) >= (int)tmplen)
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			/* the umask may have narrowed it; the file is ours, so fchmod is safe */
			if (fchmod(fd, mode) < 0) {
				int r = -errno;
				close(fd);
				unlinkat(dirfd, tmp, 0);
				return r;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int safefile_commit(int dirfd, const char *tmp, const char *base)
{
	if (renameat(dirfd, tmp, dirfd, base) < 0) {
		int r = -errno;
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	return 0;
}
