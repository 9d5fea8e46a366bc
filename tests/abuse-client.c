/* abuse-client.c: hostile and heavy clients of rtschedd's control socket, for
 * tests/abuse.sh and tests/authz.sh: what a shell cannot do well. Raw
 * AF_UNIX SOCK_SEQPACKET sockets only; nothing from the project is linked, so
 * a bug in librtsched cannot hide one in the daemon.
 *
 *   abuse-client garbage SOCK N          N malformed messages, each with the error code it must get
 *   abuse-client empty SOCK N            N connections that send a zero-length message
 *   abuse-client oversized SOCK SIZE...  one message of each size (a valid request padded with spaces)
 *   abuse-client fds SOCK N TEXT [R]     TEXT ("" for an empty message) carrying N copies of a pipe's
 *                                        write end (SCM_RIGHTS), R times; says whether the daemon
 *                                        closed every copy (the pipe reads end of file)
 *   abuse-client many SOCK N             N connections at once, then one request on each
 *   abuse-client hold SOCK N             N connections that send nothing until stdin closes; then
 *                                        each must still answer
 *   abuse-client die SOCK N TEXT         N children connect, send TEXT and _exit() before the reply
 *   abuse-client noread SOCK N TEXT      send TEXT N times, never read a reply, exit when stdin closes
 *                                        ($ABUSE_STALL_S: stop sending after a send blocked that long)
 *   abuse-client unread SOCK N TEXT      N connections, TEXT sent once on each, no reply read: prints
 *                                        "answered A of N" each time more have a reply waiting; on a
 *                                        line of stdin reads every reply ("unread: ... bytes=B" the
 *                                        most bytes one reply had), then waits for stdin to close
 *   abuse-client spawnreg SOCK N TEXT    "spawnreg: pid=P", then sends TEXT (@PID@ = P) and prints
 *                                        "REPLY ..."; meanwhile a second thread waits for a line on
 *                                        stdin, then creates N idle threads ("spawned N"); exits
 *                                        when stdin closes
 *   abuse-client connflood SOCK          connect and close at once, as fast as it can, until stdin
 *                                        closes (the listen backlog full: the next try); then
 *                                        "connflood: connects=C full=F other=O"
 *   abuse-client flood SOCK N TEXT       N requests pipelined on one connection, as fast as possible
 *   abuse-client flood-for SOCK S TEXT   the same for S seconds (then the replies still due are read);
 *                                        a reply's ROW messages are tallied as "row", not as replies
 *   abuse-client each SOCK TEXT TID...   one connection per request, @TID@ replaced by each TID
 *                                        ($ABUSE_PACE_US: a pause between requests)
 *   abuse-client race SOCK N TEXT        N threads, each named in TEXT (@TID@) and exiting within
 *                                        0..400 us of it: registration races thread exit
 *   abuse-client churn N                 print "pid P", wait for a line on stdin, create and join N
 *                                        short-lived threads, print "churned N", exit when stdin closes
 *   abuse-client storm S NAME            for S seconds, as fast as it can: this thread renames itself
 *                                        NAME0, NAME1, NAME0... (prctl), and a second thread named
 *                                        NAME creates and joins threads (each inherits its name);
 *                                        "storm: renames=R threads=T" ($ABUSE_IDLE=N: N idle threads
 *                                        first, as the threads mode makes them)
 *   abuse-client threads N               N idle threads: print "tids T1 T2 ...", exit when stdin closes
 *                                        ($ABUSE_NAME: the threads are named NAME1, NAME2...)
 *   abuse-client self SOCK K REQ...      K idle threads of this process; each REQ (with @TID@ = @TID1@,
 *                                        @TID2@..@TID9@, @PID@) on one connection: "REPLY ..." and
 *                                        "KERNEL ..." (the kernel's view of the threads) and "NICE ..."
 *                                        (each thread's nice value, getpriority) per request;
 *                                        a REQ "@WAIT@" prints "WAITING" and waits for stdin to close;
 *                                        $ABUSE_NODUMP=1: not dumpable first (prctl), so the kernel
 *                                        makes its /proc files root's ("dumpable=0" on the self line)
 *   abuse-client orphan SOCK REQ         connect, fork; the parent exits ("parent P"), the child
 *                                        ("ready") waits for a line, sends REQ (@PPID@ = P) on the
 *                                        parent's connection and prints "REPLY ..."
 *   abuse-client heir SOCK REQ           the same with the parent alive (a control for orphan)
 *   abuse-client exec SOCK REQ PROG ARG...  connect, fork; the parent execs PROG (a setuid program),
 *                                        the child ("parent P") waits for a line, sends REQ
 *                                        (@PPID@ = P) on the connection and prints "REPLY ..."
 *   abuse-client regexec SOCK REQ PROG ARG...  send REQ (@PID@ = this process) and print "REPLY ...",
 *                                        print "pid P", wait for a line on stdin, then exec PROG
 *                                        (a setuid program): a registration made before the exec
 *   abuse-client threxec SOCK REQ PROG ARG...  a second thread T; send REQ (@TID@ = T, @PID@ = this
 *                                        process) and print "REPLY ...", print "pid P tid T", wait
 *                                        for a line on stdin, then T (not the main thread) execs PROG:
 *                                        the kernel gives T the pid P and kills the rest
 *
 * Every mode ends with one summary line "MODE: key=value ...". Replies are
 * tallied by code: "ok", the ERR code ("bad-request"...), "eof" (the daemon
 * closed the connection), "timeout", "error". Every wait is bounded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG_MAX 4096          /* PROTO_MSG_MAX of the protocol */
#define IO_TIMEOUT_S 120      /* any single send or receive: a hang, not slowness */
#define MAX_CODES 32
#define MAX_SELF_THREADS 9
#define ALARM_S 1800          /* a hang, never slowness: what a mode may take, waits on stdin aside */

static const char *sock_path;

/* --- tallies of reply codes ---------------------------------------------- */

struct tally {
	char code[MAX_CODES][32];
	long n[MAX_CODES];
	int used;
};

