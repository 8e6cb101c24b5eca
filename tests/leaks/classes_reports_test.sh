#!/usr/bin/env bash
# tests/leaks/classes_reports_test.sh — the leak scan's classes outside `report`: record's
# end-of-run summary, `heapledger diff` (totals and per site, text and JSON) and the fleet view
# `report --summary DIR` (text, JSON, HTML), on real recordings of tests/leaks/leak_list.c,
# whose answer is known (N reachable, 1 definitely lost, N/10 - 1 indirectly lost; memcheck
# agrees, leaks_test.sh t_lost_list): two scanned runs (N = 2000 and 4000), one recorded with
# leaks=0 and one hardened (no scan), so that "not scanned" is said where it applies.
#
# usage: BUILD=build tests/leaks/classes_reports_test.sh
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=$ROOT/$BUILD/bin/heapledger
LIST=$ROOT/$BUILD/tests/leaks/leak_list
WORK=$(mktemp -d /tmp/leaks-classes-test.XXXXXX)
pass=0 fail=0
failed=()

cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT

. "$ROOT/tests/checks.sh"
CONTAINS_LINES=40
lacks() { # lacks FILE TEXT
    ! grep -qF -- "$2" "$1" && return 0
    note "FAIL: '$2' in $1"
    return 1
}
rec() { # rec NAME [record options] -- N
    local name=$1
    shift
    "$HL" record -o "$WORK/$name.db" "$@" >"$WORK/$name.out" 2>&1 && return 0
    note "FAIL: record $name: $(tail -5 "$WORK/$name.out")"
    return 1
}

t_record() {
    rec a -- "$LIST" 2000 && rec b -- "$LIST" 4000 && rec off --options leaks=0 -- "$LIST" 2000 &&
        rec hard --options harden=1 -- "$LIST" 2000
}

# record's summary: leaked = definitely + indirectly lost, each class, the lost sites; a run
# without a scan has neither (leaks=0) or says why (hardened).
t_summary() {
    contains "$WORK/b.out" "  live at exit 4400 blocks, 137.5 KiB" &&
        contains "$WORK/b.out" "  leaked       400 blocks, 12.5 KiB (definitely + indirectly lost, reachability scan)" &&
        contains "$WORK/b.out" "  leak classes 1 blocks (32 B) definitely lost, 399 blocks (12.5 KiB) indirectly lost, 4000 blocks (125.0 KiB) still reachable" &&
        contains "$WORK/b.out" "  lost sites          400 blocks   12.5 KiB  at main (tests/leaks/leak_list.c:24)" &&
        lacks "$WORK/off.out" "leak classes" && lacks "$WORK/off.out" "leak scan" &&
        contains "$WORK/hard.out" "  leak scan    not classified: hardened mode is not scanned" &&
        lacks "$WORK/hard.out" "leak classes"
}

# diff of two scanned runs: the classes' totals side by side, and per site definitely and
# indirectly lost with their deltas (the lost list's site: +200 blocks, +6400 bytes).
t_diff_scanned() {
    "$HL" diff "$WORK/a.db" "$WORK/b.db" --sort leaks --top 2 >"$WORK/d.txt" 2>&1 ||
        { note "diff failed: $(cat "$WORK/d.txt")"; return 1; }
    grep -qE "^  indirectly lost blocks +199 +399 \(\+100\.5%\)$" "$WORK/d.txt" &&
        grep -qE "^  definitely lost \(B\) +32 +32 \(\+0\.0%\)$" "$WORK/d.txt" &&
        grep -qE "^  still reachable \(B\) +64000 +128000 \(\+100\.0%\)$" "$WORK/d.txt" &&
        contains "$WORK/d.txt" "per site: leaked = live at the end; definitely and indirectly lost (bytes): the reachability scan at exit of every run" &&
        grep -A9 "^  main+0x[0-9a-f]* (tests/leaks/leak_list.c:24)" "$WORK/d.txt" |
        grep -qE "^    indirectly lost +6368 +12768 \(\+6400\)$" &&
        lacks "$WORK/d.txt" "not scanned" ||
        { note "FAIL: diff text:"; sed 's/^/      | /' "$WORK/d.txt"; return 1; }
    "$HL" diff --json "$WORK/a.db" "$WORK/b.db" >"$WORK/d.json" 2>&1 || { note "diff --json failed"; return 1; }
    check "diff json" "[] 399 32 6400 200 0" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
def keys(d, s, where): # the required keys of schemas/diff.schema.json, recursively
    for k in s.get("required", []):
        assert k in d, f"{where}: missing {k}"
    for k, sub in s.get("properties", {}).items():
        if k in d and isinstance(d[k], dict) and sub.get("type") == "object":
            keys(d[k], sub, f"{where}.{k}")
        if k in d and isinstance(d[k], list) and "items" in sub:
            for i, item in enumerate(d[k]):
                keys(item, sub["items"], f"{where}.{k}[{i}]")
keys(d, schema, "$")
s = [r for r in d["sites"]["rows"] if "leak_list.c:24" in r["site"]][0]
a, b = s["runs"]
kept = [r for r in d["sites"]["rows"] if "leak_list.c:18" in r["site"]][0]["runs"][1]
print(d["sites"]["not_scanned"], d["runs"][1]["leak_classes"]["indirectly_lost_blocks"],
      b["definitely_lost_bytes"], b["classes_delta"]["indirectly_lost_bytes"],
      b["classes_delta"]["indirectly_lost_blocks"], kept["indirectly_lost_bytes"])' \
        "$WORK/d.json" "$ROOT/schemas/diff.schema.json")"
}

