#!/usr/bin/env bash
# tests/ingest/record_rss.sh OUTDIR PAIRS — the memory of every process of a recording
# (docs/PERFORMANCE.md, "record's memory and the end-of-run summary"): runs
# `heapledger record -o OUTDIR/x.db --stacks 16 -- record_bench PAIRS` (2 events per pair,
# TMPDIR=OUTDIR/tmp) and writes OUTDIR/rss: once a second, each process under record as
# PID:NAME:VmRSS/VmHWM (MiB) and record's RssAnon, RssFile, RssShmem; OUTDIR/err is record's
# stderr, each line prefixed with its time. Prints each process name's peak VmHWM at the end.
# HL=… measures another build (HEAPLEDGER_LIBDIR then names its libraries).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
HL=${HL:-$ROOT/$BUILD/bin/heapledger}
BENCH=$ROOT/$BUILD/tests/e2e/record_bench
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR PAIRS" >&2; exit 2; }
d=$1 pairs=$2
[ -x "$BENCH" ] || { echo "$0: $BENCH missing: run make $BUILD/tests/e2e/record_bench" >&2; exit 2; }
rm -rf "$d" && mkdir -p "$d/tmp" || exit 1
TMPDIR=$d/tmp "$HL" record -o "$d/x.db" --stacks 16 -- "$BENCH" "$pairs" >"$d/out" \
    2> >(while IFS= read -r l; do echo "$(date +%s.%N) $l"; done >"$d/err") &
r=$!
desc() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do desc "$c"; done; }
: >"$d/rss"
while kill -0 "$r" 2>/dev/null; do
    line=$(date +%s.%N | cut -c1-14)
    for p in $(desc "$r"); do
        rss=$(awk '/^VmRSS/{ print $2 }' "/proc/$p/status" 2>/dev/null)
        hwm=$(awk '/^VmHWM/{ print $2 }' "/proc/$p/status" 2>/dev/null)
        line="$line $p:$(cat "/proc/$p/comm" 2>/dev/null):$((${rss:-0} / 1024))/$((${hwm:-0} / 1024))"
    done
    line="$line R:$(awk '/^Rss(Anon|File|Shmem)/{ printf "%s%d ", $1, $2 / 1024 }' "/proc/$r/status" 2>/dev/null)"
    echo "$line" >>"$d/rss"
    sleep 1
done
wait "$r"
rc=$?
tr ' ' '\n' <"$d/rss" | grep -v '^R:' | grep : |
    awk -F: '{ split($3, a, "/"); if (a[2] > m[$2]) m[$2] = a[2] } END { for (k in m) printf "peak VmHWM %-16s %6d MiB\n", k, m[k] }'
exit "$rc"
