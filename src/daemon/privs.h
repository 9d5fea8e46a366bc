/* privs.h: least privilege with libcap. rtschedd checks at start that it
 * holds CAP_SYS_NICE (and says what to change when it doesn't), then keeps
 * only the capabilities its configuration needs and drops the rest from the
 * effective, permitted, inheritable, ambient and bounding sets, optionally
 * switching to an unprivileged `user =`, and sets no-new-privs. */
#ifndef RTSCHED_PRIVS_H
#define RTSCHED_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/config/config.h"

/* Whether the daemon can set real-time policies on other users' threads; if
 * not, log what rtschedd can still do and the exact fix. */
bool privs_check_nice(const struct config *c);
/* Drop to what the config needs. `subscribed`: the process events connector
 * is already open, so CAP_NET_ADMIN is no longer needed. */
int privs_drop(const struct config *c, bool subscribed);
/* The current capability set as text ("cap_sys_nice=ep"); caller frees. */
char *privs_describe(void);

#endif
