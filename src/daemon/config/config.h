/* config.h: rtschedd.conf and its drop-ins, read with inih into a fresh
 * struct config that is validated before it replaces the running one.
 * parse.c reads, validate.c checks across keys, print.c prints, config.c
 * answers lookups; every key is one entry of the table in keys.c. */
#ifndef RTSCHED_CONFIG_H
#define RTSCHED_CONFIG_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/un.h>

#include "daemon/sys/irqinfo.h"
#include "daemon/sys/strmap.h"

#define CONFIG_NAME_MAX 64
#define CONFIG_SOCKET_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
#define CONFIG_KEYS_MAX 40
#define CONFIG_ORIGIN_DEFAULT (-1)
#define CONFIG_ORIGIN_CMDLINE (-2)

/* What a thread gets: the [daemon] default or one [rule NAME]. */
struct sched_spec {
	int policy;
	int priority;
	int nice;
	bool reset_on_fork;
	bool has_cpus;
	cpu_set_t cpus;
};

/* Where each key of one section was set, to refuse duplicates and to say
 * where an effective value came from. */
struct key_origin {
	short file[CONFIG_KEYS_MAX]; /* index into config.files, or CONFIG_ORIGIN_* */
	unsigned line[CONFIG_KEYS_MAX];
};

/* rtprio-cap: where the ceiling of a non-privileged grant comes from. */
enum { CAP_CONFIG, CAP_LIMITS_CONF, CAP_RLIMIT };

/* What some rule matches on, so what rules.c must read from /proc for
 * config_match() (core/match.h); set by config_validate(). */
enum {
	MATCH_NEED_PROCESS_NAME = 1 << 0,
	MATCH_NEED_EXE = 1 << 1,
	MATCH_NEED_CGROUP = 1 << 2,
	MATCH_NEED_IDS = 1 << 3,
};

/* What a rule matches automatically; empty strings match anything. A rule
 * with none of these is a role only, applied when a thread asks for it. */
struct rule_match {
	char thread_name[64];   /* glob on the thread's comm */
	char process_name[64];  /* glob on the process's comm */
	char exe[256];          /* glob on the executable's path */
	char unit[128];         /* glob on the systemd unit (from the cgroup path) */
	char cgroup[256];       /* glob on the cgroup path */
	bool has_user, has_group;
	uid_t uid;
	gid_t gid;
	int n_keys;             /* how many match keys are set: the specificity */
};

/* What a rule or probe asks of the CPUs its threads run on while they are
 * managed (src/daemon/cpu): a wake-up latency bound and an emptied CPU. */
struct cpu_quiet {
	int resume_latency_us;  /* pm_qos_resume_latency_us of those CPUs; -1: not set */
	bool isolate;           /* the CPUs emptied of every other task that can move */
};

/* [rule NAME]: what a thread gets, by request (a role) or by matching. */
struct rule {
	char name[CONFIG_NAME_MAX];
	struct sched_spec spec;
	struct cpu_quiet quiet;
	struct rule_match match;
	unsigned budget_us;     /* budget-us: its threads' wake-ups may be this late; 0: no budget */
	bool grant_rlimit;      /* grant-rlimit: raise a matched process's RLIMIT_RTPRIO to the grant */
	int grant_rttime_us;    /* grant-rttime-us: and its RLIMIT_RTTIME to at least this; -1: off */
	struct key_origin origin;
	short file;
	unsigned line;
};

/* [user NAME] / [group NAME]: what a non-root client may ask for.
 * [user *] holds the defaults for every non-root user. */
struct principal {
	char name[CONFIG_NAME_MAX];
	bool is_group;
	int max_priority;     /* -1: not set here */
	unsigned policies;    /* mask of 1 << SCHED_*, 0: not set here */
	int max_threads;      /* -1: not set here */
	bool has_cpus;
	cpu_set_t cpus;
	bool has_min_nice;
	int min_nice;         /* the lowest nice granted (higher weight below needs root) */
	bool session_active;  /* session = active: counts only while the user has an active local session */
	struct key_origin origin;
	short file;
	unsigned line;
};

/* [probe NAME]: a measuring thread the daemon runs itself. */
struct probe_conf {
	char name[CONFIG_NAME_MAX];
	int cpu;
	int policy;
	int priority;
	unsigned period_us;
	char strategy[16];    /* sleep, hybrid, busy, adaptive */
	bool noise;           /* mode = noise: a busy loop recording gaps (oslat) */
	unsigned budget_us;   /* budget-us: 0 none */
	struct cpu_quiet quiet;
	struct key_origin origin;
	short file;
	unsigned line;
};

