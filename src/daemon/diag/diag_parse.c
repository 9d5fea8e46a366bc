/* diag_parse.c: parsers of the kernel text the diagnosis reads (see
 * diag.h): the command line and its CPU lists.  The files of a process are
 * parsed by daemon/sys/procparse.c.  Each takes a NUL-terminated buffer and
 * trusts nothing in it: they are fuzzed. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/cpulist.h"
#include "daemon/diag/diag.h"

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
