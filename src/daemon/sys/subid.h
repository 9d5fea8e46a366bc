/* subid.h: who owns a subordinate uid. shadow's /etc/subuid gives users
 * ranges of uids ("alice:100000:65536") that newuidmap lets them map into a
 * user namespace of their own; processes there reach the host, and
 * rtschedd's socket, as those uids, which have no passwd entry. rtschedd
 * counts them as the user who owns the range (grant.h), so one user cannot
 * multiply its limits by its subordinate uids. */
#ifndef RTSCHED_SUBID_H
#define RTSCHED_SUBID_H

#include <stddef.h>
#include <sys/types.h>

#define SUBID_FILE "/etc/subuid"

/* The owner of uid in the subuid file at path: its name (as the file has
 * it: a user name, or a uid in digits) in name. 0 if found, -ENOENT if no
 * range holds uid (or there is no file), -errno if it cannot be read. */
int subid_owner(const char *path, uid_t uid, char *name, size_t len);

#endif
