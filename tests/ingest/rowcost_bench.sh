#!/usr/bin/env bash
# tests/ingest/rowcost_bench.sh HEAPLEDGER RECORD_BENCH ROWCOST_BENCH [N] — SQLite's
# instructions per block for block_data layouts (docs/PERFORMANCE.md, "SQLite's fixed cost
# per block row"): records `record_bench N` (default 200000: 2 N + 59 events, N + 2 block
# rows), then inserts its block_data rows again under callgrind (load-independent counts), one
# block per row as the store does, through a virtual table, and K = 2, 4, 8 blocks per row.
# Prints the instructions per block and the file's size for each.
set -u
HL=$(realpath "$1"); RB=$(realpath "$2"); RC=$(realpath "$3"); n=${4:-200000}
command -v valgrind >/dev/null || { echo "rowcost_bench: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
work=$(mktemp -d /tmp/hl-rowcost.XXXXXX); trap 'rm -rf "$work"' EXIT
"$HL" record -o "$work/src.db" -- "$RB" "$n" >/dev/null 2>&1 ||
    { echo "rowcost_bench: heapledger record failed" >&2; exit 1; }
printf '%-34s %14s %10s %12s\n' layout instructions per-block file-bytes
base=
for v in "1" "1 256" "vt" "2" "4" "8"; do
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --toggle-collect=rc_insert_all --callgrind-out-file="$work/cg" \
        "$RC" "$work/src.db" "$work/out.db" $v >"$work/out" 2>"$work/err" ||
        { cat "$work/err" >&2; exit 1; }
    ir=$(awk '/^summary:/ {print $2}' "$work/cg")
    blocks=$(awk '/^blocks/ {print $2}' "$work/out")
    per=$(awk -v i="$ir" -v b="$blocks" 'BEGIN {printf "%.0f", i / b}')
    [ -n "$base" ] || base=$per
    case $v in
        1) name="1 block per row, 128 rows/INSERT" ;;
        "1 256") name="1 block per row, 256 rows/INSERT" ;;
        vt) name="1 block per row, virtual table" ;;
        *) name="$v blocks per row, $((128 / v)) rows/INSERT" ;;
    esac
    printf '%-34s %14s %10s %12s  (%+.1f %%)\n' "$name" "$ir" "$per" "$(stat -c %s "$work/out.db")" \
        "$(awk -v p="$per" -v b="$base" 'BEGIN {print (p - b) * 100 / b}')"
done
uptime
