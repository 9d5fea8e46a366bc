/* caps.c: which capabilities this process holds now (see caps.h). */
#include "autoconfig.h"

#include "daemon/sys/caps.h"

bool caps_effective(cap_value_t cap)
{
	cap_t c = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;

	if (c) {
		cap_get_flag(c, cap, CAP_EFFECTIVE, &v);
		cap_free(c);
	}
	return v == CAP_SET;
}
