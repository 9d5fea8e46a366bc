/* diag_unit.c: RestrictRealtime= of a systemd unit.  The honest source is
 * systemd itself (what `systemctl show -p RestrictRealtime UNIT` asks), and
 * for a transient unit (systemd-run -p RestrictRealtime=yes) the only one, so
 * a live diagnosis asks it first over the system bus.  But systemd may not be
 * reachable: it need not be PID 1 (it is not in many containers) and the bus
 * may be down.  Then this reads the files the way systemd merges them: the
 * first unit file found along the unit path (the instance's, else its
 * template's), then every *.conf drop-in of "UNIT.d", "TEMPLATE.d" and
 * "service.d" along the path, one per file name (the earlier directory wins),
 * in file-name order, the last assignment counting. */
#include "autoconfig.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "daemon/sys/clock.h"
#include "daemon/diag/diag_int.h"
#include "daemon/sys/log.h"
#include "daemon/sys/sysbus.h"

#define MAX_DROPINS 64
#define SYSTEMD "org.freedesktop.systemd1"

struct dropin {
	char name[256];
	char path[PATH_MAX];
};

/* systemd's boolean words; -1 for anything else. */
static int parse_bool(const char *v)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* Strip blanks at both ends in place. */
static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Apply the RestrictRealtime= lines of the [Service] section of one file.
 * An empty assignment resets it to the default, no. */
static int file_apply(const char *path, int *on, char *src, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	unsigned n = 0;
	bool service = false;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		n++;
		if (*s == '#' || *s == ';' || *s == '\0')
			continue;
		if (*s == '[') {
			service = strcmp(s, "[Service]") == 0;
			continue;
		}
		eq = strchr(s, '=');
		if (!service || !eq)
			continue;
		*eq = '\0';
		if (strcmp(trim(s), "RestrictRealtime") != 0)
			continue;
		s = trim(eq + 1);
		*on = *s ? parse_bool(s) == 1 : 0;
		snprintf(src, len, "%s:%u", path, n);
	}
	fclose(f);
	return 0;
}

/* Add the *.conf files of dir not already named by an earlier directory. */
static void dropins_collect(const char *dir, struct dropin *v, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && *n < MAX_DROPINS) {
		size_t k = strlen(de->d_name);
		bool seen = false;

		if (k < 6 || strcmp(de->d_name + k - 5, ".conf") != 0 || de->d_name[0] == '.' ||
		    k >= sizeof(v[0].name))
			continue;
		for (size_t i = 0; i < *n; i++)
			seen = seen || strcmp(v[i].name, de->d_name) == 0;
		if (seen || diag_path(v[*n].path, sizeof(v[*n].path), "%s/%s", dir, de->d_name) < 0)
			continue;
		memcpy(v[*n].name, de->d_name, k + 1);
		(*n)++;
	}
	closedir(d);
}

/* qsort() order of drop-ins: by file name, as systemd applies them. */
static int dropin_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dropin *)a)->name, ((const struct dropin *)b)->name);
}

/* The next directory of a colon-separated path; user units use the "user"
 * sibling of each "system" directory. */
static const char *next_dir(const char *p, bool user, char *dir, size_t len)
{
	size_t n = strcspn(p, ":");

	if (n >= len)
		n = len - 1;
	memcpy(dir, p, n);
	dir[n] = '\0';
	if (user && n >= 7 && strcmp(dir + n - 7, "/system") == 0)
		snprintf(dir + n - 6, len - (n - 6), "user");
	return p[n] ? p + n + 1 : p + n;
}

/* The daemon's connection (diag_bus_attach()); NULL event: none. */
static struct {
	sd_event *event;
	sd_bus *bus;
	bool may_wait;            /* diag_bus_may_wait() */
	uint64_t quiet_until;     /* after a lookup timed out: no bus until then (CLOCK_MONOTONIC µs) */
} shared;

void diag_bus_may_wait(bool wait)
{
	shared.may_wait = wait;
}

/* A system bus connection (sysbus_open(), its Hello bounded as a lookup
 * is), attached to e if given: it connects as the loop runs. */