static void tally_add(struct tally *t, const char *code)
{
	for (int i = 0; i < t->used; i++)
		if (strcmp(t->code[i], code) == 0) {
			t->n[i]++;
			return;
		}
	if (t->used == MAX_CODES)
		return;
	snprintf(t->code[t->used], sizeof(t->code[0]), "%s", code);
	t->n[t->used++] = 1;
}

static long tally_get(const struct tally *t, const char *code)
{
	for (int i = 0; i < t->used; i++)
		if (strcmp(t->code[i], code) == 0)
			return t->n[i];
	return 0;
}

/* " ok=3 bad-request=2"; "ok" always, then the others in order of appearance. */
static void tally_print(const struct tally *t)
{
	printf(" ok=%ld", tally_get(t, "ok"));
	for (int i = 0; i < t->used; i++)
		if (strcmp(t->code[i], "ok") != 0)
			printf(" %s=%ld", t->code[i], t->n[i]);
}

/* --- connections ----------------------------------------------------------- */

static int conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, sock_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

/* The code of one reply message: "ok", "row" or the ERR code. */
static void reply_code(const char *msg, char *code, size_t len)
{
	if (strncmp(msg, "OK", 2) == 0 && (msg[2] == ' ' || !msg[2]))
		snprintf(code, len, "ok");
	else if (strncmp(msg, "ROW ", 4) == 0)
		snprintf(code, len, "row");
	else if (strncmp(msg, "ERR ", 4) == 0)
		snprintf(code, len, "%.*s", (int)strcspn(msg + 4, " "), msg + 4);
	else
		snprintf(code, len, "unparsable");
}

/* Read one whole reply (ROW messages up to the final one). The final message
 * goes to buf; the code to code ("eof", "timeout", "error" when there is none). */
static void read_reply(int fd, char *buf, size_t len, char *code, size_t clen)
{
	for (;;) {
		ssize_t n = recv(fd, buf, len - 1, 0);

		if (n <= 0) {
			snprintf(code, clen, "%s", n == 0 || errno == ECONNRESET ? "eof" :
				 errno == EAGAIN || errno == EWOULDBLOCK ? "timeout" : "error");
			buf[0] = '\0';
			return;
		}
		buf[n] = '\0';
		reply_code(buf, code, clen);
		if (strcmp(code, "row") != 0)
			return;
	}
}

/* Send one request and read its reply; the code as read_reply gives it. */
static void request(int fd, const void *text, size_t tlen, char *buf, size_t len, char *code, size_t clen)
{
	if (send(fd, text, tlen, MSG_NOSIGNAL) < 0) {
		snprintf(code, clen, "%s", errno == EPIPE || errno == ECONNRESET ? "eof" : "error");
		buf[0] = '\0';
		return;
	}
	read_reply(fd, buf, len, code, clen);
}

/* Replace @KEY@ tokens: keys[i] by vals[i]. */
static void subst(const char *tmpl, const char *const *keys, const long *vals, int n, char *out, size_t len)
{
	size_t o = 0;

	for (const char *p = tmpl; *p && o + 1 < len;) {
		int k;
		for (k = 0; k < n; k++)
			if (strncmp(p, keys[k], strlen(keys[k])) == 0)
				break;
		if (k < n) {
			int w = snprintf(out + o, len - o, "%ld", vals[k]);
			o += w > 0 ? (size_t)w : 0;
			p += strlen(keys[k]);
		} else {
			out[o++] = *p++;
		}
	}
	out[o < len ? o : len - 1] = '\0';
}

