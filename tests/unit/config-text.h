/* config-text.h: config_load() and config_validate() with their notes
 * printed to a stream as lines ("FILE:LINE: KEY: message", a warning's with
 * "warning: " before the message), which is what the config tests search. */
#ifndef RTSCHED_TEST_CONFIG_TEXT_H
#define RTSCHED_TEST_CONFIG_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "daemon/config/config.h"

static inline int config_load_text(const char *path, bool required, struct config **c, FILE *f)
{
	struct config_report rep = { 0 };
	int r = config_load(path, required, c, &rep);

	config_report_print(&rep, f);
	config_report_free(&rep);
	return r;
}

/* *cmdline (if not NULL): whether an error is a command-line value's. */
static inline int config_validate_text(struct config *c, FILE *f, bool *cmdline)
{
	struct config_report rep = { 0 };
	int r = config_validate(c, &rep);

	config_report_print(&rep, f);
	if (cmdline)
		*cmdline = rep.cmdline;
	config_report_free(&rep);
	return r;
}

#endif
