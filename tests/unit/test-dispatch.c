/* test-dispatch.c: the dispatch of control requests (dispatch.h) and its op
 * table, through dispatch_request() on a struct service built here (as
 * tests/fuzz/fuzz-request.c builds one) and peers made up here, every reply
 * captured and parsed with proto_parse_reply(): the protocol version, the
 * unknown-op refusal and its list of ops, malformed targets, the admin-only
 * ops, the rate limit (and that a malformed request costs no token), a
 * descriptor sent with any op but jitter-attach, register and unregister on
 * real threads with the kernel write recorded instead of made
 * (sched-record.h), version and status. Each flag of the op table is
 * observed: OP_FD and OP_ADMIN on every op, OP_RATE on every listed one,
 * OP_UNLISTED through the list of ops, OP_TARGET, OP_SCHED and OP_SUBJECT
 * through register and unregister (without the caller's user, its own
 * thread is not its own).
 *
 * Linked with -Wl,--wrap=task_sched_write (no scheduling is ever changed)
 * and -Wl,--wrap=clock_gettime: the rate limit and status's uptime read
 * CLOCK_MONOTONIC, which the tests that look at them freeze, so no assertion
 * depends on how fast the machine is. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/dispatch.h"
#include "daemon/observe/jitter.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/protocol.h"
#include "sched-record.h"
#include "unit-util.h"

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);

/* Every op a client may name, in the table's order (jitter-attach is
 * OP_UNLISTED, librtsched's own). */
static const char *const listed[] = { "version", "status", "list", "register", "unregister",
				      "reload", "jitter", "jitter-reset", "metrics", "check" };
#define N_LISTED (sizeof(listed) / sizeof(listed[0]))
#define OPS_TEXT "version, status, list, register, unregister, reload, jitter, jitter-reset, metrics, why or check"

/* A site's configuration: one role, limits for every user, root's group as
 * admin-group, no rate limit (the rate-limit test loads its own). */
#define CONFIG_COMMON                            \
	"[daemon]\n"                             \
	"socket = /run/rtschedd-test/control\n"  \
	"policy = fifo\n"                        \
	"priority = 10\n"                        \
	"max-priority = 80\n"                    \
	"log-level = err\n"                      \
	"admin-group = root\n"                   \
	"process-events = no\n"                  \
	"rescan-interval = 2500\n"
#define CONFIG_RULES                             \
	"[rule audio]\npolicy = fifo\npriority = 50\n" \
	"[user *]\npolicies = fifo,rr,other\nmax-priority = 60\nmax-threads = 4\n"
static const char config_text[] = CONFIG_COMMON "rate-limit = 0\n" CONFIG_RULES;
static const char config_rate[] = CONFIG_COMMON "rate-limit = 1\nrate-burst = 2\n" CONFIG_RULES;
static const char config_free_rate[] = CONFIG_COMMON "free-rate-limit = 1\nfree-rate-burst = 2\n" CONFIG_RULES;

#define UPTIME_S 42

static char dir[PATH_MAX];
static sd_event *ev;
static struct service svc;
static unsigned n_reloads;

/* The peers: an ordinary user (this test's uid, or nobody when the test
 * runs as root: its threads are switched to that uid with
 * worker_start_as()), root, and a member of admin-group by its gid alone
 * (a uid no passwd entry names). All in this process. */
static struct peer user, root, admin;
static uid_t user_uid;

/* CLOCK_MONOTONIC stands still at `frozen_at` while `frozen`. */
static bool frozen;
static struct timespec frozen_at;

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (frozen && clk == CLOCK_MONOTONIC) {
		*ts = frozen_at;
		return 0;
	}
	return __real_clock_gettime(clk, ts);
}

/* Every reply of one request, as sent. */
#define REPLIES_MAX 256
static struct {
	char msg[PROTO_MSG_MAX + 1];
	size_t len;
} replies[REPLIES_MAX];
static size_t n_replies;
static char last_req[128];   /* the start of the request they answer, for failure messages */

static void on_reply(void *ud, const char *msg, size_t len)
{
	ck_assert_ptr_eq(ud, replies);
	ck_assert_uint_lt(n_replies, REPLIES_MAX);
	ck_assert_uint_le(len, PROTO_MSG_MAX);
	memcpy(replies[n_replies].msg, msg, len);
	replies[n_replies].msg[len] = '\0';
	replies[n_replies].len = len;
	n_replies++;
}

/* service_hooks: a reload that always works and is counted; a change that
 * needs nothing followed; what only the daemon knows, made up for status. */
static int hook_reload(void *ud, char *err, size_t len)
{
	ck_assert_ptr_eq(ud, &svc);
	n_reloads++;
	return 0;
}

static void hook_changed(void *ud)
{
	ck_assert_ptr_eq(ud, &svc);
}

