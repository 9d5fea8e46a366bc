/* value.c: one key's value by its type (keys.h): read and checked, with
 * the range or the words it takes in the error; printed as it reads back;
 * given its built-in default. Errors and warnings name file:line and key. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/protocol.h"
#include "daemon/config/value.h"

/* Numbers are stored in bool, int (or unsigned) and long fields, ids in
 * uid_t and gid_t. */
_Static_assert(sizeof(bool) != sizeof(int), "a bool field must be told from an int one by its size");
_Static_assert(sizeof(uid_t) == sizeof(unsigned) && sizeof(gid_t) == sizeof(unsigned), "ids are read as unsigned");

static void store_num(void *p, size_t size, long v)
{
	if (size == sizeof(bool))
		*(bool *)p = v != 0;
	else if (size == sizeof(int))
		*(int *)p = (int)v;
	else
		*(long *)p = v;
}

static long load_num(const void *p, size_t size)
{
	if (size == sizeof(bool))
		return *(const bool *)p;
	if (size == sizeof(int))
		return *(const int *)p;
	return *(const long *)p;
}

/* A note of sev at the reader's place, the key named if given. */
__attribute__((format(printf, 4, 0)))
static void note(struct value_at *at, enum config_severity sev, const char *key, const char *fmt, va_list ap)
{
	char where[PATH_MAX + CONFIG_NAME_MAX + 32], *text = NULL;

	snprintf(where, sizeof(where), "%s:%u%s%s", at->file, at->line, key ? ": " : "", key ? key : "");
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	config_report_add(at->rep, sev, false, where, "%s", text ? text : "out of memory");
	free(text);
}

void value_error(struct value_at *at, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note(at, CONFIG_ERROR, key, fmt, ap);
	va_end(ap);
	at->nerr++;
}

void value_warn(struct value_at *at, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	note(at, CONFIG_WARNING, key, fmt, ap);
	va_end(ap);
}

/* The error k->bad, with the value where it says %s (a string of the
 * table, printed as text: never a format). */
static void error_bad(struct value_at *at, const struct config_key *k, const char *v)
{
	const char *s = strstr(k->bad, "%s");

	value_error(at, k->name, "%.*s%s%s", (int)(s - k->bad), k->bad, v, s + 2);
}

/* A whole number in min..max; the error names the range, or is k->bad. */
static int set_int(struct value_at *at, const struct config_key *k, const char *v, long *out)
{
	int r = proto_parse_long(v, k->min, k->max, out);

	if (r < 0 && k->bad)
		error_bad(at, k, v);
	else if (r == -EINVAL)
		value_error(at, k->name, "'%s' is not a whole number; use a value in %ld..%ld", v, k->min, k->max);
	else if (r < 0)
		value_error(at, k->name, "%s is out of range; use a value in %ld..%ld", v, k->min, k->max);
	return r < 0 ? -EINVAL : 0;
}

/* yes/no/true/false/on/off/1/0, as systemd spells booleans. */
static int set_bool(struct value_at *at, const char *key, const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	value_error(at, key, "'%s' is not a boolean; use yes or no", v);
	return -EINVAL;
}

/* One of k->choices, spelled exactly. */
static const struct key_choice *find_choice(struct value_at *at, const struct config_key *k, const char *v)
{
	for (const struct key_choice *ch = k->choices; ch->name; ch++)
		if (strcmp(v, ch->name) == 0)
			return ch;
	error_bad(at, k, v);
	return NULL;
}

