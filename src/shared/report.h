/* report.h: a diagnosis report, a list of findings each with a stable code,
 * a severity, a message and the exact fix; built, ordered and printed as text
 * or JSON.  Shared: the daemon's diagnosis (daemon/diag) fills one, and
 * rtschedctl rebuilds one received over the wire and prints it the same way,
 * without linking any daemon code.  The finding codes are listed in
 * daemon/diag/diag.h. */
#ifndef RTSCHED_REPORT_H
#define RTSCHED_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define DIAG_CODE_MAX 40
#define DIAG_TEXT_MAX 512
#define DIAG_SRC_MAX 300

enum diag_severity { DIAG_OK, DIAG_INFO, DIAG_WARNING, DIAG_ERROR };

struct diag_finding {
	char code[DIAG_CODE_MAX];
	enum diag_severity severity;
	char message[DIAG_TEXT_MAX];
	char fix[DIAG_TEXT_MAX];         /* "" when nothing is to be done */
};

struct diag_report {
	struct diag_finding *v;
	size_t n, cap;
	pid_t pid;                       /* the process examined; 0 if none */
	char comm[17];
	char unit[256];                  /* its systemd unit, "" if none was found */
	char user[64];                   /* whose limits.conf grant was looked up; "" if none */
	/* limits.conf's rtprio for user: LIMITS_UNSET (-2), LIMITS_UNLIMITED (-1) or >= 0 */
	bool has_limits;
	long rtprio_soft, rtprio_hard;
	char soft_src[DIAG_SRC_MAX], hard_src[DIAG_SRC_MAX];  /* "file:line", "" when unset */
};

/* Start an empty report. */
void diag_report_init(struct diag_report *r);
/* Free the findings and reset r. */
void diag_report_free(struct diag_report *r);
/* Append a finding; fix may be NULL.  Over-long text ends in "...".  -ENOMEM. */
int diag_report_add(struct diag_report *r, const char *code, enum diag_severity sev,
		    const char *message, const char *fix);
/* Order findings by severity, errors first, keeping the order within one. */
void diag_report_sort(struct diag_report *r);
/* The highest severity in r (DIAG_OK for an empty report). */
enum diag_severity diag_report_worst(const struct diag_report *r);
/* "ok", "info", "warning", "error". */
const char *diag_severity_name(enum diag_severity s);
/* Parse a severity name; -EINVAL if unknown. */
int diag_severity_from_name(const char *s);
/* Human-readable report. */
void diag_print_text(const struct diag_report *r, FILE *f);
/* One JSON object, for scripts. */
void diag_print_json(const struct diag_report *r, FILE *f);

#endif
