#!/usr/bin/env bash
# tests/fleet/relay_gone_test.sh HEAPLEDGER INGEST_GEN — `heapledger record --relay` when the
# relay daemon (our own lttng-relayd on 127.0.0.1) stops answering or is killed mid-run:
# record ends within its documented bound (HEAPLEDGER_RELAY_TIMEOUT, here 5 s) instead of
# waiting in an lttng-ctl call for good, says what happened and what to do, exits 125 (also when
# the session ended in time but the relay daemon is gone at its end); the
# database collectd made of what arrived is 'partial' and says what is missing. Bad
# HEAPLEDGER_RELAY_TIMEOUT values are refused.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/fleet-relay-gone.XXXXXX)
cores_in "$work/cores"
finish() {
    stop_collectd
    [ -n "$relayd_pid" ] && kill -CONT "$relayd_pid" 2>/dev/null
    stop_relayd
    rm -rf "$work"
}
trap finish EXIT
echo "fleet: record --relay when the relay daemon goes away"
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)
export HEAPLEDGER_RELAY_TIMEOUT=5

# gone HOW SESSION — record GEN slow to a fresh relay daemon, which HOW (stop: SIGSTOP, it
# stops answering; kill: SIGKILL) once the relay's copy holds the session's data; then the
# relay daemon is killed for good and collectd finishes the database.
gone() {
    local how=$1 name=$2 rec rc t0 t1 out db
    pick_ports
    mkdir -p "$work/relay-$name" "$work/cd-$name"
    start_relayd "$work/relay-$name" || { fail "$how: lttng-relayd did not start"; return; }
    start_collectd "$work/cd-$name" "$work/relay-$name" "$work/cd-$name.log"
    sleep 0.3
    t0=$(date +%s)
    "$HL" record --relay net://127.0.0.1:$C:$D -o "$name" -- "$GEN" slow >"$work/$name.out" 2>&1 &
    rec=$!
    wait_for relay_copied "$work/relay-$name" "$host" "$name" || fail "$how: no copy of $name at the relay"
    if [ "$how" = stop ]; then
        kill -STOP "$relayd_pid"
    else
        kill -KILL "$relayd_pid"
        { wait "$relayd_pid"; } 2>/dev/null
    fi
    wait_rec $rec 100 "$how: record"
    rc=$?
    t1=$(date +%s)
    out=$(cat "$work/$name.out")
    [ "$rc" -ne 124 ] && pass "$how: record ended after $((t1 - t0)) s (bound: the program, 5 s, the daemons' stop)"
    if [ "$how" = stop ]; then
        check "$how: record exit" 125 "$rc"
        case $out in *"the recording is incomplete: the session did not end within 5 s (HEAPLEDGER_RELAY_TIMEOUT): the relay daemon at net://127.0.0.1:$C:$D stopped answering or went away"*"Check the relay daemon and the network, then record again"*)
            pass "$how: record says what happened and what to do";;
            *) fail "$how: record message: $out";; esac
    else
        # Killed: the session may still end in time (the consumer drops what it cannot send),
        # but record finds the relay daemon gone and does not report a complete recording.
        check "$how: record exit" 125 "$rc"
        case $out in *"the recording is incomplete: the relay daemon died while the program ran"*)
            pass "$how: record says the relay daemon died";;
            *) fail "$how: record message: $out";; esac
    fi
    kill -CONT "$relayd_pid" 2>/dev/null
    kill -KILL "$relayd_pid" 2>/dev/null
    { wait "$relayd_pid"; } 2>/dev/null
    relayd_pid=""
    db=$work/cd-$name/$host-$name.db
    wait_for finished "$db" || wait_for finished "$db" || fail "$how: database not finished: $(cat "$work/cd-$name.log")"
    check "$how: status" partial "$(q "$db" "select value from meta where key='ingest_status'")"
    case $(q "$db" "select value from meta where key='ingest_warning'") in "the connection to the relay daemon was lost"*)
        pass "$how: the warning says what is missing";;
        *) fail "$how: warning '$(q "$db" "select value from meta where key='ingest_warning'")'";; esac
    stop_collectd
}
gone stop gone1
gone kill gone2

# Bad input: the bound must be whole seconds.
for v in abc 0 -3 5s 100000; do
    out=$(HEAPLEDGER_RELAY_TIMEOUT=$v "$HL" record --relay net://127.0.0.1:1 -o bad -- true 2>&1)
    rc=$?
    check "HEAPLEDGER_RELAY_TIMEOUT=$v: exit" 2 "$rc"
    case $out in *"HEAPLEDGER_RELAY_TIMEOUT=$v: expected whole seconds from 1 to 86400"*) pass "HEAPLEDGER_RELAY_TIMEOUT=$v: message";;
        *) fail "HEAPLEDGER_RELAY_TIMEOUT=$v: $out";; esac
done

[ "$fails" -eq 0 ] && echo "fleet relay gone: all passed" || echo "fleet relay gone: $fails FAILED"
[ "$fails" -eq 0 ]
