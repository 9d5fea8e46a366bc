/* sysbus.c: the daemon's client connections to the system bus (sysbus.h). */
#include "autoconfig.h"

#include <stdlib.h>

#include "daemon/sys/sysbus.h"

int sysbus_open(sd_bus **ret, const char *description, uint64_t call_timeout_us)
{
	const char *addr = secure_getenv("DBUS_SYSTEM_BUS_ADDRESS");
	sd_bus *b = NULL;
	int r;

	if ((r = sd_bus_new(&b)) < 0)
		return r;
	if ((r = sd_bus_set_description(b, description)) < 0 ||
	    (r = sd_bus_set_address(b, addr ? addr : "unix:path=/run/dbus/system_bus_socket")) < 0 ||
	    (r = sd_bus_set_bus_client(b, 1)) < 0 || (r = sd_bus_negotiate_fds(b, 0)) < 0 ||
	    (call_timeout_us && (r = sd_bus_set_method_call_timeout(b, call_timeout_us)) < 0) ||
	    (r = sd_bus_start(b)) < 0) {
		sd_bus_close_unref(b);
		return r;
	}
	*ret = b;
	return 0;
}
