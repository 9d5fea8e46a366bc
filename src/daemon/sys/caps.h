/* caps.h: which capabilities this process holds now (libcap). */
#ifndef RTSCHED_CAPS_H
#define RTSCHED_CAPS_H

#include <stdbool.h>
#include <sys/capability.h>

/* Is cap in this process's effective set? false if it cannot be read. */
bool caps_effective(cap_value_t cap);

#endif
