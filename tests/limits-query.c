/*
 * limits-query.c - ask the limits.conf reader one question from a script
 *
 * usage: limits-query CONF DIR ITEM USER   (CONF or DIR "-" leaves it out)
 * prints: soft=N hard=N soft_src=FILE:LINE hard_src=FILE:LINE exempt=0|1
 *         exempt_src=FILE:LINE
 * N is a number, "unlimited" or "unset"; a source is "-" when unset.
 * Warnings about bad lines go to stderr.  Exit 0, 1 on a failed lookup,
 * 2 on bad usage.  tests/limits-pam.sh compares this with real sessions.
 */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/limits.h"

/* Print one value the way the test script reads it. */
static void print_value(const char *key, long v)
{
	if (v == LIMITS_UNSET)
		printf("%s=unset", key);
	else if (v == LIMITS_UNLIMITED)
		printf("%s=unlimited", key);
	else
		printf("%s=%ld", key, v);
}

/* Print "key=file:line", or "key=-" when nothing matched. */
static void print_src(const char *key, const char *file, unsigned line)
{
	if (file[0])
		printf(" %s=%s:%u", key, file, line);
	else
		printf(" %s=-", key);
}

/* Pass reader warnings on to stderr with their file and line. */
static void warn_stderr(void *ud, const char *file, unsigned line, const char *msg)
{
	(void)ud;
	fprintf(stderr, "limits-query: %s:%u: %s\n", file, line, msg);
}

int main(int argc, char **argv)
{
	struct limits_answer a;
	struct limits_who who;
	const char *conf, *dir;
	int r;

	if (argc != 5) {
		fprintf(stderr, "usage: %s CONF DIR ITEM USER\n", argv[0]);
		return 2;
	}
	conf = strcmp(argv[1], "-") ? argv[1] : NULL;
	dir = strcmp(argv[2], "-") ? argv[2] : NULL;
	r = limits_who_from_user(argv[4], &who);
	if (r < 0) {
		fprintf(stderr, "limits-query: user %s: %s\n", argv[4], strerror(-r));
		return 1;
	}
	r = limits_lookup_warn(conf, dir, argv[3], &who, warn_stderr, NULL, &a);
	limits_who_free(&who);
	if (r < 0) {
		fprintf(stderr, "limits-query: lookup: %s\n", strerror(-r));
		return 1;
	}
	print_value("soft", a.soft.value);
	putchar(' ');
	print_value("hard", a.hard.value);
	print_src("soft_src", a.soft.file, a.soft.line);
	print_src("hard_src", a.hard.file, a.hard.line);
	printf(" exempt=%d", a.exempt ? 1 : 0);
	print_src("exempt_src", a.exempt_file, a.exempt_line);
	putchar('\n');
	return fflush(stdout) == 0 ? 0 : 1;
}
