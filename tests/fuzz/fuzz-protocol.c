/* fuzz-protocol.c: libFuzzer target for the control protocol (protocol.h).
 *
 * The input is one message off the socket, given to the request parser and
 * to the reply parser. On top of "no crash, no leak, no UB" it checks what
 * the wire format promises: every parsed field encodes back (proto_add) and
 * parses to the same keys and values, and proto_error() only ever puts
 * printable ASCII on the wire, in a message the reply parser accepts. */
#include "autoconfig.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stop the run with a message libFuzzer shows next to the input. */
#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "fuzz-protocol: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                         \
			abort();                                                    \
		}                                                                   \
	} while (0)

/* A parsed message's fields must sit inside its buffer and be well formed. */
static void check_fields(const struct proto_msg *m, size_t max)
{
	CHECK(m->n <= max);
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->f[i].key, *v = m->f[i].value;

		CHECK(k >= m->buf && k < m->buf + sizeof(m->buf));
		CHECK(v >= m->buf && v < m->buf + sizeof(m->buf));
		CHECK(*k != '\0');
		CHECK(strlen(v) <= PROTO_MSG_MAX);
		CHECK(proto_get(m, k) != NULL);
	}
}

/* Encode the fields of m again and parse the result: same fields back. */
static void check_roundtrip(const struct proto_msg *m)
{
	static struct proto_buf b;
	static struct proto_msg again;

	proto_begin(&b, NULL);
	for (size_t i = 0; i < m->n; i++)
		proto_add(&b, m->f[i].key, m->f[i].value);
	if (b.overflow || m->n == 0)
		return;
	CHECK(b.len <= PROTO_MSG_MAX && strlen(b.data) == b.len);
	CHECK(proto_parse_request(&again, b.data, b.len) == 0);
	CHECK(again.n == m->n);
	for (size_t i = 0; i < m->n; i++) {
		CHECK(strcmp(again.f[i].key, m->f[i].key) == 0);
		CHECK(strcmp(again.f[i].value, m->f[i].value) == 0);
	}
}

/* Only printable ASCII goes on the wire, whatever the message text holds. */
static void check_error(const uint8_t *data, size_t size)
{
	static struct proto_buf b;
	static struct proto_msg m;
	char text[PROTO_MSG_MAX + 64];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	proto_error(&b, (enum proto_error)(size % (PE__MAX + 1)), "%s", text);
	CHECK(b.len == strlen(b.data) && b.len <= PROTO_MSG_MAX);
	for (size_t i = 0; i < b.len; i++)
		CHECK(b.data[i] >= 0x20 && b.data[i] <= 0x7e);
	CHECK(proto_parse_reply(&m, b.data, b.len) == 0);
	CHECK(m.head && strcmp(m.head, "ERR") == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proto_msg m;
	long n;
	int r;

	r = proto_parse_request(&m, data, size);
	CHECK(r == 0 || r == -EINVAL || r == -E2BIG);
	if (r == 0) {
		check_fields(&m, PROTO_FIELDS_MAX);
		check_roundtrip(&m);
		/* what dispatch_request() asks of every request */
		(void)proto_get_long(&m, "v", 0, 1000000, &n);
		(void)proto_get_long(&m, "tid", 1, INT32_MAX, &n);
		(void)proto_get_long(&m, "nice", -20, 19, &n);
		(void)proto_get(&m, "op");
	}

	r = proto_parse_reply(&m, data, size);
	CHECK(r == 0 || r == -EINVAL || r == -E2BIG);
	if (r == 0) {
		CHECK(m.head != NULL);
		if (strcmp(m.head, "ERR") == 0) {
			char code[32];
			int e;

			CHECK(m.rest != NULL);
			/* at most the diagnosis as a field, a code of [a-z0-9-] */
			CHECK(m.n <= 1);
			if (m.n == 1)
				CHECK(strcmp(m.f[0].key, "diag") == 0 && strlen(m.f[0].value) > 0 &&
				      strspn(m.f[0].value, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(m.f[0].value));
			snprintf(code, sizeof(code), "%.*s", (int)strcspn(m.rest, " "), m.rest);
			e = proto_error_from_code(code);
			CHECK(e == -EINVAL || (e >= 0 && e < PE__MAX));
		} else {
			check_fields(&m, PROTO_REPLY_FIELDS_MAX);
		}
	}

	check_error(data, size);
	return 0;
}
