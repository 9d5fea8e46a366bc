/* escape.h: one escaping function per place an untrusted string leaves
 * rtschedd. Thread and process names (the kernel takes any bytes but NUL
 * for a comm and escapes none), executable paths, cgroup and unit names and
 * what a client wrote into a request are chosen by whoever runs the thread
 * or sends the request; each sink below would read some byte of them as
 * syntax of its own:
 *
 *   escape_text()  a log line, a terminal, an sd_notify STATUS= value: a
 *                  newline forges a line (a journal entry, a systemd
 *                  assignment such as STOPPING=1), an ESC or a C1 control
 *                  drives the terminal. Controls (C0, DEL, C1) and bytes
 *                  that are not UTF-8 become \xNN.
 *   escape_json()  a JSON string: quotes, backslashes and controls escaped,
 *                  bytes that are not UTF-8 become U+FFFD (JSON is UTF-8).
 *   escape_prom()  a Prometheus label value: backslash, double quote and
 *                  newline as the text format says; other controls and bytes
 *                  that are not UTF-8 become U+FFFD (a scrape of a textfile
 *                  with invalid UTF-8 fails whole).
 *
 * Every string from outside goes through the one of its sink; the wire
 * protocol has its own percent-encoding (protocol.h). */
#ifndef RTSCHED_ESCAPE_H
#define RTSCHED_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* The length of the UTF-8 sequence at p (1..4), 0 if it is not one. */
size_t utf8_seq_len(const unsigned char *p);
/* `in` for a log line, a terminal or sd_notify, into buf (cut to fit, always
 * NUL-terminated; 4 bytes of buf per byte of in always fit). Returns buf. */
char *escape_text(char *buf, size_t len, const char *in);
/* `in` as a JSON string, quotes included. */
void escape_json(FILE *f, const char *in);
/* `in` as the inside of a Prometheus label value (the quotes are the caller's). */
void escape_prom(FILE *f, const char *in);

#endif