static int set_cpus(struct value_at *at, const char *key, const char *v, cpu_set_t *out)
{
	const char *bad = NULL;
	cpu_set_t missing;
	char have[256], miss[256];

	if (!*v) {
		value_error(at, key, "empty CPU list; name at least one CPU, or remove the key");
		return -EINVAL;
	}
	if (cpulist_parse(v, out, &bad) < 0) {
		value_error(at, key, "bad CPU list '%s' at '%s'; use the kernel's syntax, e.g. 0-3,6", v,
			    bad ? bad : v);
		return -EINVAL;
	}
	if (CPU_COUNT(out) == 0) {
		value_error(at, key, "empty CPU list; name at least one CPU");
		return -EINVAL;
	}
	if (cpulist_missing(out, &at->present, &missing) > 0) {
		cpulist_format(&missing, miss, sizeof(miss));
		cpulist_format(&at->present, have, sizeof(have));
		value_error(at, key, "CPU %s does not exist on this machine; present CPUs are %s", miss, have);
		return -EINVAL;
	}
	return 0;
}

/* Text into a char array of len bytes. */
static int set_string(struct value_at *at, const char *key, const char *v, char *out, size_t len)
{
	if (strlen(v) >= len) {
		value_error(at, key, "value is longer than %zu characters", len - 1);
		return -EINVAL;
	}
	strcpy(out, v);
	return 0;
}

/* The kernel keeps a thread's name (comm) to TASK_COMM_LEN - 1 bytes. */
#define COMM_MAX 15

/* thread-name and process-name match comm, which the kernel cuts to 15
 * characters (GStreamer's "audiotestsrc0:src" is "audiotestsrc0:s"). Warn
 * when a pattern needs more than that and name the form that matches the
 * cut names, or when its end can be cut off a longer name. A pattern unit
 * (a character, \x, ?, or a [...] class) matches one character, '*' any run. */
static void comm_pattern_check(struct value_at *at, const char *key, const char *pat)
{
	const char *p = pat, *star = NULL;
	size_t units = 0, cut = 0;
	bool after_star = false;

	while (*p) {
		if (*p == '*') {
			star = star ? star : p;
			after_star = false;
			p++;
			continue;
		}
		if (*p == '\\' && p[1]) {
			p += 2;
		} else if (*p == '[') {
			const char *q = p + 1;

			q += *q == '!' || *q == '^';
			q += *q == ']';
			while (*q && *q != ']')
				q++;
			p = *q ? q + 1 : p + 1;
		} else {
			p++;
		}
		units++;
		after_star = star != NULL;
		if (units == COMM_MAX && !star)
			cut = (size_t)(p - pat);
	}
	if (units > COMM_MAX)
		value_warn(at, key, "'%s' can never match: the kernel keeps only the first %d characters of a name; "
			   "use '%.*s'", pat, COMM_MAX, (int)(cut ? cut : (size_t)(star - pat) + 1), pat);
	else if (after_star)
		value_warn(at, key, "'%s' misses names longer than %d characters: the kernel cuts them (GStreamer's "
			   "audiotestsrc0:src is audiotestsrc0:s), so their end never matches the end of the pattern; "
			   "match those by how they begin (such as 'audiotestsrc*'), by their cut form, or by "
			   "process-name", pat, COMM_MAX);
}

/* user = NAME|UID, group = NAME|GID: resolved now, so a name that doesn't
 * exist is an error instead of a rule that silently never matches. */
static int set_id(struct value_at *at, const char *key, const char *v, bool group, unsigned *out)
{
	long n;

	if (proto_parse_long(v, 0, 0x7fffffff, &n) == 0) {
		*out = (unsigned)n;
		return 0;
	}
	if (group) {
		struct group *g = getgrnam(v);
		if (g) {
			*out = g->gr_gid;
			return 0;
		}
	} else {
		struct passwd *pw = getpwnam(v);
		if (pw) {
			*out = pw->pw_uid;
			return 0;
		}
	}
	value_error(at, key, "no %s '%s' on this system; use an existing name or a number", group ? "group" : "user", v);
	return -EINVAL;
}

/* A PCI or USB id: four hexadecimal digits, ':', four more or '*'; kept
 * in lower case, as the kernel prints ids. */