static void subst1(const char *tmpl, const char *key, long val, char *out, size_t len)
{
	const char *keys[] = { key };
	long vals[] = { val };

	subst(tmpl, keys, vals, 1, out, len);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Block until stdin reaches end of file (the test's "let go"). The test
 * decides how long that is, and its end closes stdin, so the time bound is
 * off meanwhile: a test that runs long on a slow machine (or under TCG) must
 * not lose its threads to the alarm. */
static void wait_stdin_eof(void)
{
	char b[256];

	alarm(0);
	while (read(0, b, sizeof(b)) > 0)
		;
	alarm(ALARM_S);
}

/* One line from stdin, unbuffered (children share it). */
static int read_line(char *b, size_t len)
{
	size_t o = 0;

	while (o + 1 < len) {
		ssize_t n = read(0, b + o, 1);
		if (n <= 0)
			return -1;
		if (b[o] == '\n')
			break;
		o++;
	}
	b[o] = '\0';
	return 0;
}

/* The kernel's view of a task, short: "fifo/10@0-1" (policy/priority@cpus). */
static void query(pid_t tid, char *buf, size_t len)
{
	struct sched_param sp;
	cpu_set_t set;
	char cpus[256] = "";
	size_t off = 0;
	int pol = sched_getscheduler(tid);

	if (pol < 0 || sched_getparam(tid, &sp) < 0 || sched_getaffinity(tid, sizeof(set), &set) < 0) {
		snprintf(buf, len, "error:%s", strerror(errno));
		return;
	}
	for (int c = 0; c < CPU_SETSIZE && off < sizeof(cpus) - 8; c++)
		if (CPU_ISSET(c, &set))
			off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", off ? "," : "", c);
	int p = pol & ~SCHED_RESET_ON_FORK;
	snprintf(buf, len, "%s/%d@%s", p == SCHED_FIFO ? "fifo" : p == SCHED_RR ? "rr" : p == SCHED_BATCH ? "batch" :
		 p == SCHED_IDLE ? "idle" : "other", sp.sched_priority, cpus);
}

/* --- garbage ---------------------------------------------------------------- */

/* Message number i of the garbage run, and the code the daemon must answer. */
static size_t garbage_msg(long i, char *m, const char **want)
{
	static const struct {
		const char *text;
		const char *code;
	} fixed[] = {
		{ "garbage", "bad-request" },
		{ "=", "bad-request" },
		{ "=1 v=1", "bad-request" },
		{ "v=1 op=register tid=%ZZ", "bad-request" },
		{ "v=1 op=register tid=1%00", "bad-request" },
		{ "v=1 op=register tid=%4", "bad-request" },
		{ "v=1 op=register tid=1 pid=1", "bad-request" },
		{ "v=1 op=register tid=99999999999999999999", "bad-request" },
		{ "v=1 op=register tid=-1", "bad-request" },
		{ "v=1 op=register tid=0", "bad-request" },
		{ "v=1 op=register", "bad-request" },
		{ "v=1 op=register tid=1 priority=100", "bad-request" },
		{ "v=1 op=register tid=1 nice=20", "bad-request" },
		{ "v=1 op=register tid=1 policy=deadline", "bad-request" },
		{ "v=1 op=register tid=1 cpus=banana", "bad-request" },
		{ "v=1 op=unregister tid=1 pid=1", "bad-request" },
		{ "v=1 o$p=list", "bad-request" },
		{ "op=list", "bad-request" },
		{ "v=x op=list", "bad-request" },
		{ "v=2 op=list", "version" },
		{ "v=1000001 op=list", "bad-request" },
		{ "v=1", "unknown-op" },
		{ "v=1 op=", "unknown-op" },
		{ "v=1 op=LIST", "unknown-op" },
		{ "v=1 op=list%00", "bad-request" },
		{ "                ", "bad-request" },
	};
	size_t n;

	switch (i % 5) {
	case 0: /* random bytes, at least one of them not printable */
		n = 1 + rng() % MSG_MAX;
		for (size_t k = 0; k < n; k++)
			m[k] = (char)(rng() & 0xff);
		m[rng() % n] = (char)(rng() % 0x20);
		*want = "bad-request";
		return n;
	case 1: /* printable, no '=': no field at all */
		n = 1 + rng() % MSG_MAX;
		for (size_t k = 0; k < n; k++) {
			char c = (char)(0x20 + rng() % 0x5f);
			m[k] = c == '=' ? 'x' : c;
		}
		m[rng() % n] = 'q';
		*want = "bad-request";
		return n;
	case 2: /* a valid start, then high bytes */
		n = (size_t)snprintf(m, MSG_MAX, "v=1 op=list x=");
		while (n < 40 + (size_t)(rng() % 200))
			m[n++] = (char)(0x80 | (rng() & 0x7f));
		*want = "bad-request";
		return n;
	case 3: /* more than 32 fields */
		n = (size_t)snprintf(m, MSG_MAX, "v=1 op=list");
		for (int k = 0; k < 33 + (int)(rng() % 20); k++)
			n += (size_t)snprintf(m + n, MSG_MAX - n, " k%d=v", k);
		*want = "bad-request";
		return n;
	default: {
		size_t k = (size_t)(i / 5) % (sizeof(fixed) / sizeof(fixed[0]));
		*want = fixed[k].code;
		n = strlen(fixed[k].text);
		memcpy(m, fixed[k].text, n);
		return n;
	}
	}
}

static int mode_garbage(long count)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	long mismatched = 0, conns = 0;
	int fd = -1;

	for (long i = 0; i < count; i++) {
		const char *want;
		size_t n = garbage_msg(i, m, &want);

		if (fd < 0 || i % 100 == 0) { /* a fresh connection now and then */
			if (fd >= 0)
				close(fd);
			if ((fd = conn()) < 0) {
				fprintf(stderr, "garbage: connect: %s\n", strerror(-fd));
				return 1;
			}
			conns++;
		}
		request(fd, m, n, buf, sizeof(buf), code, sizeof(code));
		tally_add(&t, code);
		if (strcmp(code, want) != 0) {
			if (mismatched++ < 5)
				fprintf(stderr, "garbage #%ld (%zu bytes, want %s): got '%s' (%s)\n", i, n, want, buf, code);
			if (strcmp(code, "eof") == 0 || strcmp(code, "error") == 0) {
				close(fd);
				fd = -1;
			}
		}
	}
	if (fd >= 0)
		close(fd);
	printf("garbage: sent=%ld connections=%ld mismatched=%ld", count, conns, mismatched);
	tally_print(&t);
	printf("\n");
	return 0;
}

/* --- empty, oversized, fds -------------------------------------------------- */

static int mode_empty(long count)
{
	char buf[MSG_MAX + 1], code[64];
	long closed = 0, answered_before = 0, other = 0;

	for (long i = 0; i < count; i++) {
		int fd = conn();

		if (fd < 0) {
			fprintf(stderr, "empty: connect: %s\n", strerror(-fd));
			return 1;
		}
		if (i % 2) { /* half of them after a valid request on the same connection */
			request(fd, "v=1 op=version", 14, buf, sizeof(buf), code, sizeof(code));
			answered_before += strcmp(code, "ok") == 0;
		}
		if (send(fd, "", 0, MSG_NOSIGNAL) < 0) {
			other++;
		} else {
			read_reply(fd, buf, sizeof(buf), code, sizeof(code));
			if (strcmp(code, "eof") == 0)
				closed++;
			else if (other++ < 5)
				fprintf(stderr, "empty #%ld: got '%s' (%s), want the connection closed\n", i, buf, code);
		}
		close(fd);
	}
	printf("empty: sent=%ld closed_by_daemon=%ld answered_before=%ld other=%ld\n", count, closed,
	       answered_before, other);
	return 0;
}

static int mode_oversized(int argc, char **argv)
{
	char buf[MSG_MAX + 1], code[64];

	printf("oversized:");
	for (int i = 0; i < argc; i++) {
		size_t size = strtoul(argv[i], NULL, 10);
		char *m = malloc(size + 1);
		int fd = conn();

		if (!m || fd < 0 || size < 14)
			return 1;
		memset(m, ' ', size);
		memcpy(m, "v=1 op=version", 14);
		request(fd, m, size, buf, sizeof(buf), code, sizeof(code));
		if (strcmp(code, "error") == 0 && errno == EMSGSIZE)
			snprintf(code, sizeof(code), "unsendable");
		printf(" %zu=%s", size, code);
		/* the connection still serves after the refusal */
		request(fd, "v=1 op=version", 14, buf, sizeof(buf), code, sizeof(code));
		printf("/then=%s", code);
		close(fd);
		free(m);
	}
	printf("\n");
	return 0;
}

/* Send text with n copies of fd attached. */
static ssize_t send_fds(int s, const char *text, int fd, int n)
{
	size_t clen = CMSG_SPACE(sizeof(int) * (size_t)n);
	char *cbuf = calloc(1, clen);
	struct iovec iov = { (void *)text, strlen(text) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = clen };
	struct cmsghdr *c;
	ssize_t r;

	if (!cbuf || n < 1)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c) {
		free(cbuf);
		return -1;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	r = sendmsg(s, &mh, MSG_NOSIGNAL);
	free(cbuf);
	return r;
}

static int mode_fds(int n, const char *text, long repeat)
{
	char buf[MSG_MAX + 1], code[64] = "none";
	long closed = 0;
	int s = -1;

	for (long i = 0; i < repeat; i++) {
		struct pollfd pf;
		int p[2];

		if (s < 0 && (s = conn()) < 0)
			return 1;
		if (pipe2(p, O_CLOEXEC) < 0)
			return 1;
		if (send_fds(s, text, p[1], n) < 0) {
			fprintf(stderr, "fds: sendmsg: %s\n", strerror(errno));
			return 1;
		}
		close(p[1]);
		read_reply(s, buf, sizeof(buf), code, sizeof(code));
		/* the write end is shut once every copy is closed: the daemon kept none */
		pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
		closed += poll(&pf, 1, 5000) == 1 && (pf.revents & POLLHUP);
		close(p[0]);
		if (strcmp(code, "ok") != 0 && strcmp(code, "bad-request") != 0) {
			close(s);
			s = -1;
		}
	}
	printf("fds: n=%d text='%s' sent=%ld reply=%s closed=%ld daemon_closed_all=%s\n", n, text, repeat, code,
	       closed, closed == repeat ? "yes" : "no");
	if (s >= 0) { /* the connection still serves */
		request(s, "v=1 op=version", 14, buf, sizeof(buf), code, sizeof(code));
		if (strcmp(code, "ok") != 0)
			printf("fds: the connection does not serve after it: %s\n", code);
		close(s);
	}
	return 0;
}

/* --- many connections ------------------------------------------------------- */

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Open n connections; returns how many succeeded (the first ones). */
static long open_many(int *fds, long n)
{
	long ok = 0;

	for (long i = 0; i < n; i++) {
		fds[i] = conn();
		if (fds[i] < 0) {
			fprintf(stderr, "connection %ld: %s\n", i, strerror(-fds[i]));
			break;
		}
		ok++;
	}
	return ok;
}

/* The clients= field of a status reply. */
static long status_clients(int fd)
{
	char buf[MSG_MAX + 1], code[64];
	const char *p;

	request(fd, "v=1 op=status", 13, buf, sizeof(buf), code, sizeof(code));
	p = strstr(buf, " clients=");
	return p ? atol(p + 9) : -1;
}

static int mode_many(long n)
{
	int *fds = calloc((size_t)n, sizeof(int));
	char buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	long connected, clients;

	if (!fds)
		return 1;
	connected = open_many(fds, n);
	/* connect() returns once queued: wait (bounded) until the daemon has accepted them all */
	clients = -1;
	for (int i = 0; connected && i < 500; i++) {
		clients = status_clients(fds[0]);
		if (clients >= connected || clients < 0)
			break;
		usleep(10000);
	}
	/* every client has a request in flight at once */
	for (long i = 0; i < connected; i++) {
		const char *req = i % 10 == 0 ? "v=1 op=list" : i % 10 == 1 ? "v=1 op=status" : "v=1 op=version";
		if (send(fds[i], req, strlen(req), MSG_NOSIGNAL) < 0)
			tally_add(&t, "send-failed");
	}
	for (long i = 0; i < connected; i++) {
		read_reply(fds[i], buf, sizeof(buf), code, sizeof(code));
		tally_add(&t, code);
	}
	for (long i = 0; i < connected; i++)
		close(fds[i]);
	printf("many: n=%ld connected=%ld clients_seen=%ld", n, connected, clients);
	tally_print(&t);
	printf("\n");
	free(fds);
	return connected == n ? 0 : 1;
}

static int mode_hold(long n)
{
	int *fds = calloc((size_t)n, sizeof(int));
	char buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	long connected;

	if (!fds)
		return 1;
	connected = open_many(fds, n);
	printf("holding %ld\n", connected);
	fflush(stdout);
	wait_stdin_eof();
	for (long i = 0; i < connected; i++) {
		request(fds[i], "v=1 op=version", 14, buf, sizeof(buf), code, sizeof(code));
		tally_add(&t, strcmp(code, "ok") == 0 ? "answered" : code);
		close(fds[i]);
	}
	printf("hold: n=%ld connected=%ld answered=%ld", n, connected, tally_get(&t, "answered"));
	for (int i = 0; i < t.used; i++)
		if (strcmp(t.code[i], "answered") != 0)
			printf(" %s=%ld", t.code[i], t.n[i]);
	printf("\n");
	free(fds);
	return 0;
}

/* Connect and close, as fast as the socket takes them, until stdin closes
 * (looked at every 64 tries): the accept loop's flood. A full backlog
 * (EAGAIN, a non-blocking connect) is tried again at once. */
static int mode_connflood(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long connects = 0, full = 0, other = 0;

	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return 1;
	strcpy(sa.sun_path, sock_path);
	printf("flooding\n");
	fflush(stdout);
	alarm(0);
	for (unsigned long i = 0;; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return 1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			connects++;
		else if (errno == EAGAIN)
			full++;
		else
			other++;
		close(fd);
		if (i % 64 == 0) {
			struct pollfd pf = { .fd = 0, .events = POLLIN };
			char b[256];

			if (poll(&pf, 1, 0) > 0 && read(0, b, sizeof(b)) <= 0)
				break;
		}
	}
	alarm(ALARM_S);
	printf("connflood: connects=%ld full=%ld other=%ld\n", connects, full, other);
	return 0;
}

/* --- clients that die or never read ---------------------------------------- */

static int mode_die(long n, const char *tmpl)
{
	long sent = 0, refused = 0, failed = 0;

	for (long i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (c == 0) {
			char m[MSG_MAX + 1];
			int fd = conn();
			subst1(tmpl, "@PID@", getpid(), m, sizeof(m));
			if (fd < 0)
				_exit(1);
			if (send(fd, m, strlen(m), MSG_NOSIGNAL) < 0)
				/* closed by the daemon first: over a connection cap */
				_exit(errno == EPIPE || errno == ECONNRESET ? 2 : 1);
			_exit(0); /* before the reply: the daemon answers a dead peer */
		}
	}
	for (long i = 0; i < n; i++) {
		int st;
		if (wait(&st) < 0)
			break;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			sent++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
			refused++;
		else
			failed++;
	}
	printf("die: n=%ld sent=%ld refused=%ld failed=%ld\n", n, sent, refused, failed);
	return 0;
}

static int mode_noread(long n, const char *text)
{
	int fd = conn();
	long sent = 0;

	if (fd < 0)
		return 1;
	/* $ABUSE_STALL_S: give up once the daemon stops taking requests for
	 * that long (it applies backpressure) instead of after IO_TIMEOUT_S */
	if (getenv("ABUSE_STALL_S")) {
		struct timeval tv = { .tv_sec = atol(getenv("ABUSE_STALL_S")) };
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	for (long i = 0; i < n; i++) {
		if (send(fd, text, strlen(text), MSG_NOSIGNAL) < 0)
			break;
		sent++;
	}
	printf("noread: n=%ld sent=%ld\n", n, sent);
	fflush(stdout);
	wait_stdin_eof();
	return 0;
}

/* n connections, text sent once on each, and no reply read until a line
 * comes on stdin: how many the daemon answered meanwhile (a reply's first
 * message waiting in the socket) is printed as it grows. */
static int mode_unread(long n, const char *text)
{
	struct pollfd *pf = calloc((size_t)n + 1, sizeof(*pf));
	int *fds = calloc((size_t)n, sizeof(int));
	char buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	long connected, answered = 0;
	size_t most = 0;

	if (!fds || !pf)
		return 1;
	connected = open_many(fds, n);
	for (long i = 0; i < connected; i++)
		if (send(fds[i], text, strlen(text), MSG_NOSIGNAL) < 0)
			tally_add(&t, "send-failed");
	printf("answered 0 of %ld\n", connected);
	/* the connections not answered yet, and stdin last */
	for (long i = 0; i < connected; i++)
		pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	pf[connected] = (struct pollfd){ .fd = 0, .events = POLLIN };
	alarm(0);
	for (;;) {
		long got = 0;

		if (poll(pf, (nfds_t)connected + 1, -1) < 0 && errno != EINTR)
			break;
		if (pf[connected].revents)
			break;
		for (long i = 0; i < connected; i++)
			if (pf[i].fd >= 0 && pf[i].revents) {
				pf[i].fd = -1;   /* answered: not polled again */
				got++;
			}
		if (got) {
			answered += got;
			printf("answered %ld of %ld\n", answered, connected);
		}
	}
	alarm(ALARM_S);
	{
		char line[64];
		read_line(line, sizeof(line));
	}
	/* every reply, from whichever connection has one: the daemon may go on
	 * with the rest only once these are read */
	size_t *bytes = calloc((size_t)connected + 1, sizeof(size_t));
	long left = connected;

	if (!bytes)
		return 1;
	for (long i = 0; i < connected; i++)
		pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	while (left > 0) {
		if (poll(pf, (nfds_t)connected, IO_TIMEOUT_S * 1000) <= 0) {
			tally_add(&t, "timeout");
			break;
		}
		for (long i = 0; i < connected; i++) {
			ssize_t r;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			r = recv(fds[i], buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r <= 0) {
				snprintf(code, sizeof(code), "%s", r == 0 ? "eof" : "error");
			} else {
				bytes[i] += (size_t)r;
				buf[r] = '\0';
				reply_code(buf, code, sizeof(code));
				if (strcmp(code, "row") == 0)
					continue;
			}
			tally_add(&t, code);
			if (bytes[i] > most)
				most = bytes[i];
			pf[i].fd = -1;
			left--;
		}
	}
	free(bytes);
	printf("unread: n=%ld connected=%ld answered_before=%ld bytes=%zu", n, connected, answered, most);
	tally_print(&t);
	printf("\n");
	fflush(stdout);
	wait_stdin_eof();
	return 0;
}

/* --- a process that makes threads while it registers itself ------------------ */

static int idle_pipe[2];
static pid_t idle_tids[4096];
static void *idle_main(void *arg);
static long spawn_n;

/* On a line of stdin, spawn_n idle threads, as fast as they come. */
static void *spawner_main(void *arg)
{
	char line[64];
	long made = 0;

	if (read_line(line, sizeof(line)) == 0)
		for (; made < spawn_n; made++) {
			pthread_t th;

			if (pthread_create(&th, NULL, idle_main, (void *)(uintptr_t)made) != 0)
				break;
		}
	printf("spawned %ld\n", made);
	fflush(stdout);
	return NULL;
}

static int mode_spawnreg(long n, const char *tmpl)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64];
	pthread_t th;
	int fd;

	if (n < 1 || n > (long)(sizeof(idle_tids) / sizeof(idle_tids[0])) || pipe(idle_pipe) < 0 || (fd = conn()) < 0)
		return 1;
	spawn_n = n;
	if (pthread_create(&th, NULL, spawner_main, NULL) != 0)
		return 1;
	printf("spawnreg: pid=%d\n", (int)getpid());
	fflush(stdout);
	subst1(tmpl, "@PID@", getpid(), m, sizeof(m));
	request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
	printf("REPLY %s\n", buf[0] ? buf : code);
	fflush(stdout);
	pthread_join(th, NULL);
	wait_stdin_eof();
	return 0;
}

