#!/bin/bash
# tests/limits-cap.sh: rtprio-cap and over-cap at registration, with a real
# test user, a limits.conf fixture and real RLIMIT_RTPRIO values (prlimit).
. "$(dirname "$0")/lib.sh"
need_root
command -v useradd >/dev/null || skip "useradd missing"

U=rtsd-cap$$; G=rtsd-capg$$
groupadd "$G" && useradd -M -N -g nogroup -G "$G" -s /usr/sbin/nologin "$U" || skip "cannot create a test user"
cleanup_user() { userdel "$U" 2>/dev/null; groupdel "$G" 2>/dev/null; }
at_exit cleanup_user

mkdir -p "$TMP/limits.d"
: >"$TMP/limits.conf"
write_conf() {
	cat >"$CONF" <<EOC
[daemon]
rate-limit = 0
rtprio-cap = $1
over-cap = $2
limits-conf = $TMP/limits.conf
limits-dir = $TMP/limits.d
[rule thirty]
policy = fifo
priority = 30
[user *]
max-priority = 60
policies = fifo,rr,other
EOC
}
CONF="$TMP/cap.conf"
write_conf limits-conf refuse
daemon_start "$CONF"
helper_start "$U"
T=$(spawn w1)

h register w1 thirty
expect_in "$HR" "no rtprio line for user $U" "limits.conf grants nothing: refused, saying so"
expect_sched "$T" "policy=other" "nothing applied"

echo "@$G - rtprio 20" >"$TMP/limits.d/50-test.conf"
h register w1 thirty
expect_in "$HR" "priority 30 is above the cap 20 from limits.conf soft rtprio at $TMP/limits.d/50-test.conf:1" \
	"over the limits.conf cap: refused with the number and file:line"

write_conf limits-conf clamp
ctl reload
h register w1 thirty
expect_in "$HR" "ok fifo 20" "over-cap = clamp: granted at the cap"
expect_sched "$T" "policy=fifo priority=20" "kernel reports the clamped priority"
out=$(setpriv --reuid="$U" --regid=nogroup --clear-groups "$RTSCHEDCTL" --socket "$SOCK" --json status)
ctl --json list
[ "$(echo "$OUT" | jq -r ".[] | select(.tid == $T) | .priority")" = 20 ] && pass "list shows 20" || fail "list: $OUT"
helper_stop

# rtprio-cap = rlimit: the process's own RLIMIT_RTPRIO (this machine can
# lower it but not raise it, so the process gets 0:0 from prlimit)
write_conf rlimit refuse
ctl reload
helper_start "$U"
h pid; HP=${HR#pid }
prlimit --pid "$HP" --rtprio=0:0
T=$(spawn w2)
h register w2 thirty
expect_in "$HR" "above the cap 0 from RLIMIT_RTPRIO of pid $HP (soft 0, hard 0); raise the process's RLIMIT_RTPRIO" \
	"rlimit cap: refused with the process's numbers and the fix"
write_conf rlimit clamp
ctl reload
h register w2 thirty
expect_in "$HR" "above the cap 0" "a cap of 0 refuses even with over-cap = clamp"
h register w2 -
expect_in "$HR" "above the cap 0" "the default fifo 10 is capped too"
write_conf config refuse
ctl reload
h register w2 thirty
expect_in "$HR" "ok fifo 30" "rtprio-cap = config: only the config's limits apply"
helper_stop
daemon_stop
finish
