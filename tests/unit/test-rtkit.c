/* test-rtkit.c: rtschedd's RealtimeKit1 bus service (rtkit/rtkit.c) on a
 * private dbus-daemon started by the test as its "system bus"
 * (DBUS_SYSTEM_BUS_ADDRESS), called by real bus clients (threads of the
 * test, and child processes for another pid or uid), its grant callback the
 * test's own: the caller's identity as the bus recorded it, WithPID's
 * process, rtkit's argument checks, cap and floor, its RLIMIT_RTTIME
 * contract, the D-Bus error each grant-path refusal becomes (and the message
 * naming the code and the diagnosis), the properties, the admin-only
 * methods, Exit and the name asked for again; and the cache of senders: the
 * bus is asked once per connection (sd_bus_query_sender_creds and
 * sd_bus_call_method_async's GetConnectionCredentials are wrapped to
 * count the asking), the least recently used of 64 makes room, and a sender
 * that left the bus frees its slot. Runs as any user (the calls of another
 * uid as root); skipped without dbus-daemon. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "daemon/rtkit/rtkit.h"
#include "daemon/sys/proc.h"
#include "shared/protocol.h"
#include "unit-util.h"

#define DBUS_DAEMON "/usr/bin/dbus-daemon"
#define NAME "org.freedesktop.RealtimeKit1"
#define PATH "/org/freedesktop/RealtimeKit1"

/* The bus is asked who called: counted. */
int __real_sd_bus_query_sender_creds(sd_bus_message *m, uint64_t mask, sd_bus_creds **creds);
int __wrap_sd_bus_query_sender_creds(sd_bus_message *m, uint64_t mask, sd_bus_creds **creds);
static int n_queries;

int __wrap_sd_bus_query_sender_creds(sd_bus_message *m, uint64_t mask, sd_bus_creds **creds)
{
	n_queries++;
	return __real_sd_bus_query_sender_creds(m, mask, creds);
}

/* and asked asynchronously (GetConnectionCredentials, a grant's caller):
 * counted too, the call made as libsystemd's own would make it */
int __wrap_sd_bus_call_method_async(sd_bus *bus, sd_bus_slot **slot, const char *dest, const char *path,
				    const char *iface, const char *member, sd_bus_message_handler_t cb, void *ud,
				    const char *types, ...);

