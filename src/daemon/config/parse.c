/* parse.c: reading rtschedd.conf and its drop-in directory with inih.
 *
 * inih does the INI grammar; a line-counting reader in front of it checks
 * each line's shape and tracks sections, so every error names file:line, and
 * the handler looks each key up in its section's table (keys.c) and reads it
 * by its type, with its range (value.c). The command-line overrides (the
 * flags of olad) are set on top at the end of the file. Nothing here
 * touches the running configuration: config_load() builds a fresh struct. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <ini.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/cpulist.h"
#include "daemon/config/config.h"
#include "daemon/config/keys.h"
#include "daemon/config/value.h"

struct parse_ctx {
	struct config *c;
	struct value_at at;               /* file, line, errors, present CPUs */
	FILE *in;
	char *buf;
	size_t cap;
	enum section_kind kind;
	size_t idx;                       /* rule, principal or probe index */
};

/* Refuse a key given twice in one file; a later file overrides an earlier one. */
static int key_claim(struct parse_ctx *ctx, struct key_origin *o, int k, const char *name)
{
	if (o->file[k] == ctx->at.file_idx) {
		value_error(&ctx->at, name, "duplicate key (first set at line %u); remove one of them", o->line[k]);
		return -EINVAL;
	}
	o->file[k] = ctx->at.file_idx;
	o->line[k] = ctx->at.line;
	return 0;
}

/* Report an unknown key with the list of keys the section does take. */
static void unknown_key(struct parse_ctx *ctx, const char *name, const struct key_section *s)
{
	char list[512] = "";
	size_t off = 0;

	for (int i = 0; i < s->n_keys && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", s->keys[i].name);
	value_error(&ctx->at, name, "unknown key in this section; valid keys are: %s", list);
}

/* The struct of the current section. */
static void *section_struct(struct parse_ctx *ctx)
{
	struct config *c = ctx->c;

	switch (ctx->kind) {
	case SEC_DAEMON:
		return c;
	case SEC_RULE:
		return &c->rules[ctx->idx];
	case SEC_USER:
	case SEC_GROUP:
		return &c->principals[ctx->idx];
	case SEC_PROBE:
		return &c->probes[ctx->idx];
	case SEC_RTKIT:
		return &c->rtkit;
	case SEC_IRQ:
		return &c->irqs[ctx->idx];
	case SEC_KTHREAD:
		return &c->kthreads[ctx->idx];
	default:
		return NULL;
	}
}

/* inih handler: the reader has already set ctx->kind for the current section.
 * Returns 1, or 0 after writing the error. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	const struct key_section *s;
	void *sec;
	int k;

	if (ctx->kind == SEC_NONE) {
		value_error(&ctx->at, name, "key outside any section; put it under [daemon] or [rule NAME]");
		return 0;
	}
	if (ctx->kind == SEC_BAD)
		return 1; /* the section header was already reported */
	s = key_section(ctx->kind);
	sec = section_struct(ctx);
	if ((k = key_find(s, name)) < 0) {
		unknown_key(ctx, name, s);
		return 0;
	}
	if (key_claim(ctx, (void *)((char *)sec + s->origin), k, name) < 0)
		return 0;
	return value_set(&ctx->at, &s->keys[k], sec, value) == 0;
}