static void hook_status(void *ud, struct service_status *st)
{
	struct timespec now;

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
	st->start_usec = (uint64_t)(now.tv_sec - UPTIME_S) * 1000000u + (uint64_t)now.tv_nsec / 1000u;
	st->config_path = "/etc/rtschedd-test.conf";
	st->reloads = 7;
	st->clients = 3;
	st->scan_tasks = 123;
	st->scan_usec = 456;
	st->procev_error = -ENOTSUP;
	st->rtkit_state = "off";
}

static const struct service_hooks hooks = { .reload = hook_reload, .changed = hook_changed,
					    .status = hook_status };

static void peer_init(struct peer *p, uid_t uid, gid_t gid)
{
	memset(p, 0, sizeof(*p));
	p->pid = getpid();
	p->uid = uid;
	p->gid = gid;
	p->account = uid;
	/* pinned as the control socket pins a client; without pidfds, the pid alone */
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
}

static void setup(void)
{
	sched_record_check_wrapped();
	frozen = false;
	n_reloads = 0;
	n_replies = 0;
	unit_tmpdir(dir, "test-dispatch");
	memset(&svc, 0, sizeof(svc));
	svc.config = unit_config(dir, config_text);
	log_set_level(LOG_LEVEL_ERR);
	ck_assert_int_ge(sd_event_new(&ev), 0);
	ck_assert_int_eq(registry_new(&svc.registry, ev), 0);
	ck_assert_int_eq(ratelimit_new(&svc.ratelimit), 0);
	ck_assert_int_eq(ratelimit_new(&svc.free_ratelimit), 0);
	ck_assert_int_eq(jitter_new(&svc.jitter, svc.registry), 0);
	svc.hooks = &hooks;
	svc.ud = &svc;
	user_uid = getuid() != 0 ? getuid() : 65534;
	peer_init(&user, user_uid, getuid() != 0 ? getgid() : 65534);
	peer_init(&root, 0, 0);
	peer_init(&admin, 4242424, 0);
}

static void teardown(void)
{
	struct peer *peers[] = { &user, &root, &admin };

	frozen = false;
	jitter_free(svc.jitter);
	registry_free(svc.registry, true);
	ratelimit_free(svc.ratelimit);
	ratelimit_free(svc.free_ratelimit);
	config_free(svc.config);
	sd_event_unref(ev);
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (peers[i]->pidfd >= 0)
			close(peers[i]->pidfd);
	unit_rmdir(dir);
}

/* Load another configuration into the service. */
static void use_config(const char *text)
{
	config_free(svc.config);
	svc.config = unit_config(dir, text);
	log_set_level(LOG_LEVEL_ERR);
}

/* Whether the last request's descriptor came back (no op kept it), as the
 * control socket would then hand it to its closer. */
static bool fd_returned;

/* Send one request from p, passing fd (-1: none; one that comes back is
 * closed here, as the control socket's closer would); every reply is one
 * well-formed message; the last (the answer, after any ROWs) is returned. */
static const struct proto_msg *ask_fd(const struct peer *p, int fd, const char *req)
{
	static struct proto_msg m;

	n_replies = 0;
	snprintf(last_req, sizeof(last_req), "%s", req);
	dispatch_request(&svc, p, req, strlen(req), &fd, on_reply, replies);
	fd_returned = fd >= 0;
	if (fd >= 0)
		close(fd);
	ck_assert_msg(n_replies > 0, "no reply to '%s'", req);
	for (size_t i = 0; i < n_replies; i++) {
		ck_assert_msg(proto_parse_reply(&m, replies[i].msg, replies[i].len) == 0, "'%s' answered '%s'", req,
			      replies[i].msg);
		ck_assert_msg(i + 1 == n_replies ? strcmp(m.head, "ROW") != 0 : strcmp(m.head, "ROW") == 0,
			      "'%s': reply %zu of %zu is '%s'", req, i + 1, n_replies, replies[i].msg);
	}
	return &m;
}

static const struct proto_msg *ask(const struct peer *p, const char *req)
{
	return ask_fd(p, -1, req);
}

