#!/usr/bin/env bash
# tests/ingest/counts_test.sh HEAPLEDGER INGEST_GEN COUNTS_PROG SUMMARY_PRINT — one count
# everywhere: the record summary, the text, JSON and HTML reports and SQL on the database
# (the definitions of docs/metrics.md, "Counts", and the path_cycles view) give the same
# allocs, frees, reallocs, failed and frees of unknown blocks, on (1) a real recording of a
# program with every kind of realloc and failed allocations, (2) a trace of ingest_gen
# (lttng CLI + collect) with frees and a realloc(p, 0) of blocks never seen allocated.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2"); PROG=$(realpath "$3"); SUMMARY=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-counts-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "ingest: counts"

# totals DB — the summary's figures come from block_totals, which the ingest filled as it
# stored the rows (tracer/ingest_totals.c), and are those of a scan of every block row: the
# same summary with block_totals emptied (the scan), and with it covering one row too many
# (a database changed by hand: the scan again); a changed byte total shows it is read.
totals() {
    local db=$1 c=$work/totals.db
    check "$db: block_totals covers every block row" \
        "$(q "$db" "SELECT count(*) FROM block_data")" \
        "$(q "$db" "SELECT total(blocks) FROM block_totals" | sed 's/\.0$//')"
    "$SUMMARY" "$db" >"$work/t.sum" 2>&1
    rm -f "$c"* && cp "$db" "$c" && q "$c" "DELETE FROM block_totals"
    "$SUMMARY" "$c" >"$work/scan.sum" 2>&1
    if [ -s "$work/t.sum" ] && cmp -s "$work/t.sum" "$work/scan.sum"; then
        pass "$db: summary from block_totals = summary from the block rows"
    else
        fail "$db: summary from block_totals differs from the block rows': $(diff "$work/scan.sum" "$work/t.sum" | head -6 | tr '\n' ' ')"
    fi
    rm -f "$c"* && cp "$db" "$c" && q "$c" "UPDATE block_totals SET blocks = blocks + 1"
    "$SUMMARY" "$c" >"$work/stale.sum" 2>&1
    if cmp -s "$work/stale.sum" "$work/scan.sum"; then
        pass "$db: block_totals not covering the rows: the summary scans them"
    else
        fail "$db: stale block_totals used: $(diff "$work/scan.sum" "$work/stale.sum" | head -4 | tr '\n' ' ')"
    fi
    rm -f "$c"* && cp "$db" "$c" && q "$c" "UPDATE block_totals SET bytes = bytes + 1073741824"
    "$SUMMARY" "$c" >"$work/read.sum" 2>&1
    if grep -q 'requested.*GiB' "$work/read.sum"; then
        pass "$db: the summary reads block_totals"
    else
        fail "$db: the summary ignores block_totals: $(grep requested "$work/read.sum")"
    fi
    # live_totals: the live sites of the summary, per process and allocation stack
    # (ingest_totals.c)
    check "$db: live_totals = live_at_exit grouped by pid, alloc_stack" "" \
        "$(q "$db" "WITH a AS (SELECT pid, coalesce(alloc_stack, 0), count(*), sum(size)
                              FROM live_at_exit GROUP BY 1, 2),
                         b AS (SELECT pid, alloc_stack, blocks, bytes FROM live_totals)
                    SELECT * FROM (SELECT * FROM a EXCEPT SELECT * FROM b)
                    UNION ALL SELECT * FROM (SELECT * FROM b EXCEPT SELECT * FROM a)")"
    rm -f "$c"* && cp "$db" "$c" && q "$c" "DELETE FROM live_totals"
    "$SUMMARY" "$c" >"$work/lscan.sum" 2>&1
    if grep -q 'live sites' "$work/t.sum" && cmp -s "$work/t.sum" "$work/lscan.sum"; then
        pass "$db: live sites from live_totals = live sites from the block rows"
    else
        fail "$db: live sites from live_totals differ from the block rows': $(diff "$work/lscan.sum" "$work/t.sum" | head -6 | tr '\n' ' ')"
    fi
    rm -f "$c"* && cp "$db" "$c" && q "$c" "UPDATE live_totals SET blocks = blocks + 1"
    "$SUMMARY" "$c" >"$work/lstale.sum" 2>&1
    if cmp -s "$work/lstale.sum" "$work/lscan.sum"; then
        pass "$db: live_totals not covering the live rows: the summary scans them"
    else
        fail "$db: stale live_totals used: $(diff "$work/lscan.sum" "$work/lstale.sum" | head -4 | tr '\n' ' ')"
    fi
    rm -f "$c"* && cp "$db" "$c" && q "$c" "UPDATE live_totals SET bytes = bytes + 1073741824"
    "$SUMMARY" "$c" >"$work/lread.sum" 2>&1
    if grep -q 'live sites.*GiB' "$work/lread.sum"; then
        pass "$db: the summary reads live_totals"
    else
        fail "$db: the summary ignores live_totals: $(grep -A3 'live sites' "$work/lread.sum" | tr '\n' ' ')"
    fi
    rm -f "$c"*
}

