#!/usr/bin/env bash
# tests/analyzer/e2e_test.sh HEAPLEDGER LEAKY DIR — the analyzer on a real recording:
# `heapledger record` runs tests/analyzer/leaky (known leaks, temporaries, a realloc chain)
# under LTTng, then report/history/replay/diff read the database it wrote.
set -u
hl=$1
leaky=$2
dir=$3/e2e
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

db=$dir/leaky.db
if ! "$hl" record -f -o "$db" -- "$leaky" >"$dir/leaky.out" 2>"$dir/record.err"; then
    ko "record ($(tail -3 "$dir/record.err"))"
    echo "analyzer e2e: $pass passed, $fail failed"
    exit 1
fi
ok "record"
addr=$(head -1 "$dir/leaky.out")

"$hl" report --json "$db" >"$dir/report.json" 2>"$dir/report.err" && ok "report --json" || ko "report --json"
if python3 - "$dir/report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# leak_here() leaked 3 blocks of 100 bytes from one stack.
st = [s for s in d["leaks"]["by_stack"] if any("leak_here" in f for f in s["frames"])]
assert st and st[0]["blocks"] == 3 and st[0]["bytes"] == 300, st
assert any(x["size"] == 100 and x["blocks"] >= 3 for x in d["leaks"]["by_size"])
# temp_here()'s blocks were freed before the thread allocated again.
t = [s for s in d["sites"]["by_count"] + d["sites"]["by_bytes"] if any("temp_here" in f for f in s["frames"])]
assert t and t[0]["count"] == 5 and t[0]["temporary"] == 5, t
assert 0 < d["utilisation"]["peak"] <= 1
ops = {(p["op"], p["path"]) for p in d["paths"]}
assert any(op == "alloc" for op, _ in ops) and any(op == "free" for op, _ in ops)
for p in d["paths"]:
    if p["timed"]:
        c = p["cycles"]
        assert c["p01"] <= c["p25"] <= c["p50"] <= c["p75"] <= c["p99"], p
PY
then ok "leaks, temporaries, paths of the real run"; else ko "leaks, temporaries, paths of the real run"; fi

"$hl" report "$db" >"$dir/report.txt" 2>&1 && grep -q "leak_here" "$dir/report.txt" && ok "text report names leak_here" || ko "text report names leak_here"
# The database the recorder wrote is read straight from the file, and gives the report
# SQLite's reading gives.
HEAPLEDGER_STATS=1 "$hl" report --json "$db" 2>"$dir/stats.err" >"$dir/direct.json"
HEAPLEDGER_READER=sqlite "$hl" report --json "$db" >"$dir/sqlite.json" 2>/dev/null
grep -q "block reader: database file" "$dir/stats.err" && cmp -s "$dir/direct.json" "$dir/sqlite.json" &&
    ok "recorded database read directly, same report as through SQLite" ||
    ko "recorded database read directly ($(grep 'block reader' "$dir/stats.err"))"
"$hl" report "$db" --html "$dir/report.html" 2>/dev/null && grep -q "leak_here" "$dir/report.html" && ok "html report" || ko "html report"

"$hl" history "$db" "$addr" >"$dir/history.txt" 2>&1
grep -q "live at the end of the recording" "$dir/history.txt" && grep -q "leak_here" "$dir/history.txt" &&
    ok "history of a leaked address" || ko "history of a leaked address ($addr)"

# Same options: the same blocks stay live with the same requested bytes. (Usable sizes and
# offsets may differ: the recorded heap also served allocations made before tracing began.)
"$hl" replay --json "$db" >"$dir/replay.json" 2>"$dir/replay.err"
python3 - "$dir/replay.json" <<'PY' && ok "replay keeps the live set" || ko "replay keeps the live set"
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
assert r["failures"] == 0, r
assert r["recorded_blocks"] == r["replayed_blocks"], r
assert r["recorded_requested"] == r["replayed_requested"], r
PY
"$hl" replay "$db" --arena 64K >"$dir/replay-small.txt" 2>&1 && grep -q "first failure" "$dir/replay-small.txt" &&
    ok "replay in a 64K arena finds the first failure" || ko "replay in a 64K arena"
"$hl" diff "$db" "$db" >"$dir/diff.txt" 2>&1 && grep -q "+0.00 pts" "$dir/diff.txt" && ok "diff" || ko "diff"

# A program whose path holds terminal escapes (and no debug info, so that record's summary
# names the module: its path): nothing of them reaches the terminal raw, the JSON is valid.
evil=$dir/$'evil\e]0;owned\a\e[31m\xff'
cp "$leaky" "$evil" && strip -g "$evil"
evdb=$dir/evil.db
if "$hl" record -f -o "$evdb" -- "$evil" >/dev/null 2>"$dir/evil-record.err"; then
    "$hl" report "$evdb" >"$dir/evil-report.txt" 2>&1
    "$hl" report --json "$evdb" >"$dir/evil-report.json" 2>&1
    # The summary's lines (what follows the recorder's own "exited with status" line).
    sed -n '/events in/,$p' "$dir/evil-record.err" >"$dir/evil-summary.txt"
    if python3 "$(dirname "$0")/hostile_check.py" text:"$dir/evil-summary.txt" \
        text:"$dir/evil-report.txt" json:"$dir/evil-report.json" &&
        grep -qF 'evil\x1b]0;owned\x07\x1b[31m\xff' "$dir/evil-summary.txt" &&
        grep -qF 'evil\x1b]0;owned\x07\x1b[31m\xff' "$dir/evil-report.txt"; then
        ok "escapes in a program's path are printed escaped (record summary, report, JSON)"
    else
        ko "escapes in a program's path reach the output raw"
    fi
else
    ko "record of a program with escapes in its path ($(tail -3 "$dir/evil-record.err"))"
fi

echo "analyzer e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