/* --- flood and one-shot requests -------------------------------------------- */

/* n requests pipelined (or, with for_us, as many as fit in that many µs),
 * as fast as the socket takes them; a reply's final message counts it. */
static int mode_flood(long n, const char *text, uint64_t for_us)
{
	char buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	long sent = 0, got = 0;
	int fd = conn();
	uint64_t t0 = now_us();

	if (fd < 0)
		return 1;
	for (;;) {
		bool more = for_us ? now_us() - t0 < for_us : sent < n;
		struct pollfd pf = { .fd = fd, .events = POLLIN | (more ? POLLOUT : 0) };

		if (for_us ? !more && got >= sent : got >= n)
			break;
		if (poll(&pf, 1, IO_TIMEOUT_S * 1000) <= 0) {
			tally_add(&t, "timeout");
			break;
		}
		if (pf.revents & POLLIN) {
			ssize_t r = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (r <= 0) {
				tally_add(&t, "eof");
				break;
			}
			buf[r] = '\0';
			reply_code(buf, code, sizeof(code));
			tally_add(&t, code);
			if (!for_us || strcmp(code, "row") != 0)
				got++;
		} else if (pf.revents & (POLLHUP | POLLERR)) {
			tally_add(&t, "eof");
			break;
		}
		if (more && (pf.revents & POLLOUT) &&
		    send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)strlen(text))
			sent++;
	}
	printf("flood: n=%ld sent=%ld replies=%ld", for_us ? sent : n, sent, got);
	tally_print(&t);
	printf(" elapsed_ms=%llu\n", (unsigned long long)((now_us() - t0) / 1000));
	close(fd);
	return 0;
}

