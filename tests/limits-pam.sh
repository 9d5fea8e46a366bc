#!/bin/sh
# limits-pam.sh - compare the limits.conf reader with pam_limits itself
#
# Creates throw-away users and groups, installs two files in
# /etc/security/limits.d, opens a real PAM session for each user with
# "runuser -l" (its stack includes pam_limits) and compares what the
# session got (/proc/self/limits) with what tests/limits-query predicts
# from the same real limits.conf and limits.d.  Everything it adds is
# removed on exit.  Needs root; exits 77 (skip) otherwise.
#
# A session's values are not the reader's numbers as such; Debian 12 adds:
# - runuser resets limits before pam_open_session (util-linux
#   sanitize_prlimits(): nice and rtprio 0/0, fsize and as unlimited, nofile
#   soft FD_SETSIZE).  The values a session starts from are measured with a
#   user exempted by a plain "<user> -" line.
# - pam_limits fills limits no line sets from /proc/1/limits (patch 027;
#   nofile soft capped at 1024), then setrlimit(); an EPERM (hard raised
#   without CAP_SYS_RESOURCE) leaves that limit as it was (patch 032).
#
# Environment: top_srcdir and top_builddir (set by make check; default
# "."), LIMITS_QUERY (default $top_builddir/tests/limits-query),
# LIMITS_PAM_TIMEOUT (seconds per command before it counts as hung,
# default HANG_S or 300).

set -u

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "ERROR: $*" >&2; exit 99; }

[ "$(id -u)" = 0 ] || skip "needs root to add users and open PAM sessions"
for c in runuser useradd userdel groupadd groupdel getent timeout; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
grep -qs pam_limits /etc/pam.d/runuser /etc/pam.d/runuser-l ||
	skip "runuser's PAM stack has no pam_limits"
[ -r /proc/1/limits ] || skip "/proc/1/limits unreadable"

QUERY=${LIMITS_QUERY:-${top_builddir:-.}/tests/limits-query}
T=${LIMITS_PAM_TIMEOUT:-${HANG_S:-300}}
FIX=${top_srcdir:-.}/tests/fixtures/limits/pam
CONF=/etc/security/limits.conf
DIR=/etc/security/limits.d
[ -x "$QUERY" ] || fail "$QUERY not built"
[ -r "$FIX/10.conf.in" ] || fail "fixtures not found in $FIX"
[ -d "$DIR" ] || fail "$DIR missing"

P=rtsd-$$
USERS=""
GROUPS_ADDED=""
FILES=""
# Remove exactly what this run added, whatever happened.
cleanup() {
	for f in $FILES; do rm -f "$f"; done
	for u in $USERS; do timeout "$T" userdel "$u" >/dev/null 2>&1; done
	for g in $GROUPS_ADDED; do
		getent group "$g" >/dev/null && timeout "$T" groupdel "$g" >/dev/null 2>&1
	done
	rm -f "$TMP" "$TMP.base" "$TMP.s" "$TMP.err"
}
TMP=$(mktemp) || fail "mktemp"
trap cleanup EXIT
trap 'exit 98' INT TERM HUP

# add_group NAME; add_user NAME USERADD-ARGS...: remembered for cleanup
add_group() {
	timeout "$T" groupadd "$1" || fail "groupadd $1"
	GROUPS_ADDED="$GROUPS_ADDED $1"
}
add_user() {
	u=$1; shift
	timeout "$T" useradd -M -d / -s /bin/sh "$@" "$u" || fail "useradd $u"
	USERS="$USERS $u"
	GROUPS_ADDED="$GROUPS_ADDED $u"     # the -U group, if any
}

add_group "$P-sup"
add_group "$P-pri"
add_user "$P-cal" -U
add_user "$P-u1" -U -G "$P-sup"
add_user "$P-u2" -U -G "$P-sup"
add_user "$P-u3" -N -g "$P-pri"
add_user "$P-u4" -U
add_user "$P-u5" -U

for f in 10 9; do
	dst=$DIR/$P-$f.conf
	FILES="$FILES $dst"
	sed -e "s/@CAL@/$P-cal/g" -e "s/@SUP@/$P-sup/g" \
	    -e "s/@U1@/$P-u1/g" -e "s/@U2@/$P-u2/g" -e "s/@U3@/$P-u3/g" \
	    -e "s/@U4@/$P-u4/g" \
	    -e "s/@UID2@/$(id -u "$P-u2")/g" -e "s/@UID4@/$(id -u "$P-u4")/g" \
	    -e "s/@UID5@/$(id -u "$P-u5")/g" \
	    -e "s/@GIDPRI@/$(getent group "$P-pri" | cut -d: -f3)/g" \
	    -e "s/@GIDSUP@/$(getent group "$P-sup" | cut -d: -f3)/g" \
	    "$FIX/$f.conf.in" > "$dst" || fail "cannot write $dst"
