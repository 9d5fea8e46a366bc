/* session.c: sd-login's view of a user's sessions (see session.h). It reads
 * logind's files in /run/systemd; where logind does not run nobody has a
 * session. */
#include "autoconfig.h"

#include <stddef.h>
#include <systemd/sd-login.h>

#include "daemon/sys/session.h"

bool session_active_local(uid_t uid)
{
	/* require_active: the foreground session of its seat, as polkit's
	 * "active" means; a seat is always local (remote sessions have none) */
	return sd_uid_is_on_seat(uid, 1, NULL) > 0;
}