static int mode_each(const char *tmpl, int argc, char **argv)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	const char *pace = getenv("ABUSE_PACE_US");
	int shown = 0;

	for (int i = 0; i < argc; i++) {
		int fd;

		if (pace && i)
			usleep((useconds_t)atol(pace)); /* spread the requests out, e.g. over a signal storm */
		fd = conn();

		if (fd < 0) {
			tally_add(&t, "no-connection");
			continue;
		}
		subst1(tmpl, "@TID@", atol(argv[i]), m, sizeof(m));
		request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
		tally_add(&t, code);
		if (strcmp(code, "ok") != 0 && shown++ < 5)
			fprintf(stderr, "each: '%s' -> '%s' (%s)\n", m, buf, code);
		close(fd);
	}
	printf("each: n=%d", argc);
	tally_print(&t);
	printf("\n");
	return 0;
}

/* --- threads that exit while being registered ------------------------------ */

struct racer {
	int pipe_w;
	unsigned delay_us;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	pid_t tid = gettid();
	uint64_t end;

	if (write(r->pipe_w, &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	/* spin, not sleep: the exit lands anywhere in the daemon's handling */
	end = now_us() + r->delay_us;
	while (now_us() < end)
		;
	return NULL;
}

static int mode_race(long n, const char *tmpl)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64];
	struct tally t = { 0 };
	int fd = conn(), p[2];
	int shown = 0;