/* [rtkit]: the org.freedesktop.RealtimeKit1 bus service (src/daemon/rtkit). */
struct rtkit_conf {
	bool enable;
	bool replace;             /* replace-existing: ask a running rtkit to exit and take the name */
	int policy;               /* what MakeThreadRealtime grants: SCHED_RR (rtkit's) or SCHED_FIFO */
	int max_priority;         /* MaxRealtimePriority: requests above are capped to it */
	int min_nice;             /* MinNiceLevel: MakeThreadHighPriority below is floored to it */
	long rttime_usec_max;     /* RTTimeUSecMax: callers with a higher RLIMIT_RTTIME are refused */
	char role[CONFIG_NAME_MAX]; /* the rule whose cpus/reset-on-fork bus grants get; "" = [daemon] */
	struct key_origin origin;
	short file;               /* where the section starts, -1 if absent */
	unsigned line;
};

/* [irq NAME]: interrupts found by their action name and by the device
 * behind them, the CPUs of each vector and the scheduling of its threads
 * (src/daemon/irq). Empty strings and unset has-flags match anything;
 * every key given must match. */
struct irq_conf {
	char name[CONFIG_NAME_MAX];
	struct irq_selector sel;  /* what it matches (sys/irqinfo.h) */
	bool has_cpus;
	cpu_set_t cpus;           /* smp_affinity_list, and the threads' CPUs */
	bool spread;              /* one CPU of cpus per vector, in turn */
	int policy;               /* of the IRQ's threads: SCHED_FIFO or SCHED_RR */
	int priority;             /* 0: the threads' scheduling is left alone */
	int n_keys;               /* how many match keys are set (config_validate) */
	struct key_origin origin;
	short file;
	unsigned line;
};

/* [kthread NAME]: kernel threads (ksoftirqd/N, rcuc/N, ktimers/N, ...) by
 * name, and their scheduling. */
struct kthread_conf {
	char name[CONFIG_NAME_MAX];
	char match[64];           /* glob on the thread's name */
	bool has_policy;
	int policy;
	int priority;
	int nice;
	bool has_cpus;
	cpu_set_t cpus;
	struct key_origin origin;
	short file;
	unsigned line;
};

/* irq-avoid-cpus: off, auto (the CPUs managed real-time threads are
 * pinned to), or a list. */
enum { IRQ_AVOID_OFF, IRQ_AVOID_AUTO, IRQ_AVOID_LIST };
struct irq_avoid {
	int mode;
	cpu_set_t cpus;           /* IRQ_AVOID_LIST */
};

struct config {
	char socket_path[CONFIG_SOCKET_MAX];
	struct sched_spec dflt;
	int max_priority;
	int log_level;
	char admin_group[CONFIG_NAME_MAX];
	unsigned rate_limit;  /* requests per second per uid, 0 = off */
	unsigned rate_burst;
	unsigned free_rate_limit; /* version/status/list per second per uid (root aside), 0 = off */
	unsigned free_rate_burst;
	int loop_priority;    /* the event loop's SCHED_FIFO priority, 0 = SCHED_OTHER */
	int loop_budget;      /* its percent of a CPU per period at that priority, -1 = no budget */
	unsigned rescan_ms;   /* /proc rescan period when the process events connector is unavailable */
	unsigned observe_threads; /* BPF observer slots (read at start only); 0: no observer */
	bool catch_refused;   /* the catcher of refused scheduling calls (read at start only) */
	bool culprits;        /* the observer tracks what ran while a thread waited (read at start only) */
	unsigned late_threshold_us; /* a wake-up of a thread without a budget later than this is late */
	bool process_events;  /* use the connector at all (a sandbox may forbid AF_NETLINK) */
	int rtprio_cap;       /* CAP_*: what caps a non-privileged client's real-time priority */
	bool clamp;           /* over the cap: clamp (true) or refuse */
	char run_user[CONFIG_NAME_MAX]; /* user =: drop root for this user, keeping the capabilities */
	char state_file[256]; /* "" = "state" beside the socket */
	char limits_conf[256];
	char limits_dir[256];
	size_t n_auto_rules;  /* rules with match keys */
	size_t n_rlimit_rules; /* rules with grant-rlimit = yes (set by config_validate()) */
	size_t n_quiet;       /* rules and probes with isolate or resume-latency-us (set by config_validate()) */
	unsigned match_needs; /* MATCH_NEED_*: what the matcher must read from /proc */
	struct key_origin origin;

