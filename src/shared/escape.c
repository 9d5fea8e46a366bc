/* escape.c: escaping per sink (see escape.h). */
#include "autoconfig.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shared/escape.h"

size_t utf8_seq_len(const unsigned char *p)
{
	size_t n;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)   /* a NUL ends the string here too */
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates and what lies past U+10FFFF are not UTF-8 */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A C1 control (U+0080..U+009F), which 8-bit terminals read as ESC sequences. */
static bool is_c1(const unsigned char *p, size_t n)
{
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

char *escape_text(char *buf, size_t len, const char *in)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	if (!len)
		return buf;
	while (*p) {
		size_t n = utf8_seq_len(p);

		if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			if (o + 1 >= len)
				break;
			buf[o++] = (char)*p++;
		} else if (n > 1 && !is_c1(p, n)) {
			if (o + n >= len)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			/* a control, or a byte that starts no UTF-8 sequence: one
			 * byte at a time, so what follows is judged afresh */
			if (o + 4 >= len)
				break;
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 0xf];
			p++;
		}
	}
	buf[o] = '\0';
	return buf;
}

void escape_json(FILE *f, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_seq_len(p);

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else if (n == 0) {
			fputs("\\ufffd", f);
			p++;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

void escape_prom(FILE *f, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;

	while (*p) {
		size_t n = utf8_seq_len(p);

		if (*p == '\\' || *p == '"') {
			fprintf(f, "\\%c", *p++);
		} else if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if (n == 0 || *p < 0x20 || *p == 0x7f || is_c1(p, n)) {
			fputs("\xef\xbf\xbd", f);   /* U+FFFD */
			p += n ? n : 1;
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
}
