/* bpfcheck.c: the BPF observer's diagnosis finding (bpfcheck.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>

#include "daemon/observe/bpfcheck.h"
#include "daemon/observe/bpf/bpfobs.h"
#include "daemon/observe/bpf/catcher.h"

int bpfcheck_add(struct diag_report *rep, int err, const char *why, bool daemon)
{
	static const struct {
		int err;
		const char *code;
		const char *fix;
	} reasons[] = {
		{ -ENOPKG, "bpf-not-built",
		  "rebuild with libbpf-dev, bpftool and clang installed (configure --enable-bpf)" },
		{ -ENOENT, "bpf-no-btf", "run a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's are)" },
		{ -EPERM, "bpf-no-caps",
		  "start rtschedd with CAP_BPF and CAP_PERFMON (the shipped unit grants both in "
		  "AmbientCapabilities= and CapabilityBoundingSet=; rtschedd drops them after loading)" },
		{ -EACCES, "bpf-lockdown", "boot with lockdown=integrity (or none) instead of confidentiality" },
		{ -EOPNOTSUPP, "bpf-kernel-too-old", "run Linux 5.12 or later with BTF tracepoints" },
		{ -ENOSYS, "bpf-no-syscall", "run a kernel built with CONFIG_BPF_SYSCALL=y" },
		{ -ENOEXEC, "bpf-verifier", "report this kernel version and the message to rtschedd's developers" },
		{ -ENOMEM, "bpf-no-memory", "lower observe-threads = or raise the service's memory limit" },
	};
	const char *who = daemon ? "the running rtschedd" : "this process";
	char msg[DIAG_TEXT_MAX];

	if (err == 0) {
		snprintf(msg, sizeof(msg), "the BPF wake-up observer %s: managed threads get timer-lateness and "
			 "wake-up-latency histograms (rtschedctl jitter, kinds bpf-timer and bpf-wakeup)",
			 daemon ? "is loaded" : "loads here");
		return diag_report_add(rep, "bpf-observer", DIAG_OK, msg, NULL);
	}
	if (err == -ECANCELED)
		return diag_report_add(rep, "bpf-off", DIAG_INFO,
				       "the BPF wake-up observer is off (observe-threads = 0): managed threads "
				       "show schedstat means only", "set observe-threads = 64 and restart rtschedd");
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].err == err) {
			snprintf(msg, sizeof(msg), "no BPF wake-up observer in %s (schedstat means only): %s", who,
				 why && why[0] ? why : "?");
			return diag_report_add(rep, reasons[i].code, DIAG_WARNING, msg, reasons[i].fix);
		}
	snprintf(msg, sizeof(msg), "no BPF wake-up observer in %s (schedstat means only): %s", who,
		 why && why[0] ? why : "?");
	return diag_report_add(rep, "bpf-failed", DIAG_WARNING, msg,
			       "see the message; `bpftool feature probe` shows what the kernel offers");
}

int bpfcheck_run(struct diag_report *rep, unsigned observe_threads)
{
	struct bpfobs *o = NULL;
	char why[512] = "";
	int r;

	if (!observe_threads)
		return bpfcheck_add(rep, -ECANCELED, NULL, false);
	r = bpfobs_new(&o, 1, false, why, sizeof(why));
	bpfobs_free(o);
	return bpfcheck_add(rep, r, why, false);
}

int bpfcheck_catcher_add(struct diag_report *rep, int err, const char *why, bool daemon)
{
	char msg[DIAG_TEXT_MAX];

	if (err == 0) {
		snprintf(msg, sizeof(msg), "the catcher of refused scheduling calls %s: a sched_setscheduler, "
			 "sched_setparam or sched_setattr refused with EPERM is granted as a register by its "
			 "caller would be (rtschedctl list shows SOURCE caught)", daemon ? "is loaded" : "loads here");
		return diag_report_add(rep, "catcher", DIAG_OK, msg, NULL);
	}
	if (err == -ECANCELED)
		return diag_report_add(rep, "catcher-off", DIAG_INFO,
				       "the catcher of refused scheduling calls is off (catch-refused = no): "
				       "programs refused by the kernel stay as they are",
				       "set catch-refused = yes in [daemon] and restart rtschedd");
	snprintf(msg, sizeof(msg), "no catcher of refused scheduling calls in %s: %s",
		 daemon ? "the running rtschedd" : "this process", why && why[0] ? why : "?");
	return diag_report_add(rep, "catcher-unavailable", DIAG_WARNING, msg,
			       err == -ENOPKG ? "rebuild with libbpf-dev, bpftool and clang (configure --enable-bpf)" :
			       "see the message; programs can still be started with rtschedctl run");
}

int bpfcheck_catcher_run(struct diag_report *rep, bool enabled)
{
	struct catcher *c = NULL;
	char why[512] = "";
	int r;

	if (!enabled)
		return bpfcheck_catcher_add(rep, -ECANCELED, NULL, false);
	r = catcher_new(&c, why, sizeof(why));
	catcher_free(c);
	return bpfcheck_catcher_add(rep, r, why, false);
}
