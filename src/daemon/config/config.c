/* config.c: what the daemon asks of a loaded configuration (its rules and
 * principals by name, the state journal's path) and freeing. Reading and the
 * command-line overrides are in parse.c, checking in validate.c, printing in
 * print.c. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config/config.h"

void config_state_path(const struct config *c, char *buf, size_t len)
{
	const char *slash = strrchr(c->socket_path, '/');

	if (c->state_file[0])
		snprintf(buf, len, "%s", c->state_file);
	else
		snprintf(buf, len, "%.*s/state", slash ? (int)(slash - c->socket_path) : 0, c->socket_path);
}

/* A section by its kind and name, through the section map. */
static const struct strmap_entry *section_find(const struct config *c, const char *kind, const char *name)
{
	char key[CONFIG_NAME_MAX * 2];

	if ((size_t)snprintf(key, sizeof(key), "%s %s", kind, name) >= sizeof(key))
		return NULL;
	const struct strmap_entry *e = strmap_get(&c->sections, key);
	return e && e->value != SIZE_MAX ? e : NULL;
}

const struct rule *config_find_rule(const struct config *c, const char *name)
{
	const struct strmap_entry *e = section_find(c, "rule", name);

	return e ? &c->rules[e->value] : NULL;
}

const struct principal *config_find_principal(const struct config *c, const char *name, bool group)
{
	const struct strmap_entry *e = section_find(c, group ? "group" : "user", name);

	return e ? &c->principals[e->value] : NULL;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c->rules);
	free(c->principals);
	free(c->probes);
	free(c->irqs);
	free(c->kthreads);
	strmap_clear(&c->sections);
	free(c);
}
