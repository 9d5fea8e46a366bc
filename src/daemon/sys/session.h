/* session.h: whether a user sits at the machine, as systemd-logind records
 * it (sd-login): the test rtkit's polkit action makes (allow_active), and
 * what `session = active` in a [user]/[group] section of rtschedd.conf asks. */
#ifndef RTSCHED_SESSION_H
#define RTSCHED_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

/* True if uid has an active session on a local seat. */
bool session_active_local(uid_t uid);

#endif
