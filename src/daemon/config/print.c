/* print.c: the effective configuration as a file that loads again
 * (rtschedd --test-config), each value with where it came from. Which keys
 * print, in what order and how is the key table's (keys.c); the sections,
 * their order and the comments about them are here. */
#include "autoconfig.h"

#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config/config.h"
#include "daemon/config/keys.h"
#include "daemon/config/value.h"

/* Print one "key = value  # origin" line. */
static void print_kv(const struct config *c, FILE *f, const struct key_origin *o, int k,
		     const char *key, const char *value)
{
	/* the reader takes INI_MAX_LINE - 4 characters a line (read_line) */
	const size_t max = INI_MAX_LINE - 4;
	char at[PATH_MAX + 16];
	int n;

	/* the origins in one column: a key longer than 14 takes from the value's padding */
	int pad = 24 - (strlen(key) > 14 ? (int)strlen(key) - 14 : 0);

	origin_str(c, o, k, at, sizeof(at));
	if (pad < 0)
		pad = 0;
	n = snprintf(NULL, 0, "%-14s = %-*s # %s", key, pad, value, at);
	if (n >= 0 && (size_t)n <= max) {
		fprintf(f, "%-14s = %-*s # %s\n", key, pad, value, at);
		return;
	}
	/* too long for one line: the origin above it, then no padding, then no blanks */
	fprintf(f, "# %s: %.*s\n", key, (int)(max - strlen(key) - 4), at);
	if (strlen(key) + 3 + strlen(value) <= max)
		fprintf(f, "%s = %s\n", key, value);
	else
		fprintf(f, "%s=%s\n", key, value);
}

/* Every key of one section, in the table's print order: a "key = value"
 * line, or the key's comment when it prints no line. */
static void print_section(const struct config *c, FILE *f, enum section_kind kind, const void *sec)
{
	const struct key_section *s = key_section(kind);
	const struct key_origin *o = (const void *)((const char *)sec + s->origin);
	char buf[256];

	for (int i = 0; i < s->n_keys; i++) {
		int k = s->print_order ? s->print_order[i] : i;
		const struct config_key *key = &s->keys[k];
		const char *value = value_format(c, key, sec, buf, sizeof(buf));

		if (value)
			print_kv(c, f, o, k, key->name, value);
		else if (key->note)
			fprintf(f, "# %s\n", key->note);
	}
}

void config_print(const struct config *c, FILE *f)
{
	fprintf(f, "# rtschedd effective configuration, read from:\n");
	for (size_t i = 0; i < c->n_files; i++)
		fprintf(f, "#   %s\n", c->files[i]);
	if (c->n_files == 0)
		fprintf(f, "#   (no file: built-in defaults)\n");
	fprintf(f, "\n[daemon]\n");
	print_section(c, f, SEC_DAEMON, c);
	fprintf(f, "\n[rtkit]\n");
	print_section(c, f, SEC_RTKIT, &c->rtkit);
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *rl = &c->rules[i];

		fprintf(f, "\n[rule %s]\n", rl->name);
		print_section(c, f, SEC_RULE, rl);
		fprintf(f, "# %s\n", rl->match.n_keys ? "matches threads automatically" :
			"a role: applied when a thread asks for it");
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		fprintf(f, "\n[probe %s]\n", c->probes[i].name);
		print_section(c, f, SEC_PROBE, &c->probes[i]);
	}
	for (size_t i = 0; i < c->n_irqs; i++) {
		fprintf(f, "\n[irq %s]\n", c->irqs[i].name);
		print_section(c, f, SEC_IRQ, &c->irqs[i]);
	}
	for (size_t i = 0; i < c->n_kthreads; i++) {
		fprintf(f, "\n[kthread %s]\n", c->kthreads[i].name);
		print_section(c, f, SEC_KTHREAD, &c->kthreads[i]);
	}
	for (size_t i = 0; i < c->n_principals; i++) {
		const struct principal *p = &c->principals[i];

		fprintf(f, "\n[%s %s]\n", p->is_group ? "group" : "user", p->name);
		print_section(c, f, p->is_group ? SEC_GROUP : SEC_USER, p);
	}
}