	if (fd < 0 || pipe(p) < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		struct racer r = { p[1], rng() % 4 == 0 ? 0 : rng() % 400 };
		pthread_t th;
		pid_t tid;

		if (pthread_create(&th, NULL, racer_main, &r) != 0 || read(p[0], &tid, sizeof(tid)) != sizeof(tid))
			return 1;
		subst1(tmpl, "@TID@", tid, m, sizeof(m));
		request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
		tally_add(&t, code);
		if (strcmp(code, "ok") && strcmp(code, "no-such-thread") && strcmp(code, "stale-thread") && shown++ < 5)
			fprintf(stderr, "race: tid %d: '%s'\n", (int)tid, buf);
		pthread_join(th, NULL);
	}
	printf("race: n=%ld pid=%d", n, (int)getpid());
	tally_print(&t);
	printf("\n");
	close(fd);
	return 0;
}

static void *short_lived(void *arg)
{
	uint64_t end = now_us() + (uintptr_t)arg;

	while (now_us() < end)
		;
	return NULL;
}

static int mode_churn(long n)
{
	char line[64];

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (read_line(line, sizeof(line)) < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		pthread_t th;
		uintptr_t us = rng() % 4 == 0 ? 0 : rng() % 300;

		if (pthread_create(&th, NULL, short_lived, (void *)us) != 0)
			return 1;
		pthread_join(th, NULL);
	}
	printf("churned %ld\n", n);
	fflush(stdout);
	wait_stdin_eof();
	return 0;
}

/* --- a storm of process events ------------------------------------------------ */

struct storm {
	const char *name;
	struct timespec end;
	unsigned long threads;
};

static bool storm_over(const struct storm *st)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > st->end.tv_sec || (now.tv_sec == st->end.tv_sec && now.tv_nsec >= st->end.tv_nsec);
}

static void *storm_nop(void *arg)
{
	return arg;
}

static void *storm_creator(void *arg)
{
	struct storm *st = arg;

	prctl(PR_SET_NAME, st->name);
	while (!storm_over(st)) {
		pthread_t th;

		if (pthread_create(&th, NULL, storm_nop, NULL) != 0)
			break;
		pthread_join(th, NULL);
		st->threads++;
	}
	return NULL;
}

static int idle_start(long n);

/* Renames and new threads as fast as the machine allows: each is a
 * process event the connector hands to every listener. */
static int mode_storm(long seconds, const char *name)
{
	struct storm st = { .name = name };
	unsigned long renames = 0;
	char comm[16];
	pthread_t th;

	if (getenv("ABUSE_IDLE") && idle_start(atol(getenv("ABUSE_IDLE"))) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &st.end);
	st.end.tv_sec += seconds;
	if (pthread_create(&th, NULL, storm_creator, &st) != 0)
		return 1;
	while (!storm_over(&st)) {
		snprintf(comm, sizeof(comm), "%s%lu", name, renames % 2);
		prctl(PR_SET_NAME, comm);
		renames++;
	}
	pthread_join(th, NULL);
	printf("storm: renames=%lu threads=%lu\n", renames, st.threads);
	return 0;
}