int __wrap_sd_bus_call_method_async(sd_bus *bus, sd_bus_slot **slot, const char *dest, const char *path,
				    const char *iface, const char *member, sd_bus_message_handler_t cb, void *ud,
				    const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	if (member && strcmp(member, "GetConnectionCredentials") == 0)
		n_queries++;
	r = sd_bus_message_new_method_call(bus, &m, dest, path, iface, member);
	if (r >= 0 && types && *types) {
		va_start(ap, types);
		r = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	if (r >= 0)
		r = sd_bus_call_async(bus, slot, m, cb, ud, 0);
	sd_bus_message_unref(m);
	return r;
}

static char dir[PATH_MAX], address[512];
static pid_t bus_pid;
static sd_event *ev;
static struct config *c;
static struct rtkit *rk;

/* What the grant path was asked, and what it answers next. */
static struct {
	int n;
	struct peer peer;
	pid_t tid;
	struct grant_request req;
	bool has_known;             /* the service passed what it read */
	struct frontend_task known;
	uint64_t start;             /* the thread's start time then */
	bool refuse;                /* answer with this refusal, not a grant */
	int code;
	char diag[32], msg[128];
	int resets;
	bool reset_all;
	int refused;
} G;

static int on_grant(void *ud, const struct peer *p, pid_t tid, const struct grant_request *req,
		    const struct frontend_task *known, struct frontend_grant *out, char *msg, size_t len)
{
	G.n++;
	G.peer = *p;
	G.tid = tid;
	G.req = *req;
	G.has_known = known != NULL;
	if (known)
		G.known = *known;
	/* the thread's start time now (0 if there is none) */
	struct proc_stat st;
	G.start = proc_read_stat(tid, &st) == 0 ? st.starttime : 0;
	memset(out, 0, sizeof(*out));
	if (G.refuse) {
		out->code = (enum proto_error)G.code;
		snprintf(out->diag, sizeof(out->diag), "%s", G.diag);
		snprintf(msg, len, "%s", G.msg);
		return 1;
	}
	out->tid = tid;
	out->pid = p->pid;
	out->applied.policy = req->policy;
	out->applied.priority = req->priority;
	return 0;
}

static size_t on_reset(void *ud, bool all)
{
	G.resets++;
	G.reset_all = all;
	return 3;
}

static void on_refused(void *ud)
{
	G.refused++;
}

/* Root or admin-group, as the daemon answers (dispatch_privileged()). */
static bool on_privileged(void *ud, const struct peer *p)
{
	struct grant_subject s;

	grant_subject_init(&s, c, p->uid, p->gid, p->pid);
	return s.privileged;
}

static const struct rtkit_ctx *ctx(void)
{
	static struct rtkit_ctx x;

	x = (struct rtkit_ctx){ .event = ev, .grant = on_grant, .privileged = on_privileged, .reset = on_reset,
				.refused = on_refused };
	return &x;
}

/* The private bus: a dbus-daemon that lets anyone own and call anything. */
static void bus_start(void)
{
	char conf[PATH_MAX + 32], text[PATH_MAX + 1024], fdarg[32];
	int p[2];
	ssize_t n;

	snprintf(text, sizeof(text),
		 "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
		 " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
		 "<busconfig><type>system</type><listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth>\n"
		 "<policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>"
		 "<allow send_destination=\"*\" eavesdrop=\"true\"/><allow eavesdrop=\"true\"/></policy>"
		 "</busconfig>\n", dir);
	unit_write(dir, "bus.conf", text);
	snprintf(conf, sizeof(conf), "--config-file=%s/bus.conf", dir);
	ck_assert_int_eq(pipe(p), 0);
	bus_pid = fork();
	ck_assert_int_ge(bus_pid, 0);
	if (bus_pid == 0) {
		close(p[0]);
		snprintf(conf + strlen(conf) - strlen("bus.conf"), 32, "bus.log");
		int log = open(conf + strlen("--config-file="), O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (log >= 0)
			dup2(log, 2);
		snprintf(conf + strlen(conf) - strlen("bus.log"), 32, "bus.conf");
		snprintf(fdarg, sizeof(fdarg), "--print-address=%d", p[1]);
		execl(DBUS_DAEMON, DBUS_DAEMON, conf, "--nofork", "--nopidfile", "--nosyslog", fdarg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], address, sizeof(address) - 1);
	close(p[0]);
	ck_assert_msg(n > 0, "dbus-daemon said no address");
	address[n] = '\0';
	address[strcspn(address, "\n")] = '\0';
	setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1);
}

static void pump(void)
{
	while (sd_event_run(ev, 0) > 0)
		;
}

static const char *state(void)
{
	struct rtkit_stats st;

	rtkit_stats(rk, &st);
	return st.state;
}

/* The loop runs until the service has the name. */
static void await_owned(void)
{
	for (int i = 0; i < 100000 && strcmp(state(), "owned") != 0; i++)
		sd_event_run(ev, 10000);
	ck_assert_str_eq(state(), "owned");
}

static void setup_with(const char *conf)
{
	struct rlimit rt = { 200000, 200000 };

	memset(&G, 0, sizeof(G));
	n_queries = 0;
	unit_tmpdir(dir, "test-rtkit");
	ck_assert_int_eq(chmod(dir, 0755), 0);
	bus_start();
	ck_assert_int_ge(sd_event_new(&ev), 0);
	c = unit_config(dir, conf);
	/* rtkit's contract: a caller's RLIMIT_RTTIME at most RTTimeUSecMax */
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &rt), 0);
	ck_assert_int_eq(rtkit_start(&rk, ctx(), c), 0);
	ck_assert_ptr_nonnull(rk);
	await_owned();
}

static void setup(void)
{
	setup_with("[rtkit]\nenable = yes\nmax-realtime-priority = 20\nmin-nice-level = -15\n");
}

static void teardown(void)
{
	int st;

	rtkit_stop(rk);
	rk = NULL;
	config_free(c);
	sd_event_unref(ev);
	kill(bus_pid, SIGTERM);
	waitpid(bus_pid, &st, 0);
	unit_rmdir(dir);
}

