#!/bin/bash
# tests/config-faults.sh: configuration faults (issue 9, part 5). Truncated,
# binary, huge-valued and duplicate-section files are refused, and every
# error names FILE:LINE (rtschedd --test-config, and the daemon on reload);
# a reload with a bad file keeps the running configuration and every
# registration, as the kernel shows.
. "$(dirname "$0")/lib.sh"
need_root
command -v jq >/dev/null || skip "jq missing"

X="$TMP/x.conf"   # the file under test; its drop-in directory is $TMP/x.d

# tc FILE: rtschedd --test-config on FILE; exit status in TRC, the errors
# (without the "rtschedd: err: " prefix and the closing summary) in TERR
tc() {
	timeout "$HANG_S" "$RTSCHEDD" --test-config --config "$1" >/dev/null 2>"$TMP/tc.err"
	TRC=$?
	TERR=$(grep -av "configuration not valid$" "$TMP/tc.err" | sed 's/^rtschedd: err: //')
}
# not_file_line FILE: the error lines that do not start with FILE:LINE:
not_file_line() { echo "$TERR" | grep -av "^$1:[0-9][0-9]*: " | grep -a .; }
# refused DESC [FILE:LINE: TEXT]...: $X is refused (exit 1), every error line
# names FILE:LINE, and each expected error is there
refused() {
	desc=$1
	shift
	tc "$X"
	if [ "$TRC" -ne 1 ]; then
		fail "$desc: --test-config exit $TRC, want 1 ($(head -2 "$TMP/tc.err" | tr '\n' ' '))"
		return
	fi
	bad=$(not_file_line "$X")
	[ -z "$bad" ] && pass "$desc: refused, $(lines "$TERR") error(s), each with file:line" ||
		fail "$desc: an error without file:line: $(echo "$bad" | head -2 | cut -c1-200)"
	for want in "$@"; do
		case "$TERR" in *"$want"*) pass "$desc: '${want#"$TMP"/}'" ;; *) fail "$desc: '$want' missing; got: $(echo "$TERR" | head -3 | cut -c1-200)" ;; esac
	done
}

# --- truncated: the shipped file cut after every line, through the binary (the
# unit test test-config cuts it at every byte, in-process) -------------------------
SRC="$top_srcdir/conf/rtschedd.conf"
nlines=$(wc -l <"$SRC")
valid=0 refused_n=0 other=0 noline=0 first_noline=""
for n in $(seq 0 "$nlines"); do
	# whole lines, then the same cut in the middle of the next line
	for cut in "$(head -n "$n" "$SRC")" "$(head -n "$((n + 1))" "$SRC" | head -c -"$(( ( $(sed -n "$((n + 1))p" "$SRC" | wc -c) + 1) / 2 ))")"; do
		printf '%s' "$cut" >"$X"
		timeout "$HANG_S" "$RTSCHEDD" --test-config --config "$X" >/dev/null 2>"$TMP/tc.err"
		case $? in
		0) valid=$((valid + 1)) ;;
		1) refused_n=$((refused_n + 1))
		   if grep -aqv -e "configuration not valid$" -e "^rtschedd: err: $X:[0-9][0-9]*: " "$TMP/tc.err"; then
			noline=$((noline + 1))
			[ -n "$first_noline" ] || first_noline="cut after line $n: $(head -1 "$TMP/tc.err")"
		   fi ;;
		*) other=$((other + 1)); echo "# cut near line $n: $(head -2 "$TMP/tc.err")" ;;
		esac
	done
done
echo "# conf/rtschedd.conf cut after and inside each of its $nlines lines: $valid valid, $refused_n refused"
[ "$other" -eq 0 ] && pass "every truncation is either valid or refused (exit 0 or 1, never a crash)" ||
	fail "$other truncations ended otherwise"
[ "$refused_n" -gt 0 ] && pass "truncations are refused ($refused_n)" || fail "no truncation was refused"
[ "$noline" -eq 0 ] && pass "every error of every truncation names file:line" ||
	fail "$noline truncations gave an error without file:line, e.g. $first_noline"
printf '[daemon]\npolicy = fifo\n[rule au' >"$X"
refused "cut in a section header" "$X:3: section header '[rule au' has no closing ']'"
printf '[daemon]\npolicy = fifo\npriori' >"$X"
refused "cut in a key" "$X:3: expected 'key = value', got 'priori'"
printf '[daemon]\npolicy = fifo\npriority = ' >"$X"
refused "cut after '='" "$X:3: priority: '' is not a whole number"
printf '[rule audio]\npolicy = fifo\n' >"$X"
refused "cut before a rule's priority" "$X:2: [rule audio]: policy fifo needs a priority"
printf '[daemon]\nmax-priority = 8' >"$X"
refused "cut inside 'max-priority = 80' (below the default priority 10)" "$X:2:"

