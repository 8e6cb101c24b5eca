#!/usr/bin/env bash
# tests/fleet/relay_test.sh HEAPLEDGER INGEST_GEN — `heapledger record --relay` to our own
# lttng-relayd on 127.0.0.1, followed by `heapledger collectd --relay-dir`: the database of a
# session equals the offline `record` of the same program (events, blocks, leaks, symbolised
# frames), also when collectd attached late (the prefix and the statedump come from the
# relay's on-disk copy); exit status rules; bad input.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/fleet-relay-test.XXXXXX)
cores_in "$work/cores"
finish() { stop_collectd; stop_relayd; rm -rf "$work"; }
trap finish EXIT
echo "fleet: record --relay"
pick_ports
mkdir -p "$work/cd" "$work/cd2" "$work/relay"
start_relayd "$work/relay" || { fail "lttng-relayd did not start"; exit 1; }
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)

# The offline recording every streamed one must equal.
"$HL" record -o "$work/ref.db" -- "$GEN" slow >/dev/null 2>&1; check "offline record exit" 0 $?
ref=$(facts "$work/ref.db")

# 1. collectd follows from the start: record prints the database name, exit 0.
start_collectd "$work/cd" "$work/relay" "$work/cd.log"
sleep 0.3
out=$("$HL" record --relay net://127.0.0.1:$C:$D -o fleet1 -- "$GEN" slow 2>&1); rc=$?
check "record --relay exit" 0 $rc
case $out in *"streaming to net://127.0.0.1:$C:$D as session fleet1 of host $host; heapledger collectd stores it as $host-fleet1.db"*)
    pass "record --relay names the relay and the database";; *) fail "record --relay message: $out";; esac
db=$work/cd/$host-fleet1.db
wait_for completed "$db" || fail "session 1 not completed: $(cat $work/cd.log)"
check "from the start: status" complete "$(q $db "select value from meta where key='ingest_status'")"
check "from the start: equals offline record" "$ref" "$(facts $db)"
check "from the start: run.host" "$(hostname)" "$(q $db 'select host from run')"

# The fleet view over collectd's directory: host and session from the relay.
out=$("$HL" report --summary "$work/cd" 2>&1)
printf '%s\n' "$out" | grep -q "^$host  *fleet1  *ingest_gen" && pass "report --summary: host, session, command" \
    || fail "report --summary: $out"

# 2. collectd attaches late (after 1.2 s: the statedump and the first events were sent before):
#    the live view misses them, the finished database has them all.
stop_collectd
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet2 -- "$GEN" slow >/dev/null 2>&1 &
rec=$!
sleep 1.2
start_collectd "$work/cd2" "$work/relay" "$work/cd2.log"
wait $rec; check "late: record exit" 0 $?
db=$work/cd2/$host-fleet2.db
wait_for completed "$db" || fail "late: not completed: $(cat $work/cd2.log)"
check "late attach: equals offline record" "$ref" "$(facts $db)"
live=$(q $db "select value from meta where key='live_events'")
[ -n "$live" ] && [ "$live" -lt "$(q $db 'select events from run')" ] \
    && pass "late attach: the live view had fewer events ($live) than the completed database" \
    || fail "late attach: live view $live events (expected fewer than $(q $db 'select events from run'))"
grep -q "completed from the relay's copy $work/relay/$host/fleet2-" "$work/cd2.log" \
    && pass "log: completed from the relay's copy" || fail "log: $(cat $work/cd2.log)"

# 3. collectd restarted in the middle of a session: the new collectd takes over the database
#    the stopped one left 'interrupted'; at the end it is whole (no duplicates, no gap).
stop_collectd
start_collectd "$work/cd2" "$work/relay" "$work/cd3.log"
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet4 -- "$GEN" slow >/dev/null 2>&1 &
rec=$!
db=$work/cd2/$host-fleet4.db
wait_for test -f "$db"; sleep 0.5
stop_collectd
check "collectd stopped mid-session: status" interrupted "$(q $db "select value from meta where key='ingest_status'")"
start_collectd "$work/cd2" "$work/relay" "$work/cd3.log"
wait $rec; check "collectd restart: record exit" 0 $?
wait_for completed "$db" || fail "collectd restart: not completed: $(cat $work/cd3.log)"
check "collectd restart: one database for the session" "$host-fleet4.db" "$(cd $work/cd2 && ls *.db | grep "^$host-fleet4")"
check "collectd restart: equals offline record" "$ref" "$(facts $db)"
grep -q "replacing the database an earlier collectd left interrupted" "$work/cd3.log" \
    && pass "log: interrupted database taken over" || fail "log: $(cat $work/cd3.log)"

# 4. relayd restarted in the middle of a session: the database holds what the relay received
#    (its on-disk copy) and says that the rest is missing.
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet5 -- "$GEN" slow >/dev/null 2>&1 &
rec=$!
db=$work/cd2/$host-fleet5.db
wait_for test -f "$db"; wait_for relay_copied "$work/relay" "$host" fleet5 || fail "relayd restart: no copy of fleet5"
stop_relayd
start_relayd "$work/relay" || fail "relayd restart"
wait_rec $rec 120 "relayd restart: record"
# Either the relay's copy completed the database, or (the relay died before that copy held the
# session's metadata: a matter of timing on a loaded machine) the live view is kept and says why.
wait_for finished "$db" || fail "relayd restart: not finished: $(cat $work/cd3.log)"
check "relayd restart: status" partial "$(q $db "select value from meta where key='ingest_status'")"
case $(q $db "select value from meta where key='ingest_warning'") in "the connection to the relay daemon was lost: the events the traced host sent after that are missing"*)
    pass "relayd restart: the warning says what is missing";; *) fail "relayd restart: warning $(q $db "select value from meta where key='ingest_warning'")";; esac
