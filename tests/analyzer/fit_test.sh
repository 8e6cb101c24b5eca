#!/usr/bin/env bash
# tests/analyzer/fit_test.sh HEAPLEDGER FITPROG DIR — replay's embedded answers on a real
# recording: `heapledger record` runs tests/analyzer/fitprog (40 records of 1000 B, every
# other freed, then 24 buffers of 4000 B from grow_buffers()), then
#   replay --arena 64K   the failing request (size, stack with file:line), free bytes, the
#                        largest free block, the arena map;
#   replay --fit         the smallest arena to 1 KiB: fits at the size, fails 1 KiB below;
#   replay --matrix      the four configurations' table;   replay --html   one page.
set -u
hl=$1
prog=$2
dir=$3/fit
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

db=$dir/fit.db
if ! "$hl" record -f -o "$db" -- "$prog" >"$dir/prog.out" 2>"$dir/record.err"; then
    ko "record ($(tail -3 "$dir/record.err"))"
    echo "analyzer fit: $pass passed, $fail failed"
    exit 1
fi
ok "record"
line=$(grep -n "FITPROG-BUFFER" "$here/fitprog.c" | cut -d: -f1)

# 64 KiB: the 7th buffer fails; 20 records and 6 buffers live, the holes are 1008-byte blocks
# (1000 B + the 8-byte block word, rounded to 16), the tail a 1072-byte one.
"$hl" replay "$db" --arena 64K >"$dir/small.txt" 2>&1
grep -q "first failure: block [0-9]* (seq [0-9]*, [0-9.]* s), 4000 bytes requested with 44000 bytes live (utilisation 67.14%); free 21232 bytes, largest free block 1064$" \
    "$dir/small.txt" && ok "64K: request, live, free, largest free block" ||
    ko "64K: request, live, free, largest free block ($(grep 'first failure' "$dir/small.txt"))"
grep -q "^  failing request: 4000 bytes (block [0-9]*), allocated at:$" "$dir/small.txt" &&
    grep -A1 "failing request" "$dir/small.txt" | grep -q "#0 grow_buffers+0x[0-9a-f]* (.*fitprog.c:$line)$" &&
    grep -A2 "failing request" "$dir/small.txt" | grep -q "#1 main+0x[0-9a-f]* (.*fitprog.c:[0-9]*)$" &&
    ok "64K: the failing request's stack (fitprog.c:$line)" ||
    ko "64K: the failing request's stack ($(grep -A3 'failing request' "$dir/small.txt"))"
# The map: 20 holes of 1008 B between the records, one free tail of 1072 B.
grep -q "^  arena map (65536 bytes): 22 used runs, 21 free runs holding 21232 bytes, largest free run 1072 bytes$" \
    "$dir/small.txt" && grep -q "^           0 |1\.\.\.9###\.\.\.1###8\.\.\.1###" "$dir/small.txt" &&
    ok "64K: arena map" || ko "64K: arena map ($(grep -A3 'arena map' "$dir/small.txt"))"

# The same in JSON: the stack's frames and the map's counts.
"$hl" replay "$db" --arena 64K --json >"$dir/small.json" 2>/dev/null
python3 - "$dir/small.json" "$line" <<'PY' && ok "64K: json frames and arena map" || ko "64K: json frames and arena map"
import json, sys
f = json.load(open(sys.argv[1]))["replay"]["first_failure"]
assert f["size"] == 4000 and f["free_bytes"] == 21232 and f["largest_free"] == 1064, f
assert f["frames"][0].startswith("grow_buffers+") and f["frames"][0].endswith("fitprog.c:%s)" % sys.argv[2]), f["frames"]
m = f["arena_map"]
assert m == {"size": 65536, "used_runs": 22, "free_runs": 21, "free_bytes": 21232, "largest_free_run": 1072}, m
PY

# --fit: the reported size fits, one granule less does not.
"$hl" replay "$db" --fit >"$dir/fit.txt" 2>&1 || ko "fit ran ($(cat "$dir/fit.txt"))"
size=$(awk '/^ *[0-9]+ +[0-9.]+ +[0-9]+ +[0-9]+ +\(defaults\)$/ {print $1}' "$dir/fit.txt")
if [ -n "$size" ] && grep -q "granularity 1024 bytes" "$dir/fit.txt"; then
    "$hl" replay "$db" --arena "$size" >"$dir/at.txt" 2>&1
    "$hl" replay "$db" --arena "$((size - 1024))" >"$dir/below.txt" 2>&1
    grep -q "no allocation failed that succeeded in the recording" "$dir/at.txt" &&
        grep -q "first failure" "$dir/below.txt" && [ "$size" -ge 116000 ] &&
        ok "fit: $size bytes fit, $((size - 1024)) do not" ||
        ko "fit bounds at $size ($(grep -c 'first failure' "$dir/at.txt") / $(grep -c 'first failure' "$dir/below.txt"))"
else
    ko "fit output ($(cat "$dir/fit.txt"))"
fi
# Several configurations: a ';' list and a repeated --options; each row's bounds hold.
"$hl" replay "$db" --fit --fit-step 4K --options "tiny=0;rotate=1" --options "harden=1" \
    >"$dir/fits.txt" 2>&1
