/* cpulist.c: CPU list parsing and printing (see cpulist.h). */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"

/* Read a decimal CPU number; -EINVAL without digits, -ERANGE past CPU_SETSIZE. */
static int read_num(const char **p, unsigned *out)
{
	unsigned long v = 0;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (unsigned long)(**p - '0');
		if (v >= CPU_SETSIZE)
			return -ERANGE;
		(*p)++;
	}
	*out = (unsigned)v;
	return 0;
}

/* The grammar is the kernel's bitmap_parselist(): items "a", "a-b" or
 * "a-b:used/group" separated by commas; white space around items is allowed. */
int cpulist_parse(const char *s, cpu_set_t *set, const char **bad)
{
	const char *p = s;
	int r;

	CPU_ZERO(set);
	for (;;) {
		unsigned a, b, used = 1, group = 1;
		const char *item;

		while (isspace((unsigned char)*p))
			p++;
		item = p;
		if ((r = read_num(&p, &a)) < 0)
			goto fail;
		b = a;
		if (*p == '-') {
			p++;
			if ((r = read_num(&p, &b)) < 0)
				goto fail;
			if (*p == ':') {
				p++;
				if ((r = read_num(&p, &used)) < 0 || *p++ != '/' ||
				    (r = read_num(&p, &group)) < 0 || used == 0 ||
				    group == 0 || used > group) {
					r = r < 0 ? r : -EINVAL;
					goto fail;
				}
			}
		}
		if (b < a) {
			r = -EINVAL;
			goto fail;
		}
		for (unsigned c = a; c <= b; c++)
			if ((c - a) % group < used)
				CPU_SET(c, set);
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			r = -EINVAL;
			item = p;
			goto fail;
		}
		p++;
		continue;
fail:
		if (bad)
			*bad = item;
		return r;
	}
}

int cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	/* up to the last CPU in the set, not CPU_SETSIZE: a grant's journal
	 * line formats one */
	for (int c = 0, left = CPU_COUNT(set); left > 0 && c < CPU_SETSIZE; c++) {
		int end = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
			end++;
		left -= end - c + 1;
		if (end == c)
			n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", c);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", c, end);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
		c = end;
	}
	return 0;
}

/* A CPU list file of /sys/devices/system/cpu, or without sysfs (a
 * container without it) the configured count. */
static int read_cpu_file(const char *name, cpu_set_t *set)
{
	char line[4096], path[96];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s", name);
	f = fopen(path, "re");
	if (f) {
		char *ok = fgets(line, sizeof(line), f);
		fclose(f);
		if (ok) {
			line[strcspn(line, "\n")] = '\0';
			if (cpulist_parse(line, set, NULL) == 0)
				return 0;
		}
	}
	n = sysconf(_SC_NPROCESSORS_CONF);
	if (n <= 0)
		return -errno;
	CPU_ZERO(set);
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
	return 0;
}

int cpulist_present(cpu_set_t *set)
{
	return read_cpu_file("present", set);
}

int cpulist_online(cpu_set_t *set)
{
	return read_cpu_file("online", set);
}

int cpulist_missing(const cpu_set_t *set, const cpu_set_t *present, cpu_set_t *missing)
{
	cpu_set_t m;

	CPU_ZERO(&m);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && !CPU_ISSET(c, present))
			CPU_SET(c, &m);
	if (missing)
		*missing = m;
	return CPU_COUNT(&m);
}
