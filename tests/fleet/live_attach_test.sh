#!/usr/bin/env bash
# tests/fleet/live_attach_test.sh HEAPLEDGER INGEST_GEN — collectd's live reader tells "the
# relay daemon has no such session" from "the session ended": babeltrace2's live reader ends
# at once, without a message, in both. A session that ended after its events is 'complete';
# one the relay daemon does not have (the first reader made to attach to a name the relay
# does not know, HEAPLEDGER_TEST_LIVE_READER_NOSESSION) is attached again for 10 s, then the
# database is 'partial' and says why — not a complete empty recording — or, with --relay-dir,
# made whole from the relay's copy of the session that ended meanwhile.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/fleet-live-attach.XXXXXX)
cores_in "$work/cores"
finish() { stop_collectd; stop_relayd; rm -rf "$work"; }
trap finish EXIT
echo "fleet: live reader, no such session vs session ended"
pick_ports
mkdir -p "$work/relay"
start_relayd "$work/relay" || { fail "lttng-relayd did not start"; exit 1; }
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)
meta() { q "$1" "select value from meta where key='$2'"; }
# start_collectd_here DIR LOG — collectd without --relay-dir (lib.sh's start_collectd has one)
start_collectd_here() {
    (cd "$cores_dir" && ulimit -c unlimited 2>/dev/null; exec "$HL" collectd --url net://127.0.0.1:$L --dir "$1" \
        --poll-ms 100 --commit-ms 200 >/dev/null 2>>"$2") &
    cd_pid=$!
}

# 1. The session ended after its events: complete, every event from the live view.
mkdir -p "$work/cd1"
start_collectd_here "$work/cd1" "$work/cd1.log"
sleep 0.3
"$HL" record --relay net://127.0.0.1:$C:$D -o ended -- "$GEN" slow >/dev/null 2>&1
check "ended: record exit" 0 $?
db=$work/cd1/$host-ended.db
wait_for status_is "$db" complete || fail "ended: not complete: $(meta "$db" ingest_status) $(cat "$work/cd1.log")"
ev=$(q "$db" 'select events from run')
[ -n "$ev" ] && [ "$ev" -gt 0 ] && pass "ended: $ev events" || fail "ended: events '$ev'"
check "ended: no warning" "" "$(meta "$db" ingest_warning)"
stop_collectd

# 2. No such session at the relay daemon (collectd without --relay-dir): the reader attaches
#    again for 10 s, then the database is partial, empty, and says so.
mkdir -p "$work/cd2"
export HEAPLEDGER_TEST_LIVE_READER_NOSESSION=$work/nosession-once
start_collectd_here "$work/cd2" "$work/cd2.log"
unset HEAPLEDGER_TEST_LIVE_READER_NOSESSION
sleep 0.3
"$HL" record --relay net://127.0.0.1:$C:$D -o nosuch -- "$GEN" slow >/dev/null 2>&1
check "no session: record exit" 0 $?
[ -e "$work/nosession-once" ] && pass "no session: the first reader attached to a session the relay does not have" \
    || fail "no session: HEAPLEDGER_TEST_LIVE_READER_NOSESSION had no effect"
db=$work/cd2/$host-nosuch.db
for _ in 1 2 3; do status_is "$db" partial && break; wait_for status_is "$db" partial; done
check "no session: status" partial "$(meta "$db" ingest_status)"
case $(meta "$db" ingest_warning) in "the relay daemon has no session net://127.0.0.1:$L/host/$host/nosuch-none (not created yet, or destroyed before it could be read): nothing was received in 10 s of attaching; check the session name"*)
    pass "no session: the warning says what happened and what to check";;
    *) fail "no session: warning '$(meta "$db" ingest_warning)'";; esac
check "no session: no events stored" 0 "$(q "$db" 'select count(*) from block')"
grep -q "nosuch.db: 0 events, 0 blocks (the live view ended early: the relay daemon has no session" "$work/cd2.log" \
    && pass "no session: logged" || fail "no session: log: $(cat "$work/cd2.log")"
stop_collectd

# 3. The same with --relay-dir: the session ended while the reader tried, so the relay's copy
#    of it makes the database whole (complete, from the copy; the live view had nothing).
mkdir -p "$work/cd3"
export HEAPLEDGER_TEST_LIVE_READER_NOSESSION=$work/nosession-once3
start_collectd "$work/cd3" "$work/relay" "$work/cd3.log"
unset HEAPLEDGER_TEST_LIVE_READER_NOSESSION
sleep 0.3
"$HL" record --relay net://127.0.0.1:$C:$D -o nosuch3 -- "$GEN" slow >/dev/null 2>&1
check "no session, relay copy: record exit" 0 $?
db=$work/cd3/$host-nosuch3.db
wait_for finished "$db" || wait_for finished "$db" || fail "no session, relay copy: not finished: $(cat "$work/cd3.log")"
check "no session, relay copy: status" complete "$(meta "$db" ingest_status)"
check "no session, relay copy: live_events" 0 "$(meta "$db" live_events)"
check "no session, relay copy: events as the ended session" "$ev" "$(q "$db" 'select events from run')"
stop_collectd

[ "$fails" -eq 0 ] && echo "fleet live attach: all passed" || echo "fleet live attach: $fails FAILED"
[ "$fails" -eq 0 ]
