/* fuzz-proc.c: libFuzzer target for the /proc parsers of proc.h:
 * proc_parse_stat() and proc_parse_status() (/proc/PID/limits: fuzz-diag).
 *
 * /proc/TID/stat carries the thread's name, which any process sets to
 * anything (prctl PR_SET_NAME, up to 15 bytes, spaces and parentheses
 * included), so proc_parse_stat() reads text an unprivileged user shapes.
 * The input goes to every parser as the NUL-terminated buffer their readers
 * hand them; a parsed comm must be NUL-terminated and fit PROC_COMM_MAX. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz-proc: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                     \
			abort();                                                \
		}                                                               \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_status status;
	struct proc_stat st;
	char *s;
	int r;

	/* the readers' buffers are 1024 (stat) and 4096 (status) bytes */
	if (size > 4095)
		return 0;
	/* exactly size + 1 bytes, so a read past the NUL is an ASan report */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	memset(&st, 0xa5, sizeof(st));
	r = proc_parse_stat(s, &st);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		CHECK(memchr(st.comm, '\0', sizeof(st.comm)) && strlen(st.comm) <= PROC_COMM_MAX);

	r = proc_parse_status(s, &status);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		CHECK(status.tgid > 0);

	free(s);
	return 0;
}
