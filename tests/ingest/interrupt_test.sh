#!/usr/bin/env bash
# tests/ingest/interrupt_test.sh HEAPLEDGER INGEST_GEN — SIGINT/SIGTERM during a long ingest
# (collect of a big generated trace, and record's own ingest of a real program) stop it within
# 2 s, keep what was stored, mark the database interrupted and say how to ingest again.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-ingest-intr.XXXXXX)
kept=""
trap 'rm -rf "$work"; [ -n "$kept" ] && rm -rf "$kept"' EXIT
ensure_sessiond
cp "$GEN" "$work/$TAG" && GEN=$work/$TAG
echo "ingest: signals during ingest"
LIMIT=2.0 # seconds from the signal to the exit

# wait_gone PID: seconds until PID has exited (polling every 20 ms, at most 30 s)
wait_gone() {
    local t0 t1 i=0
    t0=$(date +%s.%N)
    while kill -0 "$1" 2>/dev/null && [ $i -lt 1500 ]; do sleep 0.02; i=$((i + 1)); done
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
fast() { awk -v t="$1" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }'; }

record_trace "$work/big" "$GEN" bench 1000000 >/dev/null || fail "recording the big trace"
for sig in INT TERM; do
    db=$work/big-$sig.db
    "$HL" collect "$work/big" -o "$db" -q 2>"$work/err-$sig" &
    pid=$!
    sleep 1.5
    kill -$sig $pid
    took=$(wait_gone $pid)
    wait $pid; rc=$?
    out=$(cat "$work/err-$sig")
    n=$([ $sig = INT ] && echo 2 || echo 15)
    check "collect SIG$sig: exit 128+$n" $((128 + n)) $rc
    fast "$took" && pass "collect SIG$sig: stopped in $took s" || fail "collect SIG$sig: took $took s to stop"
    check "collect SIG$sig: status" interrupted "$(q "$db" "select value from meta where key = 'ingest_status'")"
    ev=$(q "$db" 'select events from run')
    check "collect SIG$sig: events kept" 1 "$(( ${ev:-0} > 0 && ${ev:-0} < 2000000 ))"
    check "collect SIG$sig: blocks kept" 1 "$(q "$db" 'select count(*) > 0 from block')"
    check "collect SIG$sig: indexed" 1 "$(q "$db" "select count(*) > 0 from sqlite_master where type = 'index' and name = 'kernel_event_ts'")"
    case $out in *"interrupted by SIG$sig"*"heapledger collect $work/big -o $db --force"*) pass "collect SIG$sig: message says how to ingest again";;
    *) fail "collect SIG$sig: message: $out";; esac
    check "collect SIG$sig: warning stored" 1 "$(q "$db" "select count(*) from meta where key = 'ingest_warning' and value like 'interrupted by SIG$sig%'")"
done
"$HL" collect "$work/big" -o "$work/big-INT.db" --force -q; check "collect again after the interruption: exit" 0 $?

# record's ingest: a program making ~600 k allocator events, SIGTERM once its ingest started
if "$HL" record --help >/dev/null 2>&1; then
    "$HL" record -o "$work/rec.db" -- /usr/bin/python3 -c '
for i in range(300000):
    b = bytearray(100000)' >"$work/rec.out" 2>&1 &
    pid=$!
    i=0
    while [ ! -e "$work/rec.db" ] && kill -0 $pid 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
    sleep 0.5
    kill -TERM $pid
    took=$(wait_gone $pid)
    wait $pid
    out=$(cat "$work/rec.out")
    kept=$(sed -n 's/^  trace  *//p' "$work/rec.out" | head -1)
    fast "$took" && pass "record SIGTERM during ingest: stopped in $took s" || fail "record SIGTERM during ingest: took $took s"
    check "record: status" interrupted "$(q "$work/rec.db" "select value from meta where key = 'ingest_status'")"
    check "record: blocks kept" 1 "$(q "$work/rec.db" 'select count(*) > 0 from block')"
    check "record: frames kept (unsymbolised)" 1 "$(q "$work/rec.db" 'select count(*) > 0 and count(function) = 0 from frame')"
    case $out in *"interrupted by SIGTERM"*"heapledger collect "*" -o $work/rec.db --force"*) pass "record: message says how to ingest again";;
    *) fail "record: message: $out";; esac
    [ -n "$kept" ] && [ -f "$(find "$kept" -name metadata | head -1)" ] && pass "record: the trace is kept ($kept)" || fail "record: no kept trace in: $out"
else
    echo "  skip record case (no heapledger record)"
fi

[ $fails -eq 0 ] || { echo "ingest signals: $fails FAILED"; exit 1; }
echo "ingest signals: all passed"
