/* subid.c: the owner of a subordinate uid (see subid.h). Asked for uids
 * without a passwd entry only, which a grant meets rarely. */
#include "autoconfig.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <shadow/subid.h>

#include "daemon/sys/subid.h"

int subid_owner(uid_t uid, uid_t *owner)
{
	static bool quiet;
	uid_t *owners = NULL;
	int n, r = -ENOENT;

	/* its messages would go to stderr, the daemon's log: to /dev/null */
	if (!quiet)
		quiet = subid_init("rtschedd", NULL);
	n = subid_get_uid_owners(uid, &owners);
	if (n < 0) {
		free(owners);
		return -EIO;
	}
	for (int i = 0; i < n; i++)
		if (owners[i] != 0 && owners[i] != uid) {
			*owner = owners[i];
			r = 0;
			break;
		}
	free(owners);
	return r;
}
