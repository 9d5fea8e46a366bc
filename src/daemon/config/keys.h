/* keys.h: every key of rtschedd.conf, in one table per section kind
 * (keys.c), after tmux's options-table.c: a key's name, type, range, where
 * its value is stored, its built-in default and how it prints. The reader
 * (parse.c) sets values through value_set(), the printer (print.c) shows
 * them through value_format(), and the built-in values come from
 * value_defaults() (value.c), so a key is written down once. A key's number
 * is its index in its section's table and in the section's struct
 * key_origin. Internal to src/daemon/config. */
#ifndef RTSCHED_CONFIG_KEYS_H
#define RTSCHED_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

/* keys.h stays below config.h (which config.c includes with it): the
 * structs it names are only pointed to here */
struct config;
struct key_origin;

enum section_kind { SEC_NONE, SEC_DAEMON, SEC_RULE, SEC_USER, SEC_GROUP, SEC_PROBE, SEC_RTKIT, SEC_IRQ, SEC_KTHREAD,
		   SEC_BAD };

enum daemon_key { D_SOCKET, D_POLICY, D_PRIORITY, D_NICE, D_CPUS, D_RESET_ON_FORK,
		  D_MAX_PRIORITY, D_LOG_LEVEL, D_ADMIN_GROUP, D_RATE_LIMIT, D_RATE_BURST, D_RESCAN, D_PROCESS_EVENTS,
		  D_RTPRIO_CAP, D_OVER_CAP, D_LIMITS_CONF, D_LIMITS_DIR, D_USER, D_STATE_FILE,
		  D_METRICS_FILE, D_METRICS_INTERVAL, D_CPU_DMA_LATENCY,
		  D_WATCHDOG, D_WATCHDOG_THRESHOLD, D_WATCHDOG_COOLDOWN, D_WATCHDOG_DEMOTE, D_WATCHDOG_DUTY,
		  D_OBSERVE_THREADS,
		  D_CULPRITS, D_CATCH_REFUSED, D_LATE_THRESHOLD, D_IRQ_AVOID_CPUS, D_LOOP_PRIORITY, D_LOOP_BUDGET,
		  D_FREE_RATE_LIMIT, D_FREE_RATE_BURST, D_N };

/* A rule's keys are the sched_spec keys of [daemon], in the same order,
 * its other settings, then its match keys, R_THREAD_NAME to the end: a
 * rule with any of those matches threads by itself (config_validate()). */
enum rule_key { R_POLICY, R_PRIORITY, R_NICE, R_CPUS, R_RESET_ON_FORK, R_BUDGET, R_ISOLATE,
		R_RESUME_LATENCY, R_GRANT_RLIMIT, R_GRANT_RTTIME,
		R_THREAD_NAME, R_PROCESS_NAME, R_EXE, R_USER, R_GROUP, R_UNIT, R_CGROUP, R_N };

enum principal_key { P_MAX_PRIORITY, P_POLICIES, P_MAX_THREADS, P_CPUS, P_MIN_NICE, P_SESSION, P_N };

enum probe_key { PR_CPU, PR_POLICY, PR_PRIORITY, PR_PERIOD, PR_STRATEGY, PR_MODE, PR_BUDGET, PR_ISOLATE,
		PR_RESUME_LATENCY, PR_N };

/* [rtkit]: the RealtimeKit1 bus service (src/daemon/rtkit). */
enum rtkit_key { RK_ENABLE, RK_REPLACE, RK_POLICY, RK_MAX_RT_PRIORITY, RK_MIN_NICE, RK_RTTIME_MAX, RK_ROLE, RK_N };

/* [irq NAME] (src/daemon/irq): the match keys first, I_MATCH..I_NET_INTERFACE. */
enum irq_key { I_MATCH, I_DRIVER, I_DEVICE, I_PCI_ID, I_USB_ID, I_SOUND_CARD, I_NET_INTERFACE, I_QUEUES, I_CPUS,
	       I_SPREAD, I_POLICY, I_PRIORITY, I_N };

/* [kthread NAME]. */
enum kthread_key { K_MATCH, K_POLICY, K_PRIORITY, K_NICE, K_CPUS, K_N };