/* A client connection to the private bus. */
static sd_bus *connect_bus(void)
{
	sd_bus *b = NULL;

	ck_assert_int_ge(sd_bus_new(&b), 0);
	ck_assert_int_ge(sd_bus_set_address(b, address), 0);
	ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
	ck_assert_int_ge(sd_bus_start(b), 0);
	return b;
}

/* One method call from a thread of the test (the service runs in this
 * one's loop meanwhile); its error's name and message, "" if none. */
struct call {
	sd_bus *bus;
	const char *method, *sig;
	uint64_t a, b;
	int32_t i;
	pid_t tid;            /* the calling thread */
	volatile bool done;
	char name[128], msg[1024];
};

static void *call_main(void *arg)
{
	struct call *k = arg;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	uint64_t a = k->a ? k->a : (uint64_t)gettid();
	int r;

	k->tid = gettid();
	if (!strcmp(k->sig, "tu") || !strcmp(k->sig, "ti"))
		r = sd_bus_call_method(k->bus, NAME, PATH, NAME, k->method, &e, &reply, k->sig, a, k->i);
	else if (!strcmp(k->sig, "ttu") || !strcmp(k->sig, "tti"))
		r = sd_bus_call_method(k->bus, NAME, PATH, NAME, k->method, &e, &reply, k->sig, a,
				       k->b ? k->b : (uint64_t)gettid(), k->i);
	else
		r = sd_bus_call_method(k->bus, NAME, PATH, NAME, k->method, &e, &reply, NULL);
	if (r < 0) {
		snprintf(k->name, sizeof(k->name), "%s", e.name ? e.name : "?");
		snprintf(k->msg, sizeof(k->msg), "%s", e.message ? e.message : "");
	}
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	k->done = true;
	return NULL;
}

static void call(struct call *k)
{
	pthread_t th;

	k->done = false;
	k->name[0] = k->msg[0] = '\0';
	ck_assert_int_eq(pthread_create(&th, NULL, call_main, k), 0);
	while (!k->done)
		sd_event_run(ev, 1000);
	pthread_join(th, NULL);
}

/* MakeThreadRealtime(tid, prio) on bus b from a thread; the error name. */
static const char *realtime(sd_bus *b, uint64_t tid, int32_t prio, struct call *k)
{
	*k = (struct call){ .bus = b, .method = "MakeThreadRealtime", .sig = "tu", .a = tid, .i = prio };
	call(k);
	return k->name;
}

/* The caller as the bus recorded it; rtkit's cap; WithPID's process. */
START_TEST(test_identity_and_cap)
{
	sd_bus *b = connect_bus();
	struct call k;

	ck_assert_str_eq(realtime(b, 0, 10, &k), "");
	ck_assert_int_eq(G.n, 1);
	ck_assert_int_eq(G.tid, k.tid);
	ck_assert_int_eq(G.peer.pid, getpid());
	ck_assert_uint_eq(G.peer.uid, geteuid());
	ck_assert_int_eq(G.peer.pidfd, -1);
	ck_assert(G.req.has_policy && G.req.has_priority);
	ck_assert_int_eq(G.req.policy, SCHED_RR);
	ck_assert_int_eq(G.req.priority, 10);
	/* what was read for rtkit's RLIMIT_RTTIME contract goes to the grant
	 * path, which does not read it again: the caller's limits as set up,
	 * and (through its process held open) that the thread is its own */
	ck_assert(G.has_known);
	ck_assert_int_eq(G.known.tid, k.tid);
	ck_assert_uint_eq(G.known.limits.rttime_hard, 200000);
	ck_assert_uint_eq(G.known.limits.rttime_soft, 200000);
	ck_assert_int_eq(G.known.pid, getpid());
	ck_assert_uint_eq(G.known.owner, geteuid());
	/* and the start time of that thread, read with its owner: the grant
	 * path pins that one (audit of the grant paths, F4) */
	ck_assert_uint_ne(G.known.starttime, 0);
	ck_assert_uint_eq(G.known.starttime, G.start);
	/* above MaxRealtimePriority: capped, not refused */
	ck_assert_str_eq(realtime(b, 0, 50, &k), "");
	ck_assert_int_eq(G.req.priority, 20);
	/* MakeThreadHighPriority below MinNiceLevel: floored */
	k = (struct call){ .bus = b, .method = "MakeThreadHighPriority", .sig = "ti", .i = -20 };
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert(G.req.has_nice && !G.req.has_priority);
	ck_assert(!G.has_known);    /* no contract, nothing read */
	ck_assert_int_eq(G.req.policy, SCHED_OTHER);
	ck_assert_int_eq(G.req.nice, -15);
	/* WithPID: the process named is the one checked */
	k = (struct call){ .bus = b, .method = "MakeThreadRealtimeWithPID", .sig = "ttu", .a = 4242, .i = 5 };
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert_int_eq(G.peer.pid, 4242);
	ck_assert_uint_eq(G.peer.uid, geteuid());
	/* the thread's limits read from /proc/TID: it is not claimed to be a
	 * thread of 4242, the grant path finds that out itself */
	ck_assert(G.has_known);
	ck_assert_int_eq(G.known.pid, 0);
	struct rtkit_stats st;
	rtkit_stats(rk, &st);
	ck_assert_uint_eq(st.calls, 4);
	ck_assert_uint_eq(st.grants, 4);
	ck_assert_uint_eq(st.refusals, 0);
	sd_bus_flush_close_unref(b);
}
END_TEST

