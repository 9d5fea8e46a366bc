/* tests/slow-systemd.c: a stand-in for systemd's D-Bus API on a private
 * system bus (security2.sh case 12): it owns org.freedesktop.systemd1 and
 * answers every org.freedesktop.DBus.Properties.Get under
 * /org/freedesktop/systemd1 after DELAY_MS, as a PID 1 kept busy would: a
 * loaded, not transient service without RestrictRealtime=. Each Get it
 * answers adds one to the number in COUNT_FILE (written whole each time).
 *
 *   DBUS_SYSTEM_BUS_ADDRESS=unix:path=... slow-systemd DELAY_MS COUNT_FILE
 *
 * Prints "ready" once it owns the name; runs until killed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-bus.h>

static long delay_ms;
static const char *count_file;
static unsigned long gets;

static int on_message(sd_bus_message *m, void *ud, sd_bus_error *e)
{
	struct timespec d = { delay_ms / 1000, (delay_ms % 1000) * 1000000L };
	const char *iface, *prop;
	FILE *f;

	(void)ud;
	(void)e;
	if (!sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get") ||
	    sd_bus_message_read(m, "ss", &iface, &prop) < 0)
		return 0;
	nanosleep(&d, NULL);
	gets++;
	if ((f = fopen(count_file, "w"))) {
		fprintf(f, "%lu\n", gets);
		fclose(f);
	}
	if (strcmp(prop, "LoadState") == 0)
		return sd_bus_reply_method_return(m, "v", "s", "loaded");
	if (strcmp(prop, "FragmentPath") == 0)
		return sd_bus_reply_method_return(m, "v", "s", "/nonexistent/slow.service");
	return sd_bus_reply_method_return(m, "v", "b", 0);
}

int main(int argc, char **argv)
{
	sd_bus *bus = NULL;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: slow-systemd DELAY_MS COUNT_FILE\n");
		return 2;
	}
	delay_ms = atol(argv[1]);
	count_file = argv[2];
	if ((r = sd_bus_open_system(&bus)) < 0 ||
	    (r = sd_bus_add_fallback(bus, NULL, "/org/freedesktop/systemd1", on_message, NULL)) < 0 ||
	    (r = sd_bus_request_name(bus, "org.freedesktop.systemd1", 0)) < 0) {
		fprintf(stderr, "slow-systemd: %s\n", strerror(-r));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if ((r = sd_bus_process(bus, NULL)) < 0) {
			fprintf(stderr, "slow-systemd: %s\n", strerror(-r));
			return 1;
		}
		if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0 && r != -EINTR)
			return 1;
	}
}
