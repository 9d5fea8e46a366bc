/* metrics.c: the metrics file and STATUS= (see metrics.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"
#include "daemon/metrics.h"
#include "daemon/observe/jitter.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"
#include "daemon/sys/safefile.h"
#include "daemon/watchdog/safety.h"
#include "shared/escape.h"

void metrics_init(struct metrics *m)
{
	m->worst_p99_ns = -1;
	m->worst_who[0] = '\0';
}

void metrics_sample(struct metrics *m, const struct service *s)
{
	m->worst_p99_ns = jitter_worst_p99(s->jitter, m->worst_who, sizeof(m->worst_who));
}

/* STATUS= for systemctl status: what is managed and the worst p99 seen,
 * with its source's name, which a thread chose: escaped, or a newline in it
 * would be an assignment of its own (STOPPING=1) to systemd. */
void metrics_notify_status(const struct metrics *m, const struct service *s)
{
	size_t n = registry_n_threads(s->registry);
	char who[4 * sizeof(m->worst_who)];

	if (m->worst_p99_ns >= 0)
		sd_notifyf(0, "STATUS=%zu thread%s managed, worst p99 %.1f us (%s)", n, n == 1 ? "" : "s",
			   m->worst_p99_ns / 1000.0, escape_text(who, sizeof(who), m->worst_who));
	else
		sd_notifyf(0, "STATUS=%zu thread%s managed", n, n == 1 ? "" : "s");
}

/* The watchdog's trips, -1 when it is off. */
static long watchdog_trips(const struct service *s)
{
	struct safety_status ss;

	if (!s->safety)
		return -1;
	safety_get_status(s->safety, &ss);
	return (long)ss.trips;
}

/* Write the Prometheus file atomically: a new file under a random name
 * (O_EXCL, O_NOFOLLOW: the textfile directory is often group-writable, and a
 * name planted there must never be followed), then renamed over the old. */
void metrics_write_file(const struct service *s)
{
	const char *path = s->config->metrics_file;
	char base[256], tmp[300], why[512];
	int dirfd, fd, r;
	FILE *f;

	if (!path[0])
		return;
	dirfd = safefile_dir(path, false, false, base, sizeof(base), why, sizeof(why));
	if (dirfd < 0) {
		log_errno(LOG_LEVEL_WARNING, dirfd, "metrics-file %s", why[0] ? why : path);
		return;
	}
	/* node_exporter reads it as another user: 0644 whatever the umask
	 * (rtschedd.service has UMask=0077) */
	fd = safefile_create_tmp(dirfd, base, 0644, tmp, sizeof(tmp));
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		log_errno(LOG_LEVEL_WARNING, fd < 0 ? fd : -errno, "metrics-file %s: a new file beside it", path);
		if (fd >= 0) {
			close(fd);
			unlinkat(dirfd, tmp, 0);
		}
		close(dirfd);
		return;
	}
	r = jitter_prometheus(s->jitter, f, &(struct jitter_counters){
		.grants = s->grants, .refusals = s->refusals, .watchdog_trips = watchdog_trips(s),
		.interval_s = s->config->metrics_interval_s, .timestamp = true });
	if (fclose(f) != 0 || r < 0) {
		log_warn("metrics-file %s", path);
		unlinkat(dirfd, tmp, 0);
	} else if ((r = safefile_commit(dirfd, tmp, base)) < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "metrics-file %s", path);
	}
	close(dirfd);
}
