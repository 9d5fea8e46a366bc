/* subid.h: who owns a subordinate uid. shadow gives users ranges of uids
 * (/etc/subuid: "alice:100000:65536", or an NSS subid service named in
 * /etc/nsswitch.conf) that newuidmap lets them map into a user namespace of
 * their own; processes there reach the host, and rtschedd's socket, as those
 * uids, which have no passwd entry. rtschedd counts them as the user who
 * owns the range (grant.h), so one user cannot multiply its limits by its
 * subordinate uids. Asked of shadow's own libsubid, which reads what
 * newuidmap reads. */
#ifndef RTSCHED_SUBID_H
#define RTSCHED_SUBID_H

#include <sys/types.h>

/* The owner of subordinate uid `uid` in *owner: of several (overlapping
 * ranges), the first that is neither root nor uid itself. 0 if found,
 * -ENOENT if no range holds uid, -EIO if libsubid could not tell (no
 * subuid database, an owner that names no user). */
int subid_owner(uid_t uid, uid_t *owner);

#endif
