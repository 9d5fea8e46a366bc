/* irqmgr_journal.c: the IRQ manager's lines in the state journal (their
 * format: irqmgr.c's header), written as entries change, all of them at a
 * compaction, and read back at the start. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/core/state.h"
#include "daemon/irq/irqbalance.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/irq/irqmgr_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"

void irqmgr_fmt_cpus(const cpu_set_t *set, char *buf, size_t len)
{
	if (CPU_COUNT(set) == 0 || cpulist_format(set, buf, len) < 0 || !buf[0])
		snprintf(buf, len, "-");
}

/* Percent-encode what is not a printable, blank-free character. */
static void encode(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 < len; p++) {
		if (*p > ' ' && *p < 0x7f && *p != '%')
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, len - o, "%%%02x", *p);
	}
	out[o] = '\0';
	if (!o)
		snprintf(out, len, "%%");
}

static void decode(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 1 < len; p++) {
		if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char hex[3] = { p[1], p[2], 0 };
			out[o++] = (char)strtol(hex, NULL, 16);
			p += 2;
		} else if (*p != '%') {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
}

static void put_irq(FILE *f, const void *arg)
{
	const struct irq_entry *e = arg;
	char act[3 * IRQ_ACTIONS_MAX + 4], cpus[CPUS_TEXT_MAX];

	encode(e->actions, act, sizeof(act));
	irqmgr_fmt_cpus(&e->original, cpus, sizeof(cpus));
	fprintf(f, "I %d %s %s\n", e->irq, act, cpus);
}

static void put_kt(FILE *f, const void *arg)
{
	const struct kt_entry *k = arg;
	char cpus[CPUS_TEXT_MAX];

	irqmgr_fmt_cpus(&k->original.cpus, cpus, sizeof(cpus));
	fprintf(f, "K %d %" PRIu64 " %d %d %d %d %s %d\n", (int)k->tid, k->starttime, k->original.policy,
		k->original.priority, k->original.nice, k->original.reset_on_fork, cpus, k->cpus_changed);
}

void irqmgr_journal_irq(struct irqmgr *m, const struct irq_entry *e)
{
	state_put_with(m->state, put_irq, e);
}

void irqmgr_journal_kt(struct irqmgr *m, const struct kt_entry *k)
{
	state_put_with(m->state, put_kt, k);
}

void irqmgr_journal_default(struct irqmgr *m)
{
	char cpus[CPUS_TEXT_MAX];

	irqmgr_fmt_cpus(&m->default_original, cpus, sizeof(cpus));
	state_put(m->state, "D 0 %s", cpus);
}

/* The compaction's writer: every live entry. */
size_t irqmgr_journal_write(void *ud, FILE *f)
{
	struct irqmgr *m = ud;
	size_t n = 0;

	for (const struct irq_entry *e = m->irqs; e; e = e->next)
		if (e->written) {
			put_irq(f, e);
			n++;
		}
	for (const struct kt_entry *k = m->kts; k; k = k->next) {
		put_kt(f, k);
		n++;
	}
	if (m->default_written) {
		char cpus[CPUS_TEXT_MAX];
		irqmgr_fmt_cpus(&m->default_original, cpus, sizeof(cpus));
		fprintf(f, "D 0 %s\n", cpus);
		n++;
	}
	return n + irqbalance_journal(m->ib, f);
}

/* A number token in [lo, hi]. */
static bool num(char **save, long lo, long hi, long *out)
{
	const char *t = strtok_r(NULL, " ", save);
	char *end;

	if (!t)
		return false;
	errno = 0;
	*out = strtol(t, &end, 10);
	return !errno && end != t && !*end && *out >= lo && *out <= hi;
}

static bool cpus_tok(char **save, cpu_set_t *set)
{
	const char *t = strtok_r(NULL, " ", save);

	CPU_ZERO(set);
	return t && (strcmp(t, "-") == 0 || cpulist_parse(t, set, NULL) == 0);
}

/* A line of the last run: its entry, with the originals it recorded. */
void irqmgr_adopt_line(void *ud, char *line)
{
	struct irqmgr *m = ud;
	char *save = NULL, kind = line[0];
	long v[7];

	if (kind == 'B') {
		irqbalance_adopt(&m->ib, line);
		return;
	}
	strtok_r(line, " ", &save);
	if (kind == 'I') {
		struct irq_entry *e = calloc(1, sizeof(*e));
		const char *act;

		if (!e || !num(&save, 0, INT32_MAX, &v[0]) || !(act = strtok_r(NULL, " ", &save)) ||
		    !cpus_tok(&save, &e->original) || CPU_COUNT(&e->original) == 0) {
			free(e);
			log_warnx("state journal: a malformed IRQ entry, dropped");
			return;
		}
		e->irq = (int)v[0];
		decode(act, e->actions, sizeof(e->actions));
		e->written = true;
		e->next = m->irqs;
		m->irqs = e;
	} else if (kind == 'K') {
		struct kt_entry *k = calloc(1, sizeof(*k));

		if (!k || !num(&save, 1, INT32_MAX, &v[0]) || !num(&save, 0, LONG_MAX, &v[1]) ||
		    !num(&save, 0, 6, &v[2]) || !num(&save, 0, 99, &v[3]) || !num(&save, -20, 19, &v[4]) ||
		    !num(&save, 0, 1, &v[5]) || !cpus_tok(&save, &k->original.cpus) || !num(&save, 0, 1, &v[6])) {
			free(k);
			log_warnx("state journal: a malformed kernel thread entry, dropped");
			return;
		}
		k->tid = (pid_t)v[0];
		k->starttime = (uint64_t)v[1];
		k->original.policy = (int)v[2];
		k->original.priority = (int)v[3];
		k->original.nice = (int)v[4];
		k->original.reset_on_fork = v[5];
		k->cpus_changed = v[6];
		k->irq = -1;
		k->next = m->kts;
		m->kts = k;
	} else if (kind == 'D') {
		if (num(&save, 0, 0, &v[0]) && cpus_tok(&save, &m->default_original) &&
		    CPU_COUNT(&m->default_original) > 0)
			m->default_written = true;
	}
}
