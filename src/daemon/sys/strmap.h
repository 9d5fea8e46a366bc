/* strmap.h: a string-keyed hash map (open addressing, FNV-1a) from a name to
 * a small record, for lookups that must not be linear: config sections by
 * name, with 12,000 rules a linear search per section made loading quadratic. */
#ifndef RTSCHED_STRMAP_H
#define RTSCHED_STRMAP_H

#include <stddef.h>

struct strmap_entry {
	char *key;          /* owned copy */
	size_t value;       /* the caller's: an index into its own array */
	short file;         /* the caller's: where the key was last seen */
	unsigned line;
};

struct strmap {
	struct strmap_entry *slots;
	size_t cap, n;      /* cap is 0 or a power of two */
};

/* The entry for `key`, or NULL. */
struct strmap_entry *strmap_get(const struct strmap *m, const char *key);
/* The entry for `key`, added (value SIZE_MAX, file -1, line 0) if absent;
 * *added says which. NULL (and errno ENOMEM) when out of memory. Entries
 * move when the map grows: don't keep pointers across calls. */
struct strmap_entry *strmap_put(struct strmap *m, const char *key, int *added);
/* Free every key and the table; the map is empty and reusable after. */
void strmap_clear(struct strmap *m);

#endif
