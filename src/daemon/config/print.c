/* print.c: the effective configuration as a file that loads again
 * (rtschedd --test-config), each value with where it came from. */
#include "autoconfig.h"

#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/config/config.h"
#include "daemon/config/keys.h"

/* Print one "key = value  # origin" line. */
static void print_kv(const struct config *c, FILE *f, const struct key_origin *o, int k,
		     const char *key, const char *value)
{
	/* the reader takes INI_MAX_LINE - 4 characters a line (read_line) */
	const size_t max = INI_MAX_LINE - 4;
	char at[PATH_MAX + 16];
	int n;

	origin_str(c, o, k, at, sizeof(at));
	n = snprintf(NULL, 0, "%-14s = %-24s # %s", key, value, at);
	if (n >= 0 && (size_t)n <= max) {
		fprintf(f, "%-14s = %-24s # %s\n", key, value, at);
		return;
	}
	/* too long for one line: the origin above it, then no padding, then no blanks */
	fprintf(f, "# %s: %.*s\n", key, (int)(max - strlen(key) - 4), at);
	if (strlen(key) + 3 + strlen(value) <= max)
		fprintf(f, "%s = %s\n", key, value);
	else
		fprintf(f, "%s=%s\n", key, value);
}

/* The spec keys of [daemon] or a rule, from `base` in the section's key numbers. */
static void print_spec(const struct config *c, FILE *f, const struct sched_spec *s,
		       const struct key_origin *o, int base)
{
	char buf[256];

	print_kv(c, f, o, base + R_POLICY, "policy", policy_to_string(s->policy));
	snprintf(buf, sizeof(buf), "%d", s->priority);
	print_kv(c, f, o, base + R_PRIORITY, "priority", buf);
	if (s->policy == SCHED_OTHER || s->policy == SCHED_BATCH) {
		snprintf(buf, sizeof(buf), "%d", s->nice);
		print_kv(c, f, o, base + R_NICE, "nice", buf);
	}
	if (s->has_cpus)
		cpulist_format(&s->cpus, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "(unchanged)");
	if (s->has_cpus)
		print_kv(c, f, o, base + R_CPUS, "cpus", buf);
	else
		fprintf(f, "# cpus: not set, affinity is left as the thread has it\n");
	print_kv(c, f, o, base + R_RESET_ON_FORK, "reset-on-fork", s->reset_on_fork ? "yes" : "no");
}