# diff against runs without a scan: which run was not scanned, and why; no class rows.
t_diff_unscanned() {
    "$HL" diff "$WORK/a.db" "$WORK/off.db" "$WORK/hard.db" >"$WORK/u.txt" 2>&1 ||
        { note "diff failed: $(cat "$WORK/u.txt")"; return 1; }
    grep -qE "^  leak classes +scanned +not scanned +not scanned$" "$WORK/u.txt" &&
        contains "$WORK/u.txt" "  leaks B: not classified: no reachability scan at exit (recorded with leaks=0, or a database from before the scan); leaked = live at the end" &&
        contains "$WORK/u.txt" "  leaks C: not classified: hardened mode is not scanned; leaked = live at the end" &&
        contains "$WORK/u.txt" "per site: leaked = live at the end; no leak classes: B C not scanned at exit" &&
        lacks "$WORK/u.txt" "indirectly lost" ||
        { note "FAIL: diff text:"; sed 's/^/      | /' "$WORK/u.txt"; return 1; }
    "$HL" diff --json "$WORK/a.db" "$WORK/off.db" >"$WORK/u.json" 2>&1 || { note "diff --json failed"; return 1; }
    check "diff json" "['B'] None None None not scanned complete" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = d["sites"]["rows"][0]["runs"][1]
print(d["sites"]["not_scanned"], d["runs"][1]["leak_classes"], b["definitely_lost_bytes"],
      b["classes_delta"], d["runs"][1]["leak_scan"], d["runs"][0]["leak_scan"])' "$WORK/u.json")"
}

# The fleet view: leaked = definitely + indirectly lost when scanned ("-" otherwise, with the
# reason when the scan said it), live at exit apart; JSON and HTML alike.
t_fleet() {
    mkdir -p "$WORK/fleet"
    cp "$WORK/b.db" "$WORK/off.db" "$WORK/hard.db" "$WORK/fleet/"
    "$HL" report --summary "$WORK/fleet" >"$WORK/f.txt" 2>&1 || { note "summary failed: $(cat "$WORK/f.txt")"; return 1; }
    grep -qE "^[^ ]+ +b +leak_list 4000 +complete .* 12\.5 KiB +137\.5 KiB +0  " "$WORK/f.txt" &&
        grep -qE "^[^ ]+ +off +leak_list 2000 +complete .* - +68\.8 KiB +0  " "$WORK/f.txt" &&
        grep -qE "^[^ ]+ +hard +leak_list 2000 .* - +68\.8 KiB +0  " "$WORK/f.txt" &&
        contains "$WORK/f.txt" "   leak scan: not classified: hardened mode is not scanned" &&
        contains "$WORK/f.txt" "leaked: definitely + indirectly lost (reachability scan at exit), - when the run was not scanned" ||
        { note "FAIL: summary text:"; sed 's/^/      | /' "$WORK/f.txt"; return 1; }
    "$HL" report --summary "$WORK/fleet" --json >"$WORK/f.json" 2>&1 || { note "summary --json failed"; return 1; }
    check "summary json" "400|12800|leak scan|140800|399|32 2200|70400|live at exit|None 2200|live at exit|not classified: hardened mode is not scanned" "$(python3 -c '
import json, sys
s = {r["session"]: r for r in json.load(open(sys.argv[1]))["runs"]}
b, off, hard = s["b"], s["off"], s["hard"]
print("|".join(map(str, [b["leaked_blocks"], b["leaked_bytes"], b["leaked_from"], b["live_at_exit_bytes"],
      b["leak_classes"]["indirectly_lost_blocks"], b["leak_classes"]["definitely_lost_bytes"]])),
      "|".join(map(str, [off["leaked_blocks"], off["leaked_bytes"], off["leaked_from"], off["leak_classes"]])),
      "|".join(map(str, [hard["leaked_blocks"], hard["leaked_from"], hard["leak_scan"]])))' "$WORK/f.json")" || return 1
    "$HL" report --summary "$WORK/fleet" --html "$WORK/f.html" >/dev/null 2>&1 || { note "summary --html failed"; return 1; }
    contains "$WORK/f.html" '<th>live at exit</th>' &&
        contains "$WORK/f.html" 'title="definitely lost 32 B in 1 blocks, indirectly lost 12768 B in 399 blocks">12.5 KiB</td><td class="n">137.5 KiB</td>' &&
        contains "$WORK/f.html" 'title="not classified: hardened mode is not scanned">-</td><td class="n">68.8 KiB</td>' &&
        contains "$WORK/f.html" 'title="no reachability scan at exit">-</td>'
}

echo "leaks: classes in record's summary, diff and the fleet view ($LIST)"
run t_record
run t_summary
run t_diff_scanned
run t_diff_unscanned
run t_fleet
echo "leaks classes: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
