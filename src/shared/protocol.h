/* protocol.h: rtschedd's control protocol, shared by the daemon, rtschedctl
 * and librtsched. Documented in rtschedd-protocol(7).
 *
 * AF_UNIX SOCK_SEQPACKET, one request per message, text:
 *     v=1 op=register tid=4242 role=audio
 * Fields are key=value separated by single spaces; values are
 * percent-encoded (%XX) for any byte that is not printable ASCII, a space,
 * '%' or '='. Replies are one message "OK key=value ..." or
 * "ERR <code> <message>"; a list reply is zero or more "ROW key=value ..."
 * messages followed by "OK rows=N". */
#ifndef RTSCHED_PROTOCOL_H
#define RTSCHED_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

#define PROTO_VERSION 1
#define PROTO_STR_(x) #x
#define PROTO_STR(x) PROTO_STR_(x)
/* The head word of every request: "v=" and the version. */
#define PROTO_REQUEST_HEAD "v=" PROTO_STR(PROTO_VERSION)
#define PROTO_MSG_MAX 4096      /* longest request or reply message */
#define PROTO_FIELDS_MAX 32      /* most fields in a request */
#define PROTO_REPLY_FIELDS_MAX 96 /* most fields in a reply (status has about 40) */
#define PROTO_DIAG_MAX 40         /* an ERR's diagnosis code, with its NUL (diag.h's DIAG_CODE_MAX) */
/* The daemon's socket, in the run directory the build was configured with
 * (--with-rundir): the daemon, rtschedctl and librtsched agree on it. */
#ifndef RUNDIR
#error "RUNDIR comes from the build (Makefile.am's AM_CPPFLAGS)"
#endif
#define PROTO_DEFAULT_SOCKET RUNDIR "/control"
#define PROTO_SOCKET_ENV "RTSCHED_SOCKET"

/* Refusals and failures: each has a stable code on the wire and an errno
 * that librtsched returns for it. Only the code (a word) is on the wire,
 * never the number: PE_NONE is 0 so that a zeroed reply or grant reads as
 * nothing decided, not as a refusal. */
enum proto_error {
	PE_NONE = 0,      /* nothing refused (never sent) */
	PE_BAD_REQUEST,   /* malformed message */
	PE_TOO_LARGE,     /* message over PROTO_MSG_MAX */
	PE_VERSION,       /* v= is not PROTO_VERSION */
	PE_UNKNOWN_OP,
	PE_NO_SUCH_THREAD,
	PE_NOT_OWN_THREAD,  /* an unprivileged client named another process's task */
	PE_STALE_THREAD,    /* the tid now names a different thread (start time changed) */
	PE_NOT_ADMIN,       /* needs root or the admin group */
	PE_UNKNOWN_ROLE,
	PE_POLICY_DENIED,
	PE_PRIORITY_DENIED,
	PE_CPU_DENIED,
	PE_QUOTA,
	PE_RATE_LIMITED,
	PE_APPLY_FAILED,    /* the kernel refused */
	PE_NOT_REGISTERED,
	PE_CONFIG_INVALID,  /* reload refused: the new config has errors */
	PE_INTERNAL,
	PE_WATCHDOG_COOLDOWN, /* real-time grants paused after a runaway was demoted */
	PE_NICE_DENIED,     /* nice below the user's min-nice */
	PE_ABOVE_MAX,       /* priority above [daemon] max-priority */
	PE_RTPRIO_CAP,      /* priority above the rtprio-cap ceiling (limits.conf / RLIMIT_RTPRIO) */
	PE_UNSUPPORTED_TARGET, /* SCHED_DEADLINE thread: its runtime/deadline/period are not ours to replace */
	PE_RTTIME_ZERO,     /* RLIMIT_RTTIME 0: the kernel would SIGKILL the process at once */
	PE_NOT_OBSERVED,    /* why: the BPF observer does not watch the thread (unavailable, or no slot) */
	PE_RTTIME_OVER_MAX, /* rtkit: the process's hard RLIMIT_RTTIME is above [rtkit] rttime-usec-max */
	PE__MAX,
};

/* Wire code of an error ("not-own-thread"), and back (-EINVAL if unknown). */
const char *proto_error_code(enum proto_error e);
int proto_error_from_code(const char *code);
/* The errno a client library reports for an error code. */
int proto_error_errno(enum proto_error e);

/* A parsed message: fields point into buf, decoded in place. */
struct proto_msg {
	char buf[PROTO_MSG_MAX + 1];
	const char *head;    /* "OK", "ERR", "ROW" in replies; NULL in requests */
	const char *rest;    /* ERR: the code and message, undecoded (without diag=) */
	char diag[PROTO_DIAG_MAX]; /* ERR: the diagnosis, also field "diag" */
	struct {
		const char *key;
		const char *value;
	} f[PROTO_REPLY_FIELDS_MAX];
	size_t n;
};

/* Parse a request ("k=v k=v"). -EINVAL on a malformed field, -E2BIG on too
 * many fields or too long a message. */
int proto_parse_request(struct proto_msg *m, const void *data, size_t len);
/* Parse a reply: "OK ...", "ROW ..." or "ERR code message". */
int proto_parse_reply(struct proto_msg *m, const void *data, size_t len);
/* Value of a field, or NULL. */
const char *proto_get(const struct proto_msg *m, const char *key);
/* A whole string as a base-10 integer in [min, max]: digits with an optional
 * leading '-', nothing else (no blanks, no '+'). -EINVAL/-ERANGE if bad.
 * Every integer rtschedd reads from a client, a config or its journal. */
int proto_parse_long(const char *v, long min, long max, long *out);
/* Integer field in [min, max]: -ENOENT if absent, -EINVAL/-ERANGE if bad. */
int proto_get_long(const struct proto_msg *m, const char *key, long min, long max, long *out);

/* A message being built. */
struct proto_buf {
	char data[PROTO_MSG_MAX + 1];
	size_t len;
	bool overflow;
};

/* Start a message with a head word ("OK", "ROW", or PROTO_REQUEST_HEAD for requests). */
void proto_begin(struct proto_buf *b, const char *head);
/* Append " key=value", percent-encoding the value. */
void proto_add(struct proto_buf *b, const char *key, const char *value);
/* Append " key=<number>". */
void proto_add_long(struct proto_buf *b, const char *key, long value);
/* "ERR code message" (message not encoded: it is the rest of the line). */
void proto_error(struct proto_buf *b, enum proto_error e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "ERR code diag=DIAG message": with the code of the diagnosed cause (a
 * finding code of `check`, [a-z0-9-]); NULL or "" gives proto_error's form. */
void proto_error_diag(struct proto_buf *b, enum proto_error e, const char *diag, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
