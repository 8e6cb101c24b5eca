#!/usr/bin/env bash
# tests/ingest/collectd_test.sh HEAPLEDGER INGEST_GEN WORKDIR — `heapledger collectd` against
# a real lttng-relayd on 127.0.0.1 (own ports): a session streamed to its end, a session
# interrupted by SIGTERM, and a relayd restart. Called by run_tests.sh (sessiond running).
set -u
HL=$1; GEN=$2; work=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
[ "$(basename "$GEN")" = "$TAG" ] || { cp "$GEN" "$work/$TAG" && GEN=$work/$TAG; }
echo "ingest: collectd"
base=$((20000 + RANDOM % 20000))
C=$base; D=$((base + 1)); L=$((base + 2))
relayd_pid=""; cd_pid=""
start_relayd() {
    lttng-relayd -C tcp://127.0.0.1:$C -D tcp://127.0.0.1:$D -L tcp://127.0.0.1:$L \
        -o "$work/relay" >/dev/null 2>&1 &
    relayd_pid=$!
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$L) 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
stop_relayd() { [ -n "$relayd_pid" ] && kill "$relayd_pid" 2>/dev/null && wait "$relayd_pid" 2>/dev/null; relayd_pid=""; }
finish() { [ -n "$cd_pid" ] && kill "$cd_pid" 2>/dev/null; stop_relayd; }
trap finish EXIT

# live_session NAME — create and start a live session streaming to our relayd
live_session() {
    lttng create "$1" --live=200000 --set-url=net://127.0.0.1:$C:$D >/dev/null &&
    lttng enable-channel -u -s "$1" ch --subbuf-size=1M --num-subbuf=4 >/dev/null &&
    lttng enable-event -u -s "$1" -c ch 'heapledger:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng enable-event -u -s "$1" -c ch 'lttng_ust_statedump:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng add-context -u -s "$1" -c ch -t vpid -t vtid -t procname >/dev/null &&
    lttng start "$1" >/dev/null
}
# wait_for CMD… — up to 15 s
wait_for() { for _ in $(seq 150); do "$@" && return 0; sleep 0.1; done; return 1; }
status_is() { [ -f "$1" ] && [ "$(sqlite3 "$1" "select value from meta where key='ingest_status'" 2>/dev/null)" = "$2" ]; }

start_relayd || { fail "lttng-relayd did not start"; exit 1; }
mkdir -p "$work/cd"
"$HL" collectd --url net://127.0.0.1:$L --dir "$work/cd" --poll-ms 200 --commit-ms 200 \
    2>"$work/collectd.log" &
cd_pid=$!
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)

# 1. a session streamed to its end (destroyed): the database is complete
s1="hlcd1_$$"
live_session $s1 || fail "creating $s1"
# The statedump is emitted at registration, before the viewer has the new streams: ask
# LTTng for it again once the process is running (docs/collect.md).
"$GEN" slow &
gen_pid=$!
sleep 1
lttng regenerate statedump -s $s1 >/dev/null || fail "regenerate statedump"
wait $gen_pid
db=$work/cd/$host-$s1.db
wait_for sh -c "[ -f '$db' ] && [ \"\$(sqlite3 '$db' 'select count(*) from block' 2>/dev/null)\" = 12 ]" \
    || fail "session 1: freed blocks not streamed: $(q $db 'select count(*) from block' 2>&1)"
lttng stop $s1 >/dev/null; lttng destroy $s1 >/dev/null
wait_for status_is "$db" complete && pass "session end: status complete" || fail "session end: status $(sqlite3 $db "select value from meta where key='ingest_status'")"
check "live: run host" "$(hostname)" "$(q $db 'select host from run')"
check "live: blocks" 15 "$(q $db 'select count(*) from block')"
check "live: live at exit" 3 "$(q $db 'select count(*) from live_at_exit')"
check "live: orphan frees" 2 "$(q $db 'select count(*) from orphan_free')"
check "live: frames" 3 "$(q $db 'select count(*) from frame')"
check "live: frames symbolised (regenerated statedump)" "ingest_gen_leaf" "$(q $db 'select function from frame where depth = 0')"

# 2. relayd restart: collectd keeps running and follows a session created afterwards
stop_relayd
sleep 1
kill -0 $cd_pid 2>/dev/null && pass "collectd survives relayd stop" || fail "collectd died with relayd"
start_relayd || fail "relayd restart"
# The live reader starts at the live position: the session must start only once collectd is
# connected again (its backoff may have grown to seconds on a loaded machine).
wait_for grep -q "relay daemon reachable again" "$work/collectd.log" \
    && pass "collectd reconnects after relayd restart" || fail "collectd did not reconnect: $(cat $work/collectd.log)"
s2="hlcd2_$$"
live_session $s2 || fail "creating $s2"
"$GEN" slow
db=$work/cd/$host-$s2.db
wait_for test -f "$db" && pass "after relayd restart: session followed" || fail "after relayd restart: no database for $s2"
# committed data becomes visible while the session runs (blocks freed so far: 12)
wait_for sh -c "[ -f '$db' ] && [ \"\$(sqlite3 '$db' 'select count(*) from block' 2>/dev/null)\" = 12 ]" \
    && pass "live commits: freed blocks visible during the session" || fail "live commits: $(q $db 'select count(*) from block')"

# 3. SIGTERM while the session is still running: clean stop, live blocks written
kill -TERM $cd_pid
wait $cd_pid; rc=$?; cd_pid=""
check "SIGTERM: collectd exit" 0 $rc
check "SIGTERM: status" interrupted "$(q $db "select value from meta where key='ingest_status'")"
check "SIGTERM: blocks" 15 "$(q $db 'select count(*) from block')"
lttng stop $s2 >/dev/null; lttng destroy $s2 >/dev/null
grep -q "retrying with backoff" "$work/collectd.log" && pass "log: retry message" || fail "log: no retry message: $(cat $work/collectd.log)"

# bad input
out=$("$HL" collectd --url http://x 2>&1); check "collectd bad url: exit" 2 $?
out=$("$HL" collectd --url net://127.0.0.1:$L --dir "$work/nodir" 2>&1); check "collectd bad dir: exit" 1 $?
case $out in *"not a writable directory"*) pass "collectd bad dir: message";; *) fail "collectd bad dir: $out";; esac
exit $([ $fails -eq 0 ] && echo 0 || echo 1)
