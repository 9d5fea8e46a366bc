/* config.c: reading rtschedd.conf and its drop-in directory with inih.
 *
 * inih does the INI grammar; a line-counting reader in front of it checks
 * each line's shape and tracks sections, so every error names file:line, and
 * the handler hands each key to a typed parser with a range. Nothing here
 * touches the running configuration: config_load() builds a fresh struct. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/protocol.h"
#include "daemon/config/config.h"


enum section_kind { SEC_NONE, SEC_DAEMON, SEC_RULE, SEC_USER, SEC_GROUP, SEC_PROBE, SEC_RTKIT, SEC_BAD };

enum daemon_key { D_SOCKET, D_POLICY, D_PRIORITY, D_NICE, D_CPUS, D_RESET_ON_FORK,
		  D_MAX_PRIORITY, D_LOG_LEVEL, D_ADMIN_GROUP, D_RATE_LIMIT, D_RATE_BURST, D_RESCAN, D_PROCESS_EVENTS,
		  D_RTPRIO_CAP, D_OVER_CAP, D_LIMITS_CONF, D_LIMITS_DIR, D_USER, D_STATE_FILE,
		  D_METRICS_FILE, D_METRICS_INTERVAL, D_CPU_DMA_LATENCY,
		  D_WATCHDOG, D_WATCHDOG_THRESHOLD, D_WATCHDOG_COOLDOWN, D_WATCHDOG_DEMOTE, D_OBSERVE_THREADS, D_N };
static const char *const daemon_keys[D_N] = {
	"socket", "policy", "priority", "nice", "cpus", "reset-on-fork",
	"max-priority", "log-level", "admin-group", "rate-limit", "rate-burst", "rescan-interval",
	"process-events", "rtprio-cap", "over-cap", "limits-conf", "limits-dir",
	"user", "state-file", "metrics-file", "metrics-interval", "cpu-dma-latency",
	"watchdog", "watchdog-threshold", "watchdog-cooldown", "watchdog-demote", "observe-threads",
};

enum probe_key { PR_CPU, PR_POLICY, PR_PRIORITY, PR_PERIOD, PR_STRATEGY, PR_MODE, PR_N };
static const char *const probe_keys[PR_N] = { "cpu", "policy", "priority", "period-us", "strategy", "mode" };

/* A rule's keys are the sched_spec keys of [daemon], in the same order. */
enum rule_key { R_POLICY, R_PRIORITY, R_NICE, R_CPUS, R_RESET_ON_FORK,
		R_THREAD_NAME, R_PROCESS_NAME, R_EXE, R_USER, R_GROUP, R_UNIT, R_CGROUP, R_N };
static const char *const rule_keys[R_N] = { "policy", "priority", "nice", "cpus", "reset-on-fork",
					    "thread-name", "process-name", "exe", "user", "group", "unit",
					    "cgroup" };

enum principal_key { P_MAX_PRIORITY, P_POLICIES, P_MAX_THREADS, P_CPUS, P_MIN_NICE, P_N };
_Static_assert(D_N <= CONFIG_KEYS_MAX && R_N <= CONFIG_KEYS_MAX && PR_N <= CONFIG_KEYS_MAX,
	       "raise CONFIG_KEYS_MAX");

static const char *const principal_keys[P_N] = { "max-priority", "policies", "max-threads", "cpus",
						 "min-nice" };

/* --- [rtkit]: the RealtimeKit1 bus service (src/daemon/rtkit) --- */
enum rtkit_key { RK_ENABLE, RK_REPLACE, RK_POLICY, RK_MAX_RT_PRIORITY, RK_MIN_NICE, RK_RTTIME_MAX, RK_ROLE, RK_N };
static const char *const rtkit_keys[RK_N] = { "enable", "replace-existing", "policy", "max-realtime-priority",
					      "min-nice-level", "rttime-usec-max", "role" };

struct parse_ctx {
	struct config *c;
	FILE *errors;
	FILE *in;
	const char *file;
	short file_idx;
	unsigned line;
	int nerr;
	char *buf;
	size_t cap;
	enum section_kind kind;
	size_t idx;                       /* rule or principal index */
	cpu_set_t present;
};

/* Record one error; the message already says what to do. */
__attribute__((format(printf, 3, 4)))
static void perr(struct parse_ctx *ctx, const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(ctx->errors, "%s:%u: ", ctx->file, ctx->line);
	if (key)
		fprintf(ctx->errors, "%s: ", key);
	va_start(ap, fmt);
	vfprintf(ctx->errors, fmt, ap);
	va_end(ap);
	fputc('\n', ctx->errors);
	ctx->nerr++;
}

/* A warning: printed like an error, but the configuration stays valid. */
__attribute__((format(printf, 3, 4)))
static void pwarn(struct parse_ctx *ctx, const char *key, const char *fmt, ...)
{
	va_list ap;

	fprintf(ctx->errors, "%s:%u", ctx->file, ctx->line);
	if (key)
		fprintf(ctx->errors, ": %s", key);
	fputs(CONFIG_WARNING_MARK, ctx->errors);
	va_start(ap, fmt);
	vfprintf(ctx->errors, fmt, ap);
	va_end(ap);
	fputc('\n', ctx->errors);
}

static void origin_reset(struct key_origin *o)
{
	for (int i = 0; i < CONFIG_KEYS_MAX; i++) {
		o->file[i] = CONFIG_ORIGIN_DEFAULT;
		o->line[i] = 0;
	}
}

static bool origin_set(const struct key_origin *o, int key)
{
	return o->file[key] != CONFIG_ORIGIN_DEFAULT;
}

/* A key that takes an integer: message names the range on failure. */
static bool key_int(struct parse_ctx *ctx, const char *key, const char *v, long min, long max, int *out)
{
	long n;
	int r = proto_parse_long(v, min, max, &n);

	if (r == -EINVAL)
		perr(ctx, key, "'%s' is not a whole number; use a value in %ld..%ld", v, min, max);
	else if (r < 0)
		perr(ctx, key, "%s is out of range; use a value in %ld..%ld", v, min, max);
	else
		*out = (int)n;
	return r == 0;
}

