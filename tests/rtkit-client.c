/* rtkit-client.c: a client of org.freedesktop.RealtimeKit1 for tests/rtkit.sh,
 * asking for one of its own threads the way PipeWire and PulseAudio do.
 *
 *   rtkit-client [-p] realtime PRIO | high NICE
 *
 * Starts a worker thread, calls MakeThreadRealtime(tid, PRIO) or
 * MakeThreadHighPriority(tid, NICE) on $DBUS_SYSTEM_BUS_ADDRESS (-p: the
 * WithPID variant with its own pid), prints "ok TID" or "err TID NAME
 * MESSAGE", then keeps the thread alive until stdin closes. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

static pid_t worker_tid;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* The worker only exists: it publishes its tid and sleeps. */
static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "rtkit-worker");
	pthread_mutex_lock(&lock);
	worker_tid = gettid();
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus *bus = NULL;
	pthread_t th;
	bool with_pid = false, realtime;
	char buf[64];
	long v;
	int r;

	if (argc > 1 && strcmp(argv[1], "-p") == 0) {
		with_pid = true;
		argv++;
		argc--;
	}
	if (argc != 3 || (strcmp(argv[1], "realtime") != 0 && strcmp(argv[1], "high") != 0)) {
		fprintf(stderr, "usage: rtkit-client [-p] realtime PRIO | high NICE\n");
		return 64;
	}
	realtime = argv[1][0] == 'r';
	v = strtol(argv[2], NULL, 10);
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	pthread_mutex_lock(&lock);
	while (!worker_tid)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if ((r = sd_bus_open_system(&bus)) < 0) {
		printf("err %d connect %s\n", (int)worker_tid, strerror(-r));
		return 1;
	}
	const char *method = realtime ? (with_pid ? "MakeThreadRealtimeWithPID" : "MakeThreadRealtime") :
				        (with_pid ? "MakeThreadHighPriorityWithPID" : "MakeThreadHighPriority");
	if (with_pid)
		r = realtime ? sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
						  "org.freedesktop.RealtimeKit1", method, &err, NULL, "ttu",
						  (uint64_t)getpid(), (uint64_t)worker_tid, (uint32_t)v) :
			       sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
						  "org.freedesktop.RealtimeKit1", method, &err, NULL, "tti",
						  (uint64_t)getpid(), (uint64_t)worker_tid, (int32_t)v);
	else
		r = realtime ? sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
						  "org.freedesktop.RealtimeKit1", method, &err, NULL, "tu",
						  (uint64_t)worker_tid, (uint32_t)v) :
			       sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
						  "org.freedesktop.RealtimeKit1", method, &err, NULL, "ti",
						  (uint64_t)worker_tid, (int32_t)v);
	if (r < 0)
		printf("err %d %s %s\n", (int)worker_tid, err.name ? err.name : "?",
		       err.message ? err.message : strerror(-r));
	else
		printf("ok %d\n", (int)worker_tid);
	fflush(stdout);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(bus);
	/* the thread lives until stdin closes */
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
