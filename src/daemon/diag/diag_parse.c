/* diag_parse.c: parsers of the /proc and kernel text the diagnosis reads
 * (see diag.h).  Each takes a NUL-terminated buffer and trusts nothing in
 * it: they are fuzzed. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/cpulist.h"
#include "daemon/diag/diag.h"

/* The line of buf that starts with name followed by a blank, past name. */
static const char *row_find(const char *buf, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
			return p + n;
	return NULL;
}

/* One value of a /proc/PID/limits row: "unlimited" or a decimal number. */
static int limit_value(const char **pp, rlim_t *v)
{
	const char *p = *pp;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "unlimited", 9) == 0) {
		*v = RLIM_INFINITY;
		p += 9;
	} else if (isdigit((unsigned char)*p)) {
		unsigned long long x = 0;

		for (; isdigit((unsigned char)*p); p++) {
			unsigned d = (unsigned)(*p - '0');

			if (x > (~(unsigned long long)0 - d) / 10)
				return -ERANGE;
			x = x * 10 + d;
		}
		if (x > (unsigned long long)(rlim_t)-1)
			return -ERANGE;
		*v = (rlim_t)x;
	} else {
		return -EINVAL;
	}
	if (*p && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	*pp = p;
	return 0;
}

/* Soft and hard value of the row called name. */
static int limit_row(const char *buf, const char *name, rlim_t *soft, rlim_t *hard)
{
	const char *p = row_find(buf, name);
	int r;

	if (!p)
		return -EINVAL;
	if ((r = limit_value(&p, soft)) < 0 || (r = limit_value(&p, hard)) < 0)
		return r;
	return 0;
}

int diag_parse_limits(const char *buf, struct diag_rlimits *out)
{
	struct diag_rlimits l;
	int r;

	if ((r = limit_row(buf, "Max realtime priority", &l.rtprio_soft, &l.rtprio_hard)) < 0 ||
	    (r = limit_row(buf, "Max realtime timeout", &l.rttime_soft, &l.rttime_hard)) < 0)
		return r;
	*out = l;
	return 0;
}

/* The value of "key:" at the start of a line of a status file, blanks
 * skipped; *len is its length to the end of the line. */
static const char *status_field(const char *buf, const char *key, size_t *len)
{
	size_t n = strlen(key);

	for (const char *p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, n) != 0 || p[n] != ':')
			continue;
		p += n + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		*len = strcspn(p, "\n");
		return p;
	}
	return NULL;
}

/* A decimal number that fills the field up to a blank or its end. */
static int field_ull(const char *p, size_t len, int base, unsigned long long max,
		     unsigned long long *v, const char **end)
{
	unsigned long long x = 0;
	size_t i = 0;

	for (; i < len; i++) {
		int d = isdigit((unsigned char)p[i]) ? p[i] - '0' :
			base == 16 && isxdigit((unsigned char)p[i]) ? tolower((unsigned char)p[i]) - 'a' + 10 : -1;

		if (d < 0)
			break;
		if ((unsigned)d > max || x > (max - (unsigned)d) / (unsigned)base)
			return -ERANGE;
		x = x * (unsigned)base + (unsigned)d;
	}
	if (i == 0 || (i < len && p[i] != ' ' && p[i] != '\t'))
		return -EINVAL;
	*v = x;
	if (end)
		*end = p + i;
	return 0;
}

int diag_parse_status(const char *buf, struct diag_status *out)
{
	struct diag_status s;
	unsigned long long v;
	const char *p, *e;
	char list[4096];
	size_t len;

	memset(&s, 0, sizeof(s));
	s.seccomp = -1;
	if ((p = status_field(buf, "Name", &len))) {
		if (len >= sizeof(s.name))
			len = sizeof(s.name) - 1;
		memcpy(s.name, p, len);
	}
	p = status_field(buf, "Pid", &len);
	if (!p || field_ull(p, len, 10, 0x7fffffff, &v, NULL) < 0 || v == 0)
		return -EINVAL;
	s.pid = (pid_t)v;
	p = status_field(buf, "Uid", &len);
	if (!p || field_ull(p, len, 10, 0xffffffffu, &v, &e) < 0)
		return -EINVAL;
	s.ruid = (uid_t)v;
	len -= (size_t)(e - p);
	while (len && (*e == ' ' || *e == '\t'))
		e++, len--;
	if (field_ull(e, len, 10, 0xffffffffu, &v, NULL) < 0)
		return -EINVAL;
	s.euid = (uid_t)v;
	if ((p = status_field(buf, "Seccomp", &len)) && field_ull(p, len, 10, 2, &v, NULL) == 0)
		s.seccomp = (int)v;
	if ((p = status_field(buf, "CapEff", &len)) && field_ull(p, len, 16, ~0ull, &v, NULL) == 0) {
		s.have_capeff = true;
		s.capeff = v;
	}
	if ((p = status_field(buf, "CapBnd", &len)) && field_ull(p, len, 16, ~0ull, &v, NULL) == 0) {
		s.have_capbnd = true;
		s.capbnd = v;
	}
	if ((p = status_field(buf, "Cpus_allowed_list", &len)) && len > 0 && len < sizeof(list)) {
		memcpy(list, p, len);
		list[len] = '\0';
		s.have_cpus = cpulist_parse(list, &s.cpus_allowed, NULL) == 0;
	}
	*out = s;
	return 0;
}

