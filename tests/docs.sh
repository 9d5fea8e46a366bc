#!/bin/bash
# tests/docs.sh: the user documentation cannot drift from the code. Gathers
# what the docs must say from the code and from real runs, and lets
# tests/docs-check.py compare it with README.md, doc/*.md and the man pages:
# - the protocol's error codes and the errno of each, every config key with
#   its range and default, the control socket's connection limits: printed
#   from the code's own tables by tests/docs-facts;
# - the exit statuses of rtschedd and rtschedctl: from running them into
#   each case (and their --help);
# - every drop-in README.md and doc/*.md tell people to write in
#   /etc/rtschedd.d: beside the shipped file, rtschedd --test-config passes;
# - as root, the columns and row kinds of `rtschedctl list` and `jitter`:
#   from a real run of examples/demo.sh (make demo), which the README's
#   samples come from (make docs-samples writes them).
# Then the same check on copies of the docs with one planted mismatch each
# must fail, naming it: the test shows every run that it can fail.
. "$(dirname "$0")/lib.sh"
CHECK="$top_srcdir/tests/docs-check.py"
F="$TMP/facts"
mkdir -p "$F"
command -v python3 >/dev/null || skip "python3 not found"

"$top_builddir/tests/docs-facts" >"$F/facts.tsv" && pass "docs-facts: $(grep -c '^error' "$F/facts.tsv") error codes, $(grep -c '^key' "$F/facts.tsv") config keys" ||
	fail "tests/docs-facts failed"

# --- exit statuses, each from a run that must give it ------------------------------
# exit_case FILE WANT WHAT CMD...: run CMD, expect WANT, record it in FILE
exit_case() {
	local file=$1 want=$2 what=$3
	shift 3
	run "$@"
	expect_rc "$want" "$what"
	[ "$RC" -eq "$want" ] && echo "$RC $what" >>"$F/$file"
}
printf '[daemon]\nrate-limit = 0\n' >"$TMP/ok.conf"
printf '[daemon]\nno-such-key = 1\n' >"$TMP/bad.conf"
exit_case exit-rtschedd 0 "rtschedd --version" "$RTSCHEDD" --version
exit_case exit-rtschedd 1 "rtschedd -t on an invalid configuration" "$RTSCHEDD" -c "$TMP/bad.conf" -t
exit_case exit-rtschedd 64 "rtschedd with an unknown option" "$RTSCHEDD" --no-such-option
exit_case exit-rtschedd 71 "rtschedd --check of a process that does not exist" \
	"$RTSCHEDD" -c "$TMP/ok.conf" --check --pid 2147483647
"$RTSCHEDD" --help >"$F/help-rtschedd"
daemon_start "$TMP/ok.conf"
exit_case exit-rtschedctl 0 "rtschedctl -V" "$RTSCHEDCTL" -V
exit_case exit-rtschedctl 1 "rtschedctl register with a role that does not exist (refused)" \
	"$RTSCHEDCTL" --socket "$SOCK" register --tid $$ --role no-such-role
exit_case exit-rtschedctl 2 "rtschedctl on a socket nobody serves" "$RTSCHEDCTL" --socket "$TMP/nobody" status
exit_case exit-rtschedctl 64 "rtschedctl with an unknown command" "$RTSCHEDCTL" --socket "$SOCK" no-such-command
# run: nothing is exec'd in these cases (the program's own status otherwise)
exit_case exit-rtschedctl 69 "rtschedctl run without its preload library" \
	env RTSCHED_PRELOAD="$TMP/none.so" "$RTSCHEDCTL" run -- true
export RTSCHED_PRELOAD="$top_builddir/src/preload/.libs/librtsched-preload.so"
exit_case exit-rtschedctl 127 "rtschedctl run of a program that does not exist" "$RTSCHEDCTL" run -- "no-such-program-$$"
exit_case exit-rtschedctl 126 "rtschedctl run of a file that is not executable" "$RTSCHEDCTL" run -- "$TMP/ok.conf"
exit_case exit-rtschedctl 77 "rtschedctl run --rule naming no rule (refused before exec)" \
	"$RTSCHEDCTL" --socket "$SOCK" run --rule no-such-rule -- true
unset RTSCHED_PRELOAD
"$RTSCHEDCTL" --help >"$F/help-rtschedctl"
daemon_stop

# --- as root, make demo: list and jitter as a new user first sees them -------------
DEMO_PID=
demo_stop() { [ -n "$DEMO_PID" ] && kill -INT "$DEMO_PID" 2>/dev/null && wait "$DEMO_PID" 2>/dev/null; DEMO_PID=; }
if [ "$(id -u)" -eq 0 ]; then
	DEMO_DIR="$TMP/demo" bash "$top_srcdir/examples/demo.sh" >"$F/demo.out" 2>&1 &
	DEMO_PID=$!
	at_exit demo_stop
	if wait_for grep -q '^=== rtschedd keeps running' "$F/demo.out"; then
		pass "examples/demo.sh (make demo) ran to its end"
	else
		fail "examples/demo.sh did not finish: $(tail -5 "$F/demo.out")"
	fi
	demo_stop
else
	echo "# not root: make demo is not run, list and jitter columns are not checked"