static int set_devid(struct value_at *at, const char *key, const char *v, char *out, size_t len)
{
	bool ok = strlen(v) == 9 || (strlen(v) == 6 && v[5] == '*');

	for (int i = 0; ok && i < (int)strlen(v); i++)
		ok = i == 4 ? v[i] == ':' : (i == 5 && v[i] == '*' && strlen(v) == 6) || isxdigit((unsigned char)v[i]);
	if (!ok || len < 10) {
		value_error(at, key, "'%s' is not a device id; use vendor:product in hexadecimal as lspci -nn or "
			    "lsusb show it, e.g. 1235:8211, or 1235:* for any product of the vendor", v);
		return -EINVAL;
	}
	for (size_t i = 0; i <= strlen(v); i++)
		out[i] = (char)tolower((unsigned char)v[i]);
	return 0;
}

/* irq-avoid-cpus: off, auto, or a CPU list of this machine. */
static int set_avoid(struct value_at *at, const char *key, const char *v, struct irq_avoid *out)
{
	if (strcmp(v, "off") == 0 || strcmp(v, "auto") == 0) {
		out->mode = strcmp(v, "off") == 0 ? IRQ_AVOID_OFF : IRQ_AVOID_AUTO;
		CPU_ZERO(&out->cpus);
		return 0;
	}
	if (set_cpus(at, key, v, &out->cpus) < 0)
		return -EINVAL;
	out->mode = IRQ_AVOID_LIST;
	return 0;
}

/* The value of key k, by its type. */
static int set_value(struct value_at *at, const struct config_key *k, void *p, const char *v)
{
	const struct key_choice *ch;
	long n;
	int r;

	switch (k->type) {
	case KEY_INT:
		if ((k->flags & KEY_OFF) && strcmp(v, "off") == 0)
			n = -1;
		else if (set_int(at, k, v, &n) < 0)
			return -EINVAL;
		store_num(p, k->size, n);
		return 0;
	case KEY_CPU:
		if (set_int(at, k, v, &n) < 0)
			return -EINVAL;
		store_num(p, k->size, n);
		if (!CPU_ISSET(n, &at->present)) {
			value_error(at, k->name, "CPU %ld does not exist on this machine", n);
			return -EINVAL;
		}
		return 0;
	case KEY_BOOL:
		return set_bool(at, k->name, v, p);
	case KEY_ENUM:
		if (!(ch = find_choice(at, k, v)))
			return -EINVAL;
		store_num(p, k->size, ch->value);
		return 0;
	case KEY_WORD:
		if (!find_choice(at, k, v))
			return -EINVAL;
		return set_string(at, k->name, v, p, k->size);
	case KEY_POLICY:
		if ((r = policy_from_string(v)) < 0) {
			value_error(at, k->name, "unknown policy '%s'; use one of %s", v, policy_names());
			return -EINVAL;
		}
		store_num(p, k->size, r);
		return 0;
	case KEY_POLICIES:
		if (policy_mask_from_string(v, p) < 0) {
			value_error(at, k->name, "bad policy list '%s'; use a comma-separated list of %s", v,
				    policy_names());
			return -EINVAL;
		}
		return 0;
	case KEY_CPUS:
		return set_cpus(at, k->name, v, p);
	case KEY_LOG_LEVEL:
		if ((r = log_level_from_string(v)) < 0) {
			value_error(at, k->name, "unknown level '%s'; use err, warning, notice, info or debug", v);
			return -EINVAL;
		}
		store_num(p, k->size, r);
		return 0;
	case KEY_STRING:
		return set_string(at, k->name, v, p, k->size);
	case KEY_PATH:
		if (v[0] != '/') {
			value_error(at, k->name, "'%s' is not an absolute path", v);
			return -EINVAL;
		}
		return set_string(at, k->name, v, p, k->size);
	case KEY_USER_NAME:
		if (!getpwnam(v)) {
			value_error(at, k->name, "no user '%s' on this system", v);
			return -EINVAL;
		}
		return set_string(at, k->name, v, p, k->size);
	case KEY_GLOB:
	case KEY_COMM_GLOB:
		/* refuse what can never match so a typo is seen */
		if (!*v) {
			value_error(at, k->name, "empty pattern; remove the key to match anything");
			return -EINVAL;
		}
		if (set_string(at, k->name, v, p, k->size) < 0)
			return -EINVAL;
		if (k->type == KEY_COMM_GLOB)
			comm_pattern_check(at, k->name, v);
		return 0;
	case KEY_UID:
	case KEY_GID:
		return set_id(at, k->name, v, k->type == KEY_GID, p);
	case KEY_NUMBERS: {
		const char *bad = NULL;
		if (cpulist_parse(v, p, &bad) < 0 || CPU_COUNT((cpu_set_t *)p) == 0) {
			value_error(at, k->name, "bad list '%s'; use numbers and ranges, e.g. 0-3,6", v);
			return -EINVAL;
		}
		return 0;
	}
	case KEY_DEVID:
		return set_devid(at, k->name, v, p, k->size);
	case KEY_AVOID:
		return set_avoid(at, k->name, v, p);
	}
	return -EINVAL;
}