	struct rule *rules;
	size_t n_rules;
	struct principal *principals;
	size_t n_principals;
	struct probe_conf *probes;
	size_t n_probes;
	char metrics_file[256];   /* Prometheus textfile-collector output, "" = none */
	unsigned metrics_interval_s;
	int cpu_dma_latency_us;   /* -1: don't hold /dev/cpu_dma_latency */
	bool watchdog;            /* the starvation watchdog (src/daemon/watchdog) */
	unsigned watchdog_threshold_ms;
	unsigned watchdog_cooldown_s;
	bool watchdog_demote_all; /* watchdog-demote = all: every real-time thread on the CPU, grants held for all */
	int watchdog_duty;        /* percent of a CPU managed real-time threads may keep over a window, -1 = off */
	struct rtkit_conf rtkit;
	struct irq_avoid irq_avoid;
	struct irq_conf *irqs;
	size_t n_irqs;
	struct kthread_conf *kthreads;
	size_t n_kthreads;

	struct strmap sections; /* "rule NAME", "user NAME"...: index into rules/principals/probes */
	char **files;         /* every file read, in order */
	size_t n_files;
};

/* The drop-in directory that belongs to a main config path:
 * "/etc/rtschedd.conf" -> "/etc/rtschedd.d". */
int config_dropin_dir(const char *path, char *buf, size_t len);
/* What reading and validating found, one note per problem: typed, so no
 * reader tells a warning from an error, or the command line's fault from a
 * file's, by its text. */
enum config_severity {
	CONFIG_NOTE_NONE = 0,   /* a zeroed note: nothing found */
	CONFIG_WARNING,         /* the configuration stays valid */
	CONFIG_ERROR,
};
struct config_note {
	enum config_severity severity;
	bool cmdline;           /* a command-line value is at fault (rtschedd's usage exit code) */
	char *at;               /* "FILE:LINE: KEY", or NULL when text names it itself */
	char *text;             /* the message, saying what to do */
};
struct config_report {
	struct config_note *v;
	size_t n, cap;
	size_t errors;          /* notes of severity CONFIG_ERROR */
	bool cmdline;           /* one of them is the command line's */
	bool oom;               /* a note was lost for want of memory (counted as an error) */
};
/* Add a note (at may be NULL); a trailing newline of the text is dropped. */
__attribute__((format(printf, 5, 6)))
void config_report_add(struct config_report *r, enum config_severity sev, bool cmdline, const char *at,
		       const char *fmt, ...);
/* The first error, or NULL. */
const struct config_note *config_report_first_error(const struct config_report *r);
/* One note as a line without its newline: "AT: TEXT", a warning
 * "AT: warning: TEXT". */
void config_note_format(const struct config_note *n, char *buf, size_t len);
/* Every note as such a line, each with its newline. */
void config_report_print(const struct config_report *r, FILE *f);
void config_report_free(struct config_report *r);

/* Read `path` and its drop-ins into a new config. Problems go to `rep`,
 * each naming file:line and the key. A missing `path` is an error only
 * when `required`. Returns 0, -EINVAL when any error was found, or -errno.
 * The result still needs config_validate(), after any overrides. */
int config_load(const char *path, bool required, struct config **ret, struct config_report *rep);
/* Command-line overrides win over every file, and say so when printed. */
/* --scheduler-policy and --scheduler-priority: the [daemon] default spec. */
void config_override_default(struct config *c, int policy, int priority);
/* --socket; -ENAMETOOLONG if it does not fit a socket address. */
int config_override_socket(struct config *c, const char *path);
/* --log-level. */
void config_override_log_level(struct config *c, int level);
/* Check cross-key rules (priority against policy and max-priority, ...).
 * Returns 0 or -EINVAL; a note whose fault is a command-line value says so
 * (rep->cmdline), whatever other errors follow it. */
int config_validate(struct config *c, struct config_report *rep);
/* Print the effective configuration as a loadable file with each value's origin. */
void config_print(const struct config *c, FILE *f);
/* The state journal's path: state-file, or "state" in the socket's directory. */
void config_state_path(const struct config *c, char *buf, size_t len);
/* The rule called `name`, or NULL. */
const struct rule *config_find_rule(const struct config *c, const char *name);
/* The [user NAME] or [group NAME] section, or NULL. */
const struct principal *config_find_principal(const struct config *c, const char *name, bool group);
/* Free a config from config_load(); NULL is fine. */
void config_free(struct config *c);

#endif
