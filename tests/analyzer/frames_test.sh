#!/usr/bin/env bash
# tests/analyzer/frames_test.sh HEAPLEDGER PROG SRC DIR — frames a developer can trust:
# `heapledger record` of tests/analyzer/frames_prog (-O2 -g), then every frame must name the
# line of its call (the FRAMES_* markers of SRC), in the frame table, in the text report and
# in the JSON report's "locations" objects; module offsets are module-relative.
set -u
hl=$1
prog=$2
src=$3
dir=$4/frames
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
line_of() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
L_ALLOC=$(line_of FRAMES_ALLOC)
L_CALL=$(line_of FRAMES_CALL)
L_FREE=$(line_of FRAMES_FREE)
L_LEAK=$(line_of FRAMES_LEAK)

db=$dir/frames.db
if ! "$hl" record -f -o "$db" -- "$prog" >"$dir/record.out" 2>"$dir/record.err"; then
    ko "record ($(tail -3 "$dir/record.err"))"
    echo "frames: $pass passed, $fail failed"
    exit 1
fi
ok "record"
q() { sqlite3 "$db" "$1"; }

# The loop's blocks: allocated at frames_alloc's malloc line, called from frames_loop's call
# line, freed at frames_loop's free line (depth 0 is a return address too).
got=$(q "SELECT a0.function || ':' || a0.line || ' ' || a1.function || ':' || a1.line || ' ' ||
                f0.function || ':' || f0.line
         FROM block b JOIN frame a0 ON a0.stack_id = b.alloc_stack AND a0.depth = 0
         JOIN frame a1 ON a1.stack_id = b.alloc_stack AND a1.depth = 1
         JOIN frame f0 ON f0.stack_id = b.free_stack AND f0.depth = 0
         WHERE a1.function = 'frames_loop' GROUP BY 1")
want="frames_alloc:$L_ALLOC frames_loop:$L_CALL frames_loop:$L_FREE"
[ "$got" = "$want" ] && ok "frame table: lines of the calls ($want)" || ko "frame table: got '$got', want '$want'"

# Frames outside any function but inside a module carry the offset from the module's base.
bad=$(q "SELECT count(*) FROM frame f JOIN module m ON m.path = f.module
         WHERE f.function IS NULL AND (f.offset < 0 OR f.offset >= m.memsz)")
[ "$bad" = 0 ] && ok "module offsets are module-relative" || ko "$bad frames with an offset outside their module"

"$hl" report "$db" >"$dir/report.txt" 2>"$dir/report.err"
grep -q "frames_alloc+0x[0-9a-f]* (.*frames_prog.c:$L_ALLOC)" "$dir/report.txt" &&
    grep -q "main+0x[0-9a-f]* (.*frames_prog.c:$L_LEAK)" "$dir/report.txt" &&
    ok "text report: the leak at lines $L_ALLOC and $L_LEAK" || ko "text report lines (see $dir/report.txt)"
# No printed frame shows an absolute address as a module offset (module+0x7f…).
grep -Eq '\.so[.0-9]*\+0x7f[0-9a-f]{10}' "$dir/report.txt" && ko "absolute address printed as a module offset" ||
    ok "no absolute address printed as a module offset"

"$hl" report --json "$db" >"$dir/report.json" 2>>"$dir/report.err"
if python3 - "$dir/report.json" "$L_ALLOC" "$L_LEAK" <<'PY'; then ok "JSON locations"; else ko "JSON locations"; fi
import json, sys
d = json.load(open(sys.argv[1]))
la, ll = int(sys.argv[2]), int(sys.argv[3])
st = [s for s in d["leaks"]["by_stack"] if s["locations"] and s["locations"][0]["function"] == "frames_alloc"]
assert len(st) == 1 and st[0]["blocks"] == 1 and st[0]["bytes"] == 100, st
locs, frames = st[0]["locations"], st[0]["frames"]
assert len(locs) == len(frames)
for l in locs:
    assert set(l) == {"function", "offset", "file", "line", "module"}, l
top, caller = locs[0], locs[1]
assert top["line"] == la and top["file"].endswith("frames_prog.c"), top
assert top["module"].endswith("frames_prog") and isinstance(top["offset"], int), top
assert caller["function"] == "main" and caller["line"] == ll, caller
assert frames[0].startswith("frames_alloc+0x%x " % top["offset"]), frames[0]
PY

echo "frames: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
