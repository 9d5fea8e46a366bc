/* subid.c: the owner of a subordinate uid (see subid.h). The file is read
 * for uids without a passwd entry only, which a grant meets rarely. */
#include "autoconfig.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/subid.h"

/* digits only, into *v (which fits a uid or a count); false otherwise */
static bool parse_u32(const char *s, uint64_t *v)
{
	uint64_t n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > UINT32_MAX)
			return false;
	}
	*v = n;
	return true;
}

int subid_owner(const char *path, uid_t uid, char *name, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int r = -ENOENT;

	if (!f)
		return errno == ENOENT ? -ENOENT : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *who, *start, *count;
		uint64_t s, n;

		line[strcspn(line, "\n")] = '\0';
		who = strtok_r(line, ":", &save);
		start = strtok_r(NULL, ":", &save);
		count = strtok_r(NULL, ":", &save);
		if (!who || !start || !count || strtok_r(NULL, ":", &save) || !parse_u32(start, &s) ||
		    !parse_u32(count, &n))
			continue;   /* shadow skips what it cannot read, and so do we */
		if ((uint64_t)uid >= s && (uint64_t)uid < s + n) {
			snprintf(name, len, "%s", who);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}
