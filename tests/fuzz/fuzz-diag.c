/* fuzz-diag.c: libFuzzer target for the parsers of kernel text that only
 * the diagnosis reads (diag.h): the kernel command line and isolcpus-style
 * CPU lists. The files of a process (stat, status, limits, cgroup) have one
 * parser, daemon/sys/procparse.c, fuzzed by fuzz-proc.
 *
 * The input is given to every parser as the NUL-terminated buffer their
 * readers hand them; results must keep the promises of diag.h. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/diag/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz-diag: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                     \
			abort();                                                \
		}                                                               \
	} while (0)

static void fuzz_diag(const char *s)
{
	char val[64];
	cpu_set_t set;
	int r;

	r = diag_cmdline_param(s, "isolcpus", val, sizeof(val));
	CHECK(r == 0 || r == -ENOENT || r == -ENOSPC);
	if (r == 0) {
		CHECK(strlen(val) < sizeof(val));
		r = diag_parse_cpu_param(val, &set);
		CHECK(r == 0 || r < 0);
	}
	r = diag_parse_cpu_param(s, &set);
	CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	/* the readers' buffers hold at most a few KiB */
	if (size > 16384)
		return 0;
	/* exactly size + 1 bytes, so a read past the NUL is an ASan report */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_diag(s);
	free(s);
	return 0;
}
