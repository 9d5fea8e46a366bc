#!/usr/bin/env python3
"""qmp-host.py: qemu's monitor, driven from inside the guest. Run on the
host by boot.sh -H while the guest runs:

    qmp-host.py QMP_SOCKET DIR

The guest (tests/irq-hotplug.sh) writes one QMP command as JSON into
DIR/N.cmd (N counts up from 1, written under another name and renamed);
this sends it to qemu and writes qemu's answer to DIR/N.out, with the
host's CLOCK_MONOTONIC-independent wall time of the answer, so the guest
knows when the device came or went. It ends when qemu does."""
import json
import os
import socket
import sys
import time


def main(sock_path, d):
    for _ in range(600):
        if os.path.exists(sock_path):
            break
        time.sleep(0.1)
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    f = s.makefile("rw")

    def answer():
        while True:
            line = f.readline()
            if not line:
                raise EOFError
            m = json.loads(line)
            if "event" not in m:
                return m

    answer()  # the greeting
    f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    f.flush()
    answer()
    n = 1
    while True:
        cmd = os.path.join(d, f"{n}.cmd")
        if not os.path.exists(cmd):
            time.sleep(0.05)
            continue
        with open(cmd) as c:
            f.write(c.read().strip() + "\n")
        f.flush()
        reply = answer()
        reply["host_time"] = time.time()
        tmp = os.path.join(d, f"{n}.out.tmp")
        with open(tmp, "w") as o:
            json.dump(reply, o)
        os.rename(tmp, os.path.join(d, f"{n}.out"))
        n += 1


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2])
    except (EOFError, ConnectionError, OSError):
        pass
