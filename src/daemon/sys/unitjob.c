/* unitjob.c: the job systemd runs on our own unit (see unitjob.h), read
 * from the unit's Job property and that job's JobType. The cleanup
 * functions of sd-bus's objects (sd_bus_flush_close_unrefp...) are
 * libsystemd's own. */
#include "autoconfig.h"

#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "daemon/sys/log.h"
#include "daemon/sys/unitjob.h"
#include "shared/cleanup.h"

bool unitjob_restarting(void)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ char *unit = NULL, *upath = NULL, *jtype = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error err = SD_BUS_ERROR_NULL;
	const char *jpath = NULL;
	uint32_t jid = 0;
	bool restart = false;

	if (!getenv("NOTIFY_SOCKET") || sd_pid_get_unit(0, &unit) < 0)
		return false;
	if (sd_bus_open_system(&bus) >= 0 &&
	    sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &upath) >= 0 &&
	    sd_bus_get_property(bus, "org.freedesktop.systemd1", upath, "org.freedesktop.systemd1.Unit", "Job",
				&err, &reply, "(uo)") >= 0 &&
	    sd_bus_message_read(reply, "(uo)", &jid, &jpath) >= 0 && jid &&
	    sd_bus_get_property_string(bus, "org.freedesktop.systemd1", jpath, "org.freedesktop.systemd1.Job",
				       "JobType", &err, &jtype) >= 0)
		restart = strcmp(jtype, "restart") == 0 || strcmp(jtype, "try-restart") == 0;
	if (err.message)
		log_debug("asking systemd about %s: %s", unit, err.message);
	return restart;
}
