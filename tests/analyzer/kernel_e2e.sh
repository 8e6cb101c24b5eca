#!/usr/bin/env bash
# tests/analyzer/kernel_e2e.sh HEAPLEDGER KTOUCH DIR — the analyzer's kernel view on a real
# `heapledger record --kernel` of tests/analyzer/ktouch (a 4 MiB block with exactly 100 pages
# written, a 16 MiB block never written): faulting pages per path and tier, memory held but
# never touched (checked against the kernel_region_touch view), RSS next to R/U/H, diff.
# Skips (status 0) with the recorder's message when kernel events are unavailable here.
set -u
hl=$1
ktouch=$2
dir=$3/kernel-e2e
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

db=$dir/ktouch.db
if ! "$hl" record -f --kernel -o "$db" -- "$ktouch" >"$dir/ktouch.out" 2>"$dir/record.err"; then
    ko "record --kernel ($(tail -3 "$dir/record.err"))"
    echo "analyzer kernel e2e: $pass passed, $fail failed"
    exit 1
fi
if grep -q "recording without kernel events" "$dir/record.err"; then
    echo "SKIP analyzer kernel e2e: $(grep -- '--kernel' "$dir/record.err" | head -1)"
    exit 0
fi
ok "record --kernel"
touched=$(awk '{print $1}' "$dir/ktouch.out")
# The recording session may also see other traced programs of the machine: ktouch's pid only.
pid=$(sed -n "s/.*ran .* (pid \([0-9]*\)).*/\1/p" "$dir/record.err" | head -1)
[ -n "$pid" ] && ok "ktouch's pid $pid" || ko "no pid in the recorder's output"

"$hl" report --pid "$pid" --json "$db" >"$dir/report.json" 2>"$dir/report.err" && ok "report --json" ||
    ko "report --json ($(head -3 "$dir/report.err"))"
if python3 - "$dir/report.json" "$db" "$touched" "$pid" <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
touched = int(sys.argv[3], 16)
pid = int(sys.argv[4])
k = d["kernel"]
assert k is not None, "no kernel section"
# The touched block's path and tier as the database has them.
path, tier = db.execute(
    "SELECT coalesce(p.name, 'none'), b.tier FROM block b LEFT JOIN path p ON p.id = b.alloc_path "
    "WHERE b.ptr = ? AND b.pid = ?", (touched, pid)).fetchone()
by_path = {x["path"]: x for x in k["faults"]["by_path"]}
assert path in by_path, (path, by_path)
pages = by_path[path]["pages"]
# 100 pages written (page 0 holds the allocator's header too), plus the idle block's header
# page when it shares the path.
if path == "large_mmap":
    assert pages == 101, pages
    assert by_path[path]["runs"] >= 2, by_path[path]
else:
    assert pages >= 100, pages
if tier == 3:
    t = {x["tier"]: x for x in k["faults"]["by_tier"]}
    assert t["large"]["pages"] == 101, t
assert k["faults"]["pages_in_blocks"] >= 100
# Held but never touched: the large mappings less the 101 pages faulted in them, and the same
# as the kernel_region_touch view.
large = [x for x in k["never_touched"]["by_purpose"] if x["purpose"] == "large"]
assert large, k["never_touched"]
large = large[0]
assert large["mappings"] == 2, large
assert large["touched"] == 101 * 4096, large
assert large["never_touched"] == large["bytes"] - 101 * 4096, large
assert large["never_touched"] >= 16 << 20, large
view = db.execute("SELECT sum(never_touched_bytes) FROM kernel_region_touch "
                  "WHERE purpose = 'large' AND pid = ?", (pid,)).fetchone()[0]
assert view == large["never_touched"], (view, large)
total = db.execute("SELECT sum(never_touched_bytes) FROM kernel_region_touch WHERE pid = ?",
                   (pid,)).fetchone()[0]
# The view counts only faults after the os_map event; the analyzer also those since the
# kernel mapped the range (a region reported late, a header written first): never more.
assert total >= k["never_touched"]["bytes"], (total, k["never_touched"]["bytes"])
# RSS sampled next to R/U/H.
assert k["rss"]["samples"] > 0 and k["rss"]["peak"] > 0
assert any(s["rss"] for s in d["utilisation"]["timeline"])
assert k["at_peak"]["heap_resident"] >= k["at_peak"]["resident_in_blocks"]
print(f"path {path}: {pages} pages; large never touched {large['never_touched']} B")
PY
then ok "faults per path and never-touched bytes"; else ko "faults per path and never-touched bytes"; fi

"$hl" report --pid "$pid" "$db" >"$dir/report.txt" 2>&1 && grep -q "^kernel: [0-9]* events" "$dir/report.txt" &&
    ok "report text has the kernel section" || ko "report text has the kernel section"
"$hl" report --pid "$pid" --html "$dir/report.html" "$db" >/dev/null 2>&1 &&
    grep -q 'data-chart="faults"' "$dir/report.html" && grep -q "RSS (sampled)" "$dir/report.html" &&
    ok "report --html: RSS series and faults chart" || ko "report --html: RSS series and faults chart"
"$hl" diff --pid "$pid" "$db" "$db" >"$dir/diff.txt" 2>&1 && grep -q "^  faulting pages" "$dir/diff.txt" &&
    ok "diff shows the kernel rows" || ko "diff shows the kernel rows"

echo "analyzer kernel e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
