/* fuzz-request.c: libFuzzer target for the whole request path,
 * dispatch_request() (dispatch.h): parsing, authorization, rate limits, grant
 * resolution and checks, the registry, and every reply.
 *
 * What requests act on (struct service) is built once: two fixed
 * configurations (written to a private directory and loaded with
 * config_load(), like the daemon's), an sd_event loop, and the hooks into
 * the daemon answered here (no peer may reload, so one that gets that far
 * stops the run; a change is ignored; status has nothing to say of a
 * socket, connector or bus); no control socket, connector, state journal or
 * safety watchdog. The input is one
 * request per line ("\n" can never be part of a request: the wire takes
 * printable ASCII only); the value "self" of any field becomes the pid the
 * pass below gives it. Every input is run twice, each time with a fresh
 * registry, rate limiter and jitter sources (no probes):
 *
 *  1. from a dead peer: uid 65534 and the pid and pidfd of a child that was
 *     reaped at start-up ("self" is that pid). Nothing may succeed that
 *     changes state: an OK to register, unregister or reload, or any call
 *     that would write a thread's scheduling, stops the run.
 *  2. from this process as a peer with uid 65534 ("self" is our pid), so
 *     registrations of our own threads get through the ownership check and
 *     exercise grant and registry code; this config also caps real-time
 *     priorities by a limits.conf of its own (rtprio-cap = limits-conf).
 *
 * No thread's scheduling is ever changed: the fuzz program is linked with
 * -Wl,--wrap=task_sched_write, through which every request writes
 * scheduling (sched_setattr, sched_setaffinity), and the wrapper below
 * writes nothing. (The safety watchdog writes on its own, and is not
 * started here.)
 * It also checks the ownership rule where it matters, at the kernel
 * boundary: in pass 2 every thread written must belong to this process.
 * Start-up refuses to run if the wrap is missing. */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "shared/protocol.h"
#include "daemon/config/config.h"
#include "daemon/core/grant.h"
#include "daemon/observe/jitter.h"
#include "daemon/sys/proc.h"
#include "daemon/core/registry.h"
#include "daemon/dispatch.h"
#include "daemon/service.h"
#include "daemon/core/task.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int __wrap_task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what);

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "fuzz-request: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                        \
			abort();                                                   \
		}                                                                  \
	} while (0)

#define NOBODY 65534

/* Roles of every policy, per-user limits and a group, as a site would have. */
static const char config_text[] =
	"[daemon]\n"
	"socket = /run/rtschedd-fuzz/control\n"
	"policy = fifo\n"
	"priority = 10\n"
	"max-priority = 80\n"
	"log-level = err\n"
	"rate-limit = 1000000\n"
	"rate-burst = 1000000\n"
	"process-events = no\n"
	"[rule audio]\npolicy = fifo\npriority = 50\n"
	"[rule video]\npolicy = rr\npriority = 40\ncpus = 0\n"
	"[rule background]\npolicy = batch\nnice = 10\n"
	"[rule idle]\npolicy = idle\n"
	"[rule demo-match]\nthread-name = rt-demo-*\npolicy = fifo\npriority = 20\n"
	"[user *]\nmax-priority = 60\npolicies = fifo,rr,other,batch,idle\nmax-threads = 4\ncpus = 0\n"
	"[group nogroup]\nmax-priority = 70\nmax-threads = 8\n";
/* Pass 2 also caps real-time priorities by limits.conf, clamping (a drop-in
 * of the above; the %s are the private directory). */
static const char dropin_text[] =
	"[daemon]\n"
	"rtprio-cap = limits-conf\n"
	"over-cap = clamp\n"
	"limits-conf = %s/limits.conf\n"
	"limits-dir = %s/limits.d\n";
static const char limits_text[] =
	"nobody soft rtprio 15\n"
	"nobody hard rtprio 30\n"
	"@nogroup - nice -5\n";

static char dir[PATH_MAX];
static char paths[5][PATH_MAX + 32];   /* conf, conf.d, its drop-in, limits.conf, limits.d */
static struct service d;
static sd_event *event;
static uint64_t start_usec;
static struct config *config_plain, *config_capped;
static struct peer dead, self;

static bool writes_allowed;     /* pass 2 only */
static unsigned long writes;
static bool changes_state;      /* the request being handled is register, unregister or reload */
static bool probing;            /* start-up: is the wrapper linked in? */
#define PROBE_ANSWER 0x5eed

