/* fuzz-config.c: libFuzzer target for the config reader and validator
 * (config_load() and config_validate() in config.h; config_match() in match.h).
 *
 * config_load() reads a path and the *.conf drop-ins beside it, so the input
 * is cut at each "%%\n" into the main file and up to two drop-ins, written
 * to a private directory (made once) as rtschedd.conf, rtschedd.d/10-a.conf
 * and rtschedd.d/20-b.conf. A config that loads is validated, printed and
 * matched against a thread; every error line must name one of the files, as
 * the "file:line: key: message" promise says, and the printed configuration
 * must read back as a valid one, as rtschedd.conf(5) promises. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/config/config.h"
#include "daemon/core/match.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-config: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                       \
			abort();                                                  \
		}                                                                 \
	} while (0)

#define SEPARATOR "%%\n"
#define N_FILES 3

static char dir[PATH_MAX];
static char paths[N_FILES][PATH_MAX + 32];
static char printed[PATH_MAX + 32];   /* config_print()'s output, read back */

/* Remove the private directory when libFuzzer exits normally. */
static void cleanup(void)
{
	for (int i = 0; i < N_FILES; i++)
		unlink(paths[i]);
	unlink(printed);
	strcat(dir, "/rtschedd.d");
	rmdir(dir);
	dir[strlen(dir) - strlen("/rtschedd.d")] = '\0';
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char d[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/fuzz-config.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(d, sizeof(d), "%s/rtschedd.d", dir);
	CHECK(mkdir(d, 0700) == 0);
	snprintf(paths[0], sizeof(paths[0]), "%s/rtschedd.conf", dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/rtschedd.d/10-a.conf", dir);
	snprintf(paths[2], sizeof(paths[2]), "%s/rtschedd.d/20-b.conf", dir);
	snprintf(printed, sizeof(printed), "%s/printed", dir);
	atexit(cleanup);
	/* config_load() logs nothing itself; keep whatever else quiet */
	log_init("fuzz-config", LOG_LEVEL_ERR);
	return 0;
}

/* Write piece i of the input, or remove its file when there is none. */
static void put_file(int i, const uint8_t *p, size_t n, bool present)
{
	FILE *f;

	if (!present) {
		CHECK(unlink(paths[i]) == 0 || errno == ENOENT);
		return;
	}
	f = fopen(paths[i], "we");
	CHECK(f != NULL);
	CHECK(fwrite(p, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

/* Each line of an error text must start with the private directory. */
static void check_errors(const char *text, size_t len)
{
	size_t dlen = strlen(dir);

	for (const char *l = text; l < text + len;) {
		const char *nl = memchr(l, '\n', (size_t)(text + len - l));

		if (strncmp(l, dir, dlen) != 0) {
			fprintf(stderr, "fuzz-config: error line without a file name: %.*s\n",
				(int)(nl ? nl - l : text + len - l), l);
			abort();
		}
		if (!nl)
			break;
		l = nl + 1;
	}
}

/* rtschedd.conf(5): "the output reads back as a configuration file". It
 * has no drop-in directory beside it, so it is read alone. */
static void check_printed(const char *text, size_t len)
{
	struct config *again = NULL;
	char *err = NULL;
	size_t elen = 0;
	FILE *f = fopen(printed, "we"), *errors;
	int r;

	CHECK(f != NULL);
	CHECK(fwrite(text, 1, len, f) == len);
	CHECK(fclose(f) == 0);
	struct config_report rep = { 0 };
	r = config_load(printed, true, &again, &rep);
	if (r == 0)
		r = config_validate(again, &rep);
	errors = open_memstream(&err, &elen);
	CHECK(errors != NULL);
	config_report_print(&rep, errors);
	config_report_free(&rep);
	CHECK(fclose(errors) == 0);
	if (r != 0) {
		fprintf(stderr, "fuzz-config: the printed configuration does not read back:\n%s\n--- printed:\n%s",
			err, text);
		abort();
	}
	free(err);
	config_free(again);
}

/* What the daemon does with a valid config: print it, look rules up, match. */
static void use_config(const struct config *c)
{
	static const gid_t groups[] = { 29, 100 };
	const struct match_subject s = {
		.thread_name = "rt-demo-audio",
		.process_name = "pipewire",
		.exe = "/usr/bin/pipewire",
		.unit = "pipewire.service",
		.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/pipewire.service",
		.uid = 1000,
		.gid = 1000,
		.groups = groups,
		.n_groups = 2,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	config_print(c, f);
	CHECK(fclose(f) == 0);
	CHECK(strlen(text) == len);
	check_printed(text, len);
	free(text);
	for (size_t i = 0; i < c->n_rules; i++)
		CHECK(config_find_rule(c, c->rules[i].name) != NULL);
	for (size_t i = 0; i < c->n_principals; i++)
		CHECK(config_find_principal(c, c->principals[i].name, c->principals[i].is_group) != NULL);
	(void)config_match(c, &s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct config_report rep = { 0 };
	struct config *c = NULL;
	char *err = NULL;
	size_t elen = 0;
	FILE *errors;
	int r;

	for (int i = 0; i < N_FILES; i++) {
		const uint8_t *sep = p ? memmem(p, (size_t)(end - p), SEPARATOR, strlen(SEPARATOR)) : NULL;
		size_t n = p ? (size_t)((sep ? sep : end) - p) : 0;

		put_file(i, p, n, p != NULL);
		p = sep ? sep + strlen(SEPARATOR) : NULL;
	}

	r = config_load(paths[0], true, &c, &rep);
	CHECK(r == 0 || r == -EINVAL);
	CHECK(r == 0 ? c != NULL : c == NULL);
	if (r == 0) {
		r = config_validate(c, &rep);
		CHECK(r == 0 || r == -EINVAL);
		if (r == 0)
			use_config(c);
	}
	errors = open_memstream(&err, &elen);
	CHECK(errors != NULL);
	config_report_print(&rep, errors);
	CHECK(fclose(errors) == 0);
	/* validation messages may name "built-in default" instead of a file */
	if (!c)
		check_errors(err, elen);
	/* a valid configuration has warnings at most (a pattern the kernel's
	 * 15-character names cut, say); an invalid one at least one error,
	 * told by its severity, never by its text */
	CHECK(r == 0 ? rep.errors == 0 && !rep.oom : rep.errors > 0 || rep.oom);
	config_report_free(&rep);
	free(err);
	config_free(c);
	return 0;
}