/* A request made of printf arguments. */
static const struct proto_msg *askf(const struct peer *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const struct proto_msg *askf(const struct peer *p, const char *fmt, ...)
{
	char req[PROTO_MSG_MAX + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	return ask(p, req);
}

/* The last answer was "ERR code message", with message starting with
 * `starts` (NULL: any). */
static void assert_err(const struct proto_msg *m, const char *code, const char *starts)
{
	const char *raw = replies[n_replies - 1].msg;
	size_t n = strlen(code);

	ck_assert_msg(strcmp(m->head, "ERR") == 0, "'%s': expected ERR %s, got '%s'", last_req, code, raw);
	ck_assert_msg(strncmp(m->rest, code, n) == 0 && m->rest[n] == ' ', "'%s': expected ERR %s, got '%s'",
		      last_req, code, raw);
	if (starts)
		ck_assert_msg(strncmp(m->rest + n + 1, starts, strlen(starts)) == 0, "'%s': expected '%s...', got '%s'",
			      last_req, starts, raw);
}

static void assert_ok(const struct proto_msg *m)
{
	ck_assert_msg(strcmp(m->head, "OK") == 0, "'%s': expected OK, got '%s'", last_req, replies[n_replies - 1].msg);
}

/* The field's value, failing if it is missing. */
static const char *field(const struct proto_msg *m, const char *key)
{
	const char *v = proto_get(m, key);

	ck_assert_msg(v != NULL, "'%s': no %s= in '%s'", last_req, key, replies[n_replies - 1].msg);
	return v;
}

/* A process of its own, alive until child_stop(): its pid. */
static pid_t child_start(int *fd)
{
	int p[2];
	pid_t c;
	char b;

	ck_assert_int_eq(pipe(p), 0);
	c = fork();
	ck_assert_int_ge(c, 0);
	if (c == 0) {
		close(p[1]);
		while (read(p[0], &b, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	*fd = p[1];
	return c;
}

static void child_stop(pid_t c, int fd)
{
	close(fd);
	ck_assert_int_eq(waitpid(c, NULL, 0), c);
}

/* The version is checked before anything else: missing, not a number, or
 * another version, and no op runs (not even reload from root). */
START_TEST(test_version)
{
	const struct proto_msg *m;

	m = ask(&root, "op=reload");
	assert_err(m, "bad-request", "no protocol version; start the request with v=1");
	m = ask(&root, "v=one op=reload");
	assert_err(m, "bad-request", "no protocol version");
	m = ask(&root, "v=2 op=reload");
	assert_err(m, "version", "protocol version 2 is not supported; this rtschedd " PACKAGE_VERSION " speaks v=1");
	m = ask(&root, "v=0 op=version");
	assert_err(m, "version", "protocol version 0 is not supported");
	ck_assert_uint_eq(n_reloads, 0);
	ck_assert_uint_eq(svc.refusals, 4);
	m = ask(&root, "v=1 op=version");
	assert_ok(m);
}
END_TEST

/* Messages the parser refuses: a byte outside printable ASCII, a field
 * without '=', too many fields, too long. */
START_TEST(test_malformed_message)
{
	char big[PROTO_MSG_MAX + 16];
	const struct proto_msg *m;
	size_t n;

	m = ask(&user, "v=1 op=version\x01");
	assert_err(m, "bad-request", "malformed request; send 'v=1 op=NAME key=value ...'");
	m = ask(&user, "v=1 op=version junk");
	assert_err(m, "bad-request", "malformed request");
	n = (size_t)snprintf(big, sizeof(big), "v=1 op=version");
	for (int i = 0; i < PROTO_FIELDS_MAX; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, " k%d=%d", i, i);
	m = ask(&user, big);
	assert_err(m, "bad-request", "more than 32 fields");
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "v=1 op=version x=", 17);
	big[PROTO_MSG_MAX + 1] = '\0';
	m = ask(&user, big);
	assert_err(m, "too-large", "request over 4096 bytes");
}
END_TEST

/* An unknown or missing op is refused with the ops a client may name, in
 * the table's order, jitter-attach left out. */
START_TEST(test_unknown_op)
{
	const struct proto_msg *m;

	m = ask(&user, "v=1 op=frobnicate");
	assert_err(m, "unknown-op", "unknown op 'frobnicate'; use " OPS_TEXT);
	ck_assert_str_eq(m->rest, "unknown-op unknown op 'frobnicate'; use " OPS_TEXT);
	m = ask(&user, "v=1");
	ck_assert_str_eq(m->rest, "unknown-op unknown op ''; use " OPS_TEXT);
	m = ask(&user, "v=1 op=Version");
	assert_err(m, "unknown-op", "unknown op 'Version'");
	/* and every op it names is one: none answers unknown-op (check with a
	 * bad pid: it answers without running the diagnosis) */
	for (size_t i = 0; i < N_LISTED; i++) {
		m = askf(&root, "v=1 op=%s%s", listed[i], strcmp(listed[i], "check") ? "" : " pid=0");
		ck_assert_msg(strcmp(m->head, "ERR") != 0 || strncmp(m->rest, "unknown-op ", 11) != 0,
			      "op %s: %s", listed[i], replies[n_replies - 1].msg);
	}
}
END_TEST

/* register and unregister name exactly one task, by a positive number; a
 * malformed target is refused before any other check, and nothing is
 * written. */
START_TEST(test_malformed_target)
{
	static const char *const ops[] = { "register", "unregister" };
	const struct proto_msg *m;

	for (size_t i = 0; i < 2; i++) {
		m = askf(&root, "v=1 op=%s tid=+1", ops[i]);
		assert_err(m, "bad-request", "tid and pid must be positive numbers");
		m = askf(&root, "v=1 op=%s tid=0", ops[i]);
		assert_err(m, "bad-request", "tid and pid must be positive numbers");
		m = askf(&root, "v=1 op=%s pid=-3", ops[i]);
		assert_err(m, "bad-request", "tid and pid must be positive numbers");
		m = askf(&root, "v=1 op=%s tid=%d pid=%d", ops[i], (int)getpid(), (int)getpid());
		assert_err(m, "bad-request", "give exactly one of tid=TID or pid=PID");
		m = askf(&root, "v=1 op=%s role=audio", ops[i]);
		assert_err(m, "bad-request", "give exactly one of tid=TID or pid=PID");
	}
	/* the scheduling fields of a register are checked as strictly */
	m = askf(&root, "v=1 op=register tid=%d priority=100", (int)getpid());
	assert_err(m, "bad-request", "priority must be a number in 0..99");
	m = askf(&root, "v=1 op=register tid=%d policy=fast", (int)getpid());
	assert_err(m, "bad-request", "unknown policy 'fast'");
	ck_assert_uint_eq(sched_record_n(), 0);
	ck_assert_uint_eq(registry_n_threads(svc.registry), 0);
}
END_TEST

/* reload and jitter-reset: root and admin-group only; every other op is
 * anyone's. */
START_TEST(test_admin_only)
{
	static const char *const admin_ops[] = { "reload", "jitter-reset" };
	static const char *const anyone[] = { "version", "status", "list", "jitter", "metrics" };
	const struct proto_msg *m;

	for (size_t i = 0; i < 2; i++) {
		m = askf(&user, "v=1 op=%s", admin_ops[i]);
		assert_err(m, "not-admin", NULL);
		ck_assert_str_eq(strchr(m->rest, ' ') + 1,
				 strcmp(admin_ops[i], "reload") == 0 ? "reload needs root or admin-group" :
				 "jitter-reset needs root or admin-group");
	}
	ck_assert_uint_eq(n_reloads, 0);
	m = ask(&root, "v=1 op=reload");
	assert_ok(m);
	ck_assert_str_eq(field(m, "threads"), "0");
	ck_assert_str_eq(field(m, "rules"), "1");
	m = ask(&admin, "v=1 op=reload");
	assert_ok(m);
	ck_assert_uint_eq(n_reloads, 2);
	m = ask(&root, "v=1 op=jitter-reset");
	assert_ok(m);
	m = ask(&admin, "v=1 op=jitter-reset");
	assert_ok(m);
	for (size_t i = 0; i < sizeof(anyone) / sizeof(anyone[0]); i++) {
		m = askf(&user, "v=1 op=%s", anyone[i]);
		ck_assert_msg(strcmp(m->head, "OK") == 0, "op %s from uid %u: %s", anyone[i], (unsigned)user_uid,
			      replies[n_replies - 1].msg);
	}
}
END_TEST

/* The free ops' own limit (free-rate-limit 1/s, burst 2, the clock
 * standing still): version, status and list share one bucket per uid,
 * the third is refused naming the key; root is not limited, another uid
 * has its own bucket, and the other ops do not take from it. */
START_TEST(test_free_rate_limit)
{
	const struct proto_msg *m;
	char want[256];

	use_config(config_free_rate);
	ck_assert_int_eq(__real_clock_gettime(CLOCK_MONOTONIC, &frozen_at), 0);
	frozen = true;
	m = ask(&user, "v=1 op=status");
	assert_ok(m);
	m = ask(&user, "v=1 op=list");
	assert_ok(m);
	m = ask(&user, "v=1 op=version");
	snprintf(want, sizeof(want), "more than 1 version/status/list requests per second (burst 2; a reply costs "
		 "one more per 10 rows) from uid %u; slow down or raise free-rate-limit in [daemon]",
		 (unsigned)user_uid);
	assert_err(m, "rate-limited", want);
	m = ask(&user, "v=1 op=metrics");
	assert_ok(m);
	for (int i = 0; i < 5; i++) {
		m = ask(&root, "v=1 op=status");
		assert_ok(m);
	}
	/* another uid, its own bucket of 2 */
	for (int i = 0; i < 3; i++) {
		m = ask(&admin, "v=1 op=list");
		if (i < 2)
			assert_ok(m);
		else
			assert_err(m, "rate-limited", NULL);
	}
}
END_TEST

/* The rate limit (1/s, burst 2, the clock standing still): a malformed
 * register costs no token, two registers are granted, the third is refused
 * with rate-limited before it writes anything; then every op that takes a
 * token is refused and none of the others is. Each uid has its own. */
START_TEST(test_rate_limit)
{
	static const char *const free_ops[] = { "version", "status", "list" };
	const struct proto_msg *m;
	struct worker wk;
	char want[256];
	size_t writes;

	use_config(config_rate);
	ck_assert_int_eq(__real_clock_gettime(CLOCK_MONOTONIC, &frozen_at), 0);
	frozen = true;
	worker_start_as(&wk, user_uid);
	for (int i = 0; i < 3; i++) {
		m = ask(&user, "v=1 op=register tid=0");
		assert_err(m, "bad-request", NULL);
		m = ask(&user, "v=1 op=register tid=1 pid=1");
		assert_err(m, "bad-request", NULL);
	}
	m = askf(&user, "v=1 op=register tid=%d role=audio", (int)wk.tid);
	assert_ok(m);
	m = askf(&user, "v=1 op=register tid=%d role=audio", (int)wk.tid);
	assert_ok(m);
	writes = sched_record_n();
	m = askf(&user, "v=1 op=register tid=%d role=audio", (int)wk.tid);
	snprintf(want, sizeof(want), "more than 1 requests per second (burst 2; a reply costs one more per 10 "
		 "rows) from uid %u; slow down or raise rate-limit in [daemon]", (unsigned)user_uid);
	assert_err(m, "rate-limited", want);
	ck_assert_uint_eq(sched_record_n(), writes);
	ck_assert_uint_eq(svc.grants, 2);

	/* the bucket is empty: what takes a token is refused, the rest answers */
	m = askf(&user, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_err(m, "rate-limited", NULL);
	ck_assert_ptr_nonnull(registry_find(svc.registry, wk.tid));
	m = ask(&user, "v=1 op=check");
	assert_err(m, "rate-limited", NULL);
	for (size_t i = 0; i < sizeof(free_ops) / sizeof(free_ops[0]); i++) {
		m = askf(&user, "v=1 op=%s", free_ops[i]);
		ck_assert_msg(strcmp(m->head, "OK") == 0, "op %s with no token left: %s", free_ops[i],
			      replies[n_replies - 1].msg);
	}
	/* reload takes one too, jitter-reset none; another uid, another bucket */
	m = ask(&admin, "v=1 op=reload");
	assert_ok(m);
	m = ask(&admin, "v=1 op=reload");
	assert_ok(m);
	m = ask(&admin, "v=1 op=reload");
	assert_err(m, "rate-limited", NULL);
	ck_assert_uint_eq(n_reloads, 2);
	m = ask(&admin, "v=1 op=jitter-reset");
	assert_ok(m);
	/* a second later, one more token */
	frozen_at.tv_sec++;
	m = askf(&user, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_ok(m);
	m = askf(&user, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_err(m, "rate-limited", NULL);
	frozen = false;
	worker_stop(&wk);
}
END_TEST

/* Only jitter-attach takes a descriptor, and keeps it only when it is a
 * sealed memfd; with any other op, a request refused before its op is
 * known, or any other descriptor, the request is refused and the
 * descriptor given back, for the control socket to close off the event
 * loop (closer.h: a client's file may block its close). */
START_TEST(test_descriptor)
{
	const struct proto_msg *m;
	char req[128], want[128];
	int fd, cfd;
	pid_t c;

	for (size_t i = 0; i < N_LISTED; i++) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		snprintf(req, sizeof(req), "v=1 op=%s%s", listed[i], strstr(listed[i], "register") ? " tid=1" : "");
		m = ask_fd(&root, fd, req);
		snprintf(want, sizeof(want), "op %s takes no file descriptor; only jitter-attach does", listed[i]);
		assert_err(m, "bad-request", want);
		ck_assert_msg(fd_returned, "op %s kept the descriptor", listed[i]);
	}
	ck_assert_uint_eq(n_reloads, 0);
	ck_assert_uint_eq(sched_record_n(), 0);

	/* refused before the op is known: closed all the same */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	m = ask_fd(&user, fd, "v=1 op=nothing");
	assert_err(m, "unknown-op", NULL);
	ck_assert(fd_returned);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	m = ask_fd(&user, fd, "v=2 op=jitter-attach");
	assert_err(m, "version", NULL);
	ck_assert(fd_returned);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	m = ask_fd(&user, fd, "v=1 op=jitter-attach\x02");
	assert_err(m, "bad-request", "malformed request");
	ck_assert(fd_returned);

	/* jitter-attach takes it past the gate to its own checks, which give
	 * it back when they refuse: a file that is no sealed memfd first */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	m = ask_fd(&user, fd, "v=1 op=jitter-attach");
	assert_err(m, "bad-request", "jitter-attach needs tid=TID period_ns=N strategy=NAME");
	ck_assert(fd_returned);
	c = child_start(&cfd);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(req, sizeof(req), "v=1 op=jitter-attach tid=%d period_ns=1000000 strategy=sleep", (int)c);
	m = ask_fd(&user, fd, req);
	assert_err(m, "bad-request", "the descriptor must be a memfd of");
	ck_assert(fd_returned);
	fd = memfd_create("hist", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_eq(ftruncate(fd, sizeof(struct hist)), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	m = ask_fd(&user, fd, req);
	snprintf(want, sizeof(want), "tid %d belongs to process %d, not to the caller", (int)c, (int)c);
	assert_err(m, "not-own-thread", want);
	ck_assert(fd_returned);
	m = ask(&user, req);
	assert_err(m, "bad-request", "jitter-attach needs the histogram memfd passed with SCM_RIGHTS");
	child_stop(c, cfd);
}
END_TEST

/* An ordinary user registers a thread of its own, running as its uid: the
 * kernel is asked for the role's policy and priority, or the ones the
 * request gives, and the thread is managed, owned by that uid. */
/* dispatch_register(), the grant path of the front ends other than the
 * control socket (rtkit, the catcher): the refusal itself comes back (not
 * 1), its wire code in out->code, and a grant leaves out->code PE_NONE; on
 * the rtkit path rtkit's RLIMIT_RTTIME contract and the watchdog's cooldown
 * are the one grant decision's (grant_decide()). The test lowers its own
 * RLIMIT_RTTIME (in the forked test only). */
START_TEST(test_dispatch_register)
{
	struct grant_request q = { .role = "audio" };
	struct frontend_grant out;
	struct rlimit old, rl;
	struct worker wk;
	char msg[768];

	worker_start_as(&wk, user_uid);
	ck_assert_int_eq(getrlimit(RLIMIT_RTTIME, &old), 0);
	if (old.rlim_max == RLIM_INFINITY || old.rlim_max > 200000) {
		/* [rtkit] rttime-usec-max is 200000 by default */
		ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_RTKIT, NULL, &out, msg,
						   sizeof(msg)), REFUSE_RTTIME_OVER_MAX);
		ck_assert_int_eq(out.code, PE_RTTIME_OVER_MAX);
		ck_assert_msg(strstr(msg, "above RTTimeUSecMax 200000 us"), "%s", msg);
		/* the control socket's path has no such contract */
		ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_THREAD, NULL, &out, msg,
						   sizeof(msg)), 0);
		registry_remove_thread(svc.registry, registry_find(svc.registry, wk.tid), true);
	}
	rl.rlim_cur = rl.rlim_max = 100000;
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &rl), 0);
	ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_RTKIT, NULL, &out, msg, sizeof(msg)), 0);
	ck_assert_int_eq(out.code, PE_NONE);
	ck_assert_int_eq(out.tid, wk.tid);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.priority, 50);   /* written (recorded) */
	/* the cooldown holds the user back: refused on this path, said so */
	ck_assert_int_eq(registry_hold(svc.registry, user.account, getpid(), NULL), 0);
	ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_RTKIT, NULL, &out, msg, sizeof(msg)),
			 REFUSE_WATCHDOG_COOLDOWN);
	ck_assert_int_eq(out.code, PE_WATCHDOG_COOLDOWN);
	ck_assert_msg(strstr(msg, "the watchdog demoted a runaway real-time thread"), "%s", msg);
	/* the catcher's path (SOURCE caught): the same decision, refused in a
	 * cooldown too (a caught call is a caller waiting for the answer) */
	ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_CAUGHT, NULL, &out, msg, sizeof(msg)),
			 REFUSE_WATCHDOG_COOLDOWN);
	registry_promote(svc.registry);
	ck_assert_int_eq(dispatch_register(&svc, &user, wk.tid, &q, REG_SOURCE_CAUGHT, NULL, &out, msg, sizeof(msg)), 0);
	ck_assert_int_eq(registry_find(svc.registry, wk.tid)->source, REG_SOURCE_CAUGHT);
	worker_stop(&wk);
}
END_TEST

