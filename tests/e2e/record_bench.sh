#!/usr/bin/env bash
# tests/e2e/record_bench.sh — tracing cost (docs/PERFORMANCE.md, "Tracing cost").
#
#   1. untraced allocator, tracepoints compiled in (libheapledger.so) vs compiled out
#      (libheapledger-notrace.so): CPU ns per malloc/free, best of RUNS alternating runs
#   2. cost per traced event: `heapledger record` (blocking, vpid/vtid in the payload) with
#      --stacks 0 and --stacks 16, minus the untraced cost; best of RUNS
#   3. losslessness: a 10-million-event run in blocking mode; LTTng's discarded counter and the
#      database's counts must show every event
#
# usage: BUILD=build tests/e2e/record_bench.sh [RUNS]        (default 5)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=$ROOT/$BUILD/bin/heapledger
LIB=$ROOT/$BUILD/lib
BENCH=$ROOT/$BUILD/tests/e2e/record_bench
RUNS=${1:-5}
WORK=$(mktemp -d /tmp/hl-record-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cpu() { sed -n 's/.*cpu_ns_per_op \([0-9.]*\).*/\1/p'; }
best() { sort -n | head -1; }

if [ "${ONLY_10M:-}" != 1 ]; then
echo "== 1. untraced: tracepoints compiled in vs out (20 M malloc/free pairs, best of $RUNS)"
: >"$WORK/in"; : >"$WORK/out"
for _ in $(seq "$RUNS"); do
    LD_PRELOAD=$LIB/libheapledger.so "$BENCH" 20000000 | cpu >>"$WORK/in"
    LD_PRELOAD=$LIB/libheapledger-notrace.so "$BENCH" 20000000 | cpu >>"$WORK/out"
done
in=$(best <"$WORK/in"); out=$(best <"$WORK/out")
echo "   compiled in : $in ns/op   (runs: $(tr '\n' ' ' <"$WORK/in"))"
echo "   compiled out: $out ns/op   (runs: $(tr '\n' ' ' <"$WORK/out"))"
echo "   difference  : $(echo "scale=2; ($in - $out) * 100 / $out" | bc) %"

echo "== 2. cost per traced event (1 M pairs = 2 M events, best of $RUNS)"
for st in 0 16; do
    : >"$WORK/t$st"
    for i in $(seq "$RUNS"); do
        "$HL" record -f -o "$WORK/t$st.db" --stacks $st -- "$BENCH" 1000000 \
            2>"$WORK/t$st.err" | cpu >>"$WORK/t$st"
    done
    t=$(best <"$WORK/t$st")
    echo "   --stacks $st: $t ns/op traced, $(echo "scale=1; $t - $in" | bc) ns/event over untraced" \
         "(runs: $(tr '\n' ' ' <"$WORK/t$st"))"
done

fi
echo "== 3. lossless: 10 M events, blocking mode, --stacks 16"
if [ "${SKIP_10M:-}" = 1 ]; then echo "   skipped (SKIP_10M=1)"; exit 0; fi
"$HL" record -f -o "$WORK/big.db" --stacks 16 -- "$BENCH" 5000000 >"$WORK/big.out" 2>"$WORK/big.err"
grep -E "ran|events in|LTTng" "$WORK/big.err" | sed 's/^/   /'
pid=$(sed -n 's/.* ran .* (pid \([0-9]*\)).*/\1/p' "$WORK/big.err")
echo "   'LTTng reported N events discarded' lines: $(grep -c 'discarded' "$WORK/big.err")"
# Counted for our process only: other traced programs of the same user may have run meanwhile.
echo "   db: run.discarded_events=$(sqlite3 "$WORK/big.db" 'SELECT discarded_events FROM run')" \
     "loop blocks allocated and freed by pid $pid:" \
     "$(sqlite3 "$WORK/big.db" "SELECT count(*) FROM block WHERE pid = $pid AND size BETWEEN 32 AND 95 AND free_seq IS NOT NULL")" \
     "(expected 5000000)"