# counts DB SUMMARY_FILE [EXPECTED "allocs frees reallocs failed orphans"]
counts() {
    local db=$1 sum=$2 want=${3:-}
    local s j t h sql paths
    s=$(sed -n 's/^ *operations *\([0-9]*\) allocs, \([0-9]*\) frees, \([0-9]*\) reallocs, \([0-9]*\) failed, \([0-9]*\) frees of unknown blocks$/\1 \2 \3 \4 \5/p' "$sum")
    "$HL" report --json "$db" >"$work/r.json" 2>/dev/null
    j=$(python3 - "$work/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["run"]
per = {"alloc": 0, "free": 0, "realloc": 0}
for p in d["paths"]:
    per[p["op"]] += p["count"]
# The path tables count the same calls: alloc = allocs, realloc = reallocs, free = both frees.
assert per["alloc"] == r["allocs"] and per["realloc"] == r["reallocs"], (per, r)
assert per["free"] == r["frees"] + r["orphan_frees"], (per, r)
print(r["allocs"], r["frees"], r["reallocs"], r["failed"], r["orphan_frees"])
PY
)
    t=$("$HL" report "$db" 2>/dev/null | sed -n 's/^ *operations *\([0-9]*\) allocs, \([0-9]*\) frees, \([0-9]*\) reallocs, \([0-9]*\) failed, \([0-9]*\) frees of unknown blocks$/\1 \2 \3 \4 \5/p')
    "$HL" report "$db" --html "$work/r.html" 2>/dev/null
    h=$(sed -n 's/.*>\([0-9]*\) allocs, \([0-9]*\) frees, \([0-9]*\) reallocs, \([0-9]*\) failed, \([0-9]*\) frees of unknown blocks<.*/\1 \2 \3 \4 \5/p' "$work/r.html")
    sql=$(q "$db" "SELECT (SELECT count(*) FROM block WHERE flags & 2 = 0) || ' ' ||
        (SELECT count(*) FROM block WHERE free_seq IS NOT NULL AND flags & 12 = 0) || ' ' ||
        ((SELECT count(*) FROM block WHERE flags & 2) +
         (SELECT count(*) FROM block WHERE flags & 4 AND free_cycles IS NOT NULL)) || ' ' ||
        (SELECT count(*) FROM block WHERE flags & 1) || ' ' ||
        (SELECT count(*) FROM orphan_free o WHERE o.cycles IS NOT NULL
                OR (SELECT op FROM path WHERE id = o.path) IS NOT 'realloc')")
    paths=$(q "$db" "SELECT (SELECT total(count) FROM path_cycles WHERE op = 'alloc') || ' ' ||
        (SELECT total(count) FROM path_cycles WHERE op = 'free') || ' ' ||
        (SELECT total(count) FROM path_cycles WHERE op = 'realloc')" | sed 's/\.0//g')
    read -r a f r x o <<<"$sql"
    check "$db: summary = SQL" "$sql" "$s"
    check "$db: JSON report = SQL" "$sql" "$j"
    check "$db: text report = SQL" "$sql" "$t"
    check "$db: HTML report = SQL" "$sql" "$h"
    check "$db: path_cycles view = SQL (alloc, free + orphan, realloc)" "$a $((f + o)) $r" "$paths"
    [ -z "$want" ] || check "$db: the program's own counts" "$want" "$sql"
    totals "$db"
}

# (1) A real recording. Every operation of the program is its own (nothing else allocates
# in it once main runs), so its counts are known exactly.
if "$HL" record -f -o "$work/prog.db" -- "$PROG" >/dev/null 2>"$work/prog.sum"; then
    counts "$work/prog.db" "$work/prog.sum" "11 6 5 2 0"
else
    fail "record $PROG: $(tail -2 "$work/prog.sum")"
fi

# (2) ingest_gen basic: 12 allocs (one failed), 9 frees, 3 reallocs, and 2 frees of unknown
# blocks (a free and a realloc(p, 0)); its fake "-ust" thread is filtered.
ensure_sessiond
cp "$GEN" "$work/$TAG"
if record_trace "$work/gen" "$work/$TAG" basic && "$HL" collect "$work/gen" -o "$work/gen.db" -q; then
    "$SUMMARY" "$work/gen.db" >"$work/gen.sum"
    counts "$work/gen.db" "$work/gen.sum" "12 9 3 1 2"
else
    fail "recording ingest_gen basic"
fi

echo "ingest counts: $fails failed"
[ "$fails" -eq 0 ]