/* rtkit's own checks, before the grant path is asked. */
START_TEST(test_arguments)
{
	sd_bus *b = connect_bus();
	struct call k;

	ck_assert_str_eq(realtime(b, 0, 0, &k), SD_BUS_ERROR_INVALID_ARGS);
	ck_assert_msg(strstr(k.msg, "rtschedd: bad-request: priority 0 is not a real-time priority; ask for 1..20"),
		      "%s", k.msg);
	ck_assert_str_eq(realtime(b, 0, 100, &k), SD_BUS_ERROR_INVALID_ARGS);
	ck_assert_str_eq(realtime(b, 1ULL << 40, 5, &k), SD_BUS_ERROR_INVALID_ARGS);
	ck_assert_msg(strstr(k.msg, "thread and process ids must be in 1..2147483647"), "%s", k.msg);
	k = (struct call){ .bus = b, .method = "MakeThreadHighPriority", .sig = "ti", .i = 20 };
	call(&k);
	ck_assert_str_eq(k.name, SD_BUS_ERROR_INVALID_ARGS);
	ck_assert_msg(strstr(k.msg, "nice level 20 is out of range; ask for -15..19"), "%s", k.msg);
	k = (struct call){ .bus = b, .method = "MakeThreadRealtimeWithPID", .sig = "ttu", .a = (uint64_t)-1, .i = 5 };
	call(&k);
	ck_assert_str_eq(k.name, SD_BUS_ERROR_INVALID_ARGS);
	/* a thread that does not exist: rtkit's RLIMIT_RTTIME check reads it first */
	ck_assert_str_eq(realtime(b, 0x3fffffff, 5, &k), SD_BUS_ERROR_INVALID_ARGS);
	ck_assert_msg(strstr(k.msg, "rtschedd: no-such-thread: thread 1073741823: no such thread"), "%s", k.msg);
	ck_assert_int_eq(G.n, 0);   /* none reached the grant path */
	ck_assert_int_eq(G.refused, 6);
	sd_bus_flush_close_unref(b);
}
END_TEST

/* rtkit's RLIMIT_RTTIME contract is the grant decision's (grant_decide(),
 * test-grant's test_decide_rttime, tests/rtkit.sh on the real path): the
 * service reads the caller's limits, hands them to the grant path with the
 * call, and names the refusal the path gives as AccessDenied
 * rttime-over-max. */
START_TEST(test_rttime)
{
	sd_bus *b;
	struct call k;

	teardown();
	setup_with("[rtkit]\nenable = yes\nrttime-usec-max = 100000\n");
	b = connect_bus();
	ck_assert_str_eq(realtime(b, 0, 5, &k), "");
	ck_assert_int_eq(G.n, 1);
	ck_assert(G.has_known);
	ck_assert_uint_eq(G.known.limits.rttime_hard, 200000);
	G.refuse = true;
	G.code = PE_RTTIME_OVER_MAX;
	snprintf(G.msg, sizeof(G.msg), "pid 1 (the thread's process) has RLIMIT_RTTIME hard limit 200000 us");
	ck_assert_str_eq(realtime(b, 0, 5, &k), SD_BUS_ERROR_ACCESS_DENIED);
	ck_assert_msg(strstr(k.msg, "rtschedd: rttime-over-max: pid 1"), "%s", k.msg);
	G.refuse = false;
	/* the high-priority (nice) calls read nothing */
	k = (struct call){ .bus = b, .method = "MakeThreadHighPriority", .sig = "ti", .i = -5 };
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert(!G.has_known);
	sd_bus_flush_close_unref(b);
}
END_TEST

