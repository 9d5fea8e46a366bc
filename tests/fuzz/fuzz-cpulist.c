/* fuzz-cpulist.c: libFuzzer target for the CPU list parser (cpulist.h).
 *
 * CPU lists come from the config (cpus =) and from clients (cpus= in a
 * register request). The input is the text; a parsed set must format
 * (cpulist_format) into text that parses back to the same set, *bad must
 * point into the input, and a short output buffer must fail with -ENOSPC
 * instead of overflowing. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "fuzz-cpulist: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                        \
			abort();                                                   \
		}                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[8192];
	cpu_set_t set, again, present, missing;
	const char *bad = NULL, *bad2;
	char *s;
	size_t small;
	int r;

	/* a C string, as both callers have: exactly size bytes, so reads past it trap */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	r = cpulist_parse(s, &set, &bad);
	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r < 0) {
		CHECK(bad >= s && bad <= s + strlen(s));
		free(s);
		return 0;
	}
	/* every set the parser yields has a text form that parses back to it */
	CHECK(cpulist_format(&set, text, sizeof(text)) == 0);
	CHECK(strlen(text) < sizeof(text));
	CHECK(cpulist_parse(text, &again, &bad2) == 0 || CPU_COUNT(&set) == 0);
	if (CPU_COUNT(&set) > 0)
		CHECK(CPU_EQUAL(&set, &again));
	/* a buffer too short is refused, never overrun (ASan sees the latter) */
	small = size ? data[0] % 16 : 0;
	if (small) {
		char *buf = malloc(small);

		if (buf) {
			r = cpulist_format(&set, buf, small);
			CHECK(r == 0 || r == -ENOSPC);
			CHECK(memchr(buf, '\0', small) != NULL);
			if (r == 0)
				CHECK(strcmp(buf, text) == 0);
			free(buf);
		}
	}
	CHECK(cpulist_format(&set, text, 0) == -ENOSPC);
	if (cpulist_present(&present) == 0)
		CHECK(cpulist_missing(&set, &present, &missing) == CPU_COUNT(&missing));
	free(s);
	return 0;
}
