#!/bin/bash
# examples/demo.sh: `make demo`, the README's main job. Runs rtschedd in the
# foreground on the shipped config (private socket, so it never clashes with
# an installed one) with the olad-style flags, then a demo worker that
# registers through librtsched and prints what the kernel reports.
# Ctrl-C stops the daemon, which restores every thread it manages.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
SOCK=${RTSCHED_SOCKET:-/tmp/rtschedd-demo/control}
export RTSCHED_SOCKET=$SOCK
[ "$(id -u)" -eq 0 ] || echo "demo: not root: real-time policies need CAP_SYS_NICE; expect refusals"

(
	for _ in $(seq 50); do "$top_builddir/rtschedctl" version >/dev/null 2>&1 && break; sleep 0.1; done
	echo "=== demo worker (librtsched, role audio) ==="
	"$top_builddir/examples/demo-worker" audio 2
	echo "=== demo worker (the daemon's default: --scheduler-policy fifo --scheduler-priority 10) ==="
	"$top_builddir/examples/demo-worker" - 1
	echo "=== rtschedctl status ==="
	"$top_builddir/rtschedctl" status
	echo "=== rtschedd keeps running in the foreground: Ctrl-C stops it ==="
) &
exec "$top_builddir/rtschedd" --config "$top_srcdir/conf/rtschedd.conf" --socket "$SOCK" \
	--scheduler-policy fifo --scheduler-priority 10
