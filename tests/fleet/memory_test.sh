#!/usr/bin/env bash
# tests/fleet/memory_test.sh HEAPLEDGER INGEST_GEN — collectd's memory per session does not
# grow with the trace: one session of `ingest_gen bench` streamed through our own
# lttng-relayd into a fresh collectd, once with about 0.5 M events and once with 4 times as
# many; collectd's peak RSS (VmHWM) for the long one may exceed the short one's by at most
# FLEET_MEM_MARGIN_MIB (default 24; the early peak varies with the load, 36–52 MiB seen; the
# SQLite page cache alone was allowed 64 MiB per session
# and filled with the database, which made the long run 48 MiB higher: 50 vs 98 MiB).
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
SHORT=${FLEET_MEM_SHORT:-125000}; LONG=$((SHORT * 4)); MARGIN=${FLEET_MEM_MARGIN_MIB:-24}
work=$(mktemp -d /tmp/fleet-memory-test.XXXXXX)
finish() { stop_collectd; stop_relayd; rm -rf "$work"; }
trap finish EXIT
echo "fleet: collectd's memory per session is bounded"
pick_ports
mkdir -p "$work/relay"
start_relayd "$work/relay" || { fail "lttng-relayd did not start"; exit 1; }
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)

# peak N — collectd's VmHWM (KiB) while it stores one session of `ingest_gen bench N`
peak() {
    local dir=$work/cd-$1 db
    mkdir -p "$dir"
    start_collectd "$dir" "$work/relay" "$work/cd.log"
    sleep 0.5
    "$HL" record --relay net://127.0.0.1:$C:$D -o "mem$1" -- "$GEN" bench "$1" >/dev/null 2>>"$work/rec.log" \
        || { fail "record of bench $1 failed: $(tail -3 "$work/rec.log")"; return 1; }
    db=$dir/$host-mem$1.db
    for _ in $(seq 3000); do finished "$db" && break; sleep 0.1; done
    finished "$db" || { fail "bench $1 not finished: $(tail -3 "$work/cd.log")"; return 1; }
    check "bench $1: status" complete "$(q "$db" "select value from meta where key='ingest_status'")"
    awk '/VmHWM/ {print $2}' "/proc/$cd_pid/status" >"$work/hwm-$1"
    stop_collectd
    rm -rf "$dir" "$work/relay/$host"
}
peak "$SHORT" && peak "$LONG" || { echo "fleet memory: $fails failed"; exit 1; }
s=$(cat "$work/hwm-$SHORT"); l=$(cat "$work/hwm-$LONG")
msg="collectd peak RSS: $((s / 1024)) MiB for $((SHORT * 4)) events, $((l / 1024)) MiB for $((LONG * 4)) events (margin $MARGIN MiB)"
[ "$l" -le $((s + MARGIN * 1024)) ] && pass "$msg" || fail "$msg: memory grows with the trace"
[ "$fails" -eq 0 ] || { echo "fleet memory: $fails failed"; exit 1; }