int value_set(struct value_at *at, const struct config_key *k, void *sec, const char *value)
{
	int r = set_value(at, k, (char *)sec + k->offset, value);

	if (k->has)
		*((bool *)((char *)sec + k->has - 1)) = r == 0;
	return r;
}

const char *value_format(const struct config *c, const struct config_key *k, const void *sec, char *buf,
			 size_t len)
{
	const void *p = (const char *)sec + k->offset;
	long n;

	if (k->shown && !k->shown(k, sec))
		return NULL;
	if ((k->flags & KEY_SHOW_SET) && k->has && !*((const bool *)((const char *)sec + k->has - 1)))
		return NULL;
	if (k->format) {
		k->format(c, sec, buf, len);
		return buf;
	}
	switch (k->type) {
	case KEY_STRING:
	case KEY_PATH:
	case KEY_USER_NAME:
	case KEY_GLOB:
	case KEY_COMM_GLOB:
	case KEY_WORD:
	case KEY_DEVID:
		return (k->flags & KEY_SHOW_SET) && !*(const char *)p ? NULL : p;
	case KEY_CPUS:
	case KEY_NUMBERS:
		cpulist_format(p, buf, len);
		return buf;
	case KEY_AVOID: {
		const struct irq_avoid *a = p;
		if (a->mode == IRQ_AVOID_LIST)
			cpulist_format(&a->cpus, buf, len);
		else
			snprintf(buf, len, "%s", a->mode == IRQ_AVOID_AUTO ? "auto" : "off");
		return buf;
	}
	case KEY_UID:
	case KEY_GID:
		snprintf(buf, len, "%u", *(const unsigned *)p);
		return buf;
	default:
		break;
	}
	n = load_num(p, k->size);
	if ((k->flags & KEY_SHOW_SET) && !k->has && n == k->def)
		return NULL;
	switch (k->type) {
	case KEY_BOOL:
		return n ? "yes" : "no";
	case KEY_ENUM:
		for (const struct key_choice *ch = k->choices; ch->name; ch++)
			if (ch->value == n)
				return ch->name;
		return "?";
	case KEY_POLICY:
		return policy_to_string((int)n);
	case KEY_POLICIES:
		policy_mask_to_string((unsigned)n, buf, len);
		return buf;
	case KEY_LOG_LEVEL:
		return log_level_to_string((int)n);
	default:
		if ((k->flags & KEY_OFF) && n < 0)
			return "off";
		snprintf(buf, len, "%ld", n);
		return buf;
	}
}

void value_defaults(enum section_kind kind, void *sec)
{
	const struct key_section *s = key_section(kind);

	for (int i = 0; s && i < s->n_keys; i++) {
		const struct config_key *k = &s->keys[i];
		char *p = (char *)sec + k->offset;

		if (k->def_str)
			snprintf(p, k->size, "%s", k->def_str);
		else if (k->def)
			store_num(p, k->size, k->def);
	}
}
