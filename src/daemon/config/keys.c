/* keys.c: the table of every key of rtschedd.conf, one per section kind
 * (see keys.h; how each type is read and printed is value.c's), and where
 * each key's value came from. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/sys/log.h"
#include "shared/protocol.h"
#include "daemon/config/config.h"
#include "daemon/config/keys.h"

_Static_assert(D_N <= CONFIG_KEYS_MAX && R_N <= CONFIG_KEYS_MAX && P_N <= CONFIG_KEYS_MAX &&
	       PR_N <= CONFIG_KEYS_MAX && RK_N <= CONFIG_KEYS_MAX && I_N <= CONFIG_KEYS_MAX && K_N <= CONFIG_KEYS_MAX,
	       "raise CONFIG_KEYS_MAX");
_Static_assert(D_RESET_ON_FORK - D_POLICY == R_RESET_ON_FORK - R_POLICY,
	       "[daemon] and [rule NAME] share the sched_spec keys, in one order");

/* Where a key's value is kept, and the bool saying it was given. */
#define AT(T, m) .offset = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define HAS(T, m) .has = offsetof(T, m) + 1

/* nice prints only for the policies it acts on. */
static bool spec_nice_shown(const struct config_key *k, const void *sec)
{
	const struct sched_spec *s = (const void *)((const char *)sec + k->offset - offsetof(struct sched_spec, nice));

	return s->policy == SCHED_OTHER || s->policy == SCHED_BATCH;
}

/* period-us and strategy are how a latency probe waits; a noise probe spins. */
static bool probe_latency_shown(const struct config_key *k, const void *sec)
{
	return !((const struct probe_conf *)sec)->noise;
}

/* state-file prints as the path the journal has: "" is "state" beside the socket. */
static void state_file_format(const struct config *c, const void *sec, char *buf, size_t len)
{
	config_state_path(c, buf, len);
}

/* budget-us of [rule] and [probe]: 0 would make every wake-up a miss */
#define BUDGET_BAD "'%s' is not a budget; use the latest a wake-up may be, in microseconds (1..1000000)"

/* The sched_spec keys of [daemon] (the default) and of [rule NAME], from key
 * number b, with the section's defaults. */
#define SPEC_KEYS(T, s, b, policy_def, priority_def, reset_def)                                          \
	[(b) + R_POLICY] = { .name = "policy", .type = KEY_POLICY, AT(T, s.policy), .def = (policy_def) }, \
	[(b) + R_PRIORITY] = { .name = "priority", .type = KEY_INT, .min = 0, .max = 99,                 \
			       AT(T, s.priority), .def = (priority_def) },                                \
	[(b) + R_NICE] = { .name = "nice", .type = KEY_INT, .min = -20, .max = 19, AT(T, s.nice),         \
			   .shown = spec_nice_shown },                                                    \
	[(b) + R_CPUS] = { .name = "cpus", .type = KEY_CPUS, AT(T, s.cpus), HAS(T, s.has_cpus),           \
			   .flags = KEY_SHOW_SET, .note = "cpus: not set, affinity is left as the thread has it" }, \
	[(b) + R_RESET_ON_FORK] = { .name = "reset-on-fork", .type = KEY_BOOL, AT(T, s.reset_on_fork),   \
				    .def = (reset_def) }

