/* protocol.c: encoding and parsing of rtschedd's control messages (see
 * protocol.h). The parser never trusts the input: it works on a bounded
 * copy, refuses anything it doesn't understand and never allocates. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/protocol.h"

static const struct {
	const char *code;
	int err;
} errors[PE__MAX] = {
	[PE_NONE] = { "none", 0 },
	[PE_BAD_REQUEST] = { "bad-request", EINVAL },
	[PE_TOO_LARGE] = { "too-large", EMSGSIZE },
	[PE_VERSION] = { "version", EPROTO },
	[PE_UNKNOWN_OP] = { "unknown-op", EOPNOTSUPP },
	[PE_NO_SUCH_THREAD] = { "no-such-thread", ESRCH },
	[PE_NOT_OWN_THREAD] = { "not-own-thread", EPERM },
	[PE_STALE_THREAD] = { "stale-thread", ESTALE },
	[PE_NOT_ADMIN] = { "not-admin", EACCES },
	[PE_UNKNOWN_ROLE] = { "unknown-role", ENOENT },
	[PE_POLICY_DENIED] = { "policy-denied", EPERM },
	[PE_PRIORITY_DENIED] = { "priority-denied", EPERM },
	[PE_CPU_DENIED] = { "cpu-denied", EPERM },
	[PE_QUOTA] = { "quota", EDQUOT },
	[PE_RATE_LIMITED] = { "rate-limited", EAGAIN },
	[PE_APPLY_FAILED] = { "apply-failed", EIO },
	[PE_NOT_REGISTERED] = { "not-registered", ENOENT },
	[PE_CONFIG_INVALID] = { "config-invalid", EINVAL },
	[PE_INTERNAL] = { "internal", EIO },
	[PE_WATCHDOG_COOLDOWN] = { "watchdog-cooldown", EBUSY },
	[PE_NICE_DENIED] = { "nice-denied", EPERM },
	[PE_ABOVE_MAX] = { "above-max-priority", EPERM },
	[PE_RTPRIO_CAP] = { "rtprio-cap", EPERM },
	[PE_UNSUPPORTED_TARGET] = { "deadline-target", EBUSY },
	[PE_RTTIME_ZERO] = { "rttime-zero", EPERM },
	[PE_NOT_OBSERVED] = { "not-observed", ENODATA },
	[PE_RTTIME_OVER_MAX] = { "rttime-over-max", EPERM },
};

const char *proto_error_code(enum proto_error e)
{
	return e < PE__MAX ? errors[e].code : "internal";
}

int proto_error_from_code(const char *code)
{
	for (int i = PE_NONE + 1; i < PE__MAX; i++)
		if (strcmp(code, errors[i].code) == 0)
			return i;
	return -EINVAL;
}

int proto_error_errno(enum proto_error e)
{
	return e < PE__MAX ? errors[e].err : EIO;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode %XX in place; -EINVAL on a bad escape or an escaped NUL. */