/* --- idle threads ---------------------------------------------------------- */

static int idle_pipe[2];
static pid_t idle_tids[4096];

static void *idle_main(void *arg)
{
	char c;

	const char *name = getenv("ABUSE_NAME");

	if (name) {
		char n[16];
		snprintf(n, sizeof(n), "%s%u", name, (unsigned)(uintptr_t)arg + 1);
		pthread_setname_np(pthread_self(), n);
	}
	__atomic_store_n(&idle_tids[(uintptr_t)arg], gettid(), __ATOMIC_RELEASE);
	/* blocks until the process exits */
	while (read(idle_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/* Start n idle threads and wait until each has written its tid. */
static int idle_start(long n)
{
	if (n < 1 || n > (long)(sizeof(idle_tids) / sizeof(idle_tids[0])) || pipe(idle_pipe) < 0)
		return -1;
	for (long i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, idle_main, (void *)(uintptr_t)i) != 0)
			return -1;
	}
	for (long i = 0; i < n; i++)
		while (!__atomic_load_n(&idle_tids[i], __ATOMIC_ACQUIRE))
			usleep(100);
	return 0;
}

static int mode_threads(long n)
{
	if (idle_start(n) < 0)
		return 1;
	printf("tids");
	for (long i = 0; i < n; i++)
		printf(" %d", (int)idle_tids[i]);
	printf("\n");
	fflush(stdout);
	wait_stdin_eof();
	return 0;
}

static int mode_self(long k, int argc, char **argv)
{
	static const char *const keys[] = { "@TID@", "@TID1@", "@TID2@", "@TID3@", "@TID4@", "@TID5@",
					    "@TID6@", "@TID7@", "@TID8@", "@TID9@", "@PID@" };
	long vals[11];
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64], q[320];
	int fd;

	if (getenv("ABUSE_NODUMP") && strcmp(getenv("ABUSE_NODUMP"), "1") == 0 && prctl(PR_SET_DUMPABLE, 0) < 0)
		return 1;
	if (k < 1 || k > MAX_SELF_THREADS || idle_start(k) < 0 || (fd = conn()) < 0)
		return 1;
	for (int i = 0; i < 10; i++)
		vals[i] = i == 0 ? idle_tids[0] : i <= k ? idle_tids[i - 1] : 0;
	vals[10] = getpid();
	printf("self: pid=%d dumpable=%d tids=", (int)getpid(), prctl(PR_GET_DUMPABLE));
	for (long i = 0; i < k; i++)
		printf("%s%d", i ? "," : "", (int)idle_tids[i]);
	printf("\n");
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "@WAIT@") == 0) { /* hold the threads (and registrations) */
			printf("WAITING\n");
			fflush(stdout);
			wait_stdin_eof();
			continue;
		}
		subst(argv[i], keys, vals, 11, m, sizeof(m));
		request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
		printf("REPLY %s\nKERNEL", buf);
		for (long t = 0; t < k; t++) {
			query(idle_tids[t], q, sizeof(q));
			printf(" %ld:%s", t + 1, q);
		}
		printf("\nNICE");
		for (long t = 0; t < k; t++) {
			errno = 0;
			int nv = getpriority(PRIO_PROCESS, (id_t)idle_tids[t]);
			if (nv == -1 && errno)
				printf(" %ld:error:%s", t + 1, strerror(errno));
			else
				printf(" %ld:%d", t + 1, nv);
		}
		printf("\n");
	}
	close(fd);
	return 0;
}

/* --- a connection that outlives the process that opened it ------------------ */

static int mode_orphan(const char *tmpl, bool parent_exits)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64], line[64];
	pid_t parent = getpid(), c;
	int fd = conn();

	if (fd < 0)
		return 1;
	printf("parent %d\n", (int)parent);
	fflush(stdout);
	c = fork();
	if (c < 0)
		return 1;
	if (c > 0) {
		if (parent_exits)
			_exit(0);
		pause(); /* the child ends us */
		_exit(0);
	}
	if (parent_exits)
		for (int i = 0; i < 1000 && getppid() == parent; i++)
			usleep(10000);
	printf("ready%s\n", parent_exits && getppid() == parent ? " (parent still alive!)" : "");
	fflush(stdout);
	if (read_line(line, sizeof(line)) < 0)
		return 1;
	subst1(tmpl, "@PPID@", parent, m, sizeof(m));
	request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
	printf("REPLY %s\n", buf[0] ? buf : code);
	fflush(stdout);
	if (!parent_exits)
		kill(parent, SIGKILL);
	return 0;
}

/* The connection outlives the identity of the process that opened it: the
 * parent becomes a setuid program, the child speaks for it. */
static int mode_exec(const char *tmpl, char **prog)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64], line[64];
	pid_t parent = getpid(), c;
	int fd = conn();

	if (fd < 0)
		return 1;
	c = fork();
	if (c < 0)
		return 1;
	if (c > 0) {
		execv(prog[0], prog);
		_exit(127);
	}
	printf("parent %d\n", (int)parent);
	fflush(stdout);
	if (read_line(line, sizeof(line)) < 0)
		return 1;
	subst1(tmpl, "@PPID@", parent, m, sizeof(m));
	request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
	printf("REPLY %s\n", buf[0] ? buf : code);
	fflush(stdout);
	return 0;
}

/* A registration made while the process is still the client's, then the
 * process becomes a setuid program: does the grant follow it? */
static int mode_regexec(const char *tmpl, char **prog)
{
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64], line[64];
	int fd = conn();

	if (fd < 0)
		return 1;
	subst1(tmpl, "@PID@", getpid(), m, sizeof(m));
	request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
	printf("REPLY %s\npid %d\n", buf[0] ? buf : code, (int)getpid());
	fflush(stdout);
	if (read_line(line, sizeof(line)) < 0)
		return 1;
	execv(prog[0], prog);
	return 127;
}

struct threxec {
	char **prog;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	bool go;
};

