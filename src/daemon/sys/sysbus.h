/* sysbus.h: the daemon's client connections to the system bus. */
#ifndef RTSCHED_SYSBUS_H
#define RTSCHED_SYSBUS_H

#include <stdint.h>
#include <systemd/sd-bus.h>

/* The system bus ($DBUS_SYSTEM_BUS_ADDRESS, else the well-known socket), as
 * sd_bus_open_system() connects to it, named `description`, but refusing
 * descriptors: nothing rtschedd serves or asks takes one, and sd-bus would
 * close a caller's (a lingering socket, a file on its own FUSE mount) on
 * the event loop when the message is freed; without unix-fd negotiation
 * the bus daemon refuses to deliver a message that carries any. With
 * call_timeout_us (0: sd-bus's own, 25 s) set before it starts, so its
 * Hello waits no longer than a call may. 0 or -errno. */
int sysbus_open(sd_bus **ret, const char *description, uint64_t call_timeout_us);

#endif