static int bus_connect(sd_bus **ret, sd_event *e)
{
	int r;

	if ((r = sysbus_open(ret, "rtschedd-diag", DIAG_BUS_TIMEOUT_US)) < 0)
		return r;
	if (e && (r = sd_bus_attach_event(*ret, e, SD_EVENT_PRIORITY_NORMAL)) < 0)
		*ret = sd_bus_close_unref(*ret);
	return r;
}

int diag_bus_attach(sd_event *e)
{
	diag_bus_detach();
	shared.event = sd_event_ref(e);
	/* a failure here is tried again at the next lookup */
	bus_connect(&shared.bus, e);
	return 0;
}

void diag_bus_detach(void)
{
	if (shared.bus)
		sd_bus_detach_event(shared.bus);
	shared.bus = sd_bus_close_unref(shared.bus);
	shared.event = sd_event_unref(shared.event);
}

/* The connection for one lookup, a reference the caller drops: the
 * daemon's if it is ready (a closed one is opened again, for a later
 * lookup), else -ENOTCONN; without diag_bus_attach() one of its own. */
static int bus_get(sd_bus **ret)
{
	if (!shared.event)
		return bus_connect(ret, NULL);
	if (shared.bus && sd_bus_is_open(shared.bus) <= 0) {
		sd_bus_detach_event(shared.bus);
		shared.bus = sd_bus_close_unref(shared.bus);
	}
	if (!shared.bus && clock_usec(CLOCK_MONOTONIC) >= shared.quiet_until)
		bus_connect(&shared.bus, shared.event);
	/* a call on a connection still connecting waits for it to be ready */
	if (!shared.bus || (!shared.may_wait && sd_bus_is_ready(shared.bus) <= 0))
		return -ENOTCONN;
	*ret = sd_bus_ref(shared.bus);
	return 0;
}

/* Before each call of a lookup: what is left of its deadline as the call
 * timeout; -ETIMEDOUT once it has passed. */
static int bus_budget(sd_bus *bus, uint64_t deadline)
{
	uint64_t now = clock_usec(CLOCK_MONOTONIC);

	if (now >= deadline)
		return -ETIMEDOUT;
	return sd_bus_set_method_call_timeout(bus, deadline - now);
}

/* RestrictRealtime= of a loaded system service, as systemd has it: 1 or 0,
 * else -errno (no bus, no systemd on it, not loaded, not a service). All
 * its calls together wait DIAG_BUS_TIMEOUT_US at most; when they time out,
 * or take DIAG_BUS_SLOW_US or more, the daemon's connection is closed and
 * for DIAG_BUS_QUIET_US not opened again (lookups read files meanwhile), so
 * a bus that stalls or crawls costs the loop one lookup per
 * DIAG_BUS_QUIET_US, not one per request. */