# --- binary ------------------------------------------------------------------------
cp /bin/true "$X"
refused "an executable (ELF)" "binary data (a NUL byte)"
head -c 4096 /dev/urandom >"$X"
refused "4 KiB of random bytes"
printf '[daemon]\npolicy = fifo\npriority = 1\0000\nmax-priority = 80\n' >"$X"
refused "a NUL byte in line 3" "$X:3: binary data (a NUL byte)"
printf '[daemon]\npolicy = fifo\n' | iconv -f ascii -t utf-16 >"$X"
refused "UTF-16 text" "$X:1: binary data (a NUL byte)"
head -c 5000 /dev/zero | tr '\0' '\377' >"$X"
refused "5000 bytes 0xFF, no newline" "$X:1: line longer than 196 characters"
printf '[daemon]\npolicy = fifo\n' | gzip >"$X"
refused "a gzip file"
printf '\357\273\277[daemon]\npolicy = rr\npriority = 5\n' >"$X"
tc "$X"
[ "$TRC" -eq 0 ] && pass "control: a UTF-8 byte-order mark before valid text is accepted" || fail "BOM: $TERR"

# --- huge values --------------------------------------------------------------------
cat >"$X" <<'EOC'
[daemon]
priority = 99999999999999999999
max-priority = 18446744073709551617
rate-limit = 4294967296
rate-burst = -1
nice = -2147483649
rescan-interval = 9223372036854775808
cpus = 0-4294967295
watchdog-threshold = 100000000000
cpu-dma-latency = 1000001
[rule r]
policy = fifo
priority = 4294967297
cpus = 1024
[user *]
max-threads = 1000001
max-priority = 2147483648
EOC
refused "huge values" \
	"$X:2: priority: 99999999999999999999 is out of range" \
	"$X:3: max-priority: 18446744073709551617 is out of range" \
	"$X:4: rate-limit: 4294967296 is out of range" \
	"$X:5: rate-burst: -1 is out of range" \
	"$X:6: nice: -2147483649 is out of range" \
	"$X:7: rescan-interval: 9223372036854775808 is out of range" \
	"$X:8: cpus: bad CPU list" \
	"$X:9: watchdog-threshold: 100000000000 is out of range" \
	"$X:10: cpu-dma-latency: 1000001 is out of range" \
	"$X:13: priority: 4294967297 is out of range" \
	"$X:14: cpus: bad CPU list" \
	"$X:16: max-threads: 1000001 is out of range" \
	"$X:17: max-priority: 2147483648 is out of range"
{ echo "[daemon]"; printf 'admin-group = %0190d\n' 0; } >"$X"
refused "a value too long for its line" "$X:2: line longer than 196 characters"
{ echo "[daemon]"; printf 'admin-group = %0100d\n' 0; } >"$X"
refused "a group name of 100 characters" "$X:2: admin-group: value is longer than 63 characters"
{ for i in $(seq 100000); do echo "# comment $i"; done; echo "[daemon]"; echo "priority = 100"; } >"$X"
refused "the error after 100000 lines" "$X:100002: priority: 100 is out of range"
{ for i in $(seq 3000); do printf '[rule r%d]\npolicy = fifo\npriority = 5\n' "$i"; done; } >"$X"
tc "$X"
[ "$TRC" -eq 0 ] && pass "control: 3000 rules are fine" || fail "3000 rules: $(echo "$TERR" | head -2)"

# --- duplicate sections and keys ---------------------------------------------------------
cat >"$X" <<'EOC'
[daemon]
policy = fifo
[rule a]
policy = fifo
priority = 5
[rule a]
policy = rr
[daemon]
priority = 20
[user *]
max-priority = 5
[user  *]
[group nogroup]
[group nogroup]
[rule b]
policy = fifo
priority = 5
priority = 6
EOC
refused "duplicate sections and keys in one file" \
	"$X:6: duplicate section [rule a] (first at line 3)" \
	"$X:8: duplicate section [daemon] (first at line 1)" \
	"$X:14: duplicate section [group nogroup] (first at line 13)" \
	"$X:18: priority: duplicate key (first set at line 17)"
