/* cpulist.h: the kernel's CPU list syntax ("0-3,6", "0-7:2/4"), parsed into
 * and printed from cpu_set_t, checked against the CPUs the machine has. */
#ifndef RTSCHED_CPULIST_H
#define RTSCHED_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* Parse a CPU list into *set. -EINVAL on bad syntax, -ERANGE on a CPU number
 * past CPU_SETSIZE; *bad (if given) points at the offending text. */
int cpulist_parse(const char *s, cpu_set_t *set, const char **bad);
/* Format *set in the kernel's compact syntax ("0-3,6"); -ENOSPC if it won't fit. */
int cpulist_format(const cpu_set_t *set, char *buf, size_t len);
/* The CPUs present on this machine, from /sys/devices/system/cpu/present. */
int cpulist_present(cpu_set_t *set);
/* The CPUs online now, from /sys/devices/system/cpu/online. */
int cpulist_online(cpu_set_t *set);
/* The CPUs of *set that are not in *present; 0 if none. Returns the count. */
int cpulist_missing(const cpu_set_t *set, const cpu_set_t *present, cpu_set_t *missing);

#endif