/* yes/no/true/false/on/off/1/0, as systemd spells booleans. */
static bool key_bool(struct parse_ctx *ctx, const char *key, const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return true;
		}
	}
	perr(ctx, key, "'%s' is not a boolean; use yes or no", v);
	return false;
}

static bool key_policy(struct parse_ctx *ctx, const char *key, const char *v, int *out)
{
	int p = policy_from_string(v);

	if (p < 0) {
		perr(ctx, key, "unknown policy '%s'; use one of %s", v, policy_names());
		return false;
	}
	*out = p;
	return true;
}

static bool key_cpus(struct parse_ctx *ctx, const char *key, const char *v, cpu_set_t *out)
{
	const char *bad = NULL;
	cpu_set_t missing;
	char have[256], miss[256];
	int r = cpulist_parse(v, out, &bad);

	if (r < 0) {
		perr(ctx, key, "bad CPU list '%s' at '%s'; use the kernel's syntax, e.g. 0-3,6", v,
		     bad ? bad : v);
		return false;
	}
	if (CPU_COUNT(out) == 0) {
		perr(ctx, key, "empty CPU list; name at least one CPU");
		return false;
	}
	if (cpulist_missing(out, &ctx->present, &missing) > 0) {
		cpulist_format(&missing, miss, sizeof(miss));
		cpulist_format(&ctx->present, have, sizeof(have));
		perr(ctx, key, "CPU %s does not exist on this machine; present CPUs are %s", miss, have);
		return false;
	}
	return true;
}

static bool key_name(struct parse_ctx *ctx, const char *key, const char *v, char *out, size_t len)
{
	if (strlen(v) >= len) {
		perr(ctx, key, "value is longer than %zu characters", len - 1);
		return false;
	}
	strcpy(out, v);
	return true;
}

/* Look a key up in a section's key list; -1 if the section has no such key. */
static int key_index(const char *const *keys, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(keys[i], name) == 0)
			return i;
	return -1;
}

/* Refuse a key given twice in one file; a later file overrides an earlier one. */
static bool key_claim(struct parse_ctx *ctx, struct key_origin *o, int k, const char *name)
{
	if (o->file[k] == ctx->file_idx) {
		perr(ctx, name, "duplicate key (first set at line %u); remove one of them",
		     o->line[k]);
		return false;
	}
	o->file[k] = ctx->file_idx;
	o->line[k] = ctx->line;
	return true;
}

/* Keys shared by [daemon] (default spec) and [rule NAME]; k is a rule_key. */
static bool spec_key(struct parse_ctx *ctx, struct sched_spec *s, int k, const char *name, const char *v)
{
	switch (k) {
	case R_POLICY:
		return key_policy(ctx, name, v, &s->policy);
	case R_PRIORITY:
		return key_int(ctx, name, v, 0, 99, &s->priority);
	case R_NICE:
		return key_int(ctx, name, v, -20, 19, &s->nice);
	case R_CPUS:
		return (s->has_cpus = key_cpus(ctx, name, v, &s->cpus));
	case R_RESET_ON_FORK:
		return key_bool(ctx, name, v, &s->reset_on_fork);
	}
	return false;
}

/* Report an unknown key with the list of keys the section does take. */
static void unknown_key(struct parse_ctx *ctx, const char *name, const char *const *keys, int n)
{
	char list[512] = "";
	size_t off = 0;

	for (int i = 0; i < n && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "", keys[i]);
	perr(ctx, name, "unknown key in this section; valid keys are: %s", list);
}

static int daemon_key(struct parse_ctx *ctx, const char *name, const char *v)
{
	struct config *c = ctx->c;
	int k = key_index(daemon_keys, D_N, name);
	int lvl;

	if (k < 0) {
		unknown_key(ctx, name, daemon_keys, D_N);
		return 0;
	}
	if (!key_claim(ctx, &c->origin, k, name))
		return 0;
	switch (k) {
	case D_SOCKET:
		if (v[0] != '/') {
			perr(ctx, name, "'%s' is not an absolute path", v);
			return 0;
		}
		return key_name(ctx, name, v, c->socket_path, sizeof(c->socket_path));
	case D_POLICY: case D_PRIORITY: case D_NICE: case D_CPUS: case D_RESET_ON_FORK:
		return spec_key(ctx, &c->dflt, k - D_POLICY, name, v);
	case D_MAX_PRIORITY:
		return key_int(ctx, name, v, 1, 99, &c->max_priority);
	case D_LOG_LEVEL:
		lvl = log_level_from_string(v);
		if (lvl < 0) {
			perr(ctx, name, "unknown level '%s'; use err, warning, notice, info or debug", v);
			return 0;
		}
		c->log_level = lvl;
		return 1;
	case D_ADMIN_GROUP:
		return key_name(ctx, name, v, c->admin_group, sizeof(c->admin_group));
	case D_RATE_LIMIT:
		return key_int(ctx, name, v, 0, 1000000, (int *)&c->rate_limit);
	case D_RATE_BURST:
		return key_int(ctx, name, v, 1, 1000000, (int *)&c->rate_burst);
	case D_RESCAN:
		return key_int(ctx, name, v, 100, 3600000, (int *)&c->rescan_ms);
	case D_OBSERVE_THREADS: /* BPF observer slots, 29 KiB of kernel memory each */
		return key_int(ctx, name, v, 0, 4096, (int *)&c->observe_threads);
	case D_PROCESS_EVENTS:
		return key_bool(ctx, name, v, &c->process_events);
	case D_RTPRIO_CAP:
		if (strcmp(v, "config") == 0)
			c->rtprio_cap = CAP_CONFIG;
		else if (strcmp(v, "limits-conf") == 0)
			c->rtprio_cap = CAP_LIMITS_CONF;
		else if (strcmp(v, "rlimit") == 0)
			c->rtprio_cap = CAP_RLIMIT;
		else {
			perr(ctx, name, "'%s' is not a cap source; use config, limits-conf or rlimit", v);
			return 0;
		}
		return 1;
	case D_OVER_CAP:
		if (strcmp(v, "refuse") != 0 && strcmp(v, "clamp") != 0) {
			perr(ctx, name, "'%s' is not valid; use refuse or clamp", v);
			return 0;
		}
		c->clamp = v[0] == 'c';
		return 1;
	case D_USER:
		if (!getpwnam(v)) {
			perr(ctx, name, "no user '%s' on this system", v);
			return 0;
		}
		return key_name(ctx, name, v, c->run_user, sizeof(c->run_user));
	case D_METRICS_FILE:
		if (v[0] != '/') {
			perr(ctx, name, "'%s' is not an absolute path", v);
			return 0;
		}
		return key_name(ctx, name, v, c->metrics_file, sizeof(c->metrics_file));
	case D_WATCHDOG:
		return key_bool(ctx, name, v, &c->watchdog);
	case D_WATCHDOG_THRESHOLD:
		return key_int(ctx, name, v, 200, 60000, (int *)&c->watchdog_threshold_ms);
	case D_WATCHDOG_COOLDOWN:
		return key_int(ctx, name, v, 1, 86400, (int *)&c->watchdog_cooldown_s);
	case D_WATCHDOG_DEMOTE:
		if (strcmp(v, "culprit") != 0 && strcmp(v, "all") != 0) {
			perr(ctx, name, "'%s' is not valid; use culprit (the threads that used the starved CPU) or "
			     "all (every managed real-time thread there)", v);
			return 0;
		}
		c->watchdog_demote_all = v[0] == 'a';
		return 1;
	case D_METRICS_INTERVAL:
		return key_int(ctx, name, v, 1, 86400, (int *)&c->metrics_interval_s);
	case D_CPU_DMA_LATENCY:
		if (strcmp(v, "off") == 0) {
			c->cpu_dma_latency_us = -1;
			return 1;
		}
		return key_int(ctx, name, v, 0, 1000000, &c->cpu_dma_latency_us);
	case D_STATE_FILE:
		if (v[0] != '/') {
			perr(ctx, name, "'%s' is not an absolute path", v);
			return 0;
		}
		return key_name(ctx, name, v, c->state_file, sizeof(c->state_file));
	case D_LIMITS_CONF:
	case D_LIMITS_DIR:
		if (v[0] != '/') {
			perr(ctx, name, "'%s' is not an absolute path", v);
			return 0;
		}
		return key_name(ctx, name, v, k == D_LIMITS_CONF ? c->limits_conf : c->limits_dir,
				sizeof(c->limits_conf));
	}
	return 0;
}

