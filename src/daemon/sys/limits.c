/*
 * limits.c - a limits.conf reader that agrees with Debian 12's pam_limits
 *
 * Rules taken from modules/pam_limits/pam_limits.c of Linux-PAM 1.5.2 with
 * the patches of Debian's pam 1.5.2-6+deb12u1 applied (027, 032, ...) and
 * checked against real runuser sessions by tests/limits-pam.sh:
 *
 * - Files: limits.conf is ALWAYS read first, whether or not limits.d holds
 *   files; if it cannot be opened (even ENOENT) pam_limits fails the
 *   session.  Then the "*.conf" files of limits.d from glob(), sorted
 *   with LC_COLLATE=C, i.e. strcmp: "10-a" < "9-b" < "A" < "B" < "a";
 *   dot files never match.  With conf= on the module line limits.d is
 *   skipped (pass dir_path NULL).  1.6 and later differ: a missing
 *   limits.conf is fine there and a vendor directory is merged in.
 * - Lines: fgets() of 1023 bytes, leading blanks skipped, everything from
 *   '#' dropped, then sscanf("%s%s%s%s").  Type, item and value are
 *   lower-cased; the domain is not.  A domain with ':' that is not a valid
 *   range skips the line.  Four fields: a limit.  Two fields with a type
 *   starting with '-': "no limits" - reading stops and nothing is set.
 *   Anything else is logged and skipped.
 * - Domains, first match wins: the user name; @group (primary or
 *   supplementary); @:gid (any membership, group must exist); @min:max and
 *   @min: (primary gid only); % and %group (maxlogins only, ignored for
 *   rlimits); * ; uid ranges min:max, :uid, min: (these count as the user).
 *   Debian: for uid 0, @, % and * lines are skipped, and @/% ranges then
 *   fall through to the uid-range test.
 * - Items: 1.5.2 knows no "rttime"; such lines are skipped as unknown.
 * - Values: -1, -, unlimited and infinity mean RLIM_INFINITY for every
 *   rlimit but nice (so "rtprio -1" is unlimited); otherwise strtoull,
 *   trailing junk ignored.
 * - Precedence: user(0) < group(1) < default(4); a line applies when the
 *   current source is not more specific, so the last of equals wins.  For
 *   type "-" a blocked soft half returns before the hard half is looked at.
 * - Debian: rlimits no line set are taken from /proc/1/limits, not
 *   inherited; this reader reports them as LIMITS_UNSET.
 */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>     /* the system's: the build uses -iquote, never -I src/daemon/sys */
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/limits.h"

#define INF ULLONG_MAX             /* RLIM_INFINITY on Linux */
#define LINE_LENGTH 1024           /* pam_limits' fgets buffer */

enum { SRC_USER = 0, SRC_GROUP = 1, SRC_ALLGROUP = 2, SRC_ALL = 3,
       SRC_DEFAULT = 4, SRC_NONE = 6, NO_MATCH = -1 };
enum { RANGE_ERR = -1, RANGE_NONE, RANGE_ONE, RANGE_MIN, RANGE_MM };
enum { T_SOFT = 1, T_HARD = 2 };
enum kind { K_PLAIN, K_CPU, K_KIB, K_NICE, K_NOFILE,  /* rlimits */
	    K_INT, K_BOOL, K_ANY, K_LOGIN };            /* others */

static const struct { const char *name; enum kind kind; } items[] = {
	{ "cpu", K_CPU }, { "fsize", K_KIB }, { "data", K_KIB },
	{ "stack", K_KIB }, { "core", K_KIB }, { "rss", K_KIB },
	{ "nproc", K_PLAIN }, { "nofile", K_NOFILE }, { "memlock", K_KIB },
	{ "as", K_KIB }, { "locks", K_PLAIN }, { "sigpending", K_PLAIN },
	{ "msgqueue", K_PLAIN }, { "nice", K_NICE }, { "rtprio", K_PLAIN },
	{ "maxlogins", K_LOGIN }, { "maxsyslogins", K_LOGIN },
	{ "priority", K_INT }, { "nonewprivs", K_BOOL }, { "chroot", K_ANY },
};

