#!/bin/bash
# examples/demo.sh: `make demo`, the README's main job. Runs rtschedd in the
# foreground on the shipped config (plus one demo drop-in adding a latency
# probe on CPU 0 and a rule that finds threads named rt-demo-* by itself),
# on a private socket so it never clashes with an installed one, with the
# olad-style flags; then a demo worker registers through
# librtsched, runs a 1 kHz timer whose wake-ups rtschedd measures, and
# `rtschedctl` shows what it got. Ctrl-C stops the daemon, which restores
# every thread it manages.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
DIR=${DEMO_DIR:-/tmp/rtschedd-demo}
export RTSCHED_SOCKET=$DIR/control
[ "$(id -u)" -eq 0 ] || echo "demo: not root: real-time policies need CAP_SYS_NICE; expect refusals"
mkdir -p "$DIR/rtschedd.d"
cp "$top_srcdir/conf/rtschedd.conf" "$DIR/rtschedd.conf"
rm -f "$DIR/rtschedd.d/50-demo-probe.conf"   # what older demos left
cat >"$DIR/rtschedd.d/50-demo.conf" <<EOC
# make demo: what a SCHED_FIFO 10 thread on CPU 0 experiences, every 1 ms
[probe fifo10-cpu0]
cpu = 0
policy = fifo
priority = 10
period-us = 1000

# a rule with a match key: threads named rt-demo-* get FIFO 20 by
# themselves (within their user's limits: root's, in the demo). Not in the
# shipped configuration, which grants nothing by name to every user.
[rule demo-match]
thread-name = rt-demo-*
policy = fifo
priority = 20
EOC
CTL="$top_builddir/rtschedctl"
(
	for _ in $(seq 50); do "$CTL" version >/dev/null 2>&1 && break; sleep 0.1; done
	echo "=== demo worker: registers with role audio through librtsched ==="
	"$top_builddir/examples/demo-worker" audio 4 &
	sleep 2
	echo "=== rtschedctl list ==="
	"$CTL" list
	echo "=== rtschedctl jitter (the worker's timer, the probe, and BPF's view of the worker) ==="
	"$CTL" jitter
	echo "=== rtschedctl jitter --histogram demo-worker ==="
	"$CTL" jitter --histogram demo-worker
	wait
	echo "=== demo worker: the daemon's default (--scheduler-policy fifo --scheduler-priority 10) ==="
	"$top_builddir/examples/demo-worker" - 1
	echo "=== rtschedctl status ==="
	"$CTL" status
	echo "=== rtschedd keeps running in the foreground: Ctrl-C stops it ==="
) &
exec "$top_builddir/rtschedd" --config "$DIR/rtschedd.conf" --socket "$RTSCHED_SOCKET" \
	--scheduler-policy fifo --scheduler-priority 10
