/* docs-facts.c: what the documentation must list, printed from the code's
 * own tables, for tests/docs.sh: the protocol's error codes with the errno
 * librtsched returns for each (shared/protocol.c), every key of
 * rtschedd.conf per section kind with its type, range and built-in default
 * (config/keys.c), the kinds of `jitter` rows (observe/jitter.c), the
 * control socket's connection limits (control.h), the closer's threads
 * (sys/closer.h) and the watchdog's numbers (watchdog/safety.h). One fact
 * per line, fields separated by tabs:
 *     error   CODE   ERRNO-NAME
 *     key     SECTION   NAME   TYPE   MIN   MAX   DEFAULT
 *     kind    NAME
 *     limit   NAME   VALUE
 * TYPE is int, bool, choice or other; MIN, MAX and DEFAULT are "-" where
 * they do not apply (DEFAULT is "off" for an int key whose -1 prints so,
 * the choice's word for a choice). */
#include "autoconfig.h"

#include <stdio.h>
#include <string.h>

#include "daemon/config/config.h"
#include "daemon/config/keys.h"
#include "daemon/control.h"
#include "daemon/observe/jitter.h"
#include "daemon/sys/closer.h"
#include "daemon/watchdog/safety.h"
#include "shared/protocol.h"

/* The section kinds as rtschedd.conf spells them (config/parse.c); a kind
 * added there and not here shows up as a key section without a name, which
 * tests/docs-check.py reports. */
static const char *const kind_name[SEC_BAD] = {
	[SEC_DAEMON] = "daemon", [SEC_RULE] = "rule", [SEC_USER] = "user",
	[SEC_GROUP] = "group", [SEC_PROBE] = "probe", [SEC_RTKIT] = "rtkit",
	[SEC_IRQ] = "irq", [SEC_KTHREAD] = "kthread",
};

static void print_key(const char *section, const struct config_key *k)
{
	const char *type = "other";
	char lo[32] = "-", hi[32] = "-", def[64] = "-";

	switch (k->type) {
	case KEY_INT:
		type = "int";
		snprintf(lo, sizeof(lo), "%ld", k->min);
		snprintf(hi, sizeof(hi), "%ld", k->max);
		if (k->def == -1 && (k->flags & KEY_OFF))
			snprintf(def, sizeof(def), "off");
		else if (k->def != -1) /* -1: no built-in number ("not set", or filled in later) */
			snprintf(def, sizeof(def), "%ld", k->def);
		break;
	case KEY_BOOL:
		type = "bool";
		snprintf(def, sizeof(def), "%s", k->def ? "yes" : "no");
		break;
	case KEY_ENUM:
	case KEY_WORD:
		type = "choice";
		for (const struct key_choice *ch = k->choices; ch && ch->name; ch++)
			if (k->type == KEY_WORD ? k->def_str && strcmp(ch->name, k->def_str) == 0 : ch->value == k->def) {
				snprintf(def, sizeof(def), "%s", ch->name);
				break;
			}
		break;
	default:
		break;
	}
	printf("key\t%s\t%s\t%s\t%s\t%s\t%s\n", section, k->name, type, lo, hi, def);
}

int main(void)
{
	for (int e = PE_NONE + 1; e < PE__MAX; e++) {
		const char *name = strerrorname_np(proto_error_errno((enum proto_error)e));
		printf("error\t%s\t%s\n", proto_error_code((enum proto_error)e), name ? name : "?");
	}
	for (int kind = SEC_NONE + 1; kind < SEC_BAD; kind++) {
		const struct key_section *s = key_section((enum section_kind)kind);

		char name[32];

		if (!s)
			continue;
		/* a kind this table does not know yet: the check names it */
		snprintf(name, sizeof(name), "%s", kind_name[kind] ? kind_name[kind] : "");
		if (!name[0])
			snprintf(name, sizeof(name), "kind-%d-of-keys.h", kind);
		for (int i = 0; i < s->n_keys; i++)
			print_key(name, &s->keys[i]);
	}
	for (int k = 0; strcmp(jitter_kind_name((enum jitter_kind)k), "?") != 0; k++)
		printf("kind\t%s\n", jitter_kind_name((enum jitter_kind)k));
	printf("limit\tmax-clients\t%d\n", MAX_CLIENTS);
	printf("limit\treserved-privileged\t%d\n", RESERVED_PRIVILEGED);
	printf("limit\tmax-per-uid\t%d\n", MAX_PER_UID);
	printf("limit\taccept-batch\t%u\n", ACCEPT_BATCH);
	printf("limit\tqueue-pause-kib\t%u\n", QUEUE_PAUSE >> 10);
	printf("limit\tmax-queued-mib\t%u\n", MAX_QUEUED >> 20);
	printf("limit\taccount-queue-pause-kib\t%u\n", ACCOUNT_QUEUE_PAUSE >> 10);
	printf("limit\tcloser-per-owner\t%d\n", CLOSER_PER_OWNER);
	printf("limit\tcloser-threads\t%d\n", CLOSER_THREADS);
	printf("limit\tcloser-pending-max\t%d\n", CLOSER_PENDING_MAX);
	printf("limit\twatchdog-ticks-per-threshold\t%u\n", SAFETY_TICKS_PER_THRESHOLD);
	printf("limit\twatchdog-floor-ms\t%u\n", SAFETY_FLOOR_MS);
	printf("limit\twatchdog-alert-tick-ms\t%u\n", SAFETY_ALERT_TICK_MS);
	printf("limit\twatchdog-window-factor\t%u\n", SAFETY_WINDOW_FACTOR);
	return 0;
}
