#!/usr/bin/env bash
# tests/ingest/symbols_test.sh HEAPLEDGER CXX_PROG SRC DIR SYMCHECK — symbolisation at
# ingest: `heapledger record` of a C++ program (tests/ingest/cxx_prog.cc). Its frames carry
# demangled names (no "_Z…" left), the report names sites past operator new, each distinct
# address was looked up once (HEAPLEDGER_STATS=1 prints the lookups), and every function
# name is the one libdw's dwfl_module_addrinfo gives (SYMCHECK, tests/ingest/symcheck.c).
set -u
hl=$1
prog=$2
src=$3
dir=$4/symbols
symcheck=$5
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "  ok   $1"; }
ko() { fail=$((fail + 1)); echo "  FAIL $1"; }
echo "ingest: symbols"

db=$dir/cxx.db
if ! HEAPLEDGER_STATS=1 "$hl" record -f -o "$db" -- "$prog" >"$dir/record.out" 2>"$dir/record.err"; then
    ko "record ($(tail -3 "$dir/record.err"))"
    exit 1
fi
q() { sqlite3 "$db" "$1"; }
line=$(grep -n HLT_MAKE "$src" | cut -d: -f1)

got=$(q "SELECT count(*) FROM frame WHERE function = 'hlt::Shape::make(int)' AND depth = 0 AND line = $line")
[ "$got" -ge 1 ] && ok "demangled: hlt::Shape::make(int) at line $line" || ko "no frame 'hlt::Shape::make(int)' at line $line"
got=$(q "SELECT count(*) FROM frame WHERE function LIKE '\_Z%' ESCAPE '\'")
[ "$got" = 0 ] && ok "no mangled names left" || ko "$got frames keep a mangled name"

# Lookups: one per distinct (module, offset) — here one process, so one per distinct ip.
stats=$(grep 'heapledger: symbols:' "$dir/record.err")
looked=$(echo "$stats" | sed -n 's/.* \([0-9]*\) distinct addresses looked up.*/\1/p')
frames=$(echo "$stats" | sed -n 's/.*symbols: \([0-9]*\) frames.*/\1/p')
distinct=$(q "SELECT count(DISTINCT ip) FROM frame WHERE module IS NOT NULL")
nframes=$(q "SELECT count(*) FROM frame WHERE module IS NOT NULL")
[ -n "$looked" ] && [ "$looked" = "$distinct" ] && [ "$frames" = "$nframes" ] &&
    ok "libdw lookups = distinct addresses ($looked for $frames frames)" ||
    ko "lookups '$looked' for $distinct distinct addresses, frames '$frames' of $nframes ($stats)"

"$symcheck" "$db" >"$dir/symcheck.out" 2>&1 && ok "names as libdw gives them ($(cat "$dir/symcheck.out" | tail -1))" ||
    ko "names differ from libdw's: $(head -3 "$dir/symcheck.out")"

"$hl" report --json "$db" >"$dir/report.json" 2>"$dir/report.err"
python3 - "$dir/report.json" <<'PY' && ok "sites are past operator new" || ko "a site is operator new (see $dir/report.json)"
import json, sys
d = json.load(open(sys.argv[1]))
sites = d["sites"]["by_count"]
assert sites, d["sites"]
for s in sites:
    first = next((l["function"] or "" for l in s["locations"]
                  if not (l["function"] or "").startswith(("operator new", "malloc"))), "")
    assert first, s
assert any(s["frames"] and any("hlt::Shape::make(int)" in f for f in s["frames"]) for s in sites)
PY
echo "ingest symbols: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
