#!/usr/bin/env bash
# tests/ingest/bench_ingest.sh HEAPLEDGER INGEST_GEN [PAIRS] — ingest throughput, end to end:
# records PAIRS alloc/free pairs (2 threads) with the lttng CLI, then times
# `heapledger collect` and babeltrace2's own decoding (to a dummy sink) of the same trace.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2"); pairs=${3:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-ingest-bench.XXXXXX); trap 'rm -rf "$work"' EXIT
ensure_sessiond
cp "$GEN" "$work/$TAG" && GEN=$work/$TAG   # unique process name, see lib.sh
record_trace "$work/t" "$GEN" bench "$pairs" || { echo "recording failed"; exit 1; }
du -sh "$work/t" | awk '{print "trace size: " $1}'
t0=$(date +%s.%N); babeltrace2 "$work/t" -c sink.utils.dummy; t1=$(date +%s.%N)
"$HL" collect "$work/t" -o "$work/t.db" -q --stats; t2=$(date +%s.%N)
ev=$(sqlite3 "$work/t.db" 'select events from run')
awk -v e="$ev" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
    printf "events: %d\nbabeltrace2 decode only: %.2f s, %.2f M events/s\n", e, b - a, e / (b - a) / 1e6;
    printf "heapledger collect:      %.2f s, %.2f M events/s\n", c - b, e / (c - b) / 1e6 }'
ls -la "$work/t.db" | awk '{print "database size: " $5 " bytes"}'
uptime
