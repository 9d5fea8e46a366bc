/* bpfcheck.h: the diagnosis finding about the BPF wake-up observer, for
 * `rtschedd --check` (which tries to load it itself) and `rtschedctl check`
 * (which reports what the running daemon got at start). One stable code per
 * reason, all but the first warnings (rtschedd runs on without it, showing
 * schedstat means instead of histograms):
 *   bpf-observer        ok       the observer loads (or is loaded)
 *   bpf-off             info     observe-threads = 0 in the configuration
 *   bpf-not-built       warning  rtschedd was built without libbpf
 *   bpf-no-btf          warning  the kernel has no BTF (/sys/kernel/btf/vmlinux)
 *   bpf-no-caps         warning  no CAP_BPF + CAP_PERFMON when loading
 *   bpf-lockdown        warning  kernel lockdown (confidentiality) forbids it
 *   bpf-kernel-too-old  warning  before Linux 5.12, or a tracepoint is missing
 *   bpf-no-syscall      warning  the kernel has no bpf() (CONFIG_BPF_SYSCALL=n)
 *   bpf-verifier        warning  the kernel's verifier rejected the programs
 *   bpf-no-memory       warning  the maps could not be allocated or mapped
 *   bpf-failed          warning  any other failure, with libbpf's words
 * and about the catcher of refused scheduling calls (catch-refused):
 *   catcher             ok       it loads (or is loaded)
 *   catcher-off         info     catch-refused = no in the configuration
 *   catcher-unavailable warning  it cannot load here, with the reason */
#ifndef RTSCHED_BPFCHECK_H
#define RTSCHED_BPFCHECK_H

#include <stdbool.h>

#include "daemon/diag/diag.h"

/* Append the finding for err (0: loaded; else bpfobs_new()'s -errno, or
 * -ECANCELED for observe-threads = 0) with its reason why. daemon: about the
 * running daemon, else about the checking process. -ENOMEM. */
int bpfcheck_add(struct diag_report *rep, int err, const char *why, bool daemon);
/* rtschedd --check: load the observer here and unload it, then append the
 * finding. observe_threads 0 gives bpf-off without trying. */
int bpfcheck_run(struct diag_report *rep, unsigned observe_threads);

/* The catcher's finding for err (0: loaded; -ECANCELED: catch-refused =
 * no; else catcher_new()'s -errno) with why. -ENOMEM. */
int bpfcheck_catcher_add(struct diag_report *rep, int err, const char *why, bool daemon);
/* rtschedd --check: load the catcher here and unload it (unless enabled is
 * false), then append its finding. */
int bpfcheck_catcher_run(struct diag_report *rep, bool enabled);

#endif