struct ctx {
	const char *item;
	enum kind kind;
	const struct limits_who *who;
	limits_warn_fn *warn;
	void *userdata;
	int src_soft, src_hard;
	struct limits_answer *out;
	const char *file;
	unsigned line;
};

/* Report a line pam_limits would complain about, if anyone listens. */
__attribute__((format(printf, 2, 3)))
static void line_warn(const struct ctx *c, const char *fmt, ...)
{
	char msg[2 * LINE_LENGTH];
	va_list ap;

	if (!c->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);  /* a clipped message is fine */
	va_end(ap);
	c->warn(c->userdata, c->file, c->line, msg);
}

/* -1 for an unknown item, else its index in items[]. */
static int item_find(const char *name)
{
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++)
		if (strcmp(items[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Resolve a group by name (name != NULL) or by gid; false if it is absent. */
static bool group_get(const char *name, gid_t gid, gid_t *out)
{
	struct group gr, *res = NULL;
	char *buf = NULL;

	if (name) /* by name: the cache's (accounts.h) */
		return accounts_group_gid(name, out) == 0;
	/* the buffer grows on ERANGE: big groups do not fit in a fixed one */
	for (size_t len = 1024; len <= (64u << 20); len *= 2) {
		char *nbuf = realloc(buf, len);
		if (!nbuf)
			break;
		buf = nbuf;
		if (getgrgid_r(gid, &gr, buf, len, &res) != ERANGE)
			break;
	}
	if (res)
		*out = gr.gr_gid;
	free(buf);
	return res != NULL;
}

/*
 * pam_modutil_user_in_group_nam_nam/_nam_gid: the group, by name or by
 * gid, must exist, and who is in it by the primary or any other group.
 */
static bool in_group(const struct limits_who *who, const char *name, gid_t gid)
{
	gid_t g;

	if (!group_get(name, gid, &g))
		return false;
	if (who->gid == g)
		return true;
	for (size_t i = 0; i < who->ngroups; i++)
		if (who->groups[i] == g)
			return true;
	return false;
}

/* pam_limits' parse_uid_range(), truncating to uid_t as it does. */
static int parse_range(const char *domain, uid_t *min, uid_t *max)
{
	const char *range = domain, *pmax = strchr(domain, ':');
	char *end;
	int rv = RANGE_MM;

	if (!pmax)
		return RANGE_NONE;
	pmax++;
	if (range[0] == '@' || range[0] == '%')
		range++;
	if (range[0] == ':') {
		rv = RANGE_ONE;
	} else {
		errno = 0;
		*min = (uid_t)strtoul(range, &end, 10);
		if (errno || end == range || *end != ':')
			return RANGE_ERR;
	}
	if (*pmax == '\0')
		return rv == RANGE_ONE ? RANGE_ERR : RANGE_MIN;
	errno = 0;
	*max = (uid_t)strtoul(pmax, &end, 10);
	if (errno || end == pmax || *end != '\0')
		return RANGE_ERR;
	if (rv == RANGE_ONE)
		*min = *max;
	return rv;
}

/* Whether an id falls in a parsed range, with pam_limits' fallthroughs. */
static bool id_in_range(int rng, unsigned id, unsigned min, unsigned max)
{
	return rng == RANGE_ONE ? id == max
	       : rng == RANGE_MM ? id >= min && id <= max
	       : rng == RANGE_MIN && id >= min;
}

/*
 * The source a line's domain has for who, or NO_MATCH.  A two-field
 * "<domain> -" line (exempt) is matched without the root rule and without
 * the % and * cases, as in pam_limits.
 */
static int domain_source(const struct ctx *c, const char *domain, int rng,
			 uid_t min, uid_t max, bool exempt)
{
	const struct limits_who *who = c->who;
	bool root = who->uid == 0 && !exempt;   /* Debian's 027 patch */
	bool group = domain[0] == '@' || (domain[0] == '%' && !exempt);
	bool in;

	if (strcmp(who->user, domain) == 0)
		return SRC_USER;
	if (group && !root) {
		if (rng == RANGE_NONE && strcmp(domain, "%") == 0)
			return SRC_ALL;
		if (rng == RANGE_NONE)
			in = in_group(who, domain + 1, 0);
		else if (rng == RANGE_ONE)
			in = in_group(who, NULL, max);
		else if (domain[0] == '@')
			in = id_in_range(rng, who->gid, min, max);
		else {
			line_warn(c, "range unsupported for %%group matching - ignored");
			return NO_MATCH;
		}
		return !in ? NO_MATCH : domain[0] == '@' ? SRC_GROUP : SRC_ALLGROUP;
	}
	if (rng == RANGE_NONE)
		return !exempt && !root && strcmp(domain, "*") == 0 ? SRC_DEFAULT : NO_MATCH;
	return id_in_range(rng, who->uid, min, max) ? SRC_USER : NO_MATCH;
}

/* Parse a value as process_limit() does; false where it logs and returns. */
static bool parse_value(enum kind kind, const char *s, unsigned long long *v)
{
	char *end;

	if (kind == K_ANY)
		return true;
	if (kind == K_BOOL)
		return strcmp(s, "0") == 0 || strcmp(s, "1") == 0;
	/* maxlogins takes these too; priority and nice are plain numbers */
	if (kind != K_NICE && kind != K_INT &&
	    (strcmp(s, "-1") == 0 || strcmp(s, "-") == 0 ||
	     strcmp(s, "unlimited") == 0 || strcmp(s, "infinity") == 0)) {
		*v = INF;
		return true;
	}
	if (kind == K_NICE || kind == K_INT || kind == K_LOGIN) {
		long n = strtol(s, &end, 10);
		n = n < INT_MAX ? n : INT_MAX;
		n = n > INT_MIN ? n : INT_MIN;
		*v = (unsigned long long)n;
		return !(n == 0 && end == s);
	}
	*v = strtoull(s, &end, 10);
	return !(*v == 0 && end == s);
}

/* /proc/sys/fs/nr_open, which pam_limits puts in for an unlimited nofile. */
static unsigned long long nr_open(void)
{
	unsigned long long v = INF;
	char buf[128], *end;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (!f)
		return INF;
	if (fgets(buf, sizeof(buf), f)) {
		errno = 0;
		unsigned long long n = strtoull(buf, &end, 10);
		if (end != buf && (n != INF || errno == 0))
			v = n;
	}
	fclose(f);
	return v;
}

/* Turn a parsed value into what setrlimit() would get, as a long. */
static long rlimit_value(const struct ctx *c, unsigned long long v)
{
	switch (c->kind) {
	case K_CPU:
		v = v == INF || v >= INF / 60 ? INF : v * 60;
		break;
	case K_KIB:
		v = v == INF || v >= INF / 1024 ? INF : v * 1024;
		break;
	case K_NICE: {
		long n = (long)v;
		n = n > 19 ? 19 : n < -20 ? -20 : n;
		return 20 - n;
	}
	case K_NOFILE:
		if (v == INF)
			v = nr_open();
		break;
	default:
		break;
	}
	if (v == INF)
		return LIMITS_UNLIMITED;
	if (v > (unsigned long long)LONG_MAX) {
		/* e.g. "-2" read by strtoull; still "more than any priority" */
		line_warn(c, "value %llu does not fit; read as %ld", v, LONG_MAX);
		return LONG_MAX;
	}
	return (long)v;
}

/* Record one half of the answer and where it came from. */
static void entry_set(const struct ctx *c, struct limits_entry *e, long v)
{
	e->value = v;
	snprintf(e->file, sizeof(e->file), "%s", c->file);  /* length checked */
	e->line = c->line;
}

/* The T_SOFT/T_HARD bits of a type field; 0 if it is none of them. */
static int type_bits(const char *t)
{
	return strcmp(t, "soft") == 0 ? T_SOFT : strcmp(t, "hard") == 0 ? T_HARD
	       : strcmp(t, "-") == 0 ? T_SOFT | T_HARD : 0;
}

/* Warn about problems of a four-field line, whoever it is for. */
static void line_check(const struct ctx *c, const char *domain,
		       const char *type, const char *item, const char *value)
{
	int i = item_find(item);
	unsigned long long v;

	if (i < 0) {
		line_warn(c, "unknown limit item '%s'", item);
		return;
	}
	if (!type_bits(type) && items[i].kind != K_LOGIN && items[i].kind != K_BOOL) {
		line_warn(c, "unknown limit type '%s'", type);
		return;
	}
	if (!parse_value(items[i].kind, value, &v))
		line_warn(c, "wrong limit value '%s' for limit type '%s'", value, type);
	else if (domain[0] == '%' && items[i].kind <= K_NOFILE)
		line_warn(c, "'%%' domain valid for maxlogins type only");
}

/* process_limit() for the asked item, including its early return. */
static void limit_apply(struct ctx *c, int src, const char *type,
			const char *value)
{
	unsigned long long v;
	int t = type_bits(type);
	long lv;

	/* % domains get this far in pam_limits, then return: maxlogins only */
	if (!t || !parse_value(c->kind, value, &v) || src == SRC_ALL ||
	    src == SRC_ALLGROUP)
		return;
	lv = rlimit_value(c, v);
	if (t & T_SOFT) {
		if (c->src_soft < src)
			return;
		entry_set(c, &c->out->soft, lv);
		c->src_soft = src;
	}
	if (t & T_HARD) {
		if (c->src_hard < src)
			return;
		entry_set(c, &c->out->hard, lv);
		c->src_hard = src;
	}
}

/* Lower-case in place, as pam_limits does with tolower() in the C locale. */
static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* One fgets() chunk; returns 1 when an exemption line stops all reading. */
static int line_parse(struct ctx *c, char *buf)
{
	char domain[LINE_LENGTH], type[LINE_LENGTH], item[LINE_LENGTH],
	     value[LINE_LENGTH], *line = buf, *p;
	uid_t min = (uid_t)-1, max = (uid_t)-1;
	int n, rng, src;

	while (*line && isspace((unsigned char)*line))
		line++;
	if ((p = strchr(line, '#')))
		*p = '\0';
	if ((p = strchr(line, '\n')))
		*p = '\0';
	if (!*line)
		return 0;
	domain[0] = type[0] = item[0] = value[0] = '\0';
	n = sscanf(line, "%1023s%1023s%1023s%1023s", domain, type, item, value);
	lower(type);
	rng = parse_range(domain, &min, &max);
	if (rng == RANGE_ERR) {
		line_warn(c, "invalid uid range '%s' - skipped", domain);
		return 0;
	}
	if (n == 4) {
		lower(item);
		lower(value);
		line_check(c, domain, type, item, value);
		src = domain_source(c, domain, rng, min, max, false);
		if (src != NO_MATCH && strcmp(item, c->item) == 0)
			limit_apply(c, src, type, value);
		return 0;
	}
	if (n == 2 && type[0] == '-')
		return domain_source(c, domain, rng, min, max, true) != NO_MATCH;
	line_warn(c, "invalid line '%s' - skipped", line);
	return 0;
}

/* parse_config_file(): 0, 1 if an exemption matched, or -errno. */
static int file_parse(struct ctx *c, const char *path)
{
	char buf[LINE_LENGTH];
	bool new_line = true;
	FILE *f;
	int r = 0;

	c->file = path;
	c->line = 0;
	if (strlen(path) >= sizeof(c->out->soft.file))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		line_warn(c, "cannot read settings: %s; pam_limits fails the session",
		      strerror(-r));
		return r;
	}
	/* a line longer than the buffer is parsed in pieces, as pam does */
	while (r == 0 && fgets(buf, sizeof(buf), f)) {
		if (new_line)
			c->line++;
		new_line = strchr(buf, '\n') != NULL;
		r = line_parse(c, buf);
	}
	fclose(f);
	if (r == 1) {
		c->out->exempt = true;
		snprintf(c->out->exempt_file, sizeof(c->out->exempt_file), "%s", path);
		c->out->exempt_line = c->line;
	}
	return r;
}

/* strcmp on the pointed-to strings: glob() under LC_COLLATE=C. */
static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read dir's *.conf files in C order; 0, 1 if exempted, or -errno. */
static int dir_parse(struct ctx *c, const char *dir)
{
	size_t len = strlen(dir);
	char *pat = malloc(2 * len + sizeof("/*.conf")), *q = pat;
	glob_t g;
	int r = 0, rc;

	if (!pat)
		return -ENOMEM;
	/* escape the directory so only "*.conf" is a pattern */
	for (const char *s = dir; *s; s++) {
		if (strchr("*?[\\", *s))
			*q++ = '\\';
		*q++ = *s;
	}
	strcpy(q, "/*.conf");
	/* no setlocale() in a daemon: sort with strcmp, which is C collation */
	rc = glob(pat, GLOB_ERR | GLOB_NOSORT, NULL, &g);
	free(pat);
	if (rc == GLOB_NOSPACE)
		return -ENOMEM;
	if (rc != 0) {
		if (rc == GLOB_ABORTED) {
			c->file = dir;
			c->line = 0;
			line_warn(c, "cannot read directory; pam_limits skips it");
		}
		return 0;
	}
	qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), path_cmp);
	for (size_t i = 0; i < g.gl_pathc && r == 0; i++)
		r = file_parse(c, g.gl_pathv[i]);
	globfree(&g);
	return r;
}