/* Each refusal of the grant path as the D-Bus error a client handles, its
 * message "rtschedd: CODE: DIAG: MESSAGE". */
START_TEST(test_error_names)
{
	static const struct {
		int code;
		const char *name;
	} want[] = {
		{ PE_BAD_REQUEST, SD_BUS_ERROR_INVALID_ARGS },     { PE_NO_SUCH_THREAD, SD_BUS_ERROR_INVALID_ARGS },
		{ PE_UNKNOWN_ROLE, SD_BUS_ERROR_INVALID_ARGS },    { PE_STALE_THREAD, SD_BUS_ERROR_INVALID_ARGS },
		{ PE_PRIORITY_DENIED, SD_BUS_ERROR_LIMITS_EXCEEDED }, { PE_CPU_DENIED, SD_BUS_ERROR_LIMITS_EXCEEDED },
		{ PE_QUOTA, SD_BUS_ERROR_LIMITS_EXCEEDED },        { PE_RATE_LIMITED, SD_BUS_ERROR_LIMITS_EXCEEDED },
		{ PE_WATCHDOG_COOLDOWN, SD_BUS_ERROR_LIMITS_EXCEEDED },
		{ PE_NOT_OWN_THREAD, SD_BUS_ERROR_ACCESS_DENIED }, { PE_NOT_ADMIN, SD_BUS_ERROR_ACCESS_DENIED },
		{ PE_POLICY_DENIED, SD_BUS_ERROR_ACCESS_DENIED },  { PE_APPLY_FAILED, SD_BUS_ERROR_FAILED },
		{ PE_NICE_DENIED, SD_BUS_ERROR_LIMITS_EXCEEDED },  { PE_ABOVE_MAX, SD_BUS_ERROR_LIMITS_EXCEEDED },
		{ PE_RTPRIO_CAP, SD_BUS_ERROR_LIMITS_EXCEEDED },
		{ PE_INTERNAL, SD_BUS_ERROR_FAILED },
	};
	sd_bus *b = connect_bus();
	char text[256];
	struct call k;

	snprintf(G.msg, sizeof(G.msg), "why it was refused");
	G.refuse = true;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		G.code = want[i].code;
		ck_assert_str_eq(realtime(b, 0, 5, &k), want[i].name);
		snprintf(text, sizeof(text), "rtschedd: %s: why it was refused", proto_error_code(G.code));
		ck_assert_str_eq(k.msg, text);
	}
	/* the kernel refused: the diagnosed cause comes first */
	G.code = PE_APPLY_FAILED;
	snprintf(G.diag, sizeof(G.diag), "rtprio-zero");
	ck_assert_str_eq(realtime(b, 0, 5, &k), SD_BUS_ERROR_FAILED);
	ck_assert_str_eq(k.msg, "rtschedd: apply-failed: rtprio-zero: why it was refused");
	ck_assert_int_eq(G.refused, (int)(sizeof(want) / sizeof(want[0])) + 1);
	sd_bus_flush_close_unref(b);
}
END_TEST

/* The three properties, read by a thread (the service answers in this one). */
static struct props {
	sd_bus *bus;
	int32_t max_prio, min_nice;
	int64_t rttime;
	int r;
	volatile bool done;
} P;

static void *props_main(void *arg)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;

	P.r = sd_bus_get_property_trivial(P.bus, NAME, PATH, NAME, "MaxRealtimePriority", &e, 'i', &P.max_prio);
	if (P.r >= 0)
		P.r = sd_bus_get_property_trivial(P.bus, NAME, PATH, NAME, "MinNiceLevel", &e, 'i', &P.min_nice);
	if (P.r >= 0)
		P.r = sd_bus_get_property_trivial(P.bus, NAME, PATH, NAME, "RTTimeUSecMax", &e, 'x', &P.rttime);
	sd_bus_error_free(&e);
	P.done = true;
	return NULL;
}