#define C struct config
static const struct config_key daemon_keys[D_N] = {
	[D_SOCKET] = { .name = "socket", .type = KEY_PATH, AT(C, socket_path), .def_str = PROTO_DEFAULT_SOCKET },
	SPEC_KEYS(C, dflt, D_POLICY, SCHED_FIFO, 10, true),
	[D_MAX_PRIORITY] = { .name = "max-priority", .type = KEY_INT, .min = 1, .max = 99, AT(C, max_priority),
			     .def = 80 },
	[D_LOG_LEVEL] = { .name = "log-level", .type = KEY_LOG_LEVEL, AT(C, log_level), .def = LOG_LEVEL_INFO },
	[D_ADMIN_GROUP] = { .name = "admin-group", .type = KEY_STRING, AT(C, admin_group), .flags = KEY_SHOW_SET },
	[D_RATE_LIMIT] = { .name = "rate-limit", .type = KEY_INT, .min = 0, .max = 1000000, AT(C, rate_limit),
			   .def = 50 },
	[D_RATE_BURST] = { .name = "rate-burst", .type = KEY_INT, .min = 1, .max = 1000000, AT(C, rate_burst),
			   .def = 100 },
	[D_RESCAN] = { .name = "rescan-interval", .type = KEY_INT, .min = 100, .max = 3600000, AT(C, rescan_ms),
		       .def = 1000 },
	[D_PROCESS_EVENTS] = { .name = "process-events", .type = KEY_BOOL, AT(C, process_events), .def = true },
	[D_RTPRIO_CAP] = { .name = "rtprio-cap", .type = KEY_ENUM, AT(C, rtprio_cap), .def = CAP_CONFIG,
			   .choices = (const struct key_choice[]){ { "config", CAP_CONFIG },
								   { "limits-conf", CAP_LIMITS_CONF },
								   { "rlimit", CAP_RLIMIT }, { NULL, 0 } },
			   .bad = "'%s' is not a cap source; use config, limits-conf or rlimit" },
	[D_OVER_CAP] = { .name = "over-cap", .type = KEY_ENUM, AT(C, clamp),
			 .choices = (const struct key_choice[]){ { "refuse", false }, { "clamp", true }, { NULL, 0 } },
			 .bad = "'%s' is not valid; use refuse or clamp" },
	[D_LIMITS_CONF] = { .name = "limits-conf", .type = KEY_PATH, AT(C, limits_conf),
			    .def_str = "/etc/security/limits.conf" },
	[D_LIMITS_DIR] = { .name = "limits-dir", .type = KEY_PATH, AT(C, limits_dir),
			   .def_str = "/etc/security/limits.d" },
	[D_USER] = { .name = "user", .type = KEY_USER_NAME, AT(C, run_user), .flags = KEY_SHOW_SET },
	[D_STATE_FILE] = { .name = "state-file", .type = KEY_PATH, AT(C, state_file), .format = state_file_format },
	[D_METRICS_FILE] = { .name = "metrics-file", .type = KEY_PATH, AT(C, metrics_file), .flags = KEY_SHOW_SET },
	[D_METRICS_INTERVAL] = { .name = "metrics-interval", .type = KEY_INT, .min = 1, .max = 86400,
				 AT(C, metrics_interval_s), .def = 15 },
	[D_CPU_DMA_LATENCY] = { .name = "cpu-dma-latency", .type = KEY_INT, .min = 0, .max = 1000000,
				AT(C, cpu_dma_latency_us), .def = -1, .flags = KEY_OFF },
	[D_WATCHDOG] = { .name = "watchdog", .type = KEY_BOOL, AT(C, watchdog), .def = true },
	[D_WATCHDOG_THRESHOLD] = { .name = "watchdog-threshold", .type = KEY_INT, .min = 200, .max = 60000,
				   AT(C, watchdog_threshold_ms), .def = 2000 },
	[D_WATCHDOG_COOLDOWN] = { .name = "watchdog-cooldown", .type = KEY_INT, .min = 1, .max = 86400,
				  AT(C, watchdog_cooldown_s), .def = 60 },
	[D_WATCHDOG_DEMOTE] = { .name = "watchdog-demote", .type = KEY_ENUM, AT(C, watchdog_demote_all),
				.choices = (const struct key_choice[]){ { "culprit", false }, { "all", true },
									{ NULL, 0 } },
				.bad = "'%s' is not valid; use culprit (the threads that used the starved CPU) or "
				       "all (every managed real-time thread there)" },
	/* the share of a CPU managed real-time threads may keep over a window,
	 * however they let the canary run (src/daemon/watchdog/duty.c) */
	[D_WATCHDOG_DUTY] = { .name = "watchdog-duty", .type = KEY_INT, .min = 50, .max = 99, AT(C, watchdog_duty),
			      .def = 90, .flags = KEY_OFF },
	/* BPF observer slots, 29 KiB of kernel memory each */
	[D_OBSERVE_THREADS] = { .name = "observe-threads", .type = KEY_INT, .min = 0, .max = 4096,
				AT(C, observe_threads), .def = 64 },
	/* what the observer's CPUs ran while a thread waited (read at start) */
	[D_CULPRITS] = { .name = "culprits", .type = KEY_BOOL, AT(C, culprits), .def = true },
	/* grant the scheduling calls the kernel refused with EPERM (read at start) */
	[D_CATCH_REFUSED] = { .name = "catch-refused", .type = KEY_BOOL, AT(C, catch_refused), .def = false },
	/* a thread without a budget: its wake-ups later than this are late */
	[D_LATE_THRESHOLD] = { .name = "late-threshold-us", .type = KEY_INT, .min = 1, .max = 1000000,
			       AT(C, late_threshold_us), .def = 200 },
	/* the IRQs no [irq NAME] claims, kept off these CPUs (src/daemon/irq) */
	[D_IRQ_AVOID_CPUS] = { .name = "irq-avoid-cpus", .type = KEY_AVOID, AT(C, irq_avoid) },
	/* the event loop's own SCHED_FIFO priority and its CPU budget (sys/rtloop.h) */
	[D_LOOP_PRIORITY] = { .name = "loop-priority", .type = KEY_INT, .min = 0, .max = 98, AT(C, loop_priority),
			      .def = 1 },
	[D_LOOP_BUDGET] = { .name = "loop-budget", .type = KEY_INT, .min = 1, .max = 50, AT(C, loop_budget),
			    .def = 10, .flags = KEY_OFF },
	/* version, status, list: per uid, root aside */
	[D_FREE_RATE_LIMIT] = { .name = "free-rate-limit", .type = KEY_INT, .min = 0, .max = 1000000,
				AT(C, free_rate_limit), .def = 200 },
	[D_FREE_RATE_BURST] = { .name = "free-rate-burst", .type = KEY_INT, .min = 1, .max = 1000000,
				AT(C, free_rate_burst), .def = 400 },
};
#undef C

