#!/usr/bin/env bash
# tests/e2e/record_overlap_bench.sh — storing during the run against storing after it
# (docs/PERFORMANCE.md, "Ingest during the run").
#
# For each mode, RUNS alternating recordings of `record_bench PAIRS` (2 events per pair,
# --stacks 16): "after" stores the whole trace once the program ended
# (HEAPLEDGER_CHUNK_BYTES=0, the previous behaviour), "during" stores 64 MiB trace chunks
# while it runs (the default). Reported per run: wall time from start to a ready database,
# the program's run time, the wait after it ended, peak disk (trace directory + database,
# sampled every 0.2 s), record's peak RSS (VmHWM, sampled), the program's CPU ns per event.
# "ready" is when record printed the database's event count (the summary, read back from the
# database, follows; "total" is record's exit).
# Plus the untraced program's CPU ns per event (best of RUNS) for the cost per event.
#
# usage: BUILD=build tests/e2e/record_overlap_bench.sh [PAIRS] [RUNS]   (default 5000000 3)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=${HL:-$ROOT/$BUILD/bin/heapledger} # HL=... measures another build (a copy: the tree may be rebuilt meanwhile)
LIB=$ROOT/$BUILD/lib
BENCH=$ROOT/$BUILD/tests/e2e/record_bench
PAIRS=${1:-5000000}
RUNS=${2:-3}
WORK=$(mktemp -d "${BENCH_TMP:-/tmp}/hl-overlap-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cpu() { sed -n 's/.*cpu_ns_per_op \([0-9.]*\).*/\1/p' "$1"; }

echo "== untraced: CPU ns per allocator call (best of $RUNS)"
: >"$WORK/untraced"
for _ in $(seq "$RUNS"); do
    LD_PRELOAD=$LIB/libheapledger.so "$BENCH" "$PAIRS" >"$WORK/u.out"
    cpu "$WORK/u.out" >>"$WORK/untraced"
done
untraced=$(sort -n "$WORK/untraced" | head -1)
echo "   $untraced ns (runs: $(tr '\n' ' ' <"$WORK/untraced"))"

run() { # run MODE CHUNK_BYTES
    local d=$WORK/$1 t0 t1 r peak=0 hwm=0 s h
    rm -rf "$d" && mkdir -p "$d/tmp"
    t0=$(date +%s.%N)
    HEAPLEDGER_CHUNK_BYTES=$2 TMPDIR=$d/tmp "$HL" record -o "$d/x.db" --stacks 16 -- \
        "$BENCH" "$PAIRS" >"$d/out" 2> >(while IFS= read -r l; do echo "$(date +%s.%N) $l"; done >"$d/err") &
    r=$!
    while kill -0 "$r" 2>/dev/null; do
        s=$(du -sb "$d" 2>/dev/null | cut -f1)
        [ "${s:-0}" -gt "$peak" ] && peak=$s
        h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$r/status" 2>/dev/null)
        [ "${h:-0}" -gt "$hwm" ] && hwm=$h
        sleep 0.2
    done
    wait "$r" || { echo "   $1: record failed:"; cat "$d/err"; return 1; }
    t1=$(date +%s.%N)
    sleep 0.5 # the timestamping reader
    local ran wait_s db ev ready
    ready=$(awk '/ events in /{ print $1; exit }' "$d/err")
    ran=$(sed -n "s/.* ran \([0-9.]*\) s.*/\1/p" "$d/err")
    wait_s=$(sed -n 's/.*ready \([0-9.]*\) s after it ended.*/\1/p; s/.*: [0-9]* events in \([0-9.]*\) s$/\1/p' "$d/err")
    db=$(stat -c %s "$d/x.db")
    ev=$(sqlite3 "$d/x.db" 'SELECT events FROM run')
    printf '   %-6s ready %7.2f s  total %7.2f s  ran %7.2f s  ingest after %7.2f s  peak disk %6.0f MiB (db %5.0f MiB)  record RSS %4.0f MiB  program %6.1f ns/call  %s events\n' \
        "$1" "$(echo "$ready - $t0" | bc)" "$(echo "$t1 - $t0" | bc)" "$ran" "$wait_s" "$(echo "$peak / 1048576" | bc)" \
        "$(echo "$db / 1048576" | bc)" "$(echo "$hwm / 1024" | bc)" "$(cpu "$d/out")" "$ev"
    grep -E "chunks|discarded" "$d/err" | cut -d' ' -f2- | sed 's/^/          /'
}

echo "== $PAIRS pairs ($((PAIRS * 2)) events), $RUNS alternating runs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$RUNS"); do
    run after 0
    run during "${HEAPLEDGER_CHUNK_BYTES:-64M}"
done
echo "   load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
