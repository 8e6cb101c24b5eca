#!/usr/bin/env bash
# tests/analyzer/sites_test.sh HEAPLEDGER SITES_PROG DIR — cycles per call site and path, and
# the slowest operations, on a real recording of sites_prog.c (its slow paths are known).
set -u
hl=$1
prog=$2
dir=$3/sites
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

db=$dir/sites.db
if ! "$hl" record -f -o "$db" -- "$prog" >"$dir/record.out" 2>&1; then
    ko "record ($(tail -3 "$dir/record.out"))"
    echo "analyzer sites: $pass passed, $fail failed"
    exit 1
fi
ok "record"

"$hl" report --json --top 1000 "$db" >"$dir/all.json" && ok "report --json --top 1000" || ko "report --json --top 1000"
if python3 - "$dir/all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["site_cycles"]
def at(fn):
    return [r for r in rows if r["frames"] and any(f.startswith(fn + "+") for f in r["frames"][:2])]
# Each path's rows add up to the per-path table: counts exactly, shares to 1.
for p in d["paths"]:
    rs = [r for r in rows if r["op"] == p["op"] and r["path"] == p["path"]]
    assert sum(r["count"] for r in rs) == p["count"], (p, rs)
    assert sum(r["timed"] for r in rs) == p["timed"], (p, rs)
    if p["timed"] and sum(r["cycles"] for r in rs):
        assert abs(sum(r["share"] for r in rs) - 1) < 1e-9, rs
    cyc = [r["cycles"] for r in rs]
    assert cyc == sorted(cyc, reverse=True), cyc
# new_slabs(): 100 allocations of the 3600-byte class, which nothing else uses: a 64 KiB
# slab holds 18 slots, so 6 of them carved a new slab; every one of them was an alloc.
ns = at("new_slabs")
assert sum(r["count"] for r in ns if r["op"] == "alloc") == 100, ns
slab = [r for r in ns if r["path"] == "tiny_new_slab"]
assert len(slab) == 1 and slab[0]["count"] == 6, slab
assert not [r for r in ns if r["op"] != "alloc"], ns
# big_maps(): the only large_mmap calls, all 3.
lm = [r for r in rows if r["path"] == "large_mmap"]
assert len(lm) == 1 and lm[0]["count"] == 3 and lm[0]["share"] == 1, lm
assert any(f.startswith("big_maps+") for f in lm[0]["frames"]), lm
# grow(): the only caller of realloc: every realloc row is its own, 64 calls in all.
rr = [r for r in rows if r["op"] == "realloc"]
assert rr and all(any(f.startswith("grow+") for f in r["frames"][:2]) for r in rr), rr
assert sum(r["count"] for r in at("grow")) == 64, at("grow")
# free_all(): 104 frees (100 + 3 + the realloc'd block).
assert sum(r["count"] for r in at("free_all") if r["op"] == "free") == 104, at("free_all")
# The slowest operations: the most cycles first, none below any site's p99.
sl = d["slowest"]
assert len(sl) == 100, len(sl)
c = [o["cycles"] for o in sl]
assert c == sorted(c, reverse=True), c
assert all(sl[0]["cycles"] >= r["p99"] for r in rows if r["timed"]), sl[0]
assert all(o["frames"] for o in sl), sl
assert all(o["ns"] is not None and o["ns"] > 0 for o in sl)
PY
then ok "per-site rows add up to the paths; new_slabs pays 6 tiny_new_slab, big_maps all large_mmap, grow all reallocs"
else ko "per-site rows of the known program"; fi

"$hl" report --json --top 2 "$db" >"$dir/top2.json"
python3 -c '
import json, sys, collections
d = json.load(open(sys.argv[1]))
n = collections.Counter((r["op"], r["path"]) for r in d["site_cycles"])
assert max(n.values()) <= 2 and len(d["slowest"]) == 2, (n, d["slowest"])
' "$dir/top2.json" && ok "--top 2: two sites per path, two slowest" || ko "--top 2 limits"

"$hl" report "$db" >"$dir/report.txt"
grep -E "^  alloc +tiny_new_slab +6 .*new_slabs\+" "$dir/report.txt" >/dev/null &&
    grep -A2 "^  1\. " "$dir/report.txt" | grep -q "#0 " &&
    ok "text: the tiny_new_slab row names new_slabs; the slowest operation has its stack" ||
    ko "text per-site rows ($(grep tiny_new_slab "$dir/report.txt"))"
"$hl" report "$db" --html "$dir/report.html" >/dev/null 2>&1
grep -q 'id="site-cycles"' "$dir/report.html" && grep -q 'id="slowest"' "$dir/report.html" &&
    grep -q "new_slabs+" "$dir/report.html" && ok "html: per-site cycles and slowest operations" ||
    ko "html sections"

