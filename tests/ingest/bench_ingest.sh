#!/usr/bin/env bash
# tests/ingest/bench_ingest.sh HEAPLEDGER INGEST_GEN [PAIRS] — ingest throughput, end to end:
# records PAIRS alloc/free pairs (2 threads) with the lttng CLI in a session shaped like
# `heapledger record`'s, then times
# `heapledger collect` (heapledger's CTF reader, then HEAPLEDGER_DECODER=babeltrace2) and
# babeltrace2's own decoding (to a dummy sink) of the same trace.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2"); pairs=${3:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-ingest-bench.XXXXXX); trap 'rm -rf "$work"' EXIT
ensure_sessiond
cp "$GEN" "$work/$TAG" && GEN=$work/$TAG   # unique process name, see lib.sh
# The session has the shape `heapledger record` uses (tracer/session.c): alloc/free/realloc
# (vpid/vtid in their payload) on a channel without contexts, the rare events on a second
# channel with the vpid/vtid contexts (plus procname here, to keep other programs' rare
# events out; the per-operation events of another heapledger-traced program running at the
# same time would be counted too: `events` below says how many were ingested).
s="hlib_$$_$RANDOM"
rm -rf "$work/t"
lttng create "$s" --output="$work/t" >/dev/null &&
    lttng enable-channel -u -s "$s" ch --subbuf-size=8M --num-subbuf=8 --blocking-timeout=inf >/dev/null &&
    lttng enable-channel -u -s "$s" meta --subbuf-size=1M --num-subbuf=4 --blocking-timeout=inf >/dev/null &&
    lttng enable-event -u -s "$s" -c ch heapledger:alloc,heapledger:free,heapledger:realloc >/dev/null &&
    lttng enable-event -u -s "$s" -c meta 'heapledger:*' -x heapledger:alloc,heapledger:free,heapledger:realloc \
        --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng enable-event -u -s "$s" -c meta 'lttng_ust_statedump:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng add-context -u -s "$s" -c meta -t vpid -t vtid -t procname >/dev/null &&
    lttng start "$s" >/dev/null || { lttng destroy "$s" >/dev/null 2>&1; echo "recording failed"; exit 1; }
LTTNG_UST_ALLOW_BLOCKING=1 "$GEN" bench "$pairs"
lttng stop "$s" >/dev/null; lttng destroy "$s" >/dev/null
du -sh "$work/t" | awk '{print "trace size: " $1}'
t0=$(date +%s.%N); babeltrace2 "$work/t" -c sink.utils.dummy; t1=$(date +%s.%N)
"$HL" collect "$work/t" -o "$work/t.db" -q --stats; t2=$(date +%s.%N)
# the same with babeltrace2 as the decoder (the path before heapledger's own CTF reader)
HEAPLEDGER_DECODER=babeltrace2 "$HL" collect "$work/t" -o "$work/bt.db" -q --stats; t3=$(date +%s.%N)
ev=$(sqlite3 "$work/t.db" 'select events from run')
awk -v e="$ev" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
    printf "events: %d\nbabeltrace2 decode only: %.2f s, %.2f M events/s\n", e, b - a, e / (b - a) / 1e6;
    printf "heapledger collect:      %.2f s, %.2f M events/s\n", c - b, e / (c - b) / 1e6;
    printf "  with HEAPLEDGER_DECODER=babeltrace2: %.2f s, %.2f M events/s\n", d - c, e / (d - c) / 1e6 }'
ls -la "$work/t.db" | awk '{print "database size: " $5 " bytes"}'
uptime