/* A glob for fnmatch(3): refuse what can never match so a typo is seen. */
static bool key_glob(struct parse_ctx *ctx, const char *key, const char *v, char *out, size_t len)
{
	if (!*v) {
		perr(ctx, key, "empty pattern; remove the key to match anything");
		return false;
	}
	return key_name(ctx, key, v, out, len);
}

/* The kernel keeps a thread's name (comm) to TASK_COMM_LEN - 1 bytes. */
#define COMM_MAX 15

/* thread-name and process-name match comm, which the kernel cuts to 15
 * characters (GStreamer's "audiotestsrc0:src" is "audiotestsrc0:s"). Warn
 * when a pattern needs more than that and name the form that matches the
 * cut names, or when its end can be cut off a longer name. A pattern unit
 * (a character, \x, ?, or a [...] class) matches one character, '*' any run. */
static void comm_pattern_check(struct parse_ctx *ctx, const char *key, const char *pat)
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
		pwarn(ctx, key, "'%s' can never match: the kernel keeps only the first %d characters of a name; "
		      "use '%.*s'", pat, COMM_MAX, (int)(cut ? cut : (size_t)(star - pat) + 1), pat);
	else if (after_star)
		pwarn(ctx, key, "'%s' misses names longer than %d characters: the kernel cuts them (GStreamer's "
		      "audiotestsrc0:src is audiotestsrc0:s), so their end never matches the end of the pattern; "
		      "match those by how they begin (such as 'audiotestsrc*'), by their cut form, or by "
		      "process-name", pat, COMM_MAX);
}

/* user = NAME|UID, group = NAME|GID: resolved now, so a name that doesn't
 * exist is an error instead of a rule that silently never matches. */
static bool key_id(struct parse_ctx *ctx, const char *key, const char *v, bool group, unsigned *out)
{
	long n;

	if (proto_parse_long(v, 0, 0x7fffffff, &n) == 0) {
		*out = (unsigned)n;
		return true;
	}
	if (group) {
		struct group *g = getgrnam(v);
		if (g) {
			*out = g->gr_gid;
			return true;
		}
	} else {
		struct passwd *pw = getpwnam(v);
		if (pw) {
			*out = pw->pw_uid;
			return true;
		}
	}
	perr(ctx, key, "no %s '%s' on this system; use an existing name or a number", group ? "group" : "user", v);
	return false;
}

/* The match keys of a rule; k is a rule_key past R_RESET_ON_FORK. */
static bool match_key(struct parse_ctx *ctx, struct rule_match *m, int k, const char *name, const char *v)
{
	switch (k) {
	case R_THREAD_NAME:
		if (!key_glob(ctx, name, v, m->thread_name, sizeof(m->thread_name)))
			return false;
		comm_pattern_check(ctx, name, v);
		return true;
	case R_PROCESS_NAME:
		if (!key_glob(ctx, name, v, m->process_name, sizeof(m->process_name)))
			return false;
		comm_pattern_check(ctx, name, v);
		return true;
	case R_EXE:
		return key_glob(ctx, name, v, m->exe, sizeof(m->exe));
	case R_UNIT:
		return key_glob(ctx, name, v, m->unit, sizeof(m->unit));
	case R_CGROUP:
		return key_glob(ctx, name, v, m->cgroup, sizeof(m->cgroup));
	case R_USER:
		return (m->has_user = key_id(ctx, name, v, false, &m->uid));
	case R_GROUP:
		return (m->has_group = key_id(ctx, name, v, true, &m->gid));
	}
	return false;
}

