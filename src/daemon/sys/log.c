/* log.c: stderr logging with journald priority prefixes (see log.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/sys/log.h"
#include "shared/escape.h"

static const char *log_progname = "rtschedd";
static int log_threshold = LOG_LEVEL_INFO;
static int log_journal;

static const char *const level_names[] = {
	[LOG_LEVEL_ERR] = "err",
	[LOG_LEVEL_WARNING] = "warning",
	[LOG_LEVEL_NOTICE] = "notice",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

/* journald sets JOURNAL_STREAM for services whose stderr it reads. */
void log_init(const char *progname, int level)
{
	if (progname)
		log_progname = progname;
	log_threshold = level;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_set_level(int level)
{
	log_threshold = level;
}

bool log_enabled(int level)
{
	return level <= log_threshold;
}

int log_level_from_string(const char *s)
{
	for (int i = LOG_LEVEL_ERR; i <= LOG_LEVEL_DEBUG; i++)
		if (strcasecmp(s, level_names[i]) == 0)
			return i;
	if (strcasecmp(s, "error") == 0)
		return LOG_LEVEL_ERR;
	if (strcasecmp(s, "warn") == 0)
		return LOG_LEVEL_WARNING;
	return -EINVAL;
}

const char *log_level_to_string(int level)
{
	if (level < LOG_LEVEL_ERR || level > LOG_LEVEL_DEBUG)
		return "?";
	return level_names[level];
}

/* One line, written with a single fprintf so concurrent lines don't interleave. */
__attribute__((format(printf, 3, 0)))
static void log_vemit(int level, int err, const char *fmt, va_list ap)
{
	char raw[1024], msg[4096];
	int saved = errno;

	if (level > log_threshold) {
		errno = saved;
		return;
	}
	/* a request or a thread name carries what a client chose: a newline
	 * or an escape would let it forge a line ("<0>..." under journald) or
	 * drive the terminal */
	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape_text(msg, sizeof(msg), raw);
	if (log_journal)
		fprintf(stderr, "<%d>%s%s%s\n", level, msg, err ? ": " : "",
			err ? strerror(err) : "");
	else
		fprintf(stderr, "%s: %s%s%s%s%s\n", log_progname,
			level <= LOG_LEVEL_WARNING ? level_names[level] : "",
			level <= LOG_LEVEL_WARNING ? ": " : "", msg,
			err ? ": " : "", err ? strerror(err) : "");
	errno = saved;
}

#define LOG_BODY(level, err)                 \
	do {                                 \
		va_list ap;                  \
		va_start(ap, fmt);           \
		log_vemit(level, err, fmt, ap); \
		va_end(ap);                  \
	} while (0)

void log_debug(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_DEBUG, 0); }
void log_info(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_INFO, 0); }
void log_notice(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_NOTICE, 0); }
void log_warnx(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_WARNING, 0); }
void log_err(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_ERR, 0); }

void log_warn(const char *fmt, ...)
{
	int err = errno;
	LOG_BODY(LOG_LEVEL_WARNING, err);
}

void log_errno(int level, int err, const char *fmt, ...)
{
	LOG_BODY(level, err < 0 ? -err : err);
}

