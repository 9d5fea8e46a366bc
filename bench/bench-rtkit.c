/* bench-rtkit.c: rtkit's MakeThreadRealtime round trip over the system bus,
 * measured the way bench-register measures rtschedd: the calling thread asks
 * for itself, alternating RR 10 and RR 11 (rtkit grants SCHED_RR only) so
 * every call changes the thread, and checks after each call, outside the
 * timed part, that the kernel reports SCHED_RR|SCHED_RESET_ON_FORK at the
 * asked priority.
 *
 *   bench-rtkit [-n] [-p] [-l LABEL] [-w WARMUP] [-o SUMMARY.csv] [-c CDF.csv] [N]
 *
 * The bus is $DBUS_SYSTEM_BUS_ADDRESS (run.sh points it at a private
 * `dbus-daemon --system`). By default one bus connection serves every call,
 * as PulseAudio and PipeWire keep theirs; -n opens a new connection per call
 * (connect, authenticate, Hello, call, close), as librtsched does with
 * rtschedd's socket. -l names the server in the output ("rtkit"; run.sh
 * says "rtschedd-dbus" when rtschedd's [rtkit] service holds the name: the
 * same client code on the same bus). Sets RLIMIT_RTTIME to 200 ms first: rtkit refuses a
 * process whose hard limit is above its --rttime-usec-max.
 * -p calls org.freedesktop.DBus.Peer.Ping on the same name instead: the bus's
 * own round trip (client -> dbus-daemon -> service -> dbus-daemon -> client)
 * with no work behind it, the floor any D-Bus grant pays. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bench-common.h"

#define SUMMARY_HEADER "system,connection,samples,failed,p50_us,p90_us,p99_us,max_us,mean_us,req_per_s"
#define RTKIT_NAME "org.freedesktop.RealtimeKit1"
#define RTKIT_PATH "/org/freedesktop/RealtimeKit1"
#define RTTIME_US 200000

/* One MakeThreadRealtime(tid, prio) on bus, or on a fresh connection if bus
 * is NULL. 0 or -errno; the D-Bus error goes to stderr once. */
static int ping;

static int make_rt(sd_bus *bus, uint32_t prio, int *reported)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *own = NULL;
	int r;

	if (!bus) {
		r = sd_bus_open_system(&own);
		if (r < 0)
			return r;
		bus = own;
	}
	if (ping)
		r = sd_bus_call_method(bus, RTKIT_NAME, RTKIT_PATH, "org.freedesktop.DBus.Peer", "Ping", &err, &reply,
				       "");
	else
		r = sd_bus_call_method(bus, RTKIT_NAME, RTKIT_PATH, RTKIT_NAME, "MakeThreadRealtime", &err, &reply,
				       "tu", (uint64_t)gettid(), prio);
	if (r < 0 && !(*reported)++)
		fprintf(stderr, "bench-rtkit: %s: %s: %s\n", ping ? "Ping" : "MakeThreadRealtime",
			err.name ? err.name : "", err.message ? err.message : "");
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(own);
	return r;
}

/* The calling thread is RR|RESET_ON_FORK at prio: 1 if so. */
static int is_rr(int prio)
{
	struct sched_param sp;
	int pol = sched_getscheduler(0);

	return pol == (SCHED_RR | SCHED_RESET_ON_FORK) && sched_getparam(0, &sp) == 0 && sp.sched_priority == prio;
}

int main(int argc, char **argv)
{
	const char *summary = NULL, *cdf = NULL, *conn = "persistent", *label = "rtkit";
	struct rlimit rl = { RTTIME_US, RTTIME_US };
	struct sched_param other = { 0 };
	int n, warmup = 20, failures = 0, wrong = 0, reported = 0, fresh = 0, opt, r;
	sd_bus *bus = NULL;
	double *lat, total = 0;
	FILE *f;

	while ((opt = getopt(argc, argv, "npl:w:o:c:")) != -1) {
		switch (opt) {
		case 'l': label = optarg; break;
		case 'n': fresh = 1; conn = "new-per-call"; break;
		case 'p': ping = 1; break;
		case 'w': warmup = atoi(optarg); break;
		case 'o': summary = optarg; break;
		case 'c': cdf = optarg; break;
		default: return 64;
		}
	}
	n = optind < argc ? atoi(argv[optind]) : 1000;
	lat = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	if (!lat || n < 1)
		return 64;
	if (setrlimit(RLIMIT_RTTIME, &rl) < 0) {
		perror("bench-rtkit: setrlimit(RLIMIT_RTTIME)");
		return 1;
	}
	if (!fresh && (r = sd_bus_open_system(&bus)) < 0) {
		fprintf(stderr, "bench-rtkit: system bus: %s\n", strerror(-r));
		return 1;
	}
	for (int i = 0; i < warmup; i++)
		make_rt(bus, 10 + (i & 1), &reported);
	for (int i = 0; i < n; i++) {
		double s = bench_now_us();
		r = make_rt(bus, 10 + (i & 1), &reported);
		lat[i] = bench_now_us() - s;
		total += lat[i];
		if (r < 0)
			failures++;
		else if (!ping && !is_rr(10 + (i & 1)))
			wrong++;
	}
	/* rtkit has no call to give the thread back */
	sched_setscheduler(0, SCHED_OTHER, &other);
	sd_bus_flush_close_unref(bus);
	qsort(lat, (size_t)n, sizeof(double), bench_cmp);
	printf("%-10s %-16s %8d %6d %9.1f %9.1f %9.1f %9.1f %9.1f %10.0f\n", label, conn, n, failures + wrong,
	       bench_pct(lat, n, 50), bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1], total / n,
	       n / (total / 1e6));
	if (wrong)
		fprintf(stderr, "bench-rtkit: %d replies were OK but the kernel reported another policy\n", wrong);
	f = bench_open_csv(summary, SUMMARY_HEADER);
	if (f) {
		fprintf(f, "%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", label, conn, n, failures + wrong,
			bench_pct(lat, n, 50), bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1], total / n,
			n / (total / 1e6));
		fclose(f);
	}
	if (cdf) {
		char clabel[96];
		snprintf(clabel, sizeof(clabel), "%s %s", label, conn);
		bench_write_cdf(cdf, clabel, lat, (size_t)n);
	}
	free(lat);
	return failures || wrong ? 1 : 0;
}