static int rule_key(struct parse_ctx *ctx, const char *name, const char *v)
{
	struct rule *r = &ctx->c->rules[ctx->idx];
	int k = key_index(rule_keys, R_N, name);

	if (k < 0) {
		unknown_key(ctx, name, rule_keys, R_N);
		return 0;
	}
	if (!key_claim(ctx, &r->origin, k, name))
		return 0;
	if (k > R_RESET_ON_FORK)
		return match_key(ctx, &r->match, k, name, v);
	return spec_key(ctx, &r->spec, k, name, v);
}

static int principal_key(struct parse_ctx *ctx, const char *name, const char *v)
{
	struct principal *p = &ctx->c->principals[ctx->idx];
	int k = key_index(principal_keys, P_N, name);
	int r;

	if (k < 0) {
		unknown_key(ctx, name, principal_keys, P_N);
		return 0;
	}
	if (!key_claim(ctx, &p->origin, k, name))
		return 0;
	switch (k) {
	case P_MAX_PRIORITY:
		return key_int(ctx, name, v, 0, 99, &p->max_priority);
	case P_POLICIES:
		r = policy_mask_from_string(v, &p->policies);
		if (r < 0)
			perr(ctx, name, "bad policy list '%s'; use a comma-separated list of %s", v,
			     policy_names());
		return r == 0;
	case P_MAX_THREADS:
		return key_int(ctx, name, v, 0, 1000000, &p->max_threads);
	case P_CPUS:
		return (p->has_cpus = key_cpus(ctx, name, v, &p->cpus));
	case P_MIN_NICE:
		return (p->has_min_nice = key_int(ctx, name, v, -20, 19, &p->min_nice));
	}
	return 0;
}

static int probe_key(struct parse_ctx *ctx, const char *name, const char *v)
{
	struct probe_conf *p = &ctx->c->probes[ctx->idx];
	int k = key_index(probe_keys, PR_N, name);

	if (k < 0) {
		unknown_key(ctx, name, probe_keys, PR_N);
		return 0;
	}
	if (!key_claim(ctx, &p->origin, k, name))
		return 0;
	switch (k) {
	case PR_CPU:
		if (!key_int(ctx, name, v, 0, CPU_SETSIZE - 1, &p->cpu))
			return 0;
		if (!CPU_ISSET(p->cpu, &ctx->present)) {
			perr(ctx, name, "CPU %d does not exist on this machine", p->cpu);
			return 0;
		}
		return 1;
	case PR_POLICY:
		return key_policy(ctx, name, v, &p->policy);
	case PR_PRIORITY:
		return key_int(ctx, name, v, 0, 99, &p->priority);
	case PR_PERIOD:
		return key_int(ctx, name, v, 10, 1000000, (int *)&p->period_us);
	case PR_STRATEGY:
		if (strcmp(v, "sleep") && strcmp(v, "hybrid") && strcmp(v, "busy") && strcmp(v, "adaptive")) {
			perr(ctx, name, "unknown strategy '%s'; use sleep, hybrid, busy or adaptive", v);
			return 0;
		}
		return key_name(ctx, name, v, p->strategy, sizeof(p->strategy));
	case PR_MODE:
		if (strcmp(v, "latency") && strcmp(v, "noise")) {
			perr(ctx, name, "unknown mode '%s'; use latency or noise", v);
			return 0;
		}
		p->noise = v[0] == 'n';
		return 1;
	}
	return 0;
}

/* A key of [rtkit]. */
static int rtkit_key(struct parse_ctx *ctx, const char *name, const char *v)
{
	struct rtkit_conf *rk = &ctx->c->rtkit;
	int k = key_index(rtkit_keys, RK_N, name);
	long n;

	if (k < 0) {
		unknown_key(ctx, name, rtkit_keys, RK_N);
		return 0;
	}
	if (!key_claim(ctx, &rk->origin, k, name))
		return 0;
	switch (k) {
	case RK_ENABLE:
		return key_bool(ctx, name, v, &rk->enable);
	case RK_REPLACE:
		return key_bool(ctx, name, v, &rk->replace);
	case RK_POLICY:
		if (strcmp(v, "rr") != 0 && strcmp(v, "fifo") != 0) {
			perr(ctx, name, "'%s' is not valid; use rr (what rtkit grants) or fifo", v);
			return 0;
		}
		rk->policy = v[0] == 'r' ? SCHED_RR : SCHED_FIFO;
		return 1;
	case RK_MAX_RT_PRIORITY:
		return key_int(ctx, name, v, 1, 99, &rk->max_priority);
	case RK_MIN_NICE:
		return key_int(ctx, name, v, -20, 19, &rk->min_nice);
	case RK_RTTIME_MAX:
		if (proto_parse_long(v, 1000, 3600L * 1000000L, &n) < 0) {
			perr(ctx, name, "'%s' is not a number in 1000..3600000000 (microseconds)", v);
			return 0;
		}
		rk->rttime_usec_max = n;
		return 1;
	case RK_ROLE:
		return key_name(ctx, name, v, rk->role, sizeof(rk->role));
	}
	return 0;
}