static void read_props(void)
{
	pthread_t th;

	P.done = false;
	ck_assert_int_eq(pthread_create(&th, NULL, props_main, NULL), 0);
	while (!P.done)
		sd_event_run(ev, 1000);
	pthread_join(th, NULL);
	ck_assert_int_ge(P.r, 0);
}

/* The properties say what the configuration says, after a reload too. */
START_TEST(test_properties)
{
	struct config *c2;

	P = (struct props){ .bus = connect_bus() };
	read_props();
	ck_assert_int_eq(P.max_prio, 20);
	ck_assert_int_eq(P.min_nice, -15);
	ck_assert_int_eq(P.rttime, 200000);
	c2 = unit_config(dir, "[rtkit]\nenable = yes\nmax-realtime-priority = 33\nmin-nice-level = -4\n"
			      "rttime-usec-max = 50000\n");
	ck_assert_int_eq(rtkit_reconfigure(&rk, ctx(), c2), 0);
	config_free(c);
	c = c2;
	read_props();
	ck_assert_int_eq(P.max_prio, 33);
	ck_assert_int_eq(P.min_nice, -4);
	ck_assert_int_eq(P.rttime, 50000);
	sd_bus_flush_close_unref(P.bus);
}
END_TEST

/* Run one method call in a child process, as nobody when the test is root
 * (as the test's own uid otherwise); the D-Bus error's name, "" if none. */
static const char *call_as_other(const char *method)
{
	static char name[128];
	int p[2], st;
	pid_t child;
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		sd_bus *b = NULL;
		close(p[0]);
		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
			_exit(2);
		if (sd_bus_new(&b) < 0 || sd_bus_set_address(b, address) < 0 || sd_bus_set_bus_client(b, 1) < 0 ||
		    sd_bus_start(b) < 0)
			_exit(3);
		if (sd_bus_call_method(b, NAME, PATH, NAME, method, &e, NULL, NULL) < 0)
			dprintf(p[1], "%s", e.name ? e.name : "?");
		_exit(0);
	}
	close(p[1]);
	while (waitpid(child, &st, WNOHANG) == 0)
		sd_event_run(ev, 1000);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	n = read(p[0], name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = '\0';
	close(p[0]);
	return name;
}

/* Reset* and Exit: root and admin-group only. */
START_TEST(test_admin_only)
{
	sd_bus *b;
	struct call k;

	if (geteuid() == 0) {
		/* nobody, no admin-group: refused */
		ck_assert_str_eq(call_as_other("ResetKnown"), SD_BUS_ERROR_ACCESS_DENIED);
		ck_assert_str_eq(call_as_other("Exit"), SD_BUS_ERROR_ACCESS_DENIED);
		ck_assert_int_eq(G.resets, 0);
		ck_assert_str_eq(state(), "owned");
	}
	/* this process: root, or a member of admin-group (its primary group) */
	if (geteuid() != 0) {
		char conf[256];
		struct group *gr = getgrgid(getegid());
		ck_assert_ptr_nonnull(gr);
		b = connect_bus();
		k = (struct call){ .bus = b, .method = "ResetKnown", .sig = "" };
		call(&k);
		ck_assert_str_eq(k.name, SD_BUS_ERROR_ACCESS_DENIED);
		ck_assert_msg(strstr(k.msg, "rtschedd: not-admin: ResetKnown needs root or admin-group"), "%s", k.msg);
		sd_bus_flush_close_unref(b);
		snprintf(conf, sizeof(conf), "[daemon]\nadmin-group = %s\n[rtkit]\nenable = yes\n", gr->gr_name);
		teardown();
		setup_with(conf);
	}
	b = connect_bus();
	k = (struct call){ .bus = b, .method = "ResetKnown", .sig = "" };
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert_int_eq(G.resets, 1);
	ck_assert(!G.reset_all);
	k.method = "ResetAll";
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert_int_eq(G.resets, 2);
	ck_assert(G.reset_all);
	/* Exit: the bus service goes (the threads granted over it restored), the
	 * daemon stays; a reload with [rtkit] enable = yes asks for the name again */
	k.method = "Exit";
	call(&k);
	ck_assert_str_eq(k.name, "");
	ck_assert_int_eq(G.resets, 3);
	ck_assert(!G.reset_all);
	ck_assert_str_eq(state(), "released");
	ck_assert_int_eq(rtkit_reconfigure(&rk, ctx(), c), 0);
	await_owned();
	sd_bus_flush_close_unref(b);
}
END_TEST

