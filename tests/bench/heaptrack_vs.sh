#!/usr/bin/env bash
# tests/bench/heaptrack_vs.sh HEAPLEDGER PROG EVENTS [OUTDIR] — heapledger record side by
# side with heaptrack on one of our programs (issue 12, docs/PERFORMANCE.md "The ledger at
# scale"). PROG is tests/e2e/record_bench (N malloc/free pairs: 2 N events); EVENTS is the
# event count wanted (10000000 for `make bench-heaptrack`, 100000000 for `make bench-scale`).
# Each tool runs BENCH_REPS times (default 1), alternating; the table shows medians:
#   time to a ready database: `heapledger record` (program + ingest) against `heaptrack`
#   (program) + `heaptrack_print` (its report); the report: `heapledger report` against
#   heaptrack_print; file sizes; peak RSS (/usr/bin/time, the largest process of each).
# Prints a markdown table on stdout (and to OUTDIR/heaptrack_vs.md); scratch files in OUTDIR
# (default a mktemp directory, removed at the end).
# HT_VS_STATS=1 runs `record --stats` and keeps each run's time line and CPU per process in
# OUTDIR/hl.stats.N (docs/record.md, "Where the time goes"; a build without --stats refuses it).
set -u
hl=$1
prog=$2
events=$3
out=${4:-}
reps=${BENCH_REPS:-1}
for tool in heaptrack heaptrack_print /usr/bin/time; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "heaptrack_vs: $tool not found (install the Debian packages heaptrack and time: make deps)" >&2
        exit 1
    fi
done
keep=1
if [ -z "$out" ]; then
    out=$(mktemp -d /tmp/hl-heaptrack-vs.XXXXXX)
    keep=0
fi
mkdir -p "$out"
iters=$((events / 2))

# t FILE CMD...: run CMD under /usr/bin/time; FILE gets "wall_s max_rss_kib cpu_s" (CPU:
# user + system of CMD and the children it waited for: steadier than wall time on a loaded
# machine).
t() {
    local f=$1
    shift
    /usr/bin/time -o "$f" -f '%e %M %U %S' "$@" >/dev/null 2>"$f.err" || {
        echo "heaptrack_vs: failed: $* (see $f.err)" >&2
        tail -5 "$f.err" >&2
        exit 1
    }
    awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$f" >"$f.x" && mv "$f.x" "$f"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$out/hl.rec" && : >"$out/hl.rss" && : >"$out/hl.rep" && : >"$out/hl.size"
: >"$out/ht.run" && : >"$out/ht.rss" && : >"$out/ht.print" && : >"$out/ht.prss" && : >"$out/ht.size"
: >"$out/hl.rrss" && : >"$out/hl.rcpu" && : >"$out/hl.pcpu" && : >"$out/ht.rcpu" && : >"$out/ht.pcpu"
for r in $(seq 1 "$reps"); do
    rm -f "$out/run.db" "$out/run.db-wal" "$out/run.db-shm" "$out"/ht.*.zst "$out"/ht.*.gz
    stats=()
    [ "${HT_VS_STATS:-}" = 1 ] && stats=(--stats)
    t "$out/t.hl" "$hl" record "${stats[@]}" -o "$out/run.db" -- "$prog" "$iters"
    [ "${HT_VS_STATS:-}" = 1 ] && sed -n '/stats: time line/,$p' "$out/t.hl.err" >"$out/hl.stats.$r"
    read -r w m c <"$out/t.hl"
    echo "$c" >>"$out/hl.rcpu"
    echo "$w" >>"$out/hl.rec"
    echo "$m" >>"$out/hl.rss"
    stat -c %s "$out/run.db" >>"$out/hl.size"
    t "$out/t.hlr" "$hl" report "$out/run.db"
    read -r w m c <"$out/t.hlr"
    echo "$c" >>"$out/hl.pcpu"
    echo "$w" >>"$out/hl.rep"
    echo "$m" >>"$out/hl.rrss"
    t "$out/t.ht" heaptrack -o "$out/ht.$r" "$prog" "$iters"
    read -r w m c <"$out/t.ht"
    echo "$c" >>"$out/ht.rcpu"
    echo "$w" >>"$out/ht.run"
    echo "$m" >>"$out/ht.rss"
    f=$(ls "$out"/ht."$r".* | head -1)
    stat -c %s "$f" >>"$out/ht.size"
    t "$out/t.htp" heaptrack_print "$f"
    read -r w m c <"$out/t.htp"
    echo "$c" >>"$out/ht.pcpu"
    echo "$w" >>"$out/ht.print"
    echo "$m" >>"$out/ht.prss"
done
ev=$(sqlite3 "$out/run.db" 'SELECT events FROM run')
hl_rec=$(median <"$out/hl.rec")
hl_rep=$(median <"$out/hl.rep")
hl_rss=$(median <"$out/hl.rss")
hl_rrss=$(median <"$out/hl.rrss")
hl_size=$(median <"$out/hl.size")
ht_run=$(median <"$out/ht.run")
ht_print=$(median <"$out/ht.print")
ht_rss=$(median <"$out/ht.rss")
ht_prss=$(median <"$out/ht.prss")
ht_size=$(median <"$out/ht.size")
hl_rcpu=$(median <"$out/hl.rcpu")
hl_pcpu=$(median <"$out/hl.pcpu")
ht_rcpu=$(median <"$out/ht.rcpu")
ht_pcpu=$(median <"$out/ht.pcpu")
{
    echo "record_bench $iters ($ev events in the database), $reps run(s) each, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| figure | heapledger | heaptrack | ratio |"
    echo "|---|---|---|---|"
    awk -v a="$hl_rec" -v b="$ht_run" -v c="$ht_print" 'BEGIN {
        printf "| program start to a ready database / printed report (s) | %.2f | %.2f + %.2f = %.2f | %.2fx |\n", a, b, c, b + c, a / (b + c) }'
    awk -v a="$hl_rcpu" -v b="$ht_rcpu" -v c="$ht_pcpu" 'BEGIN {
        printf "| the same in CPU seconds (user + sys) | %.2f | %.2f + %.2f = %.2f | %.2fx |\n", a, b, c, b + c, a / (b + c) }'
    awk -v a="$hl_rep" -v c="$ht_print" 'BEGIN {
        printf "| report (s): heapledger report / heaptrack_print | %.2f | %.2f | %.2fx |\n", a, c, a / c }'
    awk -v a="$hl_pcpu" -v c="$ht_pcpu" 'BEGIN {
        printf "| report in CPU seconds (user + sys) | %.2f | %.2f | %.2fx |\n", a, c, a / c }'
    awk -v a="$hl_size" -v b="$ht_size" -v e="$ev" 'BEGIN {
        printf "| file (MB; B per event) | %.1f (%.1f B) | %.3f (%.4f B) | %.0fx |\n", a / 1e6, a / e, b / 1e6, b / e, a / b }'
    awk -v a="$hl_rss" -v b="$ht_rss" 'BEGIN {
        printf "| peak RSS while recording (MiB) | %.0f | %.0f | %.2fx |\n", a / 1024, b / 1024, a / b }'
    awk -v a="$hl_rrss" -v b="$ht_prss" 'BEGIN {
        printf "| peak RSS of the report (MiB) | %.0f | %.0f | %.2fx |\n", a / 1024, b / 1024, a / b }'
} | tee "$out/heaptrack_vs.md"
[ $keep -eq 1 ] || rm -rf "$out"
