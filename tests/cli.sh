#!/bin/sh
# tests/cli.sh: the built rtschedd binary with good and bad flags and configs:
# exit codes and the one line that says what to type instead.
. "$(dirname "$0")/lib.sh"

CONF="$top_srcdir/conf/rtschedd.conf"

run "$RTSCHEDD" --scheduler-policy fifo
expect_rc 64 "policy without priority"
expect_in "$ERR" "--scheduler-priority" "names the missing --scheduler-priority"
[ "$(lines "$ERR")" -eq 1 ] && pass "one line" || fail "more than one line: $ERR"

run "$RTSCHEDD" --scheduler-priority 10
expect_rc 64 "priority without policy"
expect_in "$ERR" "--scheduler-policy" "names the missing --scheduler-policy"

run "$RTSCHEDD" --scheduler-policy fifo --scheduler-priority 100
expect_rc 64 "priority 100 for fifo"
expect_in "$ERR" "1..99" "names the valid range"

run "$RTSCHEDD" --scheduler-policy rr --scheduler-priority 0
expect_rc 64 "priority 0 for rr"

run "$RTSCHEDD" --scheduler-policy other --scheduler-priority 3
expect_rc 64 "priority 3 for other"
expect_in "$ERR" "--scheduler-priority 0" "says to use 0"

run "$RTSCHEDD" --scheduler-policy deadline --scheduler-priority 3
expect_rc 64 "unknown policy"
expect_in "$ERR" "fifo, rr, other, batch, idle" "lists the policies"

run "$RTSCHEDD" --scheduler-policy fifo --scheduler-priority ten
expect_rc 64 "non-numeric priority"

run "$RTSCHEDD" --scheduler-policy FiFo --scheduler-priority 20 --test-config --config "$CONF"
expect_rc 0 "case-insensitive policy name"
expect_in "$OUT" "priority       = 20                       # command line" "flag overrides the config"

run "$RTSCHEDD" --scheduler-policy fifo --scheduler-priority 90 --test-config --config "$CONF"
expect_rc 64 "flag above the config's max-priority"
expect_in "$ERR" "max-priority 80" "names max-priority"

run "$RTSCHEDD" --log-level loud
expect_rc 64 "bad --log-level"
run "$RTSCHEDD" --socket relative
expect_rc 64 "relative --socket"
run "$RTSCHEDD" --bogus
expect_rc 64 "unknown option"
run "$RTSCHEDD" extra-arg
expect_rc 64 "positional argument"
run "$RTSCHEDD" --config
expect_rc 64 "--config without a value"

run "$RTSCHEDD" --version
expect_rc 0 "--version"
expect_in "$OUT" "rtschedd " "version printed"
run "$RTSCHEDD" --help
expect_rc 0 "--help"
expect_in "$OUT" "--scheduler-policy" "help lists the flags"

run "$RTSCHEDD" --test-config --config "$CONF"
expect_rc 0 "shipped config"
expect_in "$OUT" "[rule audio]" "effective config printed"
expect_in "$OUT" "$CONF:" "origins printed"

"$RTSCHEDD" --test-config --config "$CONF" >"$TMP/effective.conf"
run "$RTSCHEDD" --test-config --config "$TMP/effective.conf"
expect_rc 0 "the printed effective configuration loads back"
printf '\xef\xbb\xbf[daemon]\npolicy = rr\n' >"$TMP/bom.conf"
run "$RTSCHEDD" --test-config --config "$TMP/bom.conf"
expect_rc 0 "a UTF-8 byte-order mark is accepted"

printf '[daemon]\npolicy = fifo\nprority = 5\n' >"$TMP/bad.conf"
run "$RTSCHEDD" --test-config --config "$TMP/bad.conf"
expect_rc 1 "unknown key"
expect_in "$ERR" "$TMP/bad.conf:3: prority: unknown key" "names file, line and key"

mkdir "$TMP/bad.d"
printf '[daemon]\npolicy = fifo\n' >"$TMP/ok.conf"
mkdir "$TMP/ok.d"
printf '[rule x]\npolicy = rr\npriority = 200\n' >"$TMP/ok.d/20-x.conf"
run "$RTSCHEDD" --test-config --config "$TMP/ok.conf"
expect_rc 1 "bad drop-in"
expect_in "$ERR" "$TMP/ok.d/20-x.conf:3: priority" "names the drop-in"

rm "$TMP/ok.d/20-x.conf"
run "$RTSCHEDD" --test-config --config "$TMP/missing.conf"
expect_rc 1 "explicit missing config"
expect_in "$ERR" "No such file" "says why"

run "$RTSCHEDD" --test-config --config "$TMP/ok.conf" --socket /tmp/x.sock --log-level debug
expect_rc 0 "--socket and --log-level override"
expect_in "$OUT" "/tmp/x.sock" "socket overridden"
expect_in "$OUT" "debug" "log level overridden"

finish
