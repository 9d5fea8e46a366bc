/* bench-rtkit.c: rtkit's MakeThreadRealtime round trip over the system bus,
 * measured the way bench-register measures rtschedd: the calling thread asks
 * for itself, alternating RR 10 and RR 11 (rtkit grants SCHED_RR only) so
 * every call changes the thread, and checks after each call, outside the
 * timed part, that the kernel reports SCHED_RR|SCHED_RESET_ON_FORK at the
 * asked priority.
 *
 *   bench-rtkit [-n] [-p | -P] [-l LABEL] [-w WARMUP] [-o SUMMARY.csv] [-c CDF.csv] [N]
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
 * with no work behind it, the floor any D-Bus grant pays. -P does both in 10
 * interleaved rounds of N/10 calls each (so load changes hit both alike)
 * and reports the pings as a second row, labelled bus-ping. */
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
static int make_rt(sd_bus *bus, uint32_t prio, int ping, int *reported)
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

/* One row on stdout and in the summary CSV, and the CDF; sorts lat. */
static void report(const char *label, const char *conn, double *lat, int n, int bad, const char *summary,
		   const char *cdf)
{
	double total = 0;
	FILE *f;

	for (int i = 0; i < n; i++)
		total += lat[i];
	qsort(lat, (size_t)n, sizeof(double), bench_cmp);
	printf("%-10s %-16s %8d %6d %9.1f %9.1f %9.1f %9.1f %9.1f %10.0f\n", label, conn, n, bad,
	       bench_pct(lat, n, 50), bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1], total / n,
	       n / (total / 1e6));
	f = bench_open_csv(summary, SUMMARY_HEADER);
	if (f) {
		fprintf(f, "%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", label, conn, n, bad, bench_pct(lat, n, 50),
			bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1], total / n, n / (total / 1e6));
		fclose(f);
	}
	if (cdf) {
		char clabel[96];
		snprintf(clabel, sizeof(clabel), "%s %s", label, conn);
		bench_write_cdf(cdf, clabel, lat, (size_t)n);
	}
}

int main(int argc, char **argv)
{
	const char *summary = NULL, *cdf = NULL, *conn = "persistent", *label = "rtkit";
	struct rlimit rl = { RTTIME_US, RTTIME_US };
	struct sched_param other = { 0 };
	int n, warmup = 20, failures = 0, wrong = 0, pfail = 0, reported = 0, fresh = 0, ping = 0, pair = 0;
	int opt, r, k = 0, pk = 0, rounds;
	sd_bus *bus = NULL;
	double *lat, *plat;

	while ((opt = getopt(argc, argv, "npPl:w:o:c:")) != -1) {
		switch (opt) {
		case 'l': label = optarg; break;
		case 'n': fresh = 1; conn = "new-per-call"; break;
		case 'p': ping = 1; break;
		case 'P': pair = 1; break;
		case 'w': warmup = atoi(optarg); break;
		case 'o': summary = optarg; break;
		case 'c': cdf = optarg; break;
		default: return 64;
		}
	}
	n = optind < argc ? atoi(argv[optind]) : 1000;
	lat = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	plat = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	if (!lat || !plat || n < 1)
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
		make_rt(bus, 10 + (i & 1), ping, &reported);
	rounds = pair && n >= 10 ? 10 : 1;
	for (int round = 0; round < rounds; round++) {
		int m = round == rounds - 1 ? n - k : n / rounds;
		for (int i = 0; i < m; i++, k++) {
			double t0 = bench_now_us();
			r = make_rt(bus, 10 + (k & 1), ping, &reported);
			lat[k] = bench_now_us() - t0;
			if (r < 0)
				failures++;
			else if (!ping && !is_rr(10 + (k & 1)))
				wrong++;
		}
		for (int i = 0; pair && i < m; i++, pk++) {
			double t0 = bench_now_us();
			r = make_rt(bus, 0, 1, &reported);
			plat[pk] = bench_now_us() - t0;
			if (r < 0)
				pfail++;
		}
	}
	/* rtkit has no call to give the thread back */
	sched_setscheduler(0, SCHED_OTHER, &other);
	sd_bus_flush_close_unref(bus);
	report(label, conn, lat, n, failures + wrong, summary, cdf);
	if (pair)
		report("bus-ping", conn, plat, pk, pfail, summary, NULL);
	if (wrong)
		fprintf(stderr, "bench-rtkit: %d replies were OK but the kernel reported another policy\n", wrong);
	free(lat);
	free(plat);
	return failures || wrong || pfail ? 1 : 0;
}