/* --test-config has always printed observe-threads beside rescan-interval
 * and cpu-dma-latency last, while "valid keys are" lists the table order. */
static const unsigned char daemon_print_order[D_N] = {
	D_SOCKET, D_POLICY, D_PRIORITY, D_NICE, D_CPUS, D_RESET_ON_FORK, D_MAX_PRIORITY, D_LOG_LEVEL,
	D_ADMIN_GROUP, D_RATE_LIMIT, D_RATE_BURST, D_FREE_RATE_LIMIT, D_FREE_RATE_BURST, D_RESCAN,
	D_OBSERVE_THREADS, D_CULPRITS, D_CATCH_REFUSED, D_LATE_THRESHOLD,
	D_PROCESS_EVENTS,
	D_RTPRIO_CAP, D_OVER_CAP, D_LIMITS_CONF, D_LIMITS_DIR, D_USER, D_STATE_FILE, D_METRICS_FILE,
	D_METRICS_INTERVAL, D_WATCHDOG, D_WATCHDOG_THRESHOLD, D_WATCHDOG_COOLDOWN, D_WATCHDOG_DEMOTE,
	D_WATCHDOG_DUTY, D_CPU_DMA_LATENCY, D_IRQ_AVOID_CPUS, D_LOOP_PRIORITY, D_LOOP_BUDGET,
};

/* A rule's policy is required and its reset-on-fork follows [daemon]'s
 * (config_validate()): the spec defaults here are never seen. */
/* isolate and resume-latency-us, in [rule NAME] and [probe NAME] alike. */
#define QUIET_KEYS(T, iso, lat)                                                                          \
	[iso] = { .name = "isolate", .type = KEY_BOOL, AT(T, quiet.isolate), .flags = KEY_SHOW_SET },      \
	[lat] = { .name = "resume-latency-us", .type = KEY_INT, .min = 0, .max = 1000000,                  \
		  AT(T, quiet.resume_latency_us), .def = -1, .flags = KEY_OFF | KEY_SHOW_SET }

