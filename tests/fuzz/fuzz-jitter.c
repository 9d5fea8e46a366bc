/* fuzz-jitter.c: libFuzzer target for the daemon's side of jitter-attach
 * (jitter.h): a worker hands rtschedd a sealed memfd holding its struct hist
 * and keeps writing it, so everything the daemon reads there is the
 * client's. This target does what the daemon does with such a memfd:
 * jitter_attach(), a reset (a baseline snapshot), then the rows of
 * `rtschedctl jitter`, the Prometheus text and the worst p99 for STATUS=.
 *
 * The input is two histogram images in fuzz-hist.c's compact form (88
 * bytes of header and totals; a count n; n x (u16 bucket index, u64
 * count)): the baseline, in the memfd at reset, then the live histogram,
 * written over it afterwards as the worker would. The source is attached to
 * this process's own thread and dropped again after every input. What
 * jitter reads (an event loop, an empty registry; no probes, no BPF
 * observer) is built once. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shared/hist.h"
#include "daemon/sys/log.h"
#include "daemon/observe/jitter.h"
#include "daemon/core/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "fuzz-jitter: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                       \
			abort();                                                  \
		}                                                                 \
	} while (0)

#define HEAD offsetof(struct hist, bucket)

static struct {
	sd_event *event;
	struct registry *registry;
	struct jitter *jitter;
} d;
static pid_t tid;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init("fuzz-jitter", LOG_LEVEL_ERR);
	CHECK(sd_event_new(&d.event) >= 0);
	CHECK(registry_new(&d.registry, d.event) == 0);
	CHECK(jitter_new(&d.jitter, d.registry) == 0);
	tid = (pid_t)syscall(SYS_gettid);
	return 0;
}

/* Fill *h from the input at *p (advancing it); zeros where the input ends. */
static void decode(struct hist *h, const uint8_t **p, const uint8_t *end)
{
	size_t n;

	memset(h, 0, sizeof(*h));
	n = (size_t)(end - *p) < HEAD ? (size_t)(end - *p) : HEAD;
	memcpy(h, *p, n);
	*p += n;
	if (*p >= end)
		return;
	n = *(*p)++;
	for (size_t i = 0; i < n && end - *p >= 10; i++, *p += 10) {
		uint16_t idx;
		uint64_t cnt;

		memcpy(&idx, *p, sizeof(idx));
		memcpy(&cnt, *p + 2, sizeof(cnt));
		h->bucket[idx % HIST_NBUCKETS] = cnt;
	}
}

static void on_row(void *ud, const struct jitter_row *r)
{
	CHECK(memchr(r->name, '\0', sizeof(r->name)) && memchr(r->rule, '\0', sizeof(r->rule)));
	CHECK(memchr(r->strategy, '\0', sizeof(r->strategy)) != NULL);
	++*(unsigned *)ud;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hist live, base;
	const uint8_t *p = data, *end = data + size;
	char msg[512], who[64];
	char *text = NULL;
	size_t len = 0;
	unsigned rows = 0;
	FILE *f;
	int fd, e;

	decode(&base, &p, end);
	decode(&live, &p, end);

	/* what rtsched_timer_attach() sends: a memfd of one struct hist, sealed against resizing */
	fd = memfd_create("fuzz-jitter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, sizeof(struct hist)) == 0);
	CHECK(pwrite(fd, &base, sizeof(base), 0) == (ssize_t)sizeof(base));
	CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
	/* kept to write the live image later, as the worker keeps writing */
	int wfd = dup(fd);
	CHECK(wfd >= 0);

	e = jitter_attach(d.jitter, tid, getpid(), 65534, JITTER_SOURCES_MAX, 1000000, "sleep", &fd, msg,
			  sizeof(msg));
	if (fd >= 0)   /* refused: still the caller's */
		close(fd);
	/* 0, a refusal or -errno, never anything else; a message when not 0 */
	CHECK(e == 0 || ((e < 0 || (e > 0 && e < REFUSE__MAX)) && strlen(msg) < sizeof(msg)));
	if (e == 0) {
		jitter_reset(d.jitter);
		CHECK(pwrite(wfd, &live, sizeof(live), 0) == (ssize_t)sizeof(live));
		jitter_foreach(d.jitter, on_row, &rows);
		CHECK(rows >= 1);
		f = open_memstream(&text, &len);
		CHECK(f != NULL);
		CHECK(jitter_prometheus(d.jitter, f, &(struct jitter_counters){ .watchdog_trips = -1 }) == 0);
		CHECK(fclose(f) == 0);
		CHECK(strlen(text) == len);
		free(text);
		(void)jitter_worst_p99(d.jitter, who, sizeof(who));
		jitter_on_exit(d.jitter, tid);
	}
	CHECK(jitter_n_sources(d.jitter) == 0);
	close(wfd);
	return 0;
}