START_TEST(test_register_own_thread)
{
	const struct sched_write *w;
	const struct proto_msg *m;
	struct reg_thread *t;
	struct worker wk;
	char num[16];

	worker_start_as(&wk, user_uid);
	m = askf(&user, "v=1 op=register tid=%d role=audio", (int)wk.tid);
	assert_ok(m);
	snprintf(num, sizeof(num), "%d", (int)wk.tid);
	ck_assert_str_eq(field(m, "tid"), num);
	snprintf(num, sizeof(num), "%d", (int)getpid());
	ck_assert_str_eq(field(m, "pid"), num);
	ck_assert_str_eq(field(m, "rule"), "audio");
	/* what the kernel reports after the (recorded) write */
	field(m, "policy");
	field(m, "priority");
	ck_assert_uint_eq(sched_record_count(wk.tid), 1);
	ck_assert_uint_eq(sched_record_n(), 1);
	w = sched_record_last(wk.tid);
	ck_assert_int_eq(w->s.policy, SCHED_FIFO);
	ck_assert_int_eq(w->s.priority, 50);
	t = registry_find(svc.registry, wk.tid);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->owner, user_uid);
	ck_assert_int_eq(t->pid, getpid());
	ck_assert_uint_eq(svc.grants, 1);

	/* the scheduling fields of the request, within the user's limits */
	m = askf(&user, "v=1 op=register tid=%d policy=rr priority=30", (int)wk.tid);
	assert_ok(m);
	ck_assert_str_eq(field(m, "rule"), "default");
	w = sched_record_last(wk.tid);
	ck_assert_int_eq(w->s.policy, SCHED_RR);
	ck_assert_int_eq(w->s.priority, 30);
	/* and beyond them: refused by the grant, nothing written */
	m = askf(&user, "v=1 op=register tid=%d priority=61", (int)wk.tid);
	assert_err(m, "priority-denied", NULL);
	ck_assert_uint_eq(sched_record_count(wk.tid), 2);
	ck_assert_uint_eq(registry_n_threads(svc.registry), 1);
	worker_stop(&wk);
}
END_TEST