rows=$(grep -cE "^ *[0-9]+ +[0-9.]+ +[0-9]+ +116000 " "$dir/fits.txt")
good=1
while read -r s opt; do
    [ "$("$hl" replay "$db" --options "$opt" --arena "$s" | grep -c 'first failure')" = 0 ] || good=0
    [ "$("$hl" replay "$db" --options "$opt" --arena "$((s - 4096))" | grep -c 'first failure')" = 1 ] || good=0
done < <(awk '/^ *[0-9]+ +[0-9.]+ +[0-9]+ +116000 / {print $1, $5}' "$dir/fits.txt")
[ "$rows" = 3 ] && [ "$good" = 1 ] && grep -q "granularity 4096 bytes" "$dir/fits.txt" &&
    ok "fit: three configurations, 4K granularity, bounds hold" ||
    ko "fit: three configurations ($rows rows, bounds $good)"
# An empty configuration is the recording's options: kept in a repeated --options and in a
# ';' list (the baseline next to a hardened row), with the same fit as --fit alone.
"$hl" replay "$db" --fit --fit-step 4K >"$dir/fit0.txt" 2>&1
"$hl" replay "$db" --fit --fit-step 4K --options "" --options "harden=1" >"$dir/fite.txt" 2>&1
"$hl" replay "$db" --fit --fit-step 4K --options ";harden=1" >"$dir/fitl.txt" 2>&1
base=$(awk '/^ *[0-9]+ +[0-9.]+ +[0-9]+ +116000 / {print $1; exit}' "$dir/fit0.txt")
nrows() { grep -cE "^ *[0-9]+ +[0-9.]+ +[0-9]+ +116000 " "$1"; }
first() { awk '/^ *[0-9]+ +[0-9.]+ +[0-9]+ +116000 / {print $1; exit}' "$1"; }
[ -n "$base" ] && [ "$(nrows "$dir/fite.txt")" = 2 ] && [ "$(nrows "$dir/fitl.txt")" = 2 ] &&
    [ "$(first "$dir/fite.txt")" = "$base" ] && [ "$(first "$dir/fitl.txt")" = "$base" ] &&
    ok "fit: an empty configuration is the recording's ($base bytes), two rows" ||
    ko "fit: empty configuration ($(nrows "$dir/fite.txt") / $(nrows "$dir/fitl.txt") rows, first $(first "$dir/fite.txt") against $base)"

# --matrix: the four configurations; the baseline's utilisation at the failure is replay's.
# Hardening keeps its records outside a fixed arena (1000 and 4000 B requests have rounding
# slack for the canary): the hardened rows reach the baseline's 67.14% too.
"$hl" replay "$db" --matrix --arena 64K --repeat 1 >"$dir/matrix.txt" 2>&1
if grep -qE "^  baseline +no +67\.14% +67\.14% .* = +[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$" "$dir/matrix.txt" &&
    grep -qE "^  harden=1 +no +67\.14% +67\.14% " "$dir/matrix.txt" &&
    grep -qE "^  rotate=1 +no +67\.14% " "$dir/matrix.txt" &&
    grep -qE "^  rotate=1,harden=1 +no +67\.14% " "$dir/matrix.txt"; then
    ok "matrix: four rows, each at the baseline's 67.14%"
else
    ko "matrix ($(cat "$dir/matrix.txt"))"
fi

# --html: one self-contained page with the stack and the map.
"$hl" replay "$db" --arena 64K --html "$dir/replay.html" >/dev/null 2>&1
"$hl" replay "$db" --matrix --fit --arena 64K --repeat 1 --html "$dir/all.html" >/dev/null 2>&1
if grep -q "<svg class=\"arenamap\"" "$dir/replay.html" && grep -q "grow_buffers" "$dir/replay.html" &&
    grep -q "fitprog.c:$line" "$dir/replay.html" && grep -q "Configuration matrix" "$dir/all.html" &&
    grep -q "Smallest arena that fits" "$dir/all.html" && grep -q "<svg" "$dir/all.html" &&
    ! grep -qiE "https?:|<script|<link|src=" "$dir/replay.html" "$dir/all.html"; then
    ok "html: map, stack, fit and matrix, nothing fetched"
else
    ko "html"
fi

# Bad input says what to do.
"$hl" replay "$db" --matrix >"$dir/e1.txt" 2>&1
[ $? -eq 2 ] && grep -q "needs --arena SIZE" "$dir/e1.txt" && ok "matrix without --arena" || ko "matrix without --arena"
"$hl" replay "$db" --fit --fit-step 100 >"$dir/e2.txt" 2>&1
[ $? -eq 2 ] && grep -q "bad --fit-step '100' (a multiple of 16" "$dir/e2.txt" && ok "bad --fit-step" || ko "bad --fit-step"
"$hl" replay "$db" --fit --options "bogus=1" >"$dir/e3.txt" 2>&1
[ $? -eq 1 ] && grep -q "bad options 'bogus=1'" "$dir/e3.txt" && ok "fit with bad options" || ko "fit with bad options"
"$hl" replay "$db" --arena 64K --html /nonexistent/dir/x.html >"$dir/e4.txt" 2>&1
[ $? -eq 1 ] && grep -q "cannot write '/nonexistent/dir/x.html'" "$dir/e4.txt" && ok "html to a bad path" || ko "html to a bad path"

echo "analyzer fit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
