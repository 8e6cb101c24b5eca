#!/usr/bin/env bash
# tests/analyzer/report_vs.sh HEAPLEDGER PROG EVENTS [OUTDIR] — `heapledger report` against
# `heaptrack_print` on recordings of the same run of one of our programs (issue 12: the report
# no slower than heaptrack_print). PROG is tests/e2e/record_bench (N malloc/free pairs: 2 N
# events). The recordings are made once (kept in OUTDIR and reused when they are there for
# the same EVENTS); then the two reports run REPORT_REPS times each (default 5), alternating,
# each under /usr/bin/time. Prints a markdown table of the medians (wall, CPU = user + sys,
# peak RSS) with the load average before and after, on stdout and to OUTDIR/report_vs.md.
set -u
hl=$1
prog=$2
events=$3
out=${4:-$(mktemp -d /tmp/hl-report-vs.XXXXXX)}
reps=${REPORT_REPS:-5}
for tool in heaptrack heaptrack_print /usr/bin/time; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "report_vs: $tool not found (install the Debian packages heaptrack and time: make deps)" >&2
        exit 1
    fi
done
mkdir -p "$out"
iters=$((events / 2))
if [ "$(cat "$out/events" 2>/dev/null)" != "$events" ] || [ ! -s "$out/run.db" ] ||
    { [ ! -s "$out/ht.zst" ] && [ ! -s "$out/ht.gz" ]; }; then
    rm -f "$out/run.db" "$out"/ht.zst "$out"/ht.gz "$out/events"
    "$hl" record -o "$out/run.db" -- "$prog" "$iters" >"$out/record.log" 2>&1 || {
        echo "report_vs: heapledger record failed (see $out/record.log)" >&2
        exit 1
    }
    (unset DISPLAY; heaptrack -o "$out/ht" "$prog" "$iters" >"$out/heaptrack.log" 2>&1) || {
        echo "report_vs: heaptrack failed (see $out/heaptrack.log)" >&2
        exit 1
    }
    echo "$events" >"$out/events"
fi
ht=$(ls "$out"/ht.zst "$out"/ht.gz 2>/dev/null | head -1)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$out/times.hl" && : >"$out/times.ht"
for r in $(seq 1 "$reps"); do
    HEAPLEDGER_PROGRESS=0 /usr/bin/time -a -o "$out/times.hl" -f '%e %U %S %M' "$hl" report "$out/run.db" >/dev/null 2>"$out/report.err" || {
        echo "report_vs: heapledger report failed (see $out/hl.err)" >&2
        exit 1
    }
    /usr/bin/time -a -o "$out/times.ht" -f '%e %U %S %M' heaptrack_print "$ht" >/dev/null 2>"$out/print.err" || {
        echo "report_vs: heaptrack_print failed (see $out/ht.err)" >&2
        exit 1
    }
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# median COLUMN-EXPR FILE
median() { awk "{ print $1 }" "$2" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ev=$(sqlite3 "$out/run.db" 'SELECT events FROM run')
{
    echo "record_bench $iters ($ev events), $reps alternating runs each, medians; load average $load0 before, $load1 after"
    echo
    echo "| figure | heapledger report | heaptrack_print | ratio |"
    echo "|---|---|---|---|"
    for f in 'wall (s)|$1' 'CPU, user + sys (s)|$2 + $3' 'peak RSS (MiB)|$4 / 1024'; do
        name=${f%%|*}
        expr=${f#*|}
        a=$(median "$expr" "$out/times.hl")
        b=$(median "$expr" "$out/times.ht")
        awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN { printf "| %s | %.2f | %.2f | %.2fx |\n", n, a, b, a / b }'
    done
    echo
    echo "each run (wall user sys KiB): heapledger $(tr '\n' ';' <"$out/times.hl") heaptrack_print $(tr '\n' ';' <"$out/times.ht")"
} | tee "$out/report_vs.md"
