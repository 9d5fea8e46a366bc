/* procparse.c: the parsers of /proc text (see proc.h). Each takes a
 * NUL-terminated buffer and trusts nothing in it: a thread names itself
 * (comm in stat, Name: in status) and a user manager names its own
 * cgroups, so unprivileged users shape some of it; they are fuzzed
 * (tests/fuzz/fuzz-proc.c). */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/proc.h"

/* --- stat ------------------------------------------------------------------------- */

/* A decimal number filling p[0..len), with a '-' if signed; -EINVAL if it
 * is not one or does not fit 64 bits. */
static int stat_number(const char *p, size_t len, bool *neg, unsigned long long *v)
{
	unsigned long long x = 0;
	size_t i = 0;

	*neg = len > 0 && p[0] == '-';
	if (*neg)
		i++;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (!isdigit((unsigned char)p[i]) || x > (ULLONG_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

int proc_parse_stat(const char *buf, struct proc_stat *out)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')'), *p;
	unsigned long long v, utime = 0;
	struct proc_stat s;
	size_t n;
	bool neg;

	if (!open || !close || close < open || open == buf || open[-1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > PROC_COMM_MAX)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	/* field 1, the tid */
	if (stat_number(buf, (size_t)(open - 1 - buf), &neg, &v) < 0 || neg || v == 0 || v > INT_MAX)
		return -EINVAL;
	s.tid = (pid_t)v;
	memcpy(s.comm, open + 1, n);
	/* field 3, the state: one character between blanks */
	if (close[1] != ' ' || !close[2] || close[2] == ' ' || close[2] == '\n' || close[3] != ' ')
		return -EINVAL;
	s.state = close[2];
	/* fields 4..41 are numbers; a few may be negative (tty_nr, tpgid,
	 * priority, nice) */
	p = close + 3;
	for (int field = 4; field <= 41; field++) {
		while (*p == ' ')
			p++;
		n = strcspn(p, " \n");
		if (stat_number(p, n, &neg, &v) < 0)
			return -EINVAL;
		p += n;
		switch (field) {
		case 4:
			if (neg || v > INT_MAX)
				return -EINVAL;
			s.ppid = (pid_t)v;
			break;
		case 9:
			if (neg || v > UINT_MAX)
				return -EINVAL;
			s.flags = (unsigned)v;
			break;
		case 19:
			if (v > 20)
				return -EINVAL;
			s.nice = neg ? -(int)v : (int)v;
			break;
		case 14:
			if (neg)
				return -EINVAL;
			utime = v;
			break;
		case 15:
			if (neg)
				return -EINVAL;
			s.cputime = utime + v;
			break;
		case 22:
			if (neg)
				return -EINVAL;
			s.starttime = v;
			break;
		case 39:
			if (neg || v > INT_MAX)
				return -EINVAL;
			s.processor = (int)v;
			break;
		case 40:
			if (neg || v > 1000)
				return -EINVAL;
			s.rt_priority = (int)v;
			break;
		case 41:
			if (neg || v > 1000)
				return -EINVAL;
			s.policy = (int)v;
			break;
		}
	}
	*out = s;
	return 0;
}

/* --- status ----------------------------------------------------------------------- */

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

/* A number that fills the field up to a blank or its end. */
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

/* The first number of line key (a pid, a uid or a gid). */
static int status_id(const char *buf, const char *key, unsigned long long max, unsigned long long *v,
		     const char **end, size_t *rest)
{
	size_t len;
	const char *p = status_field(buf, key, &len), *e;

	if (!p || field_ull(p, len, 10, max, v, &e) < 0)
		return -EINVAL;
	if (end) {
		*rest = len - (size_t)(e - p);
		*end = e;
	}
	return 0;
}

/* Skip the blanks of a status value, keeping *len in step. */
static const char *skip_blanks(const char *p, size_t *len)
{
	while (*len && (*p == ' ' || *p == '\t'))
		p++, (*len)--;
	return p;
}

/* Groups: the supplementary gids, as many as fit; a malformed entry ends the list. */
static void status_groups(const char *buf, struct proc_status *s)
{
	unsigned long long v;
	const char *p, *e;
	size_t len;

	if (!(p = status_field(buf, "Groups", &len)))
		return;
	for (p = skip_blanks(p, &len); len && s->n_groups < PROC_GROUPS_MAX; p = skip_blanks(e, &len)) {
		if (field_ull(p, len, 10, 0xffffffffu, &v, &e) < 0)
			return;
		len -= (size_t)(e - p);
		s->groups[s->n_groups++] = (gid_t)v;
	}
}

int proc_parse_status(const char *buf, struct proc_status *out)
{
	struct proc_status s;
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
	if (status_id(buf, "Tgid", 0x7fffffff, &v, NULL, NULL) < 0 || v == 0)
		return -EINVAL;
	s.tgid = (pid_t)v;
	if (status_id(buf, "Pid", 0x7fffffff, &v, NULL, NULL) < 0 || v == 0)
		return -EINVAL;
	s.pid = (pid_t)v;
	if (status_id(buf, "Uid", 0xffffffffu, &v, &e, &len) < 0)
		return -EINVAL;
	s.uid = (uid_t)v;
	e = skip_blanks(e, &len);
	if (field_ull(e, len, 10, 0xffffffffu, &v, NULL) < 0)
		return -EINVAL;
	s.euid = (uid_t)v;
	if (status_id(buf, "Gid", 0xffffffffu, &v, NULL, NULL) < 0)
		return -EINVAL;
	s.gid = (gid_t)v;
	status_groups(buf, &s);
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

/* --- limits ----------------------------------------------------------------------- */

/* The line of buf that starts with name followed by a blank, past name. */
static const char *row_find(const char *buf, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && (p[n] == ' ' || p[n] == '\t'))
			return p + n;
	return NULL;
}

/* One value of a limits row: "unlimited" or a decimal number. */
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

int proc_parse_limits(const char *buf, struct proc_rlimits *out)
{
	struct proc_rlimits l;
	int r;

	if ((r = limit_row(buf, "Max realtime priority", &l.rtprio_soft, &l.rtprio_hard)) < 0 ||
	    (r = limit_row(buf, "Max realtime timeout", &l.rttime_soft, &l.rttime_hard)) < 0)
		return r;
	*out = l;
	return 0;
}

/* --- cgroup ----------------------------------------------------------------------- */

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

int proc_parse_cgroup(const char *buf, struct proc_cgroup *out)
{
	struct proc_cgroup *g = out;
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

int proc_unit_from_cgroup(const char *path, char *unit, size_t len, bool *user_unit)
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

int proc_parse_irq_name(const char *buf, int irq, char *name, size_t len)
{
	const char *line = buf, *p, *end;
	unsigned long long v;
	int cpus = 0, field = 0;

	if (irq < 0 || !len)
		return -EINVAL;
	/* the header names the CPUs: that many counts start every line */
	end = line + strcspn(line, "\n");
	for (p = line; p < end; p++)
		if (p[0] == 'C' && p + 2 < end && p[1] == 'P' && p[2] == 'U' && (p == line || p[-1] == ' '))
			cpus++;
	for (line = *end ? end + 1 : end; *line; line = *end ? end + 1 : end) {
		size_t n;

		end = line + strcspn(line, "\n");
		p = line;
		while (p < end && *p == ' ')
			p++;
		n = strspn(p, "0123456789");
		if (!n || n > 9 || p + n >= end || p[n] != ':')
			continue;
		v = 0;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (unsigned)(p[i] - '0');
		if (v != (unsigned long long)irq)
			continue;
		p += n + 1;
		/* the counts, then the chip and the hardware irq: two words */
		for (field = 0; field < cpus + 2; field++) {
			while (p < end && *p == ' ')
				p++;
			if (p >= end)
				return -EINVAL;
			if (field < cpus && !(*p >= '0' && *p <= '9'))
				return -EINVAL;
			while (p < end && *p != ' ')
				p++;
		}
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			return -EINVAL;
		n = (size_t)(end - p);
		while (n && p[n - 1] == ' ')
			n--;
		if (n >= len)
			n = len - 1;
		memcpy(name, p, n);
		name[n] = '\0';
		return 0;
	}
	return -ENOENT;
}