/* Another process's thread: refused to an ordinary user (not-own-thread,
 * nothing written), granted to root. */
START_TEST(test_register_other_process)
{
	const struct proto_msg *m;
	char want[256];
	int fd;
	pid_t c = child_start(&fd);

	m = askf(&user, "v=1 op=register tid=%d", (int)c);
	snprintf(want, sizeof(want), "tid %d belongs to process %d, not to the caller (pid %d); "
		 "registering another process's threads needs root or admin-group", (int)c, (int)c, (int)getpid());
	assert_err(m, "not-own-thread", want);
	m = askf(&user, "v=1 op=register pid=%d role=audio", (int)c);
	assert_err(m, "not-own-thread", NULL);
	ck_assert_uint_eq(sched_record_n(), 0);
	ck_assert_uint_eq(registry_n_threads(svc.registry), 0);
	ck_assert_uint_eq(svc.grants, 0);

	m = askf(&root, "v=1 op=register tid=%d role=audio", (int)c);
	assert_ok(m);
	ck_assert_uint_eq(sched_record_count(c), 1);
	ck_assert_int_eq(sched_record_last(c)->s.priority, 50);
	m = askf(&root, "v=1 op=unregister tid=%d", (int)c);
	assert_ok(m);
	child_stop(c, fd);
}
END_TEST