done

# The caller's soft core limit is raised so that "unmatched" (pid 1's 0)
# and "exempt" (inherited) sessions differ.  dash and bash both know -S/-H.
# shellcheck disable=SC3045
ulimit -S -c "$(ulimit -H -c)"

ITEMS="nofile locks core rtprio"
# label ITEM: the /proc/PID/limits row of an item
label() {
	case $1 in
	nofile) echo "Max open files" ;;
	locks) echo "Max file locks" ;;
	core) echo "Max core file size" ;;
	rtprio) echo "Max realtime priority" ;;
	esac
}
# row FILE ITEM: "soft hard" of an item in a saved /proc/PID/limits
row() {
	awk -v n="$(label "$2")" 'index($0, n) == 1 {
		split(substr($0, length(n) + 1), a, " "); print a[1], a[2] }' "$1"
}
# num VALUE: unlimited as the largest number, for comparisons
num() { if [ "$1" = unlimited ]; then echo 9223372036854775807; else echo "$1"; fi; }
# field KEY LINE: value of KEY=... in a limits-query line
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# session USER FILE: save the limits a PAM login session of USER gets
session() {
	timeout "$T" runuser -l "$1" -c 'cat /proc/self/limits' > "$2" 2>"$TMP.err" ||
		{ echo "FAIL $1: runuser failed: $(cat "$TMP.err")"; rm -f "$TMP.err"; return 1; }
	rm -f "$TMP.err"
}

# Start values: what a session gets when pam_limits sets nothing.
session "$P-cal" "$TMP.base" || fail "cannot open a session for $P-cal"
q=$(timeout "$T" "$QUERY" "$CONF" "$DIR" nofile "$P-cal" 2>/dev/null)
[ "$(field exempt "$q")" = 1 ] || { rm -f "$TMP.base"; fail "reader does not see $P-cal as exempt"; }
grep -q '^Limit' /proc/1/limits || fail "unexpected /proc/1/limits"

pass=0 failed=0
# check USER ITEM SESSIONFILE: predict from the reader, compare with pam
check() {
	q=$(timeout "$T" "$QUERY" "$CONF" "$DIR" "$2" "$1" 2>/dev/null) ||
		{ echo "FAIL $1 $2: limits-query failed"; failed=$((failed + 1)); return; }
	set -- "$1" "$2" "$3" "$q"
	got=$(row "$3" "$2")
	base=$(row "$TMP.base" "$2")
	pid1=$(row /proc/1/limits "$2")
	bs=${base% *} bh=${base#* } ks=${pid1% *} kh=${pid1#* }
	[ "$2" = nofile ] && [ "$(num "$ks")" -gt 1024 ] && ks=1024
	if [ "$(field exempt "$4")" = 1 ]; then
		want="$bs $bh" why="exempt"
	else
		s=$(field soft "$4") h=$(field hard "$4")
		[ "$s" = unset ] && s=$ks
		[ "$h" = unset ] && h=$kh
		[ "$(num "$s")" -gt "$(num "$h")" ] && s=$h
		if [ "$(num "$h")" -gt "$(num "$bh")" ]; then
			want="$bs $bh" why="hard $h > $bh: EPERM, unchanged"
		else
			want="$s $h" why="set"
		fi
	fi
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1)) res=ok
	else
		failed=$((failed + 1)) res=FAIL
	fi
	printf '%-4s %-14s %-6s session=%s predicted=%s (%s)\n     reader: %s\n' \
		"$res" "$1" "$2" "$got" "$want" "$why" "$4"
}

for u in "$P-u1" "$P-u2" "$P-u3" "$P-u4" "$P-u5" root; do
	if ! session "$u" "$TMP.s"; then
		failed=$((failed + 1))
		continue
	fi
	for i in $ITEMS; do
		check "$u" "$i" "$TMP.s"
	done
done
rm -f "$TMP.s" "$TMP.base"

echo "limits-pam: $pass passed, $failed failed"
[ "$failed" = 0 ]