/* The bus is asked who a sender is once per connection; the least recently
 * used of 64 senders makes room for a new one; a sender that left the bus
 * frees its slot at once. */
START_TEST(test_sender_cache)
{
	enum { SLOTS = 64 };
	static sd_bus *a[SLOTS + 1];
	sd_bus *probe = connect_bus(), *b;
	struct call k;
	int q;

	for (int i = 0; i < SLOTS; i++)
		a[i] = connect_bus();
	for (int i = 0; i < SLOTS; i++) {
		ck_assert_str_eq(realtime(a[i], 0, 5, &k), "");
		ck_assert_int_eq(n_queries, i + 1);
	}
	/* known: not asked again, and the identity is the one recorded */
	for (int r = 0; r < 3; r++)
		ck_assert_str_eq(realtime(a[0], 0, 5, &k), "");
	ck_assert_int_eq(n_queries, SLOTS);
	ck_assert_int_eq(G.peer.pid, getpid());
	ck_assert_uint_eq(G.peer.uid, geteuid());

	/* a[1], used lately, leaves the bus; once the bus has seen it go, a new
	 * sender takes its slot instead of pushing out the least recently used
	 * (a[2]) */
	ck_assert_str_eq(realtime(a[1], 0, 5, &k), "");
	ck_assert_int_eq(n_queries, SLOTS);
	const char *gone = NULL;
	ck_assert_int_ge(sd_bus_get_unique_name(a[1], &gone), 0);
	char gone_name[64];
	snprintf(gone_name, sizeof(gone_name), "%s", gone);
	sd_bus_flush_close_unref(a[1]);
	a[1] = NULL;
	for (int has = 1; has;) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		sd_bus_message *m = NULL;
		ck_assert_int_ge(sd_bus_call_method(probe, "org.freedesktop.DBus", "/org/freedesktop/DBus",
						    "org.freedesktop.DBus", "NameHasOwner", &e, &m, "s", gone_name), 0);
		ck_assert_int_ge(sd_bus_message_read(m, "b", &has), 0);
		sd_bus_message_unref(m);
		pump();
	}
	b = connect_bus();
	q = n_queries;
	ck_assert_str_eq(realtime(b, 0, 5, &k), "");
	ck_assert_int_eq(n_queries, q + 1);
	ck_assert_str_eq(realtime(a[2], 0, 5, &k), "");
	ck_assert_int_eq(n_queries, q + 1);   /* still known */

	/* one more sender: the least recently used (a[3]) makes room */
	a[SLOTS] = connect_bus();
	ck_assert_str_eq(realtime(a[SLOTS], 0, 5, &k), "");
	ck_assert_int_eq(n_queries, q + 2);
	ck_assert_str_eq(realtime(a[0], 0, 5, &k), "");   /* used lately: kept */
	ck_assert_int_eq(n_queries, q + 2);
	ck_assert_str_eq(realtime(a[3], 0, 5, &k), "");   /* pushed out: asked again */
	ck_assert_int_eq(n_queries, q + 3);

	for (int i = 0; i <= SLOTS; i++)
		if (a[i])
			sd_bus_flush_close_unref(a[i]);
	sd_bus_flush_close_unref(b);
	sd_bus_flush_close_unref(probe);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rtkit");
	TCase *tc = tcase_create("rtkit");

	signal(SIGPIPE, SIG_IGN);
	if (access(DBUS_DAEMON, X_OK) == 0) {
		tcase_set_timeout(tc, 120);
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, test_identity_and_cap);
		tcase_add_test(tc, test_arguments);
		tcase_add_test(tc, test_rttime);
		tcase_add_test(tc, test_error_names);
		tcase_add_test(tc, test_properties);
		tcase_add_test(tc, test_admin_only);
		tcase_add_test(tc, test_sender_cache);
	} else {
		unit_skip("test-rtkit: no " DBUS_DAEMON " (apt-get install dbus) to serve a private bus");
	}
	suite_add_tcase(s, tc);
	return unit_run(s);
}
