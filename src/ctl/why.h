/* why.h: printing the reply of `rtschedctl why` (why.c). */
#ifndef RTSCHED_CTL_WHY_H
#define RTSCHED_CTL_WHY_H

#include <stdbool.h>

#include "shared/protocol.h"

struct why_state {
	bool json;           /* --json: one object instead of text */
	const char *section; /* the JSON array open now: "culprits", "timeline", "recent" */
	bool header_done;
	long late;
};

/* Each message of the reply, with a zeroed struct why_state (but json) as ud. */
int why_on_msg(void *ud, const struct proto_msg *m);

#endif
