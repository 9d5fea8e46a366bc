/* config.c: what the daemon asks of a loaded configuration (its rules and
 * principals by name, the state journal's path) and freeing. Reading and the
 * command-line overrides are in parse.c, checking in validate.c, printing in
 * print.c. */
#include "autoconfig.h"

#include <errno.h>
#include <stdarg.h>
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

void config_report_add(struct config_report *r, enum config_severity sev, bool cmdline, const char *at,
		       const char *fmt, ...)
{
	struct config_note n = { .severity = sev, .cmdline = cmdline };
	va_list ap;
	int len;

	if (sev == CONFIG_ERROR) {
		r->errors++;
		r->cmdline |= cmdline;
	}
	va_start(ap, fmt);
	len = vasprintf(&n.text, fmt, ap);
	va_end(ap);
	if (len < 0 || (at && !(n.at = strdup(at)))) {
		if (len >= 0)
			free(n.text);
		r->oom = true;
		return;
	}
	if (len > 0 && n.text[len - 1] == '\n')
		n.text[len - 1] = '\0';
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct config_note *v = realloc(r->v, cap * sizeof(*v));
		if (!v) {
			free(n.text);
			free(n.at);
			r->oom = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = n;
}

const struct config_note *config_report_first_error(const struct config_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].severity == CONFIG_ERROR)
			return &r->v[i];
	return NULL;
}

void config_note_format(const struct config_note *n, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", n->at ? n->at : "", n->at ? ": " : "",
		 n->severity == CONFIG_WARNING ? "warning: " : "", n->text);
}

void config_report_print(const struct config_report *r, FILE *f)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct config_note *n = &r->v[i];
		fprintf(f, "%s%s%s%s\n", n->at ? n->at : "", n->at ? ": " : "",
			n->severity == CONFIG_WARNING ? "warning: " : "", n->text);
	}
	if (r->oom)
		fprintf(f, "out of memory: some problems of the configuration are not listed\n");
}

void config_report_free(struct config_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].at);
		free(r->v[i].text);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}