fi

# --- the man pages render without a warning ---------------------------------------------
if command -v groff >/dev/null; then
	for m in "$top_srcdir"/man/*.[1-8]; do
		w=$(LC_ALL=C.UTF-8 groff -ww -man -Tutf8 -z "$m" 2>&1)
		[ -z "$w" ] && pass "groff -ww: ${m##*/} renders without a warning" || fail "groff -ww ${m##*/}: $w"
	done
else
	echo "# groff not found: the man pages' rendering is not checked"
fi

# --- the docs of this tree --------------------------------------------------------------
export RTSCHEDD
python3 "$CHECK" check "$F" "$top_srcdir" >"$TMP/check.out" 2>&1
RC=$?
sed 's/^/  /' "$TMP/check.out"
[ "$RC" -eq 0 ] && pass "the docs agree with the code ($(grep -c '^ok' "$TMP/check.out") checks)" ||
	fail "the docs disagree with the code: $(grep '^FAIL' "$TMP/check.out" | head -3)"

# --- planted mismatches: each must fail, saying what --------------------------------------
# plant NAME WANT FILE SED-SCRIPT: the docs with FILE edited; the check must
# fail with WANT in its output
plant() {
	local d="$TMP/plant-$1" want=$2 file=$3 script=$4
	mkdir -p "$d"
	cp -r "$top_srcdir/README.md" "$top_srcdir/man" "$top_srcdir/doc" "$d/"
	sed -i -e "$script" "$d/$file"
	if cmp -s "$d/$file" "$top_srcdir/$file"; then
		fail "planted $1: the edit changed nothing in $file (update the plant)"
		return
	fi
	python3 "$CHECK" check "$F" "$d" >"$d.out" 2>&1
	if [ $? -ne 0 ] && grep -qF -- "$want" "$d.out"; then
		pass "planted $1 ($file): the check fails with \"$want\""
	else
		fail "planted $1 ($file): the check did not fail with \"$want\": $(grep '^FAIL' "$d.out" | head -3)"
	fi
}
plant error-code-left-out "rtschedctl(1) ERROR CODES: missing rttime-zero" man/rtschedctl.1 \
	'/^\.B rttime\\-zero$/d'
plant errno-changed "rate-limited returns EAGAIN, the page says EBUSY" man/rtschedd-protocol.7 \
	'/^\.B rate\\-limited$/{n;s/EAGAIN/EBUSY/}'
plant key-renamed "keys of [daemon]: missing rate-limit" man/rtschedd.conf.5 \
	's/^\.BI "rate\\-limit = " integer$/.BI "rate\\-limits = " integer/'
plant range-changed "[daemon] rescan-interval: the page says 100 to 360000" man/rtschedd.conf.5 \
	's/^Milliseconds between those rescans, 100 to 3600000\.$/Milliseconds between those rescans, 100 to 360000./'
plant default-changed "[daemon] metrics-interval: the page's default is 16" man/rtschedd.conf.5 \
	'/metrics\\-interval = /,/^Default/s/^Default: 15\.$/Default: 16./'
plant exit-status-added "EXIT STATUS (real runs of rtschedd): not in the code: 2" man/rtschedd.8 \
	'/^\.SH EXIT STATUS$/a .TP\n.B 2\nA status rtschedd never returns.'
plant connection-limit "Connections: does not say may hold at most" man/rtschedd-protocol.7 \
	's/may hold at most 128/may hold at most 256/'
plant testconfig-sample "the --test-config sample is not what rtschedd prints" man/rtschedd.conf.5 \
	'/sample: testconfig/,/sample: end/s/^priority       = 35 /priority       = 36 /'
plant jitter-kind "kind does not name the jitter row kinds bpf-wakeup" man/rtschedd-protocol.7 \
	'/^\.B kind$/,/^\.TQ$/{/^\.B bpf\\-wakeup$/d}'
plant json-number "JSON number fields (ctl/json.c): missing scan_us" man/rtschedctl.1 \
	'/^\.BR scan_us ,$/d'
plant issue-number "README.md names the tracker (Issue 15)" README.md \
	'0,/^## /s/^## \(.*\)$/Issue 15 says so.\n\n## \1/'
plant dropin-key "README.md: the drop-in /etc/rtschedd.d/50-ola.conf fails rtschedd --test-config" README.md \
	's/^thread-name = libusb_event$/thread-nam = libusb_event/'
if [ -f "$F/demo.out" ]; then
	plant list-column "rtschedctl(1) list: columns of the real output not described: OBSERVED TIMER99 WAKE99" \
		man/rtschedctl.1 '/^\.BR OBSERVED ", " TIMER99 ", " WAKE99$/d'
	plant list-header "README.md: a list sample's header is not the real one" README.md \
		'0,/^TID  *PID /s/ OBSERVED / /'
	if grep -q '^bpf-timer ' "$F/demo.out"; then
		plant schedstat-row "a jitter sample shows a schedstat row" README.md \
			'0,/^bpf-wakeup /s/^\(bpf-wakeup .*\)$/\1\nschedstat  demo-worker     1    fifo   50   0-1    -               1        -/'
	fi
fi
finish