#define C struct rule
static const struct config_key rule_keys[R_N] = {
	SPEC_KEYS(C, spec, 0, 0, 0, false),
	/* a setting, not a match key: it comes before R_THREAD_NAME */
	[R_BUDGET] = { .name = "budget-us", .type = KEY_INT, .min = 1, .max = 1000000, AT(C, budget_us),
		       .flags = KEY_SHOW_SET, .bad = BUDGET_BAD },
	QUIET_KEYS(C, R_ISOLATE, R_RESUME_LATENCY),
	/* settings too: raise the matched process's RLIMIT_RTPRIO (and
	 * RLIMIT_RTTIME) at exec, with CAP_SYS_RESOURCE (core/rlimit.h) */
	[R_GRANT_RLIMIT] = { .name = "grant-rlimit", .type = KEY_BOOL, AT(C, grant_rlimit), .flags = KEY_SHOW_SET },
	[R_GRANT_RTTIME] = { .name = "grant-rttime-us", .type = KEY_INT, .min = 1000, .max = 60000000,
			     AT(C, grant_rttime_us), .def = -1, .flags = KEY_OFF | KEY_SHOW_SET },
	[R_THREAD_NAME] = { .name = "thread-name", .type = KEY_COMM_GLOB, AT(C, match.thread_name),
			    .flags = KEY_SHOW_SET },
	[R_PROCESS_NAME] = { .name = "process-name", .type = KEY_COMM_GLOB, AT(C, match.process_name),
			     .flags = KEY_SHOW_SET },
	[R_EXE] = { .name = "exe", .type = KEY_GLOB, AT(C, match.exe), .flags = KEY_SHOW_SET },
	[R_USER] = { .name = "user", .type = KEY_UID, AT(C, match.uid), HAS(C, match.has_user),
		     .flags = KEY_SHOW_SET },
	[R_GROUP] = { .name = "group", .type = KEY_GID, AT(C, match.gid), HAS(C, match.has_group),
		      .flags = KEY_SHOW_SET },
	[R_UNIT] = { .name = "unit", .type = KEY_GLOB, AT(C, match.unit), .flags = KEY_SHOW_SET },
	[R_CGROUP] = { .name = "cgroup", .type = KEY_GLOB, AT(C, match.cgroup), .flags = KEY_SHOW_SET },
};
#undef C

/* [user NAME] and [group NAME]: -1 and empty are "not set here", and [user *] fills in. */
#define C struct principal
static const struct config_key principal_keys[P_N] = {
	[P_MAX_PRIORITY] = { .name = "max-priority", .type = KEY_INT, .min = 0, .max = 99, AT(C, max_priority),
			     .def = -1, .flags = KEY_SHOW_SET },
	[P_POLICIES] = { .name = "policies", .type = KEY_POLICIES, AT(C, policies), .flags = KEY_SHOW_SET },
	[P_MAX_THREADS] = { .name = "max-threads", .type = KEY_INT, .min = 0, .max = 1000000, AT(C, max_threads),
			    .def = -1, .flags = KEY_SHOW_SET },
	[P_CPUS] = { .name = "cpus", .type = KEY_CPUS, AT(C, cpus), HAS(C, has_cpus), .flags = KEY_SHOW_SET },
	[P_MIN_NICE] = { .name = "min-nice", .type = KEY_INT, .min = -20, .max = 19, AT(C, min_nice),
			 HAS(C, has_min_nice), .flags = KEY_SHOW_SET },
	/* active: the section counts only while the user sits at the machine (sd-login) */
	[P_SESSION] = { .name = "session", .type = KEY_ENUM, AT(C, session_active), .flags = KEY_SHOW_SET,
			.choices = (const struct key_choice[]){ { "any", false }, { "active", true }, { NULL, 0 } },
			.bad = "'%s' is not valid; use any, or active (only while the user has an active session "
			       "on a local seat)" },
};
#undef C

#define C struct probe_conf
static const struct config_key probe_keys[PR_N] = {
	[PR_CPU] = { .name = "cpu", .type = KEY_CPU, .min = 0, .max = CPU_SETSIZE - 1, AT(C, cpu) },
	[PR_POLICY] = { .name = "policy", .type = KEY_POLICY, AT(C, policy), .def = SCHED_FIFO },
	/* -1: the [daemon] default, filled in by validation */
	[PR_PRIORITY] = { .name = "priority", .type = KEY_INT, .min = 0, .max = 99, AT(C, priority), .def = -1 },
	[PR_PERIOD] = { .name = "period-us", .type = KEY_INT, .min = 10, .max = 1000000, AT(C, period_us),
			.def = 1000, .shown = probe_latency_shown },
	[PR_STRATEGY] = { .name = "strategy", .type = KEY_WORD, AT(C, strategy), .def_str = "sleep",
			  .choices = (const struct key_choice[]){ { "sleep", 0 }, { "hybrid", 0 }, { "busy", 0 },
								  { "adaptive", 0 }, { NULL, 0 } },
			  .bad = "unknown strategy '%s'; use sleep, hybrid, busy or adaptive",
			  .shown = probe_latency_shown },
	/* noise: a busy loop recording gaps (oslat) */
	[PR_MODE] = { .name = "mode", .type = KEY_ENUM, AT(C, noise),
		      .choices = (const struct key_choice[]){ { "latency", false }, { "noise", true }, { NULL, 0 } },
		      .bad = "unknown mode '%s'; use latency or noise" },
	/* at most period-us, and for latency probes only (config_validate()) */
	[PR_BUDGET] = { .name = "budget-us", .type = KEY_INT, .min = 1, .max = 1000000, AT(C, budget_us),
			.flags = KEY_SHOW_SET, .bad = BUDGET_BAD },
	QUIET_KEYS(C, PR_ISOLATE, PR_RESUME_LATENCY),
};
#undef C