/* What a key's value is, which says how it is read, checked and printed. */
enum key_type {
	KEY_INT,        /* a whole number in min..max (an int, unsigned or long field) */
	KEY_BOOL,       /* yes/no, as systemd spells booleans */
	KEY_ENUM,       /* one of choices; the choice's value is stored (an int or bool field) */
	KEY_WORD,       /* one of choices; the word itself is stored (a char array) */
	KEY_POLICY,     /* a scheduling policy name: SCHED_* */
	KEY_POLICIES,   /* a comma-separated policy list: a mask of 1 << SCHED_* */
	KEY_CPUS,       /* a CPU list of CPUs this machine has: cpu_set_t */
	KEY_CPU,        /* one CPU this machine has: int */
	KEY_LOG_LEVEL,  /* err, warning, notice, info or debug: LOG_LEVEL_* */
	KEY_STRING,     /* any text that fits the char array */
	KEY_PATH,       /* an absolute path */
	KEY_USER_NAME,  /* the name of a user this system has */
	KEY_GLOB,       /* a non-empty fnmatch(3) pattern */
	KEY_COMM_GLOB,  /* a pattern on a thread's or process's name, which the kernel cuts to 15 characters */
	KEY_UID,        /* a user's name or number, resolved now: uid_t */
	KEY_GID,        /* a group's name or number, resolved now: gid_t */
	KEY_NUMBERS,    /* a list of numbers in the CPU list syntax, not checked against CPUs: cpu_set_t */
	KEY_DEVID,      /* a PCI or USB id, "vvvv:pppp" in hexadecimal, pppp may be '*' */
	KEY_AVOID,      /* off, auto or a CPU list: struct irq_avoid */
};

/* A word a KEY_ENUM or KEY_WORD key takes, and for KEY_ENUM what it stores. */
struct key_choice {
	const char *name;
	int value;
};

enum {
	/* print only when the key holds a value: its has-flag is set, its text
	 * is not empty, or its number is not the default (an "unset" mark) */
	KEY_SHOW_SET = 1 << 0,
	/* KEY_INT: the word "off" stores -1, and -1 prints as "off" */
	KEY_OFF = 1 << 1,
};

struct config_key {
	const char *name;
	enum key_type type;
	long min, max;                    /* KEY_INT, KEY_CPU */
	size_t offset;                    /* the value, in the section's struct */
	size_t size;                      /* sizeof the value's field */
	size_t has;                       /* 1 + offset of the bool saying the key was given; 0: none */
	const struct key_choice *choices; /* KEY_ENUM, KEY_WORD: ends with a NULL name */
	const char *bad;                  /* the error for a value not taken (one %s: the value); NULL: the type's */
	long def;                         /* built-in default of a number, bool, choice or policy */
	const char *def_str;              /* built-in default of a text */
	unsigned flags;                   /* KEY_SHOW_SET, KEY_OFF */
	/* printing: a line only where shown() says so (NULL: always), else the
	 * comment note (NULL: nothing); format() computes the printed value */
	bool (*shown)(const struct config_key *k, const void *sec);
	const char *note;
	void (*format)(const struct config *c, const void *sec, char *buf, size_t len);
};

/* The keys of one section kind. */
struct key_section {
	const struct config_key *keys;
	int n_keys;
	const unsigned char *print_order; /* n_keys key numbers; NULL: table order */
	size_t origin;                    /* offset of the section struct's struct key_origin */
};

/* The key table of a section kind (SEC_USER and SEC_GROUP share one), or
 * NULL for SEC_NONE and SEC_BAD. */
const struct key_section *key_section(enum section_kind kind);
/* A key's number in its section, or -ENOENT. */
int key_find(const struct key_section *s, const char *name);

/* Mark every key of a section as not set: the built-in default. */
void origin_reset(struct key_origin *o);
/* True if a file or the command line set key k. */
bool origin_set(const struct key_origin *o, int k);
/* "file:line" of key k, "built-in default" or "command line", into buf. */
void origin_str(const struct config *c, const struct key_origin *o, int k, char *buf, size_t len);

#endif