/* Walk limits.conf then limits.d as pam_sm_open_session() does. */
int limits_lookup_warn(const char *conf_path, const char *dir_path,
		       const char *item, const struct limits_who *who,
		       limits_warn_fn *warn, void *userdata,
		       struct limits_answer *out)
{
	struct ctx c = { .item = item, .who = who, .warn = warn,
			 .userdata = userdata, .src_soft = SRC_NONE,
			 .src_hard = SRC_NONE, .out = out };
	int i, r = 0;

	if (!item || !who || !who->user || !out ||
	    (who->ngroups && !who->groups))
		return -EINVAL;
	i = item_find(item);
	if (i < 0 || items[i].kind > K_NOFILE)
		return -EINVAL;
	c.kind = items[i].kind;
	memset(out, 0, sizeof(*out));
	out->soft.value = out->hard.value = LIMITS_UNSET;
	if (conf_path)
		r = file_parse(&c, conf_path);
	if (r == 0 && dir_path)
		r = dir_parse(&c, dir_path);
	if (r < 0)
		return r;
	if (out->exempt) {
		/* pam_limits returns before setup_limits(): nothing applies */
		out->soft = out->hard = (struct limits_entry){ .value = LIMITS_UNSET };
	}
	return 0;
}

/* limits_lookup_warn() for callers that do not want the warnings. */
int limits_lookup(const char *conf_path, const char *dir_path,
		  const char *item, const struct limits_who *who,
		  struct limits_answer *out)
{
	return limits_lookup_warn(conf_path, dir_path, item, who, NULL, NULL, out);
}

/* The user's passwd entry and groups, the data pam_limits works from
 * (accounts.h: looked up once per uid, not per request). */
int limits_who_from_user(const char *user, struct limits_who *who)
{
	struct account a;
	gid_t *groups;
	size_t n;
	int r;

	if (!user || !who)
		return -EINVAL;
	memset(who, 0, sizeof(*who));
	if ((r = accounts_by_name(user, &a)) < 0 || (r = accounts_groups(a.uid, &groups, &n)) < 0)
		return r;
	if (!(who->user = strdup(a.name))) {
		free(groups);
		return -ENOMEM;
	}
	who->uid = a.uid;
	who->gid = a.gid;
	who->groups = groups;
	who->ngroups = n;
	return 0;
}

/* Release a who filled by limits_who_from_user(). */
void limits_who_free(struct limits_who *who)
{
	if (!who)
		return;
	free((char *)who->user);
	free((gid_t *)who->groups);
	memset(who, 0, sizeof(*who));
}
