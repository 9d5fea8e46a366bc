/* kfile.c: small kernel files, read and written whole (see kfile.h). */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/kfile.h"

int kfile_read(int dirfd, const char *path, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t n;
	int fd, r = 0;

	if (len == 0)
		return -ENOSPC;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* sysfs and cgroupfs hand a file over in one read; loop for the rest */
	while (used < len - 1 && (n = read(fd, buf + used, len - 1 - used)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		used += (size_t)n;
	}
	if (r == 0 && used == len - 1) {
		char extra;
		if (read(fd, &extra, 1) > 0)
			r = -ENOSPC;
	}
	close(fd);
	buf[used] = '\0';
	while (used > 0 && isspace((unsigned char)buf[used - 1]))
		buf[--used] = '\0';
	return r;
}

int kfile_write(int dirfd, const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, r;

	fd = openat(dirfd, path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int kfile_path(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s", root ? root : ""), m;

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - (size_t)n ? -ENAMETOOLONG : 0;
}