/* Names of rules, users and groups: what a shell and the protocol can carry. */
static bool valid_name(const char *s, bool allow_star)
{
	if (allow_star && strcmp(s, "*") == 0)
		return true;
	if (!*s || strlen(s) >= CONFIG_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* Make room for one more element in an array that holds n: the capacity
 * doubles at every power of two, so adding n sections costs O(n). */
static int grow_array(void *arrp, size_t n, size_t size)
{
	void **arr = arrp;
	void *na;

	if (n >= 8 && (n & (n - 1)) != 0)
		return 0;
	na = realloc(*arr, (n < 8 ? 8 : 2 * n) * size);
	if (!na)
		return -ENOMEM;
	*arr = na;
	return 0;
}

/* Append a zeroed section of `size` bytes to the array *arrp of *n, with
 * its built-in values; its index goes to the current section and to the
 * section map's entry e. NULL when out of memory. */
static void *section_add(struct parse_ctx *ctx, enum section_kind kind, void *arrp, size_t *n, size_t size,
			 struct strmap_entry *e)
{
	void *sec;

	if (grow_array(arrp, *n, size) < 0)
		return NULL;
	sec = (char *)*(void **)arrp + *n * size;
	memset(sec, 0, size);
	value_defaults(kind, sec);
	ctx->idx = e->value = (*n)++;
	return sec;
}

/* Name a new section and say where it opened (for its errors and
 * --test-config); rules, principals and probes share these fields. */
#define SECTION_MARK(ctx, sec, nm)                                                                   \
	do {                                                                                         \
		strcpy((sec)->name, (nm));                                                           \
		origin_reset(&(sec)->origin);                                                        \
		(sec)->file = (ctx)->at.file_idx;                                                    \
		(sec)->line = (ctx)->at.line;                                                        \
	} while (0)

/* Add the rule/user/group/probe section `name` (its index goes into the
 * section map's entry e). A later file naming a section again overrides it
 * key by key, as systemd drop-ins do: then e already holds the index. */
static int section_open(struct parse_ctx *ctx, enum section_kind kind, const char *name, struct strmap_entry *e)
{
	struct config *c = ctx->c;

	if (e->value != SIZE_MAX) {
		ctx->idx = e->value;
		return 0;
	}
	if (kind == SEC_PROBE) {
		struct probe_conf *pr = section_add(ctx, kind, &c->probes, &c->n_probes, sizeof(*pr), e);

		if (!pr)
			return -ENOMEM;
		SECTION_MARK(ctx, pr, name);
	} else if (kind == SEC_RULE) {
		struct rule *r = section_add(ctx, kind, &c->rules, &c->n_rules, sizeof(*r), e);

		if (!r)
			return -ENOMEM;
		SECTION_MARK(ctx, r, name);
	} else if (kind == SEC_IRQ) {
		struct irq_conf *q = section_add(ctx, kind, &c->irqs, &c->n_irqs, sizeof(*q), e);

		if (!q)
			return -ENOMEM;
		SECTION_MARK(ctx, q, name);
	} else if (kind == SEC_KTHREAD) {
		struct kthread_conf *k = section_add(ctx, kind, &c->kthreads, &c->n_kthreads, sizeof(*k), e);

		if (!k)
			return -ENOMEM;
		SECTION_MARK(ctx, k, name);
	} else {
		struct principal *p = section_add(ctx, kind, &c->principals, &c->n_principals, sizeof(*p), e);

		if (!p)
			return -ENOMEM;
		SECTION_MARK(ctx, p, name);
		p->is_group = kind == SEC_GROUP;
	}
	return 0;
}

/* A section header line "[...]" (already trimmed): classify it, refuse
 * duplicates within one file, and make it current. */
static void section_header(struct parse_ctx *ctx, char *hdr)
{
	char kind_s[16], name[CONFIG_NAME_MAX * 2] = "", extra[2];
	size_t len = strlen(hdr);
	int n;

	ctx->kind = SEC_BAD;
	if (hdr[len - 1] != ']') {
		value_error(&ctx->at, NULL, "section header '%s' has no closing ']'", hdr);
		return;
	}
	hdr[len - 1] = '\0';
	n = sscanf(hdr + 1, "%15s %127s %1s", kind_s, name, extra);
	/* what the header names, not how it is spaced: "[rule  a]" is "[rule a]";
	 * the same string keys the section map (config_find_rule) */
	char what[CONFIG_NAME_MAX * 2];
	snprintf(what, sizeof(what), "%s%s%.*s", n >= 1 ? kind_s : "", n >= 2 ? " " : "",
		 (int)sizeof(what) / 2, n >= 2 ? name : "");
	int added;
	struct strmap_entry *e = strmap_put(&ctx->c->sections, what, &added);
	if (!e) {
		value_error(&ctx->at, NULL, "out of memory");
		return;
	}
	if (!added && e->file == ctx->at.file_idx) {
		value_error(&ctx->at, NULL, "duplicate section [%s] (first at line %u); merge them into one", what, e->line);
		return;
	}
	e->file = ctx->at.file_idx;
	e->line = ctx->at.line;

	enum section_kind kind = SEC_BAD;
	if (n == 1 && strcmp(kind_s, "daemon") == 0)
		kind = SEC_DAEMON;
	else if (n == 2 && strcmp(kind_s, "rule") == 0)
		kind = SEC_RULE;
	else if (n == 2 && strcmp(kind_s, "user") == 0)
		kind = SEC_USER;
	else if (n == 2 && strcmp(kind_s, "group") == 0)
		kind = SEC_GROUP;
	else if (n == 2 && strcmp(kind_s, "probe") == 0)
		kind = SEC_PROBE;
	else if (n == 1 && strcmp(kind_s, "rtkit") == 0)
		kind = SEC_RTKIT;
	else if (n == 2 && strcmp(kind_s, "irq") == 0)
		kind = SEC_IRQ;
	else if (n == 2 && strcmp(kind_s, "kthread") == 0)
		kind = SEC_KTHREAD;
	if (kind == SEC_BAD) {
		value_error(&ctx->at, NULL, "unknown section [%s]; use [daemon], [rule NAME], [user NAME], [group NAME], "
			    "[probe NAME], [rtkit], [irq NAME] or [kthread NAME]", hdr + 1);
		return;
	}
	if (kind == SEC_RTKIT) {
		ctx->c->rtkit.file = ctx->at.file_idx;
		ctx->c->rtkit.line = ctx->at.line;
		ctx->kind = kind;
		return;
	}
	if (kind != SEC_DAEMON && !valid_name(name, kind == SEC_USER)) {
		value_error(&ctx->at, NULL, "bad name '%s' in [%s]; use up to %d letters, digits, '_', '.' or '-'",
			    name, hdr + 1, CONFIG_NAME_MAX - 1);
		return;
	}
	if (kind != SEC_DAEMON && section_open(ctx, kind, name, e) < 0) {
		value_error(&ctx->at, NULL, "out of memory");
		return;
	}
	ctx->kind = kind;
}

/* inih reader: one line per call, counted, checked for shape before inih sees
 * it. Bad lines are reported here and replaced by a comment. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	ssize_t n = getline(&ctx->buf, &ctx->cap, ctx->in);
	char *p, *end, *eq;

	if (n < 0)
		return NULL;
	ctx->at.line++;
	/* a UTF-8 byte-order mark, as some editors write it */
	if (ctx->at.line == 1 && n >= 3 && memcmp(ctx->buf, "\xEF\xBB\xBF", 3) == 0) {
		memmove(ctx->buf, ctx->buf + 3, (size_t)n - 2);
		n -= 3;
	}
	if (memchr(ctx->buf, '\0', (size_t)n)) {
		value_error(&ctx->at, NULL, "binary data (a NUL byte); this is not a text config file");
		goto skip;
	}
	if (n >= num - 2) {
		value_error(&ctx->at, NULL, "line longer than %d characters", num - 4);
		goto skip;
	}
	for (p = ctx->buf; isspace((unsigned char)*p); p++)
		;
	for (end = ctx->buf + n; end > p && isspace((unsigned char)end[-1]); end--)
		;
	*end = '\0';
	if (*p == '\0' || *p == '#' || *p == ';')
		goto skip;
	if (*p == '[') {
		section_header(ctx, p);
		goto skip;
	}
	if (!(eq = strchr(p, '='))) {
		value_error(&ctx->at, NULL, "expected 'key = value', got '%s'", p);
		goto skip;
	}
	/* "key =#x" reads as the value "#x", but printed back as "key = #x" it
	 * would be a comment: refuse what cannot be written back */
	if (eq[1] == '#' || eq[1] == ';') {
		value_error(&ctx->at, NULL, "a value cannot start with '%c' (after a blank it starts a comment)", eq[1]);
		goto skip;
	}
	snprintf(str, (size_t)num, "%s\n", p);
	return str;
skip:
	snprintf(str, (size_t)num, "#\n");
	return str;
}

/* Parse one file into ctx->c. */
static int parse_file(struct parse_ctx *ctx, const char *path)
{
	struct config *c = ctx->c;
	char **files;
	int r;

	ctx->in = fopen(path, "re");
	if (!ctx->in)
		return -errno;
	files = realloc(c->files, (c->n_files + 1) * sizeof(*files));
	if (!files || !(files[c->n_files] = strdup(path))) {
		if (files)
			c->files = files;
		fclose(ctx->in);
		return -ENOMEM;
	}
	c->files = files;
	ctx->at.file = c->files[c->n_files];
	ctx->at.file_idx = (short)c->n_files++;
	ctx->at.line = 0;
	ctx->kind = SEC_NONE;
	r = ini_parse_stream(read_line, ctx, on_key, ctx);
	fclose(ctx->in);
	ctx->in = NULL;
	/* inih reports the first bad line; ours are already reported with reasons. */
	if (r > 0 && ctx->at.nerr == 0) {
		ctx->at.line = (unsigned)r;
		value_error(&ctx->at, NULL, "syntax error");
	}
	return r < 0 ? -EIO : 0;
}

int config_dropin_dir(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path);
	int w;

	if (n > 5 && strcmp(path + n - 5, ".conf") == 0)
		n -= 5;
	w = snprintf(buf, len, "%.*s.d", (int)n, path);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* The built-in values, used for whatever no file sets. */
static void config_defaults(struct config *c)
{
	value_defaults(SEC_DAEMON, c);
	value_defaults(SEC_RTKIT, &c->rtkit);
	c->rtkit.file = -1;
	origin_reset(&c->rtkit.origin);
	origin_reset(&c->origin);
}

int config_load(const char *path, bool required, struct config **ret, struct config_report *rep)
{
	struct parse_ctx ctx = { .at.rep = rep };
	char dir[PATH_MAX], pattern[PATH_MAX + 8];
	glob_t g = { 0 };
	int r;

	/* "key = value  # comment" as --test-config prints it, so its output loads */
	static char inline_comments[] = ";#";
	ini_inline_comment_prefixes = inline_comments;
	ini_allow_multiline = false;
	ctx.c = calloc(1, sizeof(*ctx.c));
	if (!ctx.c)
		return -ENOMEM;
	config_defaults(ctx.c);
	if ((r = cpulist_present(&ctx.at.present)) < 0)
		goto out;

	r = parse_file(&ctx, path);
	if (r == -ENOENT && !required)
		r = 0;
	else if (r < 0) {
		config_report_add(rep, CONFIG_ERROR, false, NULL, "%s: cannot read: %s", path, strerror(-r));
		goto out;
	}
	/* Drop-ins in lexical (C locale) order: glob sorts with strcoll, and the
	 * daemon runs in the C locale. */
	if ((r = config_dropin_dir(path, dir, sizeof(dir))) < 0)
		goto out;
	snprintf(pattern, sizeof(pattern), "%s/*.conf", dir);
	r = glob(pattern, GLOB_ERR, NULL, &g);
	if (r != 0 && r != GLOB_NOMATCH && !(r == GLOB_ABORTED && errno == ENOENT)) {
		config_report_add(rep, CONFIG_ERROR, false, NULL, "%s: cannot list drop-ins: %s", dir, strerror(errno));
		r = -EIO;
		goto out;
	}
	r = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if ((r = parse_file(&ctx, g.gl_pathv[i])) < 0) {
			config_report_add(rep, CONFIG_ERROR, false, NULL, "%s: cannot read: %s", g.gl_pathv[i], strerror(-r));
			goto out;
		}
	}
	r = ctx.at.nerr ? -EINVAL : 0;
out:
	globfree(&g);
	free(ctx.buf);
	if (r < 0) {
		config_free(ctx.c);
		return r;
	}
	*ret = ctx.c;
	return 0;
}

/* --- the command line, on top of what the files set --- */

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
