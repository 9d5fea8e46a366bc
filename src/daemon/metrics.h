/* metrics.h: what the daemon says of itself while it runs: the Prometheus
 * text file (metrics-file, written atomically for node_exporter's textfile
 * collector) and the STATUS= line systemctl status shows. The daemon's tick
 * calls them every metrics-interval-s while there is something to report. */
#ifndef RTSCHED_METRICS_H
#define RTSCHED_METRICS_H

#include <stdint.h>

struct service;

struct metrics {
	int64_t worst_p99_ns;           /* from the last sample, -1 unknown */
	char worst_who[64];             /* its source's name (chosen by a client: escaped when said) */
};

/* Nothing sampled yet. */
void metrics_init(struct metrics *m);
/* Take the worst p99 of the jitter sources now. */
void metrics_sample(struct metrics *m, const struct service *s);
/* Write the config's metrics-file (if one is set) from the jitter sources
 * and the service's counters; a failure is logged and the old file stays. */
void metrics_write_file(const struct service *s);
/* STATUS=: how many threads are managed and the last worst p99. */
void metrics_notify_status(const struct metrics *m, const struct service *s);

#endif