/* inih handler: the reader has already set ctx->kind for the current section. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;

	switch (ctx->kind) {
	case SEC_NONE:
		perr(ctx, name, "key outside any section; put it under [daemon] or [rule NAME]");
		return 0;
	case SEC_BAD:
		return 1; /* the section header was already reported */
	case SEC_DAEMON:
		return daemon_key(ctx, name, value);
	case SEC_RULE:
		return rule_key(ctx, name, value);
	case SEC_USER:
	case SEC_GROUP:
		return principal_key(ctx, name, value);
	case SEC_PROBE:
		return probe_key(ctx, name, value);
	case SEC_RTKIT:
		return rtkit_key(ctx, name, value);
	}
	return 0;
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
		if (grow_array(&c->probes, c->n_probes, sizeof(*c->probes)) < 0)
			return -ENOMEM;
		struct probe_conf *n = &c->probes[c->n_probes];
		memset(n, 0, sizeof(*n));
		strcpy(n->name, name);
		n->policy = SCHED_FIFO;
		n->priority = -1; /* the [daemon] default, filled in by validation */
		n->period_us = 1000;
		strcpy(n->strategy, "sleep");
		origin_reset(&n->origin);
		n->file = ctx->file_idx;
		n->line = ctx->line;
		ctx->idx = e->value = c->n_probes++;
		return 0;
	}
	if (kind == SEC_RULE) {
		if (grow_array(&c->rules, c->n_rules, sizeof(*c->rules)) < 0)
			return -ENOMEM;
		struct rule *n = &c->rules[c->n_rules];
		memset(n, 0, sizeof(*n));
		strcpy(n->name, name);
		origin_reset(&n->origin);
		n->file = ctx->file_idx;
		n->line = ctx->line;
		ctx->idx = e->value = c->n_rules++;
		return 0;
	}
	if (grow_array(&c->principals, c->n_principals, sizeof(*c->principals)) < 0)
		return -ENOMEM;
	struct principal *p = &c->principals[c->n_principals];
	memset(p, 0, sizeof(*p));
	strcpy(p->name, name);
	p->is_group = kind == SEC_GROUP;
	p->max_priority = -1;
	p->max_threads = -1;
	origin_reset(&p->origin);
	p->file = ctx->file_idx;
	p->line = ctx->line;
	ctx->idx = e->value = c->n_principals++;
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
		perr(ctx, NULL, "section header '%s' has no closing ']'", hdr);
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
		perr(ctx, NULL, "out of memory");
		return;
	}
	if (!added && e->file == ctx->file_idx) {
		perr(ctx, NULL, "duplicate section [%s] (first at line %u); merge them into one", what, e->line);
		return;
	}
	e->file = ctx->file_idx;
	e->line = ctx->line;

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
	if (kind == SEC_BAD) {
		perr(ctx, NULL, "unknown section [%s]; use [daemon], [rule NAME], [user NAME], [group NAME], "
		     "[probe NAME] or [rtkit]", hdr + 1);
		return;
	}
	if (kind == SEC_RTKIT) {
		ctx->c->rtkit.file = ctx->file_idx;
		ctx->c->rtkit.line = ctx->line;
		ctx->kind = kind;
		return;
	}
	if (kind != SEC_DAEMON && !valid_name(name, kind == SEC_USER)) {
		perr(ctx, NULL, "bad name '%s' in [%s]; use up to %d letters, digits, '_', '.' or '-'",
		     name, hdr + 1, CONFIG_NAME_MAX - 1);
		return;
	}
	if (kind != SEC_DAEMON && section_open(ctx, kind, name, e) < 0) {
		perr(ctx, NULL, "out of memory");
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
	ctx->line++;
	/* a UTF-8 byte-order mark, as some editors write it */
	if (ctx->line == 1 && n >= 3 && memcmp(ctx->buf, "\xEF\xBB\xBF", 3) == 0) {
		memmove(ctx->buf, ctx->buf + 3, (size_t)n - 2);
		n -= 3;
	}
	if (memchr(ctx->buf, '\0', (size_t)n)) {
		perr(ctx, NULL, "binary data (a NUL byte); this is not a text config file");
		goto skip;
	}
	if (n >= num - 2) {
		perr(ctx, NULL, "line longer than %d characters", num - 4);
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
		perr(ctx, NULL, "expected 'key = value', got '%s'", p);
		goto skip;
	}
	/* "key =#x" reads as the value "#x", but printed back as "key = #x" it
	 * would be a comment: refuse what cannot be written back */
	if (eq[1] == '#' || eq[1] == ';') {
		perr(ctx, NULL, "a value cannot start with '%c' (after a blank it starts a comment)", eq[1]);
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
	ctx->file = c->files[c->n_files];
	ctx->file_idx = (short)c->n_files++;
	ctx->line = 0;
	ctx->kind = SEC_NONE;
	r = ini_parse_stream(read_line, ctx, on_key, ctx);
	fclose(ctx->in);
	ctx->in = NULL;
	/* inih reports the first bad line; ours are already reported with reasons. */
	if (r > 0 && ctx->nerr == 0) {
		ctx->line = (unsigned)r;
		perr(ctx, NULL, "syntax error");
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
	snprintf(c->socket_path, sizeof(c->socket_path), "%s", PROTO_DEFAULT_SOCKET);
	c->dflt.policy = SCHED_FIFO;
	c->dflt.priority = 10;
	c->dflt.reset_on_fork = true;
	c->max_priority = 80;
	c->log_level = LOG_LEVEL_INFO;
	c->rate_limit = 50;
	c->rate_burst = 100;
	c->rescan_ms = 1000;
	c->observe_threads = 64;
	c->process_events = true;
	c->rtprio_cap = CAP_CONFIG;
	c->metrics_interval_s = 15;
	c->cpu_dma_latency_us = -1;
	c->watchdog = true;
	c->watchdog_threshold_ms = 2000;
	c->watchdog_cooldown_s = 60;
	/* [rtkit]: what rtkit itself grants and advertises */
	c->rtkit.policy = SCHED_RR;
	c->rtkit.max_priority = 20;
	c->rtkit.min_nice = -15;
	c->rtkit.rttime_usec_max = 200000;
	c->rtkit.file = -1;
	origin_reset(&c->rtkit.origin);
	snprintf(c->limits_conf, sizeof(c->limits_conf), "/etc/security/limits.conf");
	snprintf(c->limits_dir, sizeof(c->limits_dir), "/etc/security/limits.d");
	origin_reset(&c->origin);
}

int config_load(const char *path, bool required, struct config **ret, FILE *errors)
{
	struct parse_ctx ctx = { .errors = errors };
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
	if ((r = cpulist_present(&ctx.present)) < 0)
		goto out;

	r = parse_file(&ctx, path);
	if (r == -ENOENT && !required)
		r = 0;
	else if (r < 0) {
		fprintf(errors, "%s: cannot read: %s\n", path, strerror(-r));
		goto out;
	}
	/* Drop-ins in lexical (C locale) order: glob sorts with strcoll, and the
	 * daemon runs in the C locale. */
	if ((r = config_dropin_dir(path, dir, sizeof(dir))) < 0)
		goto out;
	snprintf(pattern, sizeof(pattern), "%s/*.conf", dir);
	r = glob(pattern, GLOB_ERR, NULL, &g);
	if (r != 0 && r != GLOB_NOMATCH && !(r == GLOB_ABORTED && errno == ENOENT)) {
		fprintf(errors, "%s: cannot list drop-ins: %s\n", dir, strerror(errno));
		r = -EIO;
		goto out;
	}
	r = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if ((r = parse_file(&ctx, g.gl_pathv[i])) < 0) {
			fprintf(errors, "%s: cannot read: %s\n", g.gl_pathv[i], strerror(-r));
			goto out;
		}
	}
	r = ctx.nerr ? -EINVAL : 0;
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

/* "file:line" of a key, or "built-in default". */
static void origin_str(const struct config *c, const struct key_origin *o, int k, char *buf, size_t len)
{
	if (o->file[k] == CONFIG_ORIGIN_DEFAULT)
		snprintf(buf, len, "built-in default");
	else if (o->file[k] == CONFIG_ORIGIN_CMDLINE)
		snprintf(buf, len, "command line");
	else
		snprintf(buf, len, "%s:%u", c->files[o->file[k]], o->line[k]);
}

/* Priority against policy and the global ceiling. `base` maps rule key
 * numbers onto the section's own (the [daemon] spec keys start at D_POLICY);
 * `where` names the section. */
static int spec_validate(const struct config *c, struct sched_spec *s, const struct key_origin *o,
			 int base, const char *where, FILE *errors)
{
	char at[PATH_MAX + 16];
	int lo, hi;

	if (policy_priority_range(s->policy, &lo, &hi) < 0)
		return -EINVAL;
	/* other, batch and idle have only priority 0: an unset priority means it. */
	if (!origin_set(o, base + R_PRIORITY) && lo == 0)
		s->priority = 0;
	if (base == 0 && !origin_set(o, R_PRIORITY) && lo > 0) {
		origin_str(c, o, base + R_POLICY, at, sizeof(at));
		fprintf(errors, "%s: %s: policy %s needs a priority; add 'priority = N' (%d..%d)\n",
			at, where, policy_to_string(s->policy), lo, hi);
		return -EINVAL;
	}
	bool cmdline = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_CMDLINE;
	origin_str(c, o, base + R_PRIORITY, at, sizeof(at));
	if (s->priority < lo || s->priority > hi) {
		fprintf(errors, "%s: %s: priority %d is out of range for %s (%d..%d)%s\n", at, where,
			s->priority, policy_to_string(s->policy), lo, hi,
			lo == 0 ? "; other, batch and idle take priority 0 and use nice instead" : "");
		return -EINVAL;
	}
	if (s->priority > c->max_priority) {
		/* a priority no file sets is the built-in one: the key at fault is max-priority */
		bool dflt = o->file[base + R_PRIORITY] == CONFIG_ORIGIN_DEFAULT;
		if (dflt)
			origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: %s: priority %d%s is above max-priority %d; lower it or raise max-priority in [daemon]\n",
			at, where, s->priority, dflt ? " (built-in default)" : "", c->max_priority);
		return cmdline ? -EDOM : -EINVAL;
	}
	if (origin_set(o, base + R_NICE) && s->nice != 0 &&
	    s->policy != SCHED_OTHER && s->policy != SCHED_BATCH) {
		origin_str(c, o, base + R_NICE, at, sizeof(at));
		fprintf(errors, "%s: %s: nice has no effect with policy %s; remove it or use policy other or batch\n",
			at, where, policy_to_string(s->policy));
		return -EINVAL;
	}
	return 0;
}

int config_validate(struct config *c, FILE *errors)
{
	char where[CONFIG_NAME_MAX + 16];
	int r;

	c->n_auto_rules = 0;
	c->match_needs = 0;
	r = spec_validate(c, &c->dflt, &c->origin, D_POLICY, "[daemon]", errors);
	/* the watchdog thread runs at FIFO 99: nothing it guards may reach it */
	if (c->watchdog && c->max_priority > 98) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->origin, D_MAX_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: [daemon]: max-priority %d leaves no room for the watchdog at 99; use 98 or less, "
			"or watchdog = no\n", at, c->max_priority);
		r = -EINVAL;
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		struct probe_conf *p = &c->probes[i];
		int lo, hi;

		if (p->priority < 0)
			p->priority = policy_is_realtime(p->policy) ? c->dflt.priority : 0;
		policy_priority_range(p->policy, &lo, &hi);
		if (p->priority < lo || p->priority > hi || p->priority > c->max_priority) {
			fprintf(errors, "%s:%u: [probe %s]: priority %d is not valid for %s (%d..%d, at most max-priority %d)\n",
				c->files[p->file], p->line, p->name, p->priority, policy_to_string(p->policy), lo, hi,
				c->max_priority);
			r = -EINVAL;
		}
	}
	for (size_t i = 0; i < c->n_rules; i++) {
		struct rule *rl = &c->rules[i];

		snprintf(where, sizeof(where), "[rule %s]", rl->name);
		if (!origin_set(&rl->origin, R_POLICY)) {
			fprintf(errors, "%s:%u: %s: no policy; add 'policy = fifo' (or rr, other, batch, idle)\n",
				c->files[rl->file], rl->line, where);
			r = -EINVAL;
			continue;
		}
		rl->match.n_keys = 0;
		for (int k = R_THREAD_NAME; k < R_N; k++)
			rl->match.n_keys += origin_set(&rl->origin, k);
		if (rl->match.n_keys)
			c->n_auto_rules++;
		if (rl->match.process_name[0])
			c->match_needs |= MATCH_NEED_PROCESS_NAME;
		if (rl->match.exe[0])
			c->match_needs |= MATCH_NEED_EXE;
		if (rl->match.unit[0] || rl->match.cgroup[0])
			c->match_needs |= MATCH_NEED_CGROUP;
		if (rl->match.has_user || rl->match.has_group)
			c->match_needs |= MATCH_NEED_IDS;
		if (!origin_set(&rl->origin, R_RESET_ON_FORK)) {
			rl->spec.reset_on_fork = c->dflt.reset_on_fork;
			rl->origin.file[R_RESET_ON_FORK] = c->origin.file[D_RESET_ON_FORK];
			rl->origin.line[R_RESET_ON_FORK] = c->origin.line[D_RESET_ON_FORK];
		}
		if (spec_validate(c, &rl->spec, &rl->origin, 0, where, errors) < 0)
			r = -EINVAL;
	}
	if (c->rtkit.role[0] && !config_find_rule(c, c->rtkit.role)) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->rtkit.origin, RK_ROLE, at, sizeof(at));
		fprintf(errors, "%s: [rtkit]: role '%s' is no [rule NAME] section; add it or remove the key\n", at,
			c->rtkit.role);
		r = -EINVAL;
	}
	if (c->rtkit.max_priority > c->max_priority && !origin_set(&c->rtkit.origin, RK_MAX_RT_PRIORITY)) {
		/* rtkit's built-in 20 follows a lower max-priority: only a value a
		 * file set can be wrong */
		c->rtkit.max_priority = c->max_priority;
	} else if (c->rtkit.max_priority > c->max_priority) {
		char at[PATH_MAX + 16];
		origin_str(c, &c->rtkit.origin, RK_MAX_RT_PRIORITY, at, sizeof(at));
		fprintf(errors, "%s: [rtkit]: max-realtime-priority %d is above max-priority %d in [daemon]; "
			"use %d or less\n", at, c->rtkit.max_priority, c->max_priority, c->max_priority);
		r = -EINVAL;
	}
	return r;
}

