/* strmap.c: string-keyed open-addressing hash map (see strmap.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/strmap.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot holding key, or the empty slot where it would go. */
static struct strmap_entry *find(const struct strmap *m, const char *key)
{
	size_t mask = m->cap - 1;

	for (size_t i = (size_t)hash(key) & mask;; i = (i + 1) & mask)
		if (!m->slots[i].key || strcmp(m->slots[i].key, key) == 0)
			return &m->slots[i];
}

struct strmap_entry *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_entry *e;

	if (!m->cap)
		return NULL;
	e = find(m, key);
	return e->key ? e : NULL;
}

/* Double the table (at most half full, so probes stay short). */
static int grow(struct strmap *m)
{
	struct strmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find(m, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

struct strmap_entry *strmap_put(struct strmap *m, const char *key, int *added)
{
	struct strmap_entry *e;

	*added = 0;
	if ((e = strmap_get(m, key)))
		return e;
	if (2 * (m->n + 1) > m->cap && grow(m) < 0)
		return NULL;
	e = find(m, key);
	e->key = strdup(key);
	if (!e->key)
		return NULL;
	e->value = SIZE_MAX;
	e->file = -1;
	e->line = 0;
	m->n++;
	*added = 1;
	return e;
}

void strmap_clear(struct strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
