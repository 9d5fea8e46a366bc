/* log.h: the daemon's logging, in the shape of OpenNTPD's log.c.
 *
 * Lines go to stderr. Under systemd (JOURNAL_STREAM set) each line carries an
 * sd-daemon "<N>" prefix so journald keeps its priority; on a terminal the
 * level is spelled out instead. log_warn() appends strerror(errno),
 * log_warnx() does not. errno is preserved across every call. */
#ifndef RTSCHED_LOG_H
#define RTSCHED_LOG_H

#include <stdbool.h>

/* Syslog levels, as sd-daemon.h and journald number them. */
enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* Set up the prefix style and the level below which lines are dropped. */
void log_init(const char *progname, int level);
/* Change the threshold (on reload). */
void log_set_level(int level);
/* Whether a line of this level would be written now: to skip building the
 * text of one that would be dropped. */
bool log_enabled(int level);
/* Parse "err", "warning", "notice", "info", "debug"; -EINVAL otherwise. */
int log_level_from_string(const char *s);
/* Name of a level, for printing the effective configuration. */
const char *log_level_to_string(int level);

void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log with an explicit errno value (a negative one is accepted). */
void log_errno(int level, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