static const unsigned char probe_print_order[PR_N] = {
	PR_CPU, PR_POLICY, PR_PRIORITY, PR_MODE, PR_PERIOD, PR_STRATEGY, PR_BUDGET, PR_ISOLATE, PR_RESUME_LATENCY,
};

/* The built-in values are what rtkit itself grants and advertises. */
#define C struct rtkit_conf
static const struct config_key rtkit_keys[RK_N] = {
	[RK_ENABLE] = { .name = "enable", .type = KEY_BOOL, AT(C, enable) },
	[RK_REPLACE] = { .name = "replace-existing", .type = KEY_BOOL, AT(C, replace) },
	[RK_POLICY] = { .name = "policy", .type = KEY_ENUM, AT(C, policy), .def = SCHED_RR,
			.choices = (const struct key_choice[]){ { "rr", SCHED_RR }, { "fifo", SCHED_FIFO },
								{ NULL, 0 } },
			.bad = "'%s' is not valid; use rr (what rtkit grants) or fifo" },
	[RK_MAX_RT_PRIORITY] = { .name = "max-realtime-priority", .type = KEY_INT, .min = 1, .max = 99,
				 AT(C, max_priority), .def = 20 },
	[RK_MIN_NICE] = { .name = "min-nice-level", .type = KEY_INT, .min = -20, .max = 19, AT(C, min_nice),
			  .def = -15 },
	[RK_RTTIME_MAX] = { .name = "rttime-usec-max", .type = KEY_INT, .min = 1000, .max = 3600L * 1000000L,
			    AT(C, rttime_usec_max), .def = 200000,
			    .bad = "'%s' is not a number in 1000..3600000000 (microseconds)" },
	[RK_ROLE] = { .name = "role", .type = KEY_STRING, AT(C, role), .flags = KEY_SHOW_SET },
};
#undef C

/* priority and policy of [irq NAME] print only where the section sets the
 * threads' scheduling; queues only where given. */
static bool irq_sched_shown(const struct config_key *k, const void *sec)
{
	return ((const struct irq_conf *)sec)->priority > 0;
}

#define C struct irq_conf
static const struct config_key irq_keys[I_N] = {
	[I_MATCH] = { .name = "match", .type = KEY_GLOB, AT(C, sel.match), .flags = KEY_SHOW_SET },
	[I_DRIVER] = { .name = "driver", .type = KEY_GLOB, AT(C, sel.driver), .flags = KEY_SHOW_SET },
	[I_DEVICE] = { .name = "device", .type = KEY_GLOB, AT(C, sel.device), .flags = KEY_SHOW_SET },
	[I_PCI_ID] = { .name = "pci-id", .type = KEY_DEVID, AT(C, sel.pci_id), .flags = KEY_SHOW_SET },
	[I_USB_ID] = { .name = "usb-id", .type = KEY_DEVID, AT(C, sel.usb_id), .flags = KEY_SHOW_SET },
	[I_SOUND_CARD] = { .name = "sound-card", .type = KEY_GLOB, AT(C, sel.sound_card), .flags = KEY_SHOW_SET },
	[I_NET_INTERFACE] = { .name = "net-interface", .type = KEY_GLOB, AT(C, sel.net_interface), .flags = KEY_SHOW_SET },
	[I_QUEUES] = { .name = "queues", .type = KEY_NUMBERS, AT(C, sel.queues), HAS(C, sel.has_queues),
		       .flags = KEY_SHOW_SET },
	[I_CPUS] = { .name = "cpus", .type = KEY_CPUS, AT(C, cpus), HAS(C, has_cpus), .flags = KEY_SHOW_SET,
		     .note = "cpus: not set, the affinity is left as it is" },
	[I_SPREAD] = { .name = "spread", .type = KEY_BOOL, AT(C, spread) },
	[I_POLICY] = { .name = "policy", .type = KEY_ENUM, AT(C, policy), .def = SCHED_FIFO,
		       .choices = (const struct key_choice[]){ { "fifo", SCHED_FIFO }, { "rr", SCHED_RR },
							       { NULL, 0 } },
		       .bad = "'%s' is not valid for an IRQ thread; use fifo or rr", .shown = irq_sched_shown },
	[I_PRIORITY] = { .name = "priority", .type = KEY_INT, .min = 1, .max = 99, AT(C, priority),
			 .shown = irq_sched_shown, .note = "priority: not set, the IRQ threads keep their scheduling" },
};
#undef C

