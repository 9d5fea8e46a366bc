/* testhook.c: the security tests' hooks (see testhook.h). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/testhook.h"

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#endif

void testhook_pause(const char *point)
{
	const char *v = getenv("RTSCHEDD_TEST_PAUSE");
	size_t n = strlen(point);
	char c;
	int fd;

	if (!v || strncmp(v, point, n) != 0 || v[n] != ':')
		return;
	fd = open(v + n + 1, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (read(fd, &c, 1) == 1 && c != '\n')
		;
	close(fd);
}

bool testhook_hold_armed(void)
{
	return getenv("RTSCHEDD_TEST_HOLD_LOCKS") != NULL;
}

void testhook_hold_locks(void)
{
	const char *path = getenv("RTSCHEDD_TEST_HOLD_LOCKS");
	static char fill[65536];
	int fd, saved;

	if (!path || (fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	/* the pipe made as small as the kernel allows and filled, then
	 * blocking: the next write to it waits for the test to read */
	fcntl(fd, F_SETPIPE_SZ, 4096);
	memset(fill, '.', sizeof(fill));
	while (write(fd, fill, sizeof(fill)) > 0)
		;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	/* stderr's lock; malloc_stats() takes it again (it is recursive), then
	 * each arena's lock in turn and prints while it holds it: the write
	 * blocks there, inside both. Under AddressSanitizer there is no glibc
	 * arena (its malloc_stats() prints the sanitizer's statistics into the
	 * sanitizer's log): the stdio lock alone is held. */
	flockfile(stderr);
#ifndef __SANITIZE_ADDRESS__
	malloc_stats();
#endif
	fwrite(fill, 1, 8192, stderr);
	funlockfile(stderr);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
}
