#!/bin/bash
# tests/check.sh: the diagnosis through the running daemon and the CLI.
# `rtschedctl check --user` for a test user in group audio with
# "@audio - rtprio 50" in limits.d reports soft 50, hard 50 and the
# file:line; a process of that user started without PAM shows that its
# RLIMIT_RTPRIO is 0 and how to fix it; `rtschedd --check` works offline;
# a failing apply carries the diagnosed cause, not just EPERM.
. "$(dirname "$0")/lib.sh"
need_root
for c in useradd userdel groupadd groupdel setpriv prlimit; do command -v $c >/dev/null || skip "$c missing"; done
[ -d /etc/security/limits.d ] || skip "no /etc/security/limits.d"

U=rtsd-chk$$; LIMITS=/etc/security/limits.d/rtsd-chk$$.conf; AUDIO_ADDED=
getent group audio >/dev/null || { groupadd audio && AUDIO_ADDED=1; }
useradd -M -N -g nogroup -G audio -s /usr/sbin/nologin "$U" || skip "cannot add a test user"
undo() { [ -n "${NP:-}" ] && kill "$NP" 2>/dev/null; rm -f "$LIMITS"; userdel "$U" 2>/dev/null
	 [ -n "$AUDIO_ADDED" ] && groupdel audio 2>/dev/null; }
at_exit undo
printf '# rtschedd tests/check.sh, removed when it ends\n@audio - rtprio 50\n' >"$LIMITS"

printf '[daemon]\nrate-limit = 0\n' >"$TMP/c.conf"
daemon_start "$TMP/c.conf"

ctl check --user "$U"
expect_in "$OUT" "soft 50 ($LIMITS:2), hard 50 ($LIMITS:2)" "rtschedctl check --user: soft 50, hard 50 and the file:line"
ctl --json check --user "$U"
echo "$OUT" | jq -e '.limits.rtprio_soft == 50 and .limits.rtprio_hard == 50' >/dev/null &&
	pass "--json: limits 50/50" || fail "--json: $OUT"
echo "$OUT" | jq -e '[.findings[] | has("code") and has("severity") and has("fix")] | all' >/dev/null &&
	pass "every finding has a code, a severity and a fix" || fail "findings: $OUT"

# a process of the user started without PAM: RLIMIT_RTPRIO 0
setpriv --reuid="$U" --regid=nogroup --clear-groups prlimit --rtprio=0:0 sleep 3600 &
NP=$!
# until setpriv and prlimit have exec'd into sleep: before that the pid is not yet the user's
wait_for sh -c "[ \"\$(cat /proc/$NP/comm)\" = sleep ]"
ctl check --pid "$NP"
expect_in "$OUT" "rtprio-zero-not-pam" "the finding for a process not started through PAM"
expect_in "$OUT" "fix:" "with its fix"
expect_in "$OUT" "limits.conf grants $U" "it says what limits.conf would have granted"
kill "$NP"; NP=

# a non-root client may check only itself
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$RTSCHEDCTL" --socket "$SOCK" check --user root 2>&1)
expect_in "$out" "not-admin" "nobody may not check root"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$RTSCHEDCTL" --socket "$SOCK" check --user nobody 2>&1)
expect_in "$out" "rtschedd check" "nobody may check itself"
daemon_stop

# offline: rtschedd --check
run "$RTSCHEDD" --check --config "$TMP/c.conf" --user "$U"
# the exit status follows the report: 1 exactly when a finding is an error
want=$("$RTSCHEDD" --check --json --config "$TMP/c.conf" --user "$U" |
	jq -r 'if any(.findings[]; .severity == "error") then 1 else 0 end')
[ -n "$want" ] && [ "$RC" = "$want" ] && pass "rtschedd --check exits $RC, as its worst finding says" ||
	fail "rtschedd --check exit $RC, its findings want ${want:-?}: $ERR"