live=$(q $db "select value from meta where key='live_events'")
[ -n "$live" ] && [ "$(q $db 'select events from run')" -ge "$live" ] \
    && pass "relayd restart: at least the live view's events ($live)" || fail "relayd restart: fewer events than the live view ($live)"
if completed "$db"; then
    pass "relayd restart: completed from the relay's copy"
else
    why=$(q $db "select value from meta where key='completion_failed'")
    case $why in *"keeps the live view"*) pass "relayd restart: the live view kept, and why: $why";;
        *) fail "relayd restart: completion_failed = '$why'";; esac
fi
check "relayd restart: module maps arrived (symbolised frames or none)" 0 "$(q $db 'select count(*) from frame where function is null')"
stop_collectd

# 4b. --relay-dir that holds no copy of the session: the live view is kept, and says why.
mkdir -p "$work/empty" "$work/cd4"
start_collectd "$work/cd4" "$work/empty" "$work/cd4.log"
sleep 0.3
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet6 -- "$GEN" slow >/dev/null 2>&1
check "no copy: record exit" 0 $?
db=$work/cd4/$host-fleet6.db
wait_for finished "$db" || fail "no copy: not finished: $(cat $work/cd4.log)"
case $(q $db "select value from meta where key='completion_failed'") in *"no on-disk copy of session fleet6"*)
    pass "no copy: meta.completion_failed says why";; *) fail "no copy: completion_failed '$(q $db "select value from meta where key='completion_failed'")'";; esac
check "no copy: live_events = events" "$(q $db 'select events from run')" "$(q $db "select value from meta where key='live_events'")"
stop_collectd

# 4c. babeltrace2's live reader crashes in the middle of a session (it did, on an assertion and
#     on a stray free, and took collectd down with it): only that reader dies; collectd follows
#     the session again into the same database, which is whole at the end.
mkdir -p "$work/cd5"
export HEAPLEDGER_TEST_LIVE_READER_SEGV=1 HEAPLEDGER_TEST_LIVE_READER_ONCE=$work/reader-crashed
start_collectd "$work/cd5" "$work/relay" "$work/cd5.log"
unset HEAPLEDGER_TEST_LIVE_READER_SEGV HEAPLEDGER_TEST_LIVE_READER_ONCE
sleep 0.3
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet7 -- "$GEN" slow >/dev/null 2>&1
check "reader crash: record exit" 0 $?
db=$work/cd5/$host-fleet7.db
wait_for completed "$db" || fail "reader crash: not completed: $(cat $work/cd5.log)"
[ -e "$work/reader-crashed" ] && pass "reader crash: the first live reader was made to crash" \
    || fail "reader crash: no live reader crashed (HEAPLEDGER_TEST_LIVE_READER_SEGV)"
grep -q "fleet7.db: 0 events, 0 blocks (the live view ended early: babeltrace2's live reader crashed (Segmentation fault) after 0 events)" "$work/cd5.log" &&
    grep -q "fleet7: the live reader failed while the session goes on: following it again" "$work/cd5.log" \
    && pass "reader crash: logged, session followed again" || fail "reader crash: log: $(cat $work/cd5.log)"
kill -0 "$cd_pid" 2>/dev/null && pass "reader crash: collectd goes on" || fail "reader crash: collectd died"
check "reader crash: one database for the session" "$host-fleet7.db" "$(cd $work/cd5 && ls *.db | grep "^$host-fleet7")"
check "reader crash: status" complete "$(q $db "select value from meta where key='ingest_status'")"
check "reader crash: equals offline record" "$ref" "$(facts $db)"
stop_collectd

# 5. exit status rules: the program's status, 125 when the relay cannot be reached.
"$HL" record --relay net://127.0.0.1:$C:$D -o fleet3 -- sh -c 'exit 7' >/dev/null 2>&1
check "program status passed through" 7 $?
out=$("$HL" record --relay net://127.0.0.1:$L:$L -o nobody -- true 2>&1); rc=$?
check "relay unreachable: exit" 125 $rc
case $out in *"is an lttng-relayd listening there?"*) pass "relay unreachable: message";; *) fail "relay unreachable: $out";; esac

# bad input
out=$("$HL" record --relay http://x -- true 2>&1); check "bad relay URL: exit" 2 $?
case $out in *"expected net://HOST[:PORT]"*) pass "bad relay URL: message";; *) fail "bad relay URL: $out";; esac
out=$("$HL" record --relay net://127.0.0.1 -o a/b -- true 2>&1); check "bad session name: exit" 2 $?
case $out in *"-o names the session"*) pass "bad session name: message";; *) fail "bad session name: $out";; esac
out=$("$HL" record --relay net://127.0.0.1 --keep-trace "$work/k" -- true 2>&1); check "--relay --keep-trace: exit" 2 $?
case $out in *"do not apply"*) pass "--relay --keep-trace: message";; *) fail "--relay --keep-trace: $out";; esac
out=$("$HL" collectd --url net://127.0.0.1:$L --relay-dir "$work/none" 2>&1); check "collectd bad --relay-dir: exit" 1 $?
case $out in *"--relay-dir $work/none: not a directory"*) pass "collectd bad --relay-dir: message";; *) fail "collectd bad --relay-dir: $out";; esac
exit $([ $fails -eq 0 ] && echo 0 || echo 1)
