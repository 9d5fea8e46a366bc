/* hotplug.h: devices that come and go (a USB audio interface, a DMX
 * adapter, a network card), from the kernel's uevents: through libsystemd's
 * sd-device monitor where udev runs (events after udev's rules, so the
 * device is set up), else straight from the kernel's uevent netlink socket
 * (a container, a machine without udev). Only the subsystems that can
 * bring interrupts or sit behind them are passed on: usb, pci, sound, net;
 * and a network interface coming up or going down (rtnetlink), when most
 * NIC drivers request or free their vectors without a device event. */
#ifndef RTSCHED_HOTPLUG_H
#define RTSCHED_HOTPLUG_H

#include <stddef.h>
#include <systemd/sd-event.h>

struct hotplug;

/* A device event: action "add", "remove", "bind"...; devpath below /sys. */
typedef void (*hotplug_fn)(void *ud, const char *action, const char *devpath);

/* Start watching on e. 0 or -errno. */
int hotplug_new(struct hotplug **ret, sd_event *e, hotplug_fn fn, void *ud);
/* "udev (sd-device monitor)" or "kernel uevents (no udev)". */
const char *hotplug_source(const struct hotplug *h);
/* NULL is fine. */
void hotplug_free(struct hotplug *h);

/* Parse one kernel uevent message (NUL-separated "ACTION@DEVPATH",
 * "KEY=VALUE"...): whether it is for a subsystem that matters, with its
 * action and devpath pointing into buf. Exposed for the fuzzer. */
int hotplug_parse_uevent(const char *buf, size_t len, const char **action, const char **devpath);

#endif