/* Print one "key = value  # origin" line. */
static void print_kv(const struct config *c, FILE *f, const struct key_origin *o, int k,
		     const char *key, const char *value)
{
	/* the reader takes INI_MAX_LINE - 4 characters a line (read_line) */
	const size_t max = INI_MAX_LINE - 4;
	char at[PATH_MAX + 16];
	int n;

	origin_str(c, o, k, at, sizeof(at));
	n = snprintf(NULL, 0, "%-14s = %-24s # %s", key, value, at);
	if (n >= 0 && (size_t)n <= max) {
		fprintf(f, "%-14s = %-24s # %s\n", key, value, at);
		return;
	}
	/* too long for one line: the origin above it, then no padding, then no blanks */
	fprintf(f, "# %s: %.*s\n", key, (int)(max - strlen(key) - 4), at);
	if (strlen(key) + 3 + strlen(value) <= max)
		fprintf(f, "%s = %s\n", key, value);
	else
		fprintf(f, "%s=%s\n", key, value);
}

/* The spec keys of [daemon] or a rule, from `base` in the section's key numbers. */
static void print_spec(const struct config *c, FILE *f, const struct sched_spec *s,
		       const struct key_origin *o, int base)
{
	char buf[256];

	print_kv(c, f, o, base + R_POLICY, "policy", policy_to_string(s->policy));
	snprintf(buf, sizeof(buf), "%d", s->priority);
	print_kv(c, f, o, base + R_PRIORITY, "priority", buf);
	if (s->policy == SCHED_OTHER || s->policy == SCHED_BATCH) {
		snprintf(buf, sizeof(buf), "%d", s->nice);
		print_kv(c, f, o, base + R_NICE, "nice", buf);
	}
	if (s->has_cpus)
		cpulist_format(&s->cpus, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "(unchanged)");
	if (s->has_cpus)
		print_kv(c, f, o, base + R_CPUS, "cpus", buf);
	else
		fprintf(f, "# cpus: not set, affinity is left as the thread has it\n");
	print_kv(c, f, o, base + R_RESET_ON_FORK, "reset-on-fork", s->reset_on_fork ? "yes" : "no");
}

