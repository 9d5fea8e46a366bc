/* keys.c: where the value of each key came from (a file's line, the
 * command line or the built-in default), for duplicate keys, validation
 * messages and the printed configuration. */
#include "autoconfig.h"

#include <stdio.h>

#include "daemon/config/keys.h"

void origin_reset(struct key_origin *o)
{
	for (int i = 0; i < CONFIG_KEYS_MAX; i++) {
		o->file[i] = CONFIG_ORIGIN_DEFAULT;
		o->line[i] = 0;
	}
}

bool origin_set(const struct key_origin *o, int k)
{
	return o->file[k] != CONFIG_ORIGIN_DEFAULT;
}

void origin_str(const struct config *c, const struct key_origin *o, int k, char *buf, size_t len)
{
	if (o->file[k] == CONFIG_ORIGIN_DEFAULT)
		snprintf(buf, len, "built-in default");
	else if (o->file[k] == CONFIG_ORIGIN_CMDLINE)
		snprintf(buf, len, "command line");
	else
		snprintf(buf, len, "%s:%u", c->files[o->file[k]], o->line[k]);
}