# spacing does not make it another section
printf '[rule a]\npolicy = fifo\n[rule  a]\npriority = 5\n' >"$X"
refused "[rule a] again, spelt [rule  a]" "$X:3: duplicate section [rule a] (first at line 1)"
printf '[user *]\nmax-priority = 5\n[ user * ]\npolicies = fifo\n' >"$X"
refused "[user *] again, spelt [ user * ]" "$X:3: duplicate section [user *] (first at line 1)"
# a section again in a drop-in is a merge, not an error
printf '[daemon]\npolicy = fifo\npriority = 10\n[rule a]\npolicy = fifo\npriority = 5\n' >"$X"
mkdir "$TMP/x.d"
printf '[rule a]\npriority = 7\n' >"$TMP/x.d/50-a.conf"
timeout "$HANG_S" "$RTSCHEDD" --test-config --config "$X" >"$TMP/tc.out" 2>&1
TRC=$?
[ "$TRC" -eq 0 ] && pass "control: a section repeated in a drop-in merges" || fail "drop-in merge: $(cat "$TMP/tc.out" | head -2)"
expect_in "$(cat "$TMP/tc.out")" "# $TMP/x.d/50-a.conf:2" "the merged key names the drop-in's line"
printf '[rule a]\npriority = 7\n[rule a]\npriority = 8\n' >"$TMP/x.d/50-a.conf"
tc "$X"
expect_in "$TERR" "$TMP/x.d/50-a.conf:3: duplicate section [rule a] (first at line 1)" "a duplicate inside a drop-in names the drop-in's file:line"
rm -r "$TMP/x.d"

# --- a reload with a bad file keeps the running config and every registration --------------
CONF="$TMP/run.conf"   # (no watchdog: a real-time hog elsewhere would demote the threads compared)
cat >"$TMP/good.conf" <<EOC
[daemon]
rate-limit = 0
max-priority = 80
watchdog = no
[rule audio]
policy = fifo
priority = 50
[rule video]
policy = rr
priority = 40
cpus = $LASTCPU
[rule gone]
policy = fifo
priority = 30
[user *]
max-priority = 20
policies = fifo,other
EOC
cp "$TMP/good.conf" "$CONF"
daemon_start "$CONF"
helper_start
A=$(spawn a); V=$(spawn v); G=$(spawn g); D=$(spawn d)
chrt -b -p 0 "$D"
ctl register --tid "$A" --role audio
ctl register --tid "$V" --role video
ctl register --tid "$G" --role gone
ctl register --tid "$D"
mkfifo "$TMP/nb.in"
if [ -x "$top_builddir/tests/abuse-client" ]; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$top_builddir/tests/abuse-client" self "$SOCK" 1 \
		"v=1 op=register tid=@TID@ policy=fifo priority=15" @WAIT@ <"$TMP/nb.in" >"$TMP/nb.out" 2>&1 &
	NBP=$!
	exec 5>"$TMP/nb.in"
	wait_for grep -q WAITING "$TMP/nb.out"
	expect_in "$(cat "$TMP/nb.out")" "REPLY OK" "nobody registered its own thread at fifo 15"
fi
snap() {
	"$RTSCHEDCTL" --socket "$SOCK" --json list | jq -c 'sort_by(.tid) | .[] | [.tid, .policy, .priority, .cpus, .rule, .owner]'
	for t in $("$RTSCHEDCTL" --socket "$SOCK" --json list | jq '.[].tid' | sort -n); do echo "$t $(q "$t")"; done
}
SNAP=$(snap)
[ "$(echo "$SNAP" | grep -c '^\[')" -ge 4 ] && pass "$(echo "$SNAP" | grep -c '^\[') registrations before the bad reloads" ||
	fail "registrations: $SNAP"
STATUS0=$("$RTSCHEDCTL" --socket "$SOCK" --json status | jq -c '[.reloads, .max_priority, .default_priority, .config_files]')