expect_in "$OUT" "soft 50 ($LIMITS:2)" "rtschedd --check --user reports the grant"
run "$RTSCHEDD" --check --json --config "$TMP/c.conf"
echo "$OUT" | jq -e '.findings | length > 0' >/dev/null && pass "rtschedd --check --json parses" || fail "json: $OUT"
# the kernel features: each named in use or missing, as the kernel's version
# says it must be (Debian's kernels do not backport these)
feat() { # feat NAME: "in use" or "missing", from the --json report above
	echo "$OUT" | jq -r --arg n "$1" '.findings[] | select(.code | startswith("kernel-feature")) |
		select(.message | test(": " + $n + " \\(")) | if .code == "kernel-feature" then "in use" else "missing" end'
}
kv=$(uname -r | awk -F'[.-]' '{ print $1 * 1000 + $2 }')
for f in "pidfd_open 5003" "SO_PEERPIDFD 6005" "PIDFD_THREAD 6009"; do
	set -- $f
	want=missing; [ "$kv" -ge "$2" ] && want="in use"
	got=$(feat "$1")
	[ "$got" = "$want" ] && pass "rtschedd --check: $1 $got (Linux $(uname -r))" ||
		fail "rtschedd --check: $1 '$got', expected '$want' on Linux $(uname -r)"
done
got=$(feat "process events connector")
[ "$got" = "in use" ] && pass "rtschedd --check: the process events connector in use" ||
	fail "rtschedd --check: process events connector '$got'"
run "$RTSCHEDD" --pid 1
expect_rc 64 "--pid without --check is a usage error"

# without CAP_SYS_NICE in the bounding set the fix is not setcap (a file
# capability cannot pass the bounding set) but starting it where it is allowed
run setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice "$RTSCHEDD" --config "$TMP/c.conf" --check
expect_rc 1 "--check without CAP_SYS_NICE in the bounding set: an error"
expect_in "$OUT" "ERROR    no-cap-sys-nice:" "no-cap-sys-nice"
expect_in "$OUT" "CAP_SYS_NICE is not in its bounding set" "the fix names the bounding set"
case "$OUT" in *"setcap cap_sys_nice"*) fail "the fix suggests setcap, which cannot help" ;;
	*) pass "no setcap advice when the bounding set lacks the capability" ;; esac
run "$RTSCHEDD" --config "$TMP/c.conf" --check
expect_in "$OUT" "OK       cap-sys-nice:" "started with the capability allowed (the fix), it has CAP_SYS_NICE"

# a failing apply explains itself: without CAP_SYS_NICE the daemon can only
# go up to the target's RLIMIT_RTPRIO, which is 0 here
SOCK="$TMP/control"; DLOG="$TMP/nonice.log"
setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice "$RTSCHEDD" --config "$TMP/c.conf" --socket "$SOCK" >"$DLOG" 2>&1 &
DPID=$!
wait_for "$RTSCHEDCTL" --socket "$SOCK" version
helper_start
T=$(spawn w)
ctl register --tid "$T"
expect_in "$ERR" "apply-failed" "the apply fails"
expect_in "$ERR" "RLIMIT_RTPRIO" "and the reply names the diagnosed cause (RLIMIT_RTPRIO), not just EPERM"
expect_in "$ERR" "diagnosis: rtprio-zero" "rtschedctl prints the cause's code, the one check reports"
run "$RTSCHEDCTL" --socket "$SOCK" --json register --tid "$T"
[ "$(echo "$OUT" | jq -r '.error + " " + .diag')" = "apply-failed rtprio-zero" ] &&
	pass "register --json: error apply-failed, diag rtprio-zero" || fail "register --json: $OUT"
expect_sched "$T" "policy=other" "nothing was applied"
# librtsched: EIO as before, and the code through rtsched_last_diag()
h register w -
case "$HR" in
"err 5 "*"RLIMIT_RTPRIO"*"[diag rtprio-zero]") pass "librtsched: -EIO, and rtsched_last_diag() says rtprio-zero" ;;
*) fail "librtsched register: '$HR', want err 5 ... [diag rtprio-zero]" ;;
esac
helper_stop
daemon_stop
finish