/* unregister gives the thread back what it had: the original is written
 * back. Only its registrant (or root, admin-group) may; a thread not
 * managed is not-registered. */
START_TEST(test_unregister_restores)
{
	const struct sched_write *w;
	const struct proto_msg *m;
	struct task_sched before;
	struct peer other;
	struct worker wk;
	char num[16];

	worker_start_as(&wk, user_uid);
	ck_assert_int_eq(task_sched_read(wk.tid, &before), 0);
	m = askf(&user, "v=1 op=register tid=%d role=audio", (int)wk.tid);
	assert_ok(m);
	ck_assert_uint_eq(sched_record_count(wk.tid), 1);

	peer_init(&other, user_uid + 1, 65534);
	m = askf(&other, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_err(m, "not-own-thread", NULL);
	ck_assert_uint_eq(sched_record_count(wk.tid), 1);
	if (other.pidfd >= 0)
		close(other.pidfd);

	m = askf(&user, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_ok(m);
	snprintf(num, sizeof(num), "%d", (int)wk.tid);
	ck_assert_str_eq(field(m, "tid"), num);
	ck_assert_str_eq(field(m, "policy"), policy_to_string(before.policy));
	ck_assert_uint_eq(sched_record_count(wk.tid), 2);
	w = sched_record_last(wk.tid);
	ck_assert_int_eq(w->s.policy, before.policy);
	ck_assert_int_eq(w->s.priority, before.priority);
	ck_assert_int_eq(w->s.nice, before.nice);
	ck_assert_int_eq(w->s.reset_on_fork, before.reset_on_fork);
	ck_assert_ptr_null(registry_find(svc.registry, wk.tid));

	m = askf(&user, "v=1 op=unregister tid=%d", (int)wk.tid);
	assert_err(m, "not-registered", NULL);
	m = askf(&user, "v=1 op=unregister pid=%d", (int)getpid());
	assert_err(m, "not-registered", NULL);
	ck_assert_uint_eq(sched_record_count(wk.tid), 2);
	worker_stop(&wk);
}
END_TEST

/* version: the release and the protocol version, nothing else. */
START_TEST(test_version_op)
{
	const struct proto_msg *m = ask(&user, "v=1 op=version");

	assert_ok(m);
	ck_assert_uint_eq(n_replies, 1);
	ck_assert_str_eq(replies[0].msg, "OK version=" PACKAGE_VERSION " proto=1");
	ck_assert_uint_eq(m->n, 2);
}
END_TEST

/* Whether this kernel gives a pidfd of a thread (PIDFD_THREAD, Linux 6.9),
 * asked here rather than of the daemon's own probe: what status's
 * thread_exit must say. */
static bool kernel_pidfd_thread(void)
{
	int fd = (int)syscall(SYS_pidfd_open, gettid(), O_EXCL /* PIDFD_THREAD */);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* status: every field rtschedd-protocol(7) documents for this daemon's
 * state (no watchdog, no rtkit, no connector), each with the value the
 * service and its hooks give it. */
START_TEST(test_status)
{
	static const char *const documented[] = {
		"version", "proto", "pid", "uptime_s", "threads", "processes", "clients", "grants", "refusals",
		"reloads", "config", "config_files", "socket", "socket_activated", "default_policy",
		"default_priority", "max_priority", "thread_exit", "watchdog", "rtkit", "capabilities",
		"match_rules", "scan_tasks", "scan_us", "new_threads",
	};
	const struct proto_msg *m;
	struct worker wk;
	char num[16];

	ck_assert_int_eq(__real_clock_gettime(CLOCK_MONOTONIC, &frozen_at), 0);
	frozen = true;
	worker_start_as(&wk, user_uid);
	assert_ok(askf(&user, "v=1 op=register tid=%d", (int)wk.tid));
	assert_err(ask(&user, "v=1 op=reload"), "not-admin", NULL);

	m = ask(&user, "v=1 op=status");
	assert_ok(m);
	ck_assert_uint_eq(n_replies, 1);
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++)
		field(m, documented[i]);
	ck_assert_str_eq(field(m, "version"), PACKAGE_VERSION);
	ck_assert_str_eq(field(m, "proto"), "1");
	snprintf(num, sizeof(num), "%d", (int)getpid());
	ck_assert_str_eq(field(m, "pid"), num);
	ck_assert_str_eq(field(m, "uptime_s"), "42");
	ck_assert_str_eq(field(m, "threads"), "1");
	ck_assert_str_eq(field(m, "processes"), "0");
	ck_assert_str_eq(field(m, "clients"), "3");
	ck_assert_str_eq(field(m, "grants"), "1");
	ck_assert_str_eq(field(m, "refusals"), "1");
	ck_assert_str_eq(field(m, "reloads"), "7");
	ck_assert_str_eq(field(m, "config"), "/etc/rtschedd-test.conf");
	ck_assert_str_eq(field(m, "config_files"), "1");
	ck_assert_str_eq(field(m, "socket"), "/run/rtschedd-test/control");
	ck_assert_str_eq(field(m, "socket_activated"), "no");
	ck_assert_str_eq(field(m, "default_policy"), "fifo");
	ck_assert_str_eq(field(m, "default_priority"), "10");
	ck_assert_str_eq(field(m, "max_priority"), "80");
	ck_assert_str_eq(field(m, "thread_exit"), kernel_pidfd_thread() ? "pidfd-thread" : "connector+rescan");
	ck_assert_str_eq(field(m, "watchdog"), "off");
	ck_assert_ptr_null(proto_get(m, "watchdog_trips"));
	ck_assert_str_eq(field(m, "rtkit"), "off");
	ck_assert_ptr_null(proto_get(m, "rtkit_calls"));
	ck_assert_str_eq(field(m, "match_rules"), "0");
	ck_assert_str_eq(field(m, "scan_tasks"), "123");
	ck_assert_str_eq(field(m, "scan_us"), "456");
	ck_assert_str_eq(field(m, "new_threads"), "rescan every 2500 ms (connector off: process-events = no)");
	ck_assert_ptr_null(proto_get(m, "connector_events"));
	frozen = false;
	worker_stop(&wk);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("requests");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_malformed_message);
	tcase_add_test(tc, test_unknown_op);
	tcase_add_test(tc, test_malformed_target);
	tcase_add_test(tc, test_admin_only);
	tcase_add_test(tc, test_rate_limit);
	tcase_add_test(tc, test_free_rate_limit);
	tcase_add_test(tc, test_descriptor);
	tcase_add_test(tc, test_register_own_thread);
	tcase_add_test(tc, test_dispatch_register);
	tcase_add_test(tc, test_register_other_process);
	tcase_add_test(tc, test_unregister_restores);
	tcase_add_test(tc, test_version_op);
	tcase_add_test(tc, test_status);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