/* True if tid is one of this process's threads. */
static bool own_thread(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	return access(path, F_OK) == 0;
}

/* The only writer of scheduling, replaced: a kernel that accepts and keeps
 * nothing. The reads (task_sched_read) stay real and harmless. */
int __wrap_task_sched_write(pid_t tid, const struct task_sched *s, bool set_cpus, const char **what)
{
	if (probing)
		return PROBE_ANSWER;
	if (!writes_allowed) {
		fprintf(stderr, "fuzz-request: a request from a dead, unprivileged peer reached "
			"task_sched_write(tid %d)\n", (int)tid);
		abort();
	}
	if (!own_thread(tid)) {
		fprintf(stderr, "fuzz-request: an unprivileged peer got task_sched_write() on tid %d, "
			"which is not one of its threads\n", (int)tid);
		abort();
	}
	writes++;
	return 0;
}

/* service_hooks: what only the daemon does. Only root and admin-group may
 * reload, and neither peer is either: a reload reaching here is a bug. */
static int hook_reload(void *ud, char *err, size_t len)
{
	fprintf(stderr, "fuzz-request: a reload got past the admin check\n");
	abort();
}

static void hook_changed(void *ud)
{
}

static void hook_status(void *ud, struct service_status *st)
{
	st->start_usec = start_usec;
	st->config_path = paths[0];
	st->procev_error = -ENOTSUP;
	st->rtkit_state = "off";
}

static const struct service_hooks hooks = { .reload = hook_reload, .changed = hook_changed,
					    .status = hook_status };

