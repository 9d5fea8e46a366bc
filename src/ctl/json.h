/* json.h: rtschedctl's --json output (json.c). */
#ifndef RTSCHED_CTL_JSON_H
#define RTSCHED_CTL_JSON_H

#include "shared/protocol.h"

/* A value from the daemon as a JSON string: it may hold a thread's name, any bytes. */
void json_string(const char *s);
/* A message as one object on stdout; culprit_N_FIELD keys become
 * "culprits": an array of objects, culprit N's fields in the Nth. */
void json_object(const struct proto_msg *m);

#endif