# bad_reload DESC FILE_AT_FAULT:LINE: the config now in place is bad; a
# reload over the socket and one by SIGHUP both keep everything
kept() { grep -ac "keeping the running configuration" "$DLOG"; }
bad_reload() {
	k0=$(kept)
	ctl reload
	[ "$RC" -eq 1 ] && case "$ERR" in *config-invalid*"$2"*) true ;; *) false ;; esac &&
		pass "$1: reload refused with config-invalid naming ${2#"$TMP"/}" ||
		fail "$1: reload: exit $RC, '$ERR' (want config-invalid and $2)"
	kill -HUP "$DPID"
	wait_for sh -c "[ \$(grep -ac 'keeping the running configuration' '$DLOG') -ge $((k0 + 2)) ]" &&
		pass "$1: SIGHUP refused it too" || fail "$1: no refusal logged for the SIGHUP"
	[ "$(snap)" = "$SNAP" ] && pass "$1: every registration and the kernel's view unchanged" ||
		fail "$1: changed: $(diff <(echo "$SNAP") <(snap) | grep '^[<>]' | head -4 | tr '\n' ' ')"
	[ "$("$RTSCHEDCTL" --socket "$SOCK" --json status | jq -c '[.reloads, .max_priority, .default_priority, .config_files]')" = "$STATUS0" ] &&
		pass "$1: the running configuration stays (status unchanged)" || fail "$1: status changed"
	kill -0 "$DPID" && pass "$1: daemon alive" || { fail "$1: daemon died"; finish; exit 1; }
}
# each bad file also raises audio to 60 and drops [rule gone]: a partial
# reload would show on the kernel side
variant() { sed -e 's/^priority = 50$/priority = 60/' -e '/^\[rule gone\]/,/^priority = 30/d' "$TMP/good.conf"; }
variant | head -c 100 >"$CONF"
lastline=$(wc -l <"$CONF"); lastline=$((lastline + 1))
bad_reload "truncated file" "$CONF:$lastline:"
{ variant; printf 'x = \0\n'; } >"$CONF"
bad_reload "a NUL byte" "$CONF:$(($(variant | wc -l) + 1)): binary data"
cp /bin/true "$CONF"
bad_reload "an executable" "$CONF:1: binary data"
{ variant; echo "[daemon]"; } >"$CONF"
bad_reload "duplicate [daemon]" "$CONF:$(($(variant | wc -l) + 1)): duplicate section [daemon]"
variant | sed 's/^max-priority = 80$/max-priority = 800000000000000000000/' >"$CONF"
bad_reload "huge max-priority" "$CONF:3: max-priority:"
variant | sed 's/^max-priority = 80$/max-priority = 5/' >"$CONF"
bad_reload "max-priority below the default priority" "$CONF:3:"
cp "$TMP/good.conf" "$CONF"
mkdir -p "$TMP/run.d"
printf '[rule audio]\npriority = 60\npriority = 61\n' >"$TMP/run.d/10-bad.conf"
bad_reload "a bad drop-in" "$TMP/run.d/10-bad.conf:3: priority: duplicate key"
rm -r "$TMP/run.d"
mv "$CONF" "$CONF.away"
bad_reload "the file is gone" "$CONF: cannot read"
mv "$CONF.away" "$CONF"
grep -aq "$CONF:3: max-priority" "$DLOG" && pass "the daemon log carries the errors with file:line" ||
	fail "no file:line error in the log"
ctl register --tid "$(spawn late)" --role audio
expect_in "$OUT" "priority             50" "a new registration still gets the running config's audio (50)"

# control: a good file is taken, and changes the threads
variant >"$CONF"
ctl reload
expect_rc 0 "a good file reloads"
expect_sched "$A" "policy=fifo priority=60" "audio now 60"
expect_sched "$G" "policy=other priority=0" "the thread of the removed rule got its original back"
expect_sched "$D" "policy=fifo priority=10" "the default registration stays"

[ -n "${NBP:-}" ] && { exec 5>&-; wait "$NBP" 2>/dev/null; }
helper_stop

# --- the main file gone at a reload, started without --config ----------------------------
# The shipped unit passes no --config: the default path, which need not exist
# at the start. Once the running configuration came from it, a reload that
# finds it gone (an editor or a package replacing it) is refused, not read as
# "no file" (the built-in defaults: every [user], [rule] of the file gone).
# The default file is the daemon's own, on a tmpfs in a mount namespace of
# its own; the test reaches it through /proc/PID/root.
daemon_stop
DEF=$("$RTSCHEDD" --help | sed -n 's/.*(default \(\/[^,]*\.conf\),.*/\1/p')
[ -n "$DEF" ] || fail "no default configuration path in rtschedd --help"
printf '[daemon]\nmax-priority = 44\n' >"$TMP/def.conf"
DLOG="$TMP/daemon-def.log"
unshare --mount --propagation private sh -c 'mkdir -p "$1" && mount -t tmpfs rtsd-test "$1" && cp "$2" "$3" &&
	exec "$4" --socket "$5"' sh "$(dirname "$DEF")" "$TMP/def.conf" "$DEF" "$RTSCHEDD" "$SOCK" >>"$DLOG" 2>&1 &
DPID=$!
wait_for "$RTSCHEDCTL" --socket "$SOCK" version || fail "the daemon without --config did not start: $(cat "$DLOG")"
maxprio() { "$RTSCHEDCTL" --socket "$SOCK" --json status | jq -r .max_priority; }
[ "$(maxprio)" = 44 ] && pass "without --config: the default file read (max-priority 44)" ||
	fail "without --config: max-priority $(maxprio), not the default file's 44"
mv "/proc/$DPID/root$DEF" "/proc/$DPID/root$DEF.away"
ctl reload
[ "$RC" -eq 1 ] && case "$ERR" in *config-invalid*"$DEF: cannot read"*) true ;; *) false ;; esac &&
	pass "the default file gone: reload refused ($ERR)" || fail "the default file gone: reload exit $RC, '$ERR'"
[ "$(maxprio)" = 44 ] && pass "and the running configuration stays (max-priority 44)" ||
	fail "the running configuration was replaced: max-priority $(maxprio)"
mv "/proc/$DPID/root$DEF.away" "/proc/$DPID/root$DEF"
ctl reload
expect_rc 0 "the file back: it reloads"
daemon_stop
finish