static void *threxec_main(void *arg)
{
	struct threxec *x = arg;

	pthread_mutex_lock(&x->lock);
	x->tid = gettid();
	pthread_cond_broadcast(&x->cond);
	while (!x->go)
		pthread_cond_wait(&x->cond, &x->lock);
	pthread_mutex_unlock(&x->lock);
	execv(x->prog[0], x->prog);
	_exit(127);
}

/* A registration of a thread that is not the main thread, which then execs:
 * the exec'd program runs as the process's pid, with the thread's
 * scheduling (the kernel's de_thread). */
static int mode_threxec(const char *tmpl, char **prog)
{
	static struct threxec x = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	char m[MSG_MAX + 1], buf[MSG_MAX + 1], code[64], line[64];
	const char *const keys[] = { "@TID@", "@PID@" };
	pthread_t th;
	int fd = conn();

	if (fd < 0)
		return 1;
	x.prog = prog;
	if (pthread_create(&th, NULL, threxec_main, &x) != 0)
		return 1;
	pthread_mutex_lock(&x.lock);
	while (!x.tid)
		pthread_cond_wait(&x.cond, &x.lock);
	pthread_mutex_unlock(&x.lock);
	subst(tmpl, keys, (const long[]){ x.tid, getpid() }, 2, m, sizeof(m));
	request(fd, m, strlen(m), buf, sizeof(buf), code, sizeof(code));
	printf("REPLY %s\npid %d tid %d\n", buf[0] ? buf : code, (int)getpid(), (int)x.tid);
	fflush(stdout);
	if (read_line(line, sizeof(line)) < 0)
		return 1;
	pthread_mutex_lock(&x.lock);
	x.go = true;
	pthread_cond_broadcast(&x.cond);
	pthread_mutex_unlock(&x.lock);
	for (;;)
		pause();   /* the exec in T ends this thread */
}

/* Modes that wait for stdin to close, however long the test takes. */
static bool holds_until_eof(const char *mode)
{
	static const char *const m[] = { "hold", "connflood", "noread", "threads", "self", "churn", "orphan", "heir", "exec",
					 "regexec",
					 "threxec", "unread", "spawnreg" };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (strcmp(mode, m[i]) == 0)
			return true;
	return false;
}

static void usage(void)
{
	fprintf(stderr, "usage: abuse-client MODE [SOCKET] ARGS... (see the comment at the top of abuse-client.c)\n");
	exit(64);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	signal(SIGPIPE, SIG_IGN);
	/* never outlive the test: modes that hold threads or connections until
	 * stdin closes end with it (or with the test script); the rest are a
	 * bounded amount of work, each I/O bounded by IO_TIMEOUT_S, and the alarm
	 * only catches a hang, far beyond what a sanitizer build needs */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!holds_until_eof(mode))
		alarm(ALARM_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
	raise_nofile();
	if (strcmp(mode, "churn") == 0 && argc == 3)
		return mode_churn(atol(argv[2]));
	if (strcmp(mode, "threads") == 0 && argc == 3)
		return mode_threads(atol(argv[2]));
	if (strcmp(mode, "storm") == 0 && argc == 4 && atol(argv[2]) > 0 && atol(argv[2]) < ALARM_S &&
	    strlen(argv[3]) <= 14)
		return mode_storm(atol(argv[2]), argv[3]);
	if (strcmp(mode, "connflood") == 0 && argc == 3) {
		sock_path = argv[2];
		return mode_connflood();
	}
	if (argc < 4)
		usage();
	sock_path = argv[2];
	if (strcmp(mode, "garbage") == 0)
		return mode_garbage(atol(argv[3]));
	if (strcmp(mode, "empty") == 0)
		return mode_empty(atol(argv[3]));
	if (strcmp(mode, "oversized") == 0)
		return mode_oversized(argc - 3, argv + 3);
	if (strcmp(mode, "fds") == 0 && (argc == 5 || argc == 6))
		return mode_fds(atoi(argv[3]), argv[4], argc == 6 ? atol(argv[5]) : 1);
	if (strcmp(mode, "many") == 0)
		return mode_many(atol(argv[3]));
	if (strcmp(mode, "hold") == 0)
		return mode_hold(atol(argv[3]));
	if (strcmp(mode, "die") == 0 && argc == 5)
		return mode_die(atol(argv[3]), argv[4]);
	if (strcmp(mode, "noread") == 0 && argc == 5)
		return mode_noread(atol(argv[3]), argv[4]);
	if (strcmp(mode, "unread") == 0 && argc == 5)
		return mode_unread(atol(argv[3]), argv[4]);
	if (strcmp(mode, "spawnreg") == 0 && argc == 5)
		return mode_spawnreg(atol(argv[3]), argv[4]);
	if (strcmp(mode, "flood") == 0 && argc == 5)
		return mode_flood(atol(argv[3]), argv[4], 0);
	if (strcmp(mode, "flood-for") == 0 && argc == 5 && atol(argv[3]) > 0 && atol(argv[3]) < ALARM_S - IO_TIMEOUT_S)
		return mode_flood(0, argv[4], (uint64_t)atol(argv[3]) * 1000000u);
	if (strcmp(mode, "each") == 0)
		return mode_each(argv[3], argc - 4, argv + 4);
	if (strcmp(mode, "race") == 0 && argc == 5)
		return mode_race(atol(argv[3]), argv[4]);
	if (strcmp(mode, "self") == 0 && argc >= 5)
		return mode_self(atol(argv[3]), argc - 4, argv + 4);
	if (strcmp(mode, "orphan") == 0 && argc == 4)
		return mode_orphan(argv[3], true);
	if (strcmp(mode, "heir") == 0 && argc == 4)
		return mode_orphan(argv[3], false);
	if (strcmp(mode, "exec") == 0 && argc >= 5)
		return mode_exec(argv[3], argv + 4);
	if (strcmp(mode, "regexec") == 0 && argc >= 5)
		return mode_regexec(argv[3], argv + 4);
	if (strcmp(mode, "threxec") == 0 && argc >= 5)
		return mode_threxec(argv[3], argv + 4);
	usage();
	return 64;
}
