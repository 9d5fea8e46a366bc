/* safefile.h: files a privileged daemon writes or trusts, the way OpenSSH
 * (StrictModes) and OpenBSD daemons handle them: a directory descriptor
 * opened once, every name opened relative to it with O_NOFOLLOW, new files
 * created under a random name with O_EXCL and renamed into place, so a
 * symlink or a file planted by someone else is never followed, truncated or
 * chmod'ed. */
#ifndef RTSCHED_SAFEFILE_H
#define RTSCHED_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The directory of `path` as an O_PATH descriptor, its last component in
 * base. strict: the directory must belong to root or to us and be writable
 * by nobody else, and each directory above it too (or be sticky, like /tmp):
 * then nobody else can have put or changed anything in it. create: make
 * missing directories (0755). Returns the fd, or -errno with the reason
 * in why. */
int safefile_dir(const char *path, bool strict, bool create, char *base, size_t baselen, char *why, size_t whylen);
/* Open dir/base for reading if it is a regular file that belongs to root or
 * to us and nobody else may write; -ENOENT if absent, -EPERM (why says)
 * if it is not to be trusted. */
int safefile_open_trusted(int dirfd, const char *base, char *why, size_t whylen);
/* A new file dir/.base.XXXXXX (O_CREAT|O_EXCL|O_NOFOLLOW, mode), its name in
 * tmp. Returns the fd or -errno. */
int safefile_create_tmp(int dirfd, const char *base, mode_t mode, char *tmp, size_t tmplen);
/* Rename tmp over base (a symlink at base is replaced, never followed); on
 * failure tmp is removed. 0 or -errno. */
int safefile_commit(int dirfd, const char *tmp, const char *base);

#endif