void config_print(const struct config *c, FILE *f)
{
	char buf[256];

	fprintf(f, "# rtschedd effective configuration, read from:\n");
	for (size_t i = 0; i < c->n_files; i++)
		fprintf(f, "#   %s\n", c->files[i]);
	if (c->n_files == 0)
		fprintf(f, "#   (no file: built-in defaults)\n");
	fprintf(f, "\n[daemon]\n");
	print_kv(c, f, &c->origin, D_SOCKET, "socket", c->socket_path);
	print_spec(c, f, &c->dflt, &c->origin, D_POLICY);
	snprintf(buf, sizeof(buf), "%d", c->max_priority);
	print_kv(c, f, &c->origin, D_MAX_PRIORITY, "max-priority", buf);
	print_kv(c, f, &c->origin, D_LOG_LEVEL, "log-level", log_level_to_string(c->log_level));
	if (c->admin_group[0])
		print_kv(c, f, &c->origin, D_ADMIN_GROUP, "admin-group", c->admin_group);
	snprintf(buf, sizeof(buf), "%u", c->rate_limit);
	print_kv(c, f, &c->origin, D_RATE_LIMIT, "rate-limit", buf);
	snprintf(buf, sizeof(buf), "%u", c->rate_burst);
	print_kv(c, f, &c->origin, D_RATE_BURST, "rate-burst", buf);

	snprintf(buf, sizeof(buf), "%u", c->rescan_ms);
	print_kv(c, f, &c->origin, D_RESCAN, "rescan-interval", buf);
	snprintf(buf, sizeof(buf), "%u", c->observe_threads);
	print_kv(c, f, &c->origin, D_OBSERVE_THREADS, "observe-threads", buf);
	print_kv(c, f, &c->origin, D_PROCESS_EVENTS, "process-events", c->process_events ? "yes" : "no");
	print_kv(c, f, &c->origin, D_RTPRIO_CAP, "rtprio-cap",
		 c->rtprio_cap == CAP_CONFIG ? "config" : c->rtprio_cap == CAP_LIMITS_CONF ? "limits-conf" : "rlimit");
	print_kv(c, f, &c->origin, D_OVER_CAP, "over-cap", c->clamp ? "clamp" : "refuse");
	print_kv(c, f, &c->origin, D_LIMITS_CONF, "limits-conf", c->limits_conf);
	print_kv(c, f, &c->origin, D_LIMITS_DIR, "limits-dir", c->limits_dir);
	if (c->run_user[0])
		print_kv(c, f, &c->origin, D_USER, "user", c->run_user);
	config_state_path(c, buf, sizeof(buf));
	print_kv(c, f, &c->origin, D_STATE_FILE, "state-file", buf);
	if (c->metrics_file[0])
		print_kv(c, f, &c->origin, D_METRICS_FILE, "metrics-file", c->metrics_file);
	snprintf(buf, sizeof(buf), "%u", c->metrics_interval_s);
	print_kv(c, f, &c->origin, D_METRICS_INTERVAL, "metrics-interval", buf);
	print_kv(c, f, &c->origin, D_WATCHDOG, "watchdog", c->watchdog ? "yes" : "no");
	snprintf(buf, sizeof(buf), "%u", c->watchdog_threshold_ms);
	print_kv(c, f, &c->origin, D_WATCHDOG_THRESHOLD, "watchdog-threshold", buf);
	snprintf(buf, sizeof(buf), "%u", c->watchdog_cooldown_s);
	print_kv(c, f, &c->origin, D_WATCHDOG_COOLDOWN, "watchdog-cooldown", buf);
	print_kv(c, f, &c->origin, D_WATCHDOG_DEMOTE, "watchdog-demote", c->watchdog_demote_all ? "all" : "culprit");
	if (c->cpu_dma_latency_us < 0)
		snprintf(buf, sizeof(buf), "off");
	else
		snprintf(buf, sizeof(buf), "%d", c->cpu_dma_latency_us);
	print_kv(c, f, &c->origin, D_CPU_DMA_LATENCY, "cpu-dma-latency", buf);

	fprintf(f, "\n[rtkit]\n");
	print_kv(c, f, &c->rtkit.origin, RK_ENABLE, "enable", c->rtkit.enable ? "yes" : "no");
	print_kv(c, f, &c->rtkit.origin, RK_REPLACE, "replace-existing", c->rtkit.replace ? "yes" : "no");
	print_kv(c, f, &c->rtkit.origin, RK_POLICY, "policy", c->rtkit.policy == SCHED_RR ? "rr" : "fifo");
	snprintf(buf, sizeof(buf), "%d", c->rtkit.max_priority);
	print_kv(c, f, &c->rtkit.origin, RK_MAX_RT_PRIORITY, "max-realtime-priority", buf);
	snprintf(buf, sizeof(buf), "%d", c->rtkit.min_nice);
	print_kv(c, f, &c->rtkit.origin, RK_MIN_NICE, "min-nice-level", buf);
	snprintf(buf, sizeof(buf), "%ld", c->rtkit.rttime_usec_max);
	print_kv(c, f, &c->rtkit.origin, RK_RTTIME_MAX, "rttime-usec-max", buf);
	if (c->rtkit.role[0])
		print_kv(c, f, &c->rtkit.origin, RK_ROLE, "role", c->rtkit.role);

	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *rl = &c->rules[i];
		const struct rule_match *m = &rl->match;

		fprintf(f, "\n[rule %s]\n", rl->name);
		print_spec(c, f, &rl->spec, &rl->origin, 0);
		if (m->thread_name[0])
			print_kv(c, f, &rl->origin, R_THREAD_NAME, "thread-name", m->thread_name);
		if (m->process_name[0])
			print_kv(c, f, &rl->origin, R_PROCESS_NAME, "process-name", m->process_name);
		if (m->exe[0])
			print_kv(c, f, &rl->origin, R_EXE, "exe", m->exe);
		if (m->has_user) {
			snprintf(buf, sizeof(buf), "%u", (unsigned)m->uid);
			print_kv(c, f, &rl->origin, R_USER, "user", buf);
		}
		if (m->has_group) {
			snprintf(buf, sizeof(buf), "%u", (unsigned)m->gid);
			print_kv(c, f, &rl->origin, R_GROUP, "group", buf);
		}
		if (m->unit[0])
			print_kv(c, f, &rl->origin, R_UNIT, "unit", m->unit);
		if (m->cgroup[0])
			print_kv(c, f, &rl->origin, R_CGROUP, "cgroup", m->cgroup);
		fprintf(f, "# %s\n", m->n_keys ? "matches threads automatically" : "a role: applied when a thread asks for it");
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		const struct probe_conf *p = &c->probes[i];

		fprintf(f, "\n[probe %s]\n", p->name);
		snprintf(buf, sizeof(buf), "%d", p->cpu);
		print_kv(c, f, &p->origin, PR_CPU, "cpu", buf);
		print_kv(c, f, &p->origin, PR_POLICY, "policy", policy_to_string(p->policy));
		snprintf(buf, sizeof(buf), "%d", p->priority);
		print_kv(c, f, &p->origin, PR_PRIORITY, "priority", buf);
		print_kv(c, f, &p->origin, PR_MODE, "mode", p->noise ? "noise" : "latency");
		if (!p->noise) {
			snprintf(buf, sizeof(buf), "%u", p->period_us);
			print_kv(c, f, &p->origin, PR_PERIOD, "period-us", buf);
			print_kv(c, f, &p->origin, PR_STRATEGY, "strategy", p->strategy);
		}
	}
	for (size_t i = 0; i < c->n_principals; i++) {
		const struct principal *p = &c->principals[i];

		fprintf(f, "\n[%s %s]\n", p->is_group ? "group" : "user", p->name);
		if (p->max_priority >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->max_priority);
			print_kv(c, f, &p->origin, P_MAX_PRIORITY, "max-priority", buf);
		}
		if (p->policies) {
			policy_mask_to_string(p->policies, buf, sizeof(buf));
			print_kv(c, f, &p->origin, P_POLICIES, "policies", buf);
		}
		if (p->max_threads >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->max_threads);
			print_kv(c, f, &p->origin, P_MAX_THREADS, "max-threads", buf);
		}
		if (p->has_cpus) {
			cpulist_format(&p->cpus, buf, sizeof(buf));
			print_kv(c, f, &p->origin, P_CPUS, "cpus", buf);
		}
		if (p->has_min_nice) {
			snprintf(buf, sizeof(buf), "%d", p->min_nice);
			print_kv(c, f, &p->origin, P_MIN_NICE, "min-nice", buf);
		}
	}
}

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
	strmap_clear(&c->sections);
	free(c);
}
