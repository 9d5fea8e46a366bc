/* kfile.h: the kernel's small text files (sysfs attributes, cgroup files):
 * read whole, written in one write(2), which is how the kernel takes a value
 * (a partial write would set part of it). Paths are absolute, or relative to
 * a directory descriptor (a cgroup's); links are never followed. */
#ifndef RTSCHED_KFILE_H
#define RTSCHED_KFILE_H

#include <stddef.h>

/* Read the file into buf, NUL-terminated, trailing blanks and newline cut.
 * dirfd AT_FDCWD for an absolute path. 0, -ENOSPC if it does not fit, or
 * the -errno of open or read. */
int kfile_read(int dirfd, const char *path, char *buf, size_t len);
/* Write text in one write(2). What open(2) refuses is the file's permission
 * (-EACCES, -EROFS, -ENOENT); what write(2) refuses is the kernel's answer
 * to the value (-EINVAL, -EBUSY, -ENOSPC...). 0 or -errno. */
int kfile_write(int dirfd, const char *path, const char *text);
/* "ROOT" + formatted rest into buf (root NULL: ""). 0 or -ENAMETOOLONG. */
int kfile_path(char *buf, size_t len, const char *root, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
