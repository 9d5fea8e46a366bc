/* control.h: the control socket: AF_UNIX SOCK_SEQPACKET, from systemd socket
 * activation when present, else created by the daemon; one request per
 * message, answered in the event loop. */
#ifndef RTSCHED_CONTROL_H
#define RTSCHED_CONTROL_H

#include <stdbool.h>

#include "daemon/daemon.h"

struct control;

/* Take the activated socket or create one at the config's path. */
int control_new(struct control **ret, struct daemon *d);
/* True when the socket came from systemd. */
bool control_activated(const struct control *c);
/* Number of connected clients. */
unsigned control_n_clients(const struct control *c);
/* Close every client and the socket (removing the path if we created it). */
void control_free(struct control *c);

#endif