/* Copy a cgroup path of a line; it must start with '/'. */
static int cg_path(char *dst, size_t size, const char *p, size_t len)
{
	if (len == 0 || p[0] != '/')
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(dst, p, len);
	dst[len] = '\0';
	return 0;
}

/* True if the comma-separated controller list ctl (length n) holds name. */
static bool has_controller(const char *ctl, size_t n, const char *name)
{
	size_t k = strlen(name);

	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && ctl[j] != ',')
			j++;
		if (j - i == k && strncmp(ctl + i, name, k) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

int diag_parse_cgroup(const char *buf, struct diag_cgroup *out)
{
	struct diag_cgroup *g = out;
	const char *p = buf;

	memset(g, 0, sizeof(*g));
	while (*p) {
		size_t len = strcspn(p, "\n"), id = strspn(p, "0123456789");
		const char *c1 = memchr(p, ':', len), *c2, *path;
		size_t nctl, plen;
		int r = 0;

		if (len == 0) {
			p++;
			continue;
		}
		if (!c1 || id == 0 || c1 != p + id)
			return -EINVAL;
		c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p));
		if (!c2)
			return -EINVAL;
		nctl = (size_t)(c2 - c1 - 1);
		path = c2 + 1;
		plen = len - (size_t)(path - p);
		if (nctl == 0 && id == 1 && p[0] == '0') {
			g->has_unified = true;
			r = cg_path(g->unified, sizeof(g->unified), path, plen);
		}
		if (r == 0 && has_controller(c1 + 1, nctl, "cpu")) {
			g->has_cpu_v1 = true;
			r = cg_path(g->cpu_v1, sizeof(g->cpu_v1), path, plen);
		}
		if (r == 0 && has_controller(c1 + 1, nctl, "cpuset")) {
			g->has_cpuset_v1 = true;
			r = cg_path(g->cpuset_v1, sizeof(g->cpuset_v1), path, plen);
		}
		if (r == 0 && has_controller(c1 + 1, nctl, "name=systemd")) {
			g->has_systemd = true;
			r = cg_path(g->systemd, sizeof(g->systemd), path, plen);
		}
		if (r < 0)
			return r;
		p += len;
		if (*p == '\n')
			p++;
	}
	return 0;
}

/* True if the n bytes at s end in suffix. */
static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && memcmp(s + n - k, suffix, k) == 0;
}

int diag_unit_from_cgroup(const char *path, char *unit, size_t len, bool *user_unit)
{
	const char *best = NULL;
	size_t best_n = 0;
	bool user = false, in_manager = false;

	for (const char *p = path; *p;) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if (ends_with(p, n, ".service") || ends_with(p, n, ".scope")) {
			best = p;
			best_n = n;
			user = in_manager;
			if (strncmp(p, "user@", 5) == 0 && ends_with(p, n, ".service"))
				in_manager = true;
		}
		p += n;
	}
	if (!best)
		return -ENOENT;
	if (best_n >= len)
		return -ENOSPC;
	memcpy(unit, best, best_n);
	unit[best_n] = '\0';
	if (user_unit)
		*user_unit = user;
	return 0;
}

int diag_cmdline_param(const char *cmdline, const char *key, char *val, size_t len)
{
	size_t k = strlen(key);
	int r = -ENOENT;

	for (const char *p = cmdline; *p;) {
		const char *tok;
		size_t n;
		bool quoted = false;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		tok = p;
		/* A double-quoted stretch may hold blanks, as the kernel allows. */
		while (*p && (quoted || !isspace((unsigned char)*p))) {
			if (*p == '"')
				quoted = !quoted;
			p++;
		}
		n = (size_t)(p - tok);
		if (n == 2 && strncmp(tok, "--", 2) == 0)
			break;
		if (n > k && strncmp(tok, key, k) == 0 && tok[k] == '=') {
			const char *v = tok + k + 1;
			size_t vn = n - k - 1, o = 0;

			for (size_t i = 0; i < vn; i++) {
				if (v[i] == '"')
					continue;
				if (o + 1 >= len)
					return -ENOSPC;
				val[o++] = v[i];
			}
			val[o] = '\0';
			r = 0;
		}
	}
	return r;
}

int diag_parse_cpu_param(const char *val, cpu_set_t *set)
{
	char list[4096];
	size_t o = 0;

	CPU_ZERO(set);
	for (const char *p = val; *p;) {
		size_t n = strcspn(p, ",");

		if (n && !isalpha((unsigned char)p[0])) {
			if (o + n + 2 > sizeof(list))
				return -EINVAL;
			if (o)
				list[o++] = ',';
			memcpy(list + o, p, n);
			o += n;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	list[o] = '\0';
	return o ? cpulist_parse(list, set, NULL) : 0;
}

int diag_parse_stat_policy(const char *buf, int *policy, int *rt_priority)
{
	const char *p = strrchr(buf, ')');
	long long v[2];

	if (!p)
		return -EINVAL;
	p++;
	/* Field 3 (state) is the first after ')'; 40 and 41 are the 38th and 39th. */
	for (int field = 3; field <= 41; field++) {
		char *end;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return -EINVAL;
		if (field >= 40) {
			errno = 0;
			v[field - 40] = strtoll(p, &end, 10);
			if (end == p || errno || v[field - 40] < 0 || v[field - 40] > 1000 ||
			    (*end && *end != ' ' && *end != '\n'))
				return -EINVAL;
			p = end;
		} else {
			p += strcspn(p, " \n");
		}
	}
	*rt_priority = (int)v[0];
	*policy = (int)v[1];
	return 0;
}