/* Remove the private directory when libFuzzer exits normally. */
static void cleanup(void)
{
	unlink(paths[2]);
	unlink(paths[3]);
	rmdir(paths[1]);
	rmdir(paths[4]);
	unlink(paths[0]);
	rmdir(dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	CHECK(f != NULL);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

/* Load and validate the config at paths[0] with its drop-ins, as the daemon does. */
static struct config *load(void)
{
	struct config *c = NULL;

	struct config_report rep = { 0 };

	CHECK(config_load(paths[0], true, &c, &rep) == 0);
	CHECK(config_validate(c, &rep) == 0);
	config_report_free(&rep);
	return c;
}

/* pid and pidfd of a process that is gone: a child, reaped. */
static void make_dead_peer(struct peer *p)
{
	pid_t c = fork();

	CHECK(c >= 0);
	if (c == 0)
		_exit(0);
	p->pidfd = (int)syscall(SYS_pidfd_open, c, 0);
	CHECK(waitpid(c, NULL, 0) == c);
	p->pid = c;
	p->uid = NOBODY;
	p->gid = NOBODY;
	p->account = NOBODY;
	/* without pidfds the ownership check has only the pid; keep going */
	if (p->pidfd >= 0)
		CHECK(syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) < 0 && errno == ESRCH);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char dropin[sizeof(dropin_text) + 2 * PATH_MAX];
	struct timespec ts;

	/* Linked without -Wl,--wrap=task_sched_write, requests could change
	 * real threads. Ask: tid -1 is harmless to the real one (EINVAL or
	 * ESRCH) and the wrapper answers the probe with a number of its own. */
	struct task_sched probe_s = { .policy = SCHED_OTHER };
	const char *what = "";

	probing = true;
	if (task_sched_write(-1, &probe_s, false, &what) != PROBE_ANSWER) {
		fprintf(stderr, "fuzz-request: not linked with -Wl,--wrap=task_sched_write; refusing to run\n");
		abort();
	}
	probing = false;
	log_init("fuzz-request", LOG_LEVEL_ERR);

	snprintf(dir, sizeof(dir), "%s/fuzz-request.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(paths[0], sizeof(paths[0]), "%s/rtschedd.conf", dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/rtschedd.d", dir);
	snprintf(paths[2], sizeof(paths[2]), "%s/rtschedd.d/50-cap.conf", dir);
	snprintf(paths[3], sizeof(paths[3]), "%s/limits.conf", dir);
	snprintf(paths[4], sizeof(paths[4]), "%s/limits.d", dir);
	atexit(cleanup);
	CHECK(mkdir(paths[1], 0700) == 0 && mkdir(paths[4], 0700) == 0);
	write_file(paths[0], config_text);
	write_file(paths[3], limits_text);
	config_plain = load();
	snprintf(dropin, sizeof(dropin), dropin_text, dir, dir);
	write_file(paths[2], dropin);
	config_capped = load();
	/* config_load() set it from log-level; whatever it said, stay quiet */
	log_set_level(LOG_LEVEL_ERR);

	d.hooks = &hooks;
	CHECK(sd_event_new(&event) >= 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start_usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;

	make_dead_peer(&dead);
	self.pid = getpid();
	self.uid = NOBODY;
	self.account = NOBODY;
	self.gid = NOBODY;
	self.pidfd = (int)syscall(SYS_pidfd_open, self.pid, 0);
	return 0;
}

/* Every reply is one well-formed message; nothing that changes state
 * succeeds for the dead peer. */
static void on_reply(void *ud, const char *msg, size_t len)
{
	static struct proto_msg m;
	const struct peer *p = ud;

	CHECK(len <= PROTO_MSG_MAX);
	for (size_t i = 0; i < len; i++)
		CHECK(msg[i] >= 0x20 && msg[i] <= 0x7e);
	CHECK(proto_parse_reply(&m, msg, len) == 0);
	CHECK(strcmp(m.head, "OK") == 0 || strcmp(m.head, "ERR") == 0 || strcmp(m.head, "ROW") == 0);
	if (p == &dead && changes_state && strcmp(m.head, "OK") == 0) {
		fprintf(stderr, "fuzz-request: a dead, unprivileged peer got: %.*s\n", (int)len, msg);
		abort();
	}
}

/* The line with each "=self" value replaced by "=<pid>". */
static size_t substitute(const uint8_t *line, size_t n, pid_t pid, char *out, size_t cap)
{
	char num[16];
	size_t o = 0, k = (size_t)snprintf(num, sizeof(num), "=%d", (int)pid);

	for (size_t i = 0; i < n && o < cap;) {
		if (n - i >= 5 && memcmp(line + i, "=self", 5) == 0 && (n - i == 5 || line[i + 5] == ' ') &&
		    o + k <= cap) {
			memcpy(out + o, num, k);
			o += k;
			i += 5;
		} else {
			out[o++] = (char)line[i++];
		}
	}
	return o;
}

/* Whether a request asks for a change of state, by the same parser. */
static bool is_state_change(const char *req, size_t len)
{
	static struct proto_msg m;
	const char *op;

	if (proto_parse_request(&m, req, len) < 0 || !(op = proto_get(&m, "op")))
		return false;
	return strcmp(op, "register") == 0 || strcmp(op, "unregister") == 0 || strcmp(op, "reload") == 0;
}

/* Run every line of the input from one peer under one config, with a
 * fresh registry. */
static void run_pass(const uint8_t *data, size_t size, struct peer *p, struct config *c)
{
	static char req[2 * PROTO_MSG_MAX + 64];
	const uint8_t *end = data + size;

	d.config = c;
	CHECK(registry_new(&d.registry, event) == 0);
	CHECK(ratelimit_new(&d.ratelimit) == 0);
	CHECK(ratelimit_new(&d.free_ratelimit) == 0);
	CHECK(jitter_new(&d.jitter, d.registry) == 0);
	for (const uint8_t *l = data; l < end;) {
		const uint8_t *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = (size_t)((nl ? nl : end) - l);
		size_t len = substitute(l, n, p->pid, req, sizeof(req));

		changes_state = is_state_change(req, len);
		int nofd = -1;
		dispatch_request(&d, p, req, len, &nofd, on_reply, p);
		l = nl ? nl + 1 : end;
	}
	if (p == &dead)
		CHECK(registry_n_threads(d.registry) == 0 && registry_n_processes(d.registry) == 0);
	/* the daemon's own teardown: every managed thread is restored */
	jitter_free(d.jitter);
	registry_free(d.registry, true);
	ratelimit_free(d.ratelimit);
	ratelimit_free(d.free_ratelimit);
	d.jitter = NULL;
	d.registry = NULL;
	d.ratelimit = NULL;
	d.free_ratelimit = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a hundred requests say as much as a thousand, faster */
	if (size > 16 * PROTO_MSG_MAX)
		return 0;
	writes_allowed = false;
	run_pass(data, size, &dead, config_plain);
	writes_allowed = true;
	run_pass(data, size, &self, config_capped);
	writes_allowed = false;
	return 0;
}