void config_print(const struct config *c, FILE *f)
{
	char buf[256];

	fprintf(f, "# rtschedd effective configuration, read from:\n");
	for (size_t i = 0; i < c->n_files; i++)
		fprintf(f, "#   %s\n", c->files[i]);
	if (c->n_files == 0)
		fprintf(f, "#   (no file: built-in defaults)\n");
	fprintf(f, "\n[daemon]\n");
	print_kv(c, f, &c->origin, D_SOCKET, "socket", c->socket_path);
	print_spec(c, f, &c->dflt, &c->origin, D_POLICY);
	snprintf(buf, sizeof(buf), "%d", c->max_priority);
	print_kv(c, f, &c->origin, D_MAX_PRIORITY, "max-priority", buf);
	print_kv(c, f, &c->origin, D_LOG_LEVEL, "log-level", log_level_to_string(c->log_level));
	if (c->admin_group[0])
		print_kv(c, f, &c->origin, D_ADMIN_GROUP, "admin-group", c->admin_group);
	snprintf(buf, sizeof(buf), "%u", c->rate_limit);
	print_kv(c, f, &c->origin, D_RATE_LIMIT, "rate-limit", buf);
	snprintf(buf, sizeof(buf), "%u", c->rate_burst);
	print_kv(c, f, &c->origin, D_RATE_BURST, "rate-burst", buf);

	snprintf(buf, sizeof(buf), "%u", c->rescan_ms);
	print_kv(c, f, &c->origin, D_RESCAN, "rescan-interval", buf);
	snprintf(buf, sizeof(buf), "%u", c->observe_threads);
	print_kv(c, f, &c->origin, D_OBSERVE_THREADS, "observe-threads", buf);
	print_kv(c, f, &c->origin, D_PROCESS_EVENTS, "process-events", c->process_events ? "yes" : "no");
	print_kv(c, f, &c->origin, D_RTPRIO_CAP, "rtprio-cap",
		 c->rtprio_cap == CAP_CONFIG ? "config" : c->rtprio_cap == CAP_LIMITS_CONF ? "limits-conf" : "rlimit");
	print_kv(c, f, &c->origin, D_OVER_CAP, "over-cap", c->clamp ? "clamp" : "refuse");
	print_kv(c, f, &c->origin, D_LIMITS_CONF, "limits-conf", c->limits_conf);
	print_kv(c, f, &c->origin, D_LIMITS_DIR, "limits-dir", c->limits_dir);
	if (c->run_user[0])
		print_kv(c, f, &c->origin, D_USER, "user", c->run_user);
	config_state_path(c, buf, sizeof(buf));
	print_kv(c, f, &c->origin, D_STATE_FILE, "state-file", buf);
	if (c->metrics_file[0])
		print_kv(c, f, &c->origin, D_METRICS_FILE, "metrics-file", c->metrics_file);
	snprintf(buf, sizeof(buf), "%u", c->metrics_interval_s);
	print_kv(c, f, &c->origin, D_METRICS_INTERVAL, "metrics-interval", buf);
	print_kv(c, f, &c->origin, D_WATCHDOG, "watchdog", c->watchdog ? "yes" : "no");
	snprintf(buf, sizeof(buf), "%u", c->watchdog_threshold_ms);
	print_kv(c, f, &c->origin, D_WATCHDOG_THRESHOLD, "watchdog-threshold", buf);
	snprintf(buf, sizeof(buf), "%u", c->watchdog_cooldown_s);
	print_kv(c, f, &c->origin, D_WATCHDOG_COOLDOWN, "watchdog-cooldown", buf);
	print_kv(c, f, &c->origin, D_WATCHDOG_DEMOTE, "watchdog-demote", c->watchdog_demote_all ? "all" : "culprit");
	if (c->cpu_dma_latency_us < 0)
		snprintf(buf, sizeof(buf), "off");
	else
		snprintf(buf, sizeof(buf), "%d", c->cpu_dma_latency_us);
	print_kv(c, f, &c->origin, D_CPU_DMA_LATENCY, "cpu-dma-latency", buf);

	fprintf(f, "\n[rtkit]\n");
	print_kv(c, f, &c->rtkit.origin, RK_ENABLE, "enable", c->rtkit.enable ? "yes" : "no");
	print_kv(c, f, &c->rtkit.origin, RK_REPLACE, "replace-existing", c->rtkit.replace ? "yes" : "no");
	print_kv(c, f, &c->rtkit.origin, RK_POLICY, "policy", c->rtkit.policy == SCHED_RR ? "rr" : "fifo");
	snprintf(buf, sizeof(buf), "%d", c->rtkit.max_priority);
	print_kv(c, f, &c->rtkit.origin, RK_MAX_RT_PRIORITY, "max-realtime-priority", buf);
	snprintf(buf, sizeof(buf), "%d", c->rtkit.min_nice);
	print_kv(c, f, &c->rtkit.origin, RK_MIN_NICE, "min-nice-level", buf);
	snprintf(buf, sizeof(buf), "%ld", c->rtkit.rttime_usec_max);
	print_kv(c, f, &c->rtkit.origin, RK_RTTIME_MAX, "rttime-usec-max", buf);
	if (c->rtkit.role[0])
		print_kv(c, f, &c->rtkit.origin, RK_ROLE, "role", c->rtkit.role);

	for (size_t i = 0; i < c->n_rules; i++) {
		const struct rule *rl = &c->rules[i];
		const struct rule_match *m = &rl->match;

		fprintf(f, "\n[rule %s]\n", rl->name);
		print_spec(c, f, &rl->spec, &rl->origin, 0);
		if (m->thread_name[0])
			print_kv(c, f, &rl->origin, R_THREAD_NAME, "thread-name", m->thread_name);
		if (m->process_name[0])
			print_kv(c, f, &rl->origin, R_PROCESS_NAME, "process-name", m->process_name);
		if (m->exe[0])
			print_kv(c, f, &rl->origin, R_EXE, "exe", m->exe);
		if (m->has_user) {
			snprintf(buf, sizeof(buf), "%u", (unsigned)m->uid);
			print_kv(c, f, &rl->origin, R_USER, "user", buf);
		}
		if (m->has_group) {
			snprintf(buf, sizeof(buf), "%u", (unsigned)m->gid);
			print_kv(c, f, &rl->origin, R_GROUP, "group", buf);
		}
		if (m->unit[0])
			print_kv(c, f, &rl->origin, R_UNIT, "unit", m->unit);
		if (m->cgroup[0])
			print_kv(c, f, &rl->origin, R_CGROUP, "cgroup", m->cgroup);
		fprintf(f, "# %s\n", m->n_keys ? "matches threads automatically" : "a role: applied when a thread asks for it");
	}
	for (size_t i = 0; i < c->n_probes; i++) {
		const struct probe_conf *p = &c->probes[i];

		fprintf(f, "\n[probe %s]\n", p->name);
		snprintf(buf, sizeof(buf), "%d", p->cpu);
		print_kv(c, f, &p->origin, PR_CPU, "cpu", buf);
		print_kv(c, f, &p->origin, PR_POLICY, "policy", policy_to_string(p->policy));
		snprintf(buf, sizeof(buf), "%d", p->priority);
		print_kv(c, f, &p->origin, PR_PRIORITY, "priority", buf);
		print_kv(c, f, &p->origin, PR_MODE, "mode", p->noise ? "noise" : "latency");
		if (!p->noise) {
			snprintf(buf, sizeof(buf), "%u", p->period_us);
			print_kv(c, f, &p->origin, PR_PERIOD, "period-us", buf);
			print_kv(c, f, &p->origin, PR_STRATEGY, "strategy", p->strategy);
		}
	}
	for (size_t i = 0; i < c->n_principals; i++) {
		const struct principal *p = &c->principals[i];

		fprintf(f, "\n[%s %s]\n", p->is_group ? "group" : "user", p->name);
		if (p->max_priority >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->max_priority);
			print_kv(c, f, &p->origin, P_MAX_PRIORITY, "max-priority", buf);
		}
		if (p->policies) {
			policy_mask_to_string(p->policies, buf, sizeof(buf));
			print_kv(c, f, &p->origin, P_POLICIES, "policies", buf);
		}
		if (p->max_threads >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->max_threads);
			print_kv(c, f, &p->origin, P_MAX_THREADS, "max-threads", buf);
		}
		if (p->has_cpus) {
			cpulist_format(&p->cpus, buf, sizeof(buf));
			print_kv(c, f, &p->origin, P_CPUS, "cpus", buf);
		}
		if (p->has_min_nice) {
			snprintf(buf, sizeof(buf), "%d", p->min_nice);
			print_kv(c, f, &p->origin, P_MIN_NICE, "min-nice", buf);
		}
	}
}
