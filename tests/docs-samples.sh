#!/bin/bash
# tests/docs-samples.sh: `make docs-samples`. Writes the samples of the docs
# from real runs, so none is typed: the --test-config output in
# rtschedd.conf(5) and, as root, what `make demo` prints, in README.md and
# rtschedctl(1) (tests/docs.sh fails when they no longer match the code).
# Run from a configured build directory, through make.
set -eu
: "${top_builddir:?run it through make docs-samples}" "${top_srcdir:?}"
export top_srcdir RTSCHEDD="$top_builddir/rtschedd"
if [ "$(id -u)" -ne 0 ]; then
	echo "docs-samples: not root: make demo cannot run; only rtschedd.conf(5)'s sample is written"
	exec python3 "$top_srcdir/tests/docs-check.py" samples "$top_srcdir"
fi
out=$(mktemp -d /tmp/rtschedd-samples.XXXXXX)
trap 'kill -INT $demo 2>/dev/null; wait $demo 2>/dev/null; rm -rf "$out"' EXIT
DEMO_DIR="$out/demo" bash "$top_srcdir/examples/demo.sh" >"$out/demo.out" 2>&1 &
demo=$!
for _ in $(seq 600); do
	grep -q '^=== rtschedd keeps running' "$out/demo.out" && break
	kill -0 $demo 2>/dev/null || break
	sleep 0.1
done
grep -q '^=== rtschedd keeps running' "$out/demo.out" || { cat "$out/demo.out"; echo "docs-samples: make demo did not finish"; exit 1; }
python3 "$top_srcdir/tests/docs-check.py" samples "$top_srcdir" "$out/demo.out"
