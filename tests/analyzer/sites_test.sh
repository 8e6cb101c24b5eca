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

echo "analyzer sites: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
