/* config.c: what the daemon asks of a loaded configuration (its rules and
 * principals by name, the state journal's path), command-line overrides and
 * freeing. Reading is in parse.c, checking in validate.c, printing in print.c. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config/config.h"
#include "daemon/config/keys.h"

void config_override_default(struct config *c, int policy, int priority)
{
	c->dflt.policy = policy;
	c->dflt.priority = priority;
	c->origin.file[D_POLICY] = c->origin.file[D_PRIORITY] = CONFIG_ORIGIN_CMDLINE;
}

int config_override_socket(struct config *c, const char *path)
{
	if (strlen(path) >= sizeof(c->socket_path))
		return -ENAMETOOLONG;
	strcpy(c->socket_path, path);
	c->origin.file[D_SOCKET] = CONFIG_ORIGIN_CMDLINE;
	return 0;
}

void config_override_log_level(struct config *c, int level)
{
	c->log_level = level;
	c->origin.file[D_LOG_LEVEL] = CONFIG_ORIGIN_CMDLINE;
}

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
	strmap_clear(&c->sections);
	free(c);
}