#define C struct kthread_conf
static const struct config_key kthread_keys[K_N] = {
	[K_MATCH] = { .name = "match", .type = KEY_COMM_GLOB, AT(C, match), .flags = KEY_SHOW_SET },
	[K_POLICY] = { .name = "policy", .type = KEY_POLICY, AT(C, policy), HAS(C, has_policy),
		       .flags = KEY_SHOW_SET, .note = "policy: not set, the threads keep their scheduling" },
	[K_PRIORITY] = { .name = "priority", .type = KEY_INT, .min = 0, .max = 99, AT(C, priority),
			 .flags = KEY_SHOW_SET },
	[K_NICE] = { .name = "nice", .type = KEY_INT, .min = -20, .max = 19, AT(C, nice), .flags = KEY_SHOW_SET },
	[K_CPUS] = { .name = "cpus", .type = KEY_CPUS, AT(C, cpus), HAS(C, has_cpus), .flags = KEY_SHOW_SET },
};
#undef C

static const struct key_section sections[] = {
	[SEC_DAEMON] = { daemon_keys, D_N, daemon_print_order, offsetof(struct config, origin) },
	[SEC_RULE] = { rule_keys, R_N, NULL, offsetof(struct rule, origin) },
	[SEC_USER] = { principal_keys, P_N, NULL, offsetof(struct principal, origin) },
	[SEC_GROUP] = { principal_keys, P_N, NULL, offsetof(struct principal, origin) },
	[SEC_PROBE] = { probe_keys, PR_N, probe_print_order, offsetof(struct probe_conf, origin) },
	[SEC_RTKIT] = { rtkit_keys, RK_N, NULL, offsetof(struct rtkit_conf, origin) },
	[SEC_IRQ] = { irq_keys, I_N, NULL, offsetof(struct irq_conf, origin) },
	[SEC_KTHREAD] = { kthread_keys, K_N, NULL, offsetof(struct kthread_conf, origin) },
};

const struct key_section *key_section(enum section_kind kind)
{
	if (kind <= SEC_NONE || kind >= SEC_BAD)
		return NULL;
	return &sections[kind];
}

int key_find(const struct key_section *s, const char *name)
{
	for (int i = 0; i < s->n_keys; i++)
		if (strcmp(s->keys[i].name, name) == 0)
			return i;
	return -ENOENT;
}

void origin_reset(struct key_origin *o)
{
	for (int i = 0; i < CONFIG_KEYS_MAX; i++) {
		o->file[i] = CONFIG_ORIGIN_DEFAULT;
		o->line[i] = 0;
	}
}

bool origin_set(const struct key_origin *o, int k)
{
	return o->file[k] != CONFIG_ORIGIN_DEFAULT;
}

void origin_str(const struct config *c, const struct key_origin *o, int k, char *buf, size_t len)
{
	if (o->file[k] == CONFIG_ORIGIN_DEFAULT)
		snprintf(buf, len, "built-in default");
	else if (o->file[k] == CONFIG_ORIGIN_CMDLINE)
		snprintf(buf, len, "command line");
	else
		snprintf(buf, len, "%s:%u", c->files[o->file[k]], o->line[k]);
}
