/* value.h: one key's value by its type (see keys.h): read and checked,
 * printed as it reads back, given its built-in default; and the error and
 * warning lines of the reader, each naming file:line and the key. Internal
 * to src/daemon/config. */
#ifndef RTSCHED_CONFIG_VALUE_H
#define RTSCHED_CONFIG_VALUE_H

#include <sched.h>
#include <stdio.h>

#include "daemon/config/config.h"
#include "daemon/config/keys.h"

/* Where the reader is: what error and warning lines name, and the CPUs a
 * CPU list is checked against. One per config_load(). */
struct value_at {
	struct config_report *rep;
	const char *file;
	short file_idx;     /* index into config.files */
	unsigned line;
	int nerr;           /* errors written */
	cpu_set_t present;
};

/* Note an error at "FILE:LINE: KEY" (key may be NULL). */
__attribute__((format(printf, 3, 4)))
void value_error(struct value_at *at, const char *key, const char *fmt, ...);
/* Note a warning there: the configuration stays valid. */
__attribute__((format(printf, 3, 4)))
void value_warn(struct value_at *at, const char *key, const char *fmt, ...);

/* Read `value` into key k of the section struct at sec (and its has-flag).
 * Returns 0, or -EINVAL after writing the error. */
int value_set(struct value_at *at, const struct config_key *k, void *sec, const char *value);
/* The text key k of the section at sec prints as, in buf or in the section
 * itself; NULL when the key prints no line. */
const char *value_format(const struct config *c, const struct config_key *k, const void *sec, char *buf,
			 size_t len);
/* Give every key of a zeroed section struct its built-in value. */
void value_defaults(enum section_kind kind, void *sec);

#endif
