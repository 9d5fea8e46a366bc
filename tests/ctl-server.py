#!/usr/bin/env python3
# tests/ctl-server.py SOCKET LOG REPLIES: a stand-in for rtschedd on SOCKET
# for tests/ctl.sh, which checks the requests rtschedctl sends and what it
# prints of the replies without a daemon. Each connection's one request is
# appended to LOG (one line); the reply is REPLIES, read anew for each
# request: one message per line ("ROW ...", then "OK ..." or "ERR ...").
# A connection closed before its request (a client that did not believe the
# socket's owner, tests/preload.sh) is skipped. Runs until killed.
import os
import socket
import sys

path, log, replies = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(path)
srv.listen(8)
while True:
    conn, _ = srv.accept()
    with conn:
        req = conn.recv(65536)
        if not req:
            continue  # a client that did not believe the socket's owner
        with open(log, 'ab') as f:
            f.write(req + b'\n')
        with open(replies, 'rb') as f:
            msgs = [m for m in f.read().split(b'\n') if m]
        try:
            for m in msgs:
                conn.send(m)
        except OSError:
            pass  # gone before the reply
