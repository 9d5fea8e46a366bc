/* clock.h: a clock read as one number, for deadlines, budgets and rate
 * limits (clock_gettime is a vDSO call: no system call, no lock, so the
 * watchdog thread may use it too). */
#ifndef RTSCHED_CLOCK_H
#define RTSCHED_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_nsec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_usec(clockid_t clk)
{
	return clock_nsec(clk) / 1000u;
}

/* A CLOCK_BOOTTIME reading in the kernel's clock ticks (hz > 0, from
 * sysconf(_SC_CLK_TCK)), as /proc's start times count them: truncated, so a
 * task that started in a later tick than this began surely after it. */
static inline uint64_t clock_ticks_of(uint64_t boot_ns, long hz)
{
	return boot_ns / (1000000000ull / (uint64_t)hz);
}

#endif