static int decode(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		int hi = hexval(r[1]), lo = hi < 0 ? -1 : hexval(r[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return -EINVAL;
		*w++ = (char)(hi << 4 | lo);
		r += 2;
	}
	*w = '\0';
	return 0;
}

/* Split "k=v k=v" (starting at p) into fields, decoding values. */
static int parse_fields(struct proto_msg *m, char *p, size_t max)
{
	char *save = NULL;

	m->n = 0;
	for (char *tok = strtok_r(p, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return -EINVAL;
		if (m->n == max)
			return -E2BIG;
		*eq = '\0';
		for (char *k = tok; *k; k++)
			if (!isalnum((unsigned char)*k) && *k != '_' && *k != '-')
				return -EINVAL;
		if (decode(eq + 1) < 0)
			return -EINVAL;
		m->f[m->n].key = tok;
		m->f[m->n].value = eq + 1;
		m->n++;
	}
	return 0;
}

/* Bounded copy; only printable ASCII is valid on the wire. */
static int copy_in(struct proto_msg *m, const void *data, size_t len)
{
	const unsigned char *d = data;

	if (len > PROTO_MSG_MAX)
		return -E2BIG;
	for (size_t i = 0; i < len; i++)
		if (d[i] < 0x20 || d[i] > 0x7e)
			return -EINVAL;
	memcpy(m->buf, data, len);
	m->buf[len] = '\0';
	m->head = m->rest = NULL;
	m->n = 0;
	return 0;
}

int proto_parse_request(struct proto_msg *m, const void *data, size_t len)
{
	int r = copy_in(m, data, len);

	if (r < 0)
		return r;
	if (len == 0)
		return -EINVAL;
	return parse_fields(m, m->buf, PROTO_FIELDS_MAX);
}

/* Whether s can be a diagnosis code on the wire: [a-z0-9-], 1..PROTO_DIAG_MAX-1. */
static bool diag_code_ok(const char *s, size_t n)
{
	if (n == 0 || n >= PROTO_DIAG_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}

int proto_parse_reply(struct proto_msg *m, const void *data, size_t len)
{
	int r = copy_in(m, data, len);
	char *sp;

	if (r < 0)
		return r;
	sp = strchr(m->buf, ' ');
	if (sp)
		*sp = '\0';
	m->head = m->buf;
	if (strcmp(m->head, "ERR") == 0) {
		char *code_end, *v;
		size_t k;

		m->rest = sp ? sp + 1 : "";
		m->n = 0;
		/* "ERR CODE diag=DIAG MESSAGE": the diagnosis becomes field "diag",
		 * and rest stays "CODE MESSAGE" */
		code_end = strchr(m->rest, ' ');
		if (code_end && strncmp(code_end + 1, "diag=", 5) == 0) {
			v = code_end + 6;
			k = strcspn(v, " ");
			if (diag_code_ok(v, k)) {
				memcpy(m->diag, v, k);
				m->diag[k] = '\0';
				m->f[0].key = "diag";
				m->f[0].value = m->diag;
				m->n = 1;
				memmove(code_end, v + k, strlen(v + k) + 1);
			}
		}
		return 0;
	}
	if (strcmp(m->head, "OK") != 0 && strcmp(m->head, "ROW") != 0)
		return -EINVAL;
	return sp ? parse_fields(m, sp + 1, PROTO_REPLY_FIELDS_MAX) : 0;
}

const char *proto_get(const struct proto_msg *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->f[i].key, key) == 0)
			return m->f[i].value;
	return NULL;
}

int proto_parse_long(const char *v, long min, long max, long *out)
{
	char *end;
	long n;

	/* digits with an optional '-', nothing else: strtol would also take
	 * leading blanks and a '+', so "tid=%20N" would name tid N */
	if (!((*v >= '0' && *v <= '9') || (v[0] == '-' && v[1] >= '0' && v[1] <= '9')))
		return -EINVAL;
	errno = 0;
	n = strtol(v, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || n < min || n > max)
		return -ERANGE;
	*out = n;
	return 0;
}

int proto_get_long(const struct proto_msg *m, const char *key, long min, long max, long *out)
{
	const char *v = proto_get(m, key);

	return v ? proto_parse_long(v, min, max, out) : -ENOENT;
}

void proto_begin(struct proto_buf *b, const char *head)
{
	b->len = 0;
	b->overflow = false;
	b->data[0] = '\0';
	if (head) {
		size_t n = strlen(head);
		memcpy(b->data, head, n + 1);
		b->len = n;
	}
}

/* Append raw text; remembers overflow instead of truncating silently. */
static void put(struct proto_buf *b, const char *s, size_t n)
{
	if (b->overflow || b->len + n > PROTO_MSG_MAX) {
		b->overflow = true;
		return;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void proto_add(struct proto_buf *b, const char *key, const char *value)
{
	char esc[4];

	if (b->len)
		put(b, " ", 1);
	put(b, key, strlen(key));
	put(b, "=", 1);
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '%' && *p != '=') {
			put(b, (const char *)p, 1);
			continue;
		}
		snprintf(esc, sizeof(esc), "%%%02X", *p);
		put(b, esc, 3);
	}
}

void proto_add_long(struct proto_buf *b, const char *key, long value)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", value);
	proto_add(b, key, num);
}

__attribute__((format(printf, 4, 0)))
static void verror(struct proto_buf *b, enum proto_error e, const char *diag, const char *fmt, va_list ap)
{
	int n;

	if (diag && diag_code_ok(diag, strlen(diag)))
		n = snprintf(b->data, sizeof(b->data), "ERR %s diag=%s ", proto_error_code(e), diag);
	else
		n = snprintf(b->data, sizeof(b->data), "ERR %s ", proto_error_code(e));
	vsnprintf(b->data + n, sizeof(b->data) - (size_t)n, fmt, ap);
	/* the message is free text, but only printable ASCII goes on the wire */
	for (char *p = b->data; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	b->len = strlen(b->data);
	b->overflow = false;
}

void proto_error(struct proto_buf *b, enum proto_error e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(b, e, NULL, fmt, ap);
	va_end(ap);
}

void proto_error_diag(struct proto_buf *b, enum proto_error e, const char *diag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(b, e, diag, fmt, ap);
	va_end(ap);
}
