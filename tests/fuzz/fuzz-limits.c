/* fuzz-limits.c: libFuzzer target for the limits.conf reader (limits.h).
 *
 * The first input byte picks the user and the item asked about; the rest is
 * cut at each "%%\n" into limits.conf and two limits.d drop-ins (10-a.conf
 * and 9-b.conf, so the C-order sort matters), written to a private
 * directory made once. The answer must be well formed: a value is unset,
 * unlimited or >= 0, a set value names its file and line, an exemption
 * leaves both halves unset, and each warning names a file that was read. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/limits.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-limits: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                       \
			abort();                                                  \
		}                                                                 \
	} while (0)

#define SEPARATOR "%%\n"
#define N_FILES 3

static char dir[PATH_MAX];
static char ddir[PATH_MAX + 16];
static char paths[N_FILES][PATH_MAX + 32];

/* Who asks: root (Debian skips @, % and * lines for uid 0), a user with
 * supplementary groups, and nobody. */
static const gid_t alice_groups[] = { 1000, 4, 29, 100 };
static const struct limits_who whos[] = {
	{ .user = "root", .uid = 0, .gid = 0 },
	{ .user = "alice", .uid = 1000, .gid = 1000, .groups = alice_groups, .ngroups = 4 },
	{ .user = "nobody", .uid = 65534, .gid = 65534 },
};
/* Every rlimit item, then two that limits_lookup() refuses. */
static const char *const items[] = {
	"rtprio", "nice", "nofile", "cpu", "memlock", "nproc", "core", "stack", "data",
	"fsize", "rss", "as", "locks", "sigpending", "msgqueue", "rttime", "maxlogins",
};
#define N_ITEMS (sizeof(items) / sizeof(items[0]))
#define N_RLIMITS (N_ITEMS - 2)

/* Remove the private directory when libFuzzer exits normally. */
static void cleanup(void)
{
	for (int i = 0; i < N_FILES; i++)
		unlink(paths[i]);
	rmdir(ddir);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fuzz-limits.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(ddir, sizeof(ddir), "%s/limits.d", dir);
	CHECK(mkdir(ddir, 0700) == 0);
	snprintf(paths[0], sizeof(paths[0]), "%s/limits.conf", dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/10-a.conf", ddir);
	snprintf(paths[2], sizeof(paths[2]), "%s/9-b.conf", ddir);
	atexit(cleanup);
	return 0;
}

/* Write piece i of the input (an empty file when there is none: pam_limits
 * fails a session whose limits.conf is missing, which is no parsing). */
static void put_file(int i, const uint8_t *p, size_t n)
{
	FILE *f = fopen(paths[i], "we");

	CHECK(f != NULL);
	CHECK(fwrite(p, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

static bool is_input_file(const char *file)
{
	for (int i = 0; i < N_FILES; i++)
		if (strcmp(file, paths[i]) == 0)
			return true;
	return false;
}

/* A warning names a file that was read (or the directory) and a sane line. */
static void on_warn(void *userdata, const char *file, unsigned line, const char *msg)
{
	CHECK(file && (is_input_file(file) || strcmp(file, ddir) == 0));
	CHECK(msg && strlen(msg) < 4096);
	CHECK(line <= *(size_t *)userdata + 1);
}

static void check_entry(const struct limits_entry *e, unsigned max_line)
{
	CHECK(e->value == LIMITS_UNSET || e->value == LIMITS_UNLIMITED || e->value >= 0);
	CHECK(memchr(e->file, '\0', sizeof(e->file)) != NULL);
	if (e->value == LIMITS_UNSET) {
		CHECK(e->file[0] == '\0' && e->line == 0);
	} else {
		CHECK(is_input_file(e->file));
		CHECK(e->line >= 1 && e->line <= max_line + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct limits_who *who;
	struct limits_answer a;
	const uint8_t *p, *end = data + size;
	const char *item;
	size_t lines = 0;
	int r;

	if (size < 1)
		return 0;
	who = &whos[data[0] % 3];
	item = items[(data[0] / 3) % N_ITEMS];
	p = data + 1;
	for (const uint8_t *q = p; q < end; q++)
		lines += *q == '\n';
	for (int i = 0; i < N_FILES; i++) {
		const uint8_t *sep = p ? memmem(p, (size_t)(end - p), SEPARATOR, strlen(SEPARATOR)) : NULL;
		size_t n = p ? (size_t)((sep ? sep : end) - p) : 0;

		put_file(i, p ? p : data, n);
		p = sep ? sep + strlen(SEPARATOR) : NULL;
	}

	memset(&a, 0xa5, sizeof(a));
	r = limits_lookup_warn(paths[0], ddir, item, who, on_warn, &lines, &a);
	if ((data[0] / 3) % N_ITEMS >= N_RLIMITS) {
		CHECK(r == -EINVAL);
		return 0;
	}
	CHECK(r == 0);
	check_entry(&a.soft, (unsigned)lines);
	check_entry(&a.hard, (unsigned)lines);
	if (a.exempt) {
		CHECK(a.soft.value == LIMITS_UNSET && a.hard.value == LIMITS_UNSET);
		CHECK(is_input_file(a.exempt_file));
	}
	/* conf= on the module line: limits.d is not read */
	r = limits_lookup(paths[0], NULL, item, who, &a);
	CHECK(r == 0);
	check_entry(&a.soft, (unsigned)lines);
	check_entry(&a.hard, (unsigned)lines);
	return 0;
}
