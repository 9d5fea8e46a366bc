/* report.c: a diagnosis report: building it, ordering it and printing it as
 * text or JSON (see report.h).  Plain C with no other rtschedd module, so
 * rtschedctl links it to print a report it received from the daemon. */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/report.h"

#define LIMITS_UNSET_VALUE (-2L)   /* limits.h's LIMITS_UNSET, without its dependency */
#define LIMITS_UNLIMITED_VALUE (-1L)

static const char *const sev_names[] = { "ok", "info", "warning", "error" };

void diag_report_init(struct diag_report *r)
{
	memset(r, 0, sizeof(*r));
	r->rtprio_soft = r->rtprio_hard = LIMITS_UNSET_VALUE;
}

void diag_report_free(struct diag_report *r)
{
	free(r->v);
	diag_report_init(r);
}

/* Copy src into a fixed field; text that does not fit ends in "..." so a
 * cut is never silent. */
static void copy_text(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n < size) {
		memcpy(dst, src, n + 1);
		return;
	}
	memcpy(dst, src, size - 4);
	memcpy(dst + size - 4, "...", 4);
}

int diag_report_add(struct diag_report *r, const char *code, enum diag_severity sev,
		    const char *message, const char *fix)
{
	struct diag_finding *f;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct diag_finding *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	f = &r->v[r->n++];
	copy_text(f->code, sizeof(f->code), code);
	f->severity = sev;
	copy_text(f->message, sizeof(f->message), message);
	copy_text(f->fix, sizeof(f->fix), fix ? fix : "");
	return 0;
}

/* Insertion sort: stable, and reports hold a few dozen findings. */
void diag_report_sort(struct diag_report *r)
{
	for (size_t i = 1; i < r->n; i++) {
		struct diag_finding f = r->v[i];
		size_t j = i;

		while (j > 0 && r->v[j - 1].severity < f.severity) {
			r->v[j] = r->v[j - 1];
			j--;
		}
		r->v[j] = f;
	}
}

enum diag_severity diag_report_worst(const struct diag_report *r)
{
	enum diag_severity w = DIAG_OK;

	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].severity > w)
			w = r->v[i].severity;
	return w;
}

const char *diag_severity_name(enum diag_severity s)
{
	return (unsigned)s < sizeof(sev_names) / sizeof(sev_names[0]) ? sev_names[s] : "?";
}