# diff per site: "more" makes 100 more allocations at new_slabs() and leaks 5 of them.
more=$dir/more.db
"$hl" record -f -o "$more" -- "$prog" more >"$dir/record-more.out" 2>&1 && ok "record more" || ko "record more"
"$hl" diff --json "$db" "$more" >"$dir/diff.json" && ok "diff --json" || ko "diff --json"
if python3 - "$dir/diff.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["heapledger_diff"] == 1 and [r["label"] for r in d["runs"]] == ["A", "B"], d["runs"]
rows = d["sites"]["rows"]
assert d["sites"]["sort"] == "bytes" and len(rows) <= 10
top = rows[0]
assert top["site"].startswith("new_slabs+"), top
a, b = top["runs"]
assert a["count"] == 100 and b["count"] == 200 and a["leaked_blocks"] == 0, top
assert b["delta"] == {"bytes": 350000, "count": 100, "leaked_bytes": 17500, "leaked_blocks": 5,
                      "cycles": b["cycles"] - a["cycles"], "operations": b["operations"] - a["operations"]}, b
big = [r for r in rows if r["site"].startswith("big_maps+")]
assert big and big[0]["runs"][1]["delta"]["bytes"] == 0 and big[0]["runs"][1]["delta"]["count"] == 0, big
ch = [abs(r["runs"][1]["delta"]["bytes"]) for r in rows]
assert ch == sorted(ch, reverse=True), ch
assert isinstance(d["runs"][1]["duration_noise"], bool) and d["runs"][1]["duration_note"]
PY
then ok "diff per site: new_slabs +100 allocations, +350000 bytes, +5 leaked blocks; sorted by |delta bytes|"
else ko "diff per site (json)"; fi
schema=$(cd "$(dirname "$0")/../.." && pwd)/schemas/diff.schema.json
python3 - "$dir/diff.json" "$schema" <<'PY' && ok "diff --json has the keys schemas/diff.schema.json requires" || ko "diff --json schema keys"
import json, sys
d, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def check(d, s, where):
    for k in s.get("required", []):
        assert k in d, f"{where}: missing {k}"
    for k, sub in s.get("properties", {}).items():
        if k in d and isinstance(d[k], dict) and sub.get("type") == "object":
            check(d[k], sub, f"{where}.{k}")
        if k in d and isinstance(d[k], list) and "items" in sub:
            for i, item in enumerate(d[k]):
                check(item, sub["items"], f"{where}.{k}[{i}]")
check(d, s, "$")
PY
"$hl" diff "$db" "$more" --sort leaks --top 1 >"$dir/diff.txt"
grep -A1 "^sites, by the absolute change of leaked bytes against A (1 of" "$dir/diff.txt" | grep -q "^  new_slabs+" &&
    grep -qE "^    leaked blocks +0 +5 \(\+5\)" "$dir/diff.txt" &&
    ok "diff text: --sort leaks --top 1 shows new_slabs, leaked blocks 0 -> 5" || ko "diff text per site"
out=$("$hl" diff "$db" "$more" --sort size 2>&1); rc=$?
[ $rc = 2 ] && grep -q "valid values are bytes, count, leaks, cycles" <<<"$out" && ok "diff --sort size: refused, valid values listed" || ko "diff --sort size ($rc: $out)"
out=$("$hl" diff "$db" "$more" --top 0 2>&1); rc=$?
[ $rc = 2 ] && grep -q "bad --top '0'" <<<"$out" && ok "diff --top 0: refused" || ko "diff --top 0 ($rc: $out)"

# The duration rule on hand-made runs: another host is noise whatever the delta; on the same
# host a delta below 25 % is noise, one of 100 % is shown (with the load caveat).
base=$(dirname "$dir")/basic.db
for v in host long slight; do cp "$base" "$dir/$v.db"; done
sqlite3 "$dir/host.db" "UPDATE run SET host = 'elsewhere', end_ts = start_ts + 2 * (end_ts - start_ts)"
sqlite3 "$dir/long.db" "UPDATE run SET end_ts = start_ts + 2 * (end_ts - start_ts)"
sqlite3 "$dir/slight.db" "UPDATE run SET end_ts = start_ts + (end_ts - start_ts) * 11 / 10"
"$hl" diff "$base" "$dir/host.db" "$dir/long.db" "$dir/slight.db" >"$dir/noise.txt"
dur=$(grep "^  duration (s)" "$dir/noise.txt")
grep -q "(+100.0% noise)  *[0-9.]* (+100.0%)  *[0-9.]* (+10.0% noise)" <<<"$dur" &&
    grep -q "duration B vs A: another host" "$dir/noise.txt" &&
    grep -q "duration C vs A: same host, delta of 25 % or more; the load at record time is not recorded" "$dir/noise.txt" &&
    grep -q "duration D vs A: same host, delta below 25 %" "$dir/noise.txt" &&
    ok "duration noise: other host, +100 % same host, +10 % same host" || ko "duration noise ($dur)"

echo "analyzer sites: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
