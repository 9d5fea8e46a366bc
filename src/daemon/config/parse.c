/* parse.c: reading rtschedd.conf and its drop-in directory with inih.
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
#include "daemon/config/keys.h"

static const char *const daemon_keys[D_N] = {
	"socket", "policy", "priority", "nice", "cpus", "reset-on-fork",
	"max-priority", "log-level", "admin-group", "rate-limit", "rate-burst", "rescan-interval",
	"process-events", "rtprio-cap", "over-cap", "limits-conf", "limits-dir",
	"user", "state-file", "metrics-file", "metrics-interval", "cpu-dma-latency",
	"watchdog", "watchdog-threshold", "watchdog-cooldown", "watchdog-demote", "observe-threads",
};

static const char *const rule_keys[R_N] = { "policy", "priority", "nice", "cpus", "reset-on-fork",
					    "thread-name", "process-name", "exe", "user", "group", "unit",
					    "cgroup" };

static const char *const principal_keys[P_N] = { "max-priority", "policies", "max-threads", "cpus",
						 "min-nice" };

static const char *const probe_keys[PR_N] = { "cpu", "policy", "priority", "period-us", "strategy", "mode" };

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