static int bus_restrict_rt(const char *unit, bool *transient, char *src, size_t len)
{
	size_t n = strlen(unit);
	uint64_t deadline = clock_usec(CLOCK_MONOTONIC) + DIAG_BUS_TIMEOUT_US, took;
	sd_bus *bus = NULL;
	char *path = NULL, *load = NULL, *frag = NULL;
	int on = 0, tr = 0, r;

	/* only a service has an exec context to restrict (a scope has none) */
	if (n < 9 || strcmp(unit + n - 8, ".service") != 0)
		return -ENOTSUP;
	if ((r = bus_get(&bus)) < 0)
		return r;
	/* a call activates the name if needed: where systemd is not PID 1 that
	 * fails at once (its bus service file runs /bin/false) */
	if ((r = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path)) >= 0 &&
	    (r = bus_budget(bus, deadline)) >= 0 &&
	    (r = sd_bus_get_property_string(bus, SYSTEMD, path, SYSTEMD ".Unit", "LoadState", NULL, &load)) >= 0)
		r = strcmp(load, "loaded") == 0 ? 0 : -ENOENT;
	if (r >= 0 && (r = bus_budget(bus, deadline)) >= 0 &&
	    (r = sd_bus_get_property_trivial(bus, SYSTEMD, path, SYSTEMD ".Service", "RestrictRealtime", NULL, 'b',
					     &on)) >= 0 &&
	    bus_budget(bus, deadline) >= 0 &&
	    sd_bus_get_property_trivial(bus, SYSTEMD, path, SYSTEMD ".Unit", "Transient", NULL, 'b', &tr) >= 0 && !tr &&
	    bus_budget(bus, deadline) >= 0)
		sd_bus_get_property_string(bus, SYSTEMD, path, SYSTEMD ".Unit", "FragmentPath", NULL, &frag);
	if (r >= 0) {
		*transient = tr;
		if (tr)
			snprintf(src, len, "a transient unit, as systemd reports it");
		else
			snprintf(src, len, "%s, as systemd reports it", frag && *frag ? frag : unit);
	}
	free(path);
	free(load);
	free(frag);
	took = clock_usec(CLOCK_MONOTONIC) - (deadline - DIAG_BUS_TIMEOUT_US);
	if (shared.event && bus == shared.bus && (r == -ETIMEDOUT || took >= DIAG_BUS_SLOW_US)) {
		sd_bus_detach_event(shared.bus);
		shared.bus = sd_bus_close_unref(shared.bus);
		shared.quiet_until = clock_usec(CLOCK_MONOTONIC) + DIAG_BUS_QUIET_US;
		log_notice("diag: systemd was slow to answer about %s over D-Bus (%llu ms%s); units are read from "
			   "their files for the next %u s", unit, (unsigned long long)(took / 1000u),
			   r == -ETIMEDOUT ? ", timed out" : "", DIAG_BUS_QUIET_US / 1000000u);
	}
	if (shared.event)
		sd_bus_unref(bus);
	else
		sd_bus_flush_close_unref(bus);
	return r < 0 ? r : on;
}

int diag_unit_restrict_rt(struct diag_ctx *c, const char *unit, bool user_unit, bool *transient, char *src,
			  size_t len)
{
	struct dropin *v;
	char tmpl[256], dir[PATH_MAX], path[PATH_MAX + 512];
	const char *at = strchr(unit, '@'), *dot = strrchr(unit, '.');
	const char *names[3];
	size_t nnames = 0, n = 0;
	bool found = false;
	int on = 0;

	src[0] = '\0';
	tmpl[0] = '\0';
	*transient = false;
	/* systemd first, on the live system (a user manager has its own bus:
	 * user units come from their files) */
	if (c->real && !user_unit) {
		int r = bus_restrict_rt(unit, transient, src, len);
		if (r >= 0)
			return r;
	}
	/* "getty@tty1.service" is an instance of "getty@.service". */
	if (at && dot && dot > at + 1 && (size_t)(at - unit) + 1 + strlen(dot) < sizeof(tmpl))
		snprintf(tmpl, sizeof(tmpl), "%.*s%s", (int)(at - unit + 1), unit, dot);
	for (const char *p = c->env.unit_path; *p && !found;) {
		p = next_dir(p, user_unit, dir, sizeof(dir));
		for (int k = 0; k < 2 && !found; k++) {
			const char *name = k == 0 ? unit : tmpl;

			if (!*name || diag_path(path, sizeof(path), "%s/%s", dir, name) < 0)
				continue;
			found = file_apply(path, &on, src, len) == 0;
		}
	}
	v = calloc(MAX_DROPINS, sizeof(*v));
	if (!v)
		return -ENOMEM;
	names[nnames++] = "service.d";
	if (tmpl[0])
		names[nnames++] = tmpl;
	names[nnames++] = unit;
	for (const char *p = c->env.unit_path; *p;) {
		p = next_dir(p, user_unit, dir, sizeof(dir));
		for (size_t k = 0; k < nnames; k++) {
			const char *suffix = strcmp(names[k], "service.d") == 0 ? "" : ".d";

			if (diag_path(path, sizeof(path), "%s/%s%s", dir, names[k], suffix) == 0)
				dropins_collect(path, v, &n);
		}
	}
	qsort(v, n, sizeof(*v), dropin_cmp);
	for (size_t i = 0; i < n; i++)
		found = file_apply(v[i].path, &on, src, len) == 0 || found;
	free(v);
	if (!found)
		return -ENOENT;
	return on;
}