int diag_severity_from_name(const char *s)
{
	for (size_t i = 0; i < sizeof(sev_names) / sizeof(sev_names[0]); i++)
		if (strcmp(s, sev_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

/* A limits.conf value as people write it. */
static void limit_text(long v, char *buf, size_t len)
{
	if (v == LIMITS_UNSET_VALUE)
		snprintf(buf, len, "unset");
	else if (v == LIMITS_UNLIMITED_VALUE)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%ld", v);
}

/* For the terminal: a name, a path or a message may hold any bytes. */
#define T(s) escape_text(t, sizeof(t), (s))

void diag_print_text(const struct diag_report *r, FILE *f)
{
	size_t count[4] = { 0, 0, 0, 0 };
	char s[32], h[32], t[4 * DIAG_TEXT_MAX], t2[4 * DIAG_TEXT_MAX];

	fputs("rtschedd check:", f);
	if (r->pid > 0)
		fprintf(f, " pid %d (%s)", (int)r->pid, T(r->comm));
	if (r->user[0])
		fprintf(f, "%s user %s", r->pid > 0 ? "," : "", T(r->user));
	if (r->unit[0])
		fprintf(f, ", unit %s", T(r->unit));
	if (r->pid <= 0 && !r->user[0])
		fputs(" this system", f);
	fputc('\n', f);
	if (r->has_limits) {
		limit_text(r->rtprio_soft, s, sizeof(s));
		limit_text(r->rtprio_hard, h, sizeof(h));
		fprintf(f, "limits.conf rtprio for %s: soft %s%s", T(r->user), s, r->soft_src[0] ? " (" : "");
		fprintf(f, "%s%s, hard %s%s", T(r->soft_src), r->soft_src[0] ? ")" : "", h, r->hard_src[0] ? " (" : "");
		fprintf(f, "%s%s\n", T(r->hard_src), r->hard_src[0] ? ")" : "");
	}
	fputc('\n', f);
	for (size_t i = 0; i < r->n; i++) {
		const struct diag_finding *x = &r->v[i];
		char sev[16];
		size_t k;

		snprintf(sev, sizeof(sev), "%s", diag_severity_name(x->severity));
		for (k = 0; sev[k]; k++)
			sev[k] = (char)(sev[k] - ('a' <= sev[k] && sev[k] <= 'z' ? 'a' - 'A' : 0));
		fprintf(f, "%-8s %s: %s\n", sev, escape_text(t2, sizeof(t2), x->code), T(x->message));
		if (x->fix[0])
			fprintf(f, "         fix: %s\n", T(x->fix));
		if ((unsigned)x->severity < 4)
			count[x->severity]++;
	}
	fprintf(f, "\n%zu error%s, %zu warning%s, %zu info, %zu ok\n",
		count[DIAG_ERROR], count[DIAG_ERROR] == 1 ? "" : "s",
		count[DIAG_WARNING], count[DIAG_WARNING] == 1 ? "" : "s",
		count[DIAG_INFO], count[DIAG_OK]);
}

/* A limits.conf value: a number, "unlimited" or null when unset. */
static void json_limit(FILE *f, long v)
{
	if (v == LIMITS_UNSET_VALUE)
		fputs("null", f);
	else if (v == LIMITS_UNLIMITED_VALUE)
		fputs("\"unlimited\"", f);
	else
		fprintf(f, "%ld", v);
}

/* A string, or null when empty. */
static void json_opt(FILE *f, const char *s)
{
	if (s[0])
		escape_json(f, s);
	else
		fputs("null", f);
}

void diag_print_json(const struct diag_report *r, FILE *f)
{
	size_t count[4] = { 0, 0, 0, 0 };

	fputs("{\"pid\":", f);
	if (r->pid > 0)
		fprintf(f, "%d", (int)r->pid);
	else
		fputs("null", f);
	fputs(",\"comm\":", f);
	json_opt(f, r->pid > 0 ? r->comm : "");
	fputs(",\"unit\":", f);
	json_opt(f, r->unit);
	fputs(",\"user\":", f);
	json_opt(f, r->user);
	fputs(",\"limits\":", f);
	if (r->has_limits) {
		fputs("{\"rtprio_soft\":", f);
		json_limit(f, r->rtprio_soft);
		fputs(",\"rtprio_hard\":", f);
		json_limit(f, r->rtprio_hard);
		fputs(",\"soft_source\":", f);
		json_opt(f, r->soft_src);
		fputs(",\"hard_source\":", f);
		json_opt(f, r->hard_src);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fputs(",\"findings\":[", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct diag_finding *x = &r->v[i];

		fputs(i ? ",{\"code\":" : "{\"code\":", f);
		escape_json(f, x->code);
		fputs(",\"severity\":", f);
		escape_json(f, diag_severity_name(x->severity));
		fputs(",\"message\":", f);
		escape_json(f, x->message);
		fputs(",\"fix\":", f);
		json_opt(f, x->fix);
		fputc('}', f);
		if ((unsigned)x->severity < 4)
			count[x->severity]++;
	}
	fprintf(f, "],\"counts\":{\"error\":%zu,\"warning\":%zu,\"info\":%zu,\"ok\":%zu},"
		"\"worst\":\"%s\"}\n", count[DIAG_ERROR], count[DIAG_WARNING], count[DIAG_INFO],
		count[DIAG_OK], diag_severity_name(diag_report_worst(r)));
}
