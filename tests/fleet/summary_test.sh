#!/usr/bin/env bash
# tests/fleet/summary_test.sh HEAPLEDGER FLEET_PROG — `heapledger report --summary DIR`, the
# fleet view, on databases this test records: a leaking run, a hardened run that finds a
# double free, an unreadable file; text, JSON and HTML; bad input.
set -u
HL=$(realpath "$1"); PROG=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/fleet-summary-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "fleet: report --summary"
mkdir -p "$work/dir" "$work/empty"
host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)
"$HL" record -o "$work/dir/$host-leaky.db" -- "$PROG" leak 7 >/dev/null 2>&1; check "record leak exit" 0 $?
"$HL" record --options harden=1 -o "$work/dir/$host-hardened.db" -- "$PROG" doublefree >/dev/null 2>&1
check "record doublefree exit (SIGABRT)" 134 $?
echo "not a database" >"$work/dir/broken.db"
echo "ignored" >"$work/dir/notes.txt"

out=$("$HL" report --summary "$work/dir" 2>"$work/err"); rc=$?
check "text: exit (one unreadable database)" 3 $rc
check "text: header" "fleet: 2 run databases in $work/dir" "$(printf '%s\n' "$out" | head -1)"
row() { printf '%s\n' "$out" | grep "^$host  *$1 "; }
case $(row leaky) in *" fleet_prog leak 7 "*) pass "text: leaky row has the command";; *) fail "text: leaky row: $(row leaky)";; esac
# 7 blocks of 100 B leaked; the peak adds one 200 B block (allocated and freed 10 times)
case $(row leaky) in *" complete "*" 900 B "*" 700 B "*" 0  "*) pass "text: leaky row: peak 900 B, leaked 700 B, 0 errors";; *) fail "text: leaky row: $(row leaky)";; esac
case $(row hardened) in *" 1  "*) pass "text: hardened row: 1 error";; *) fail "text: hardened row: $(row hardened)";; esac
# The worst path depends on the cycles measured (the load), so it is compared with the
# per-path table of `report DB --json` for the same database: the timed path with at least
# 1% of its operation and the highest p99 (the first of equals), as "op/path p99".
worst() {
    "$HL" report "$work/dir/$host-$1.db" --json 2>/dev/null | python3 -c '
import json, sys
w = None
for p in json.load(sys.stdin)["paths"]:
    if p["timed"] and p["share"] >= 0.01 and (w is None or p["cycles"]["p99"] > w["cycles"]["p99"]):
        w = p
print("%s/%s %.0f" % (w["op"], w["path"], w["cycles"]["p99"]) if w else "none")'
}
for s in leaky hardened; do
    w=$(worst $s)
    case $w in */*" "[0-9]*) ;; *) fail "report --json $s: no timed path: $w";; esac
    # the p99 as a number (JSON writes a non-integer with 6 significant digits)
    printf '%s\n' "$(row $s)" | awk -v w="$w" '{ split(w, e, " "); d = $NF - e[2]; if (d < 0) d = -d
        exit !($(NF - 1) == e[1] && d <= (e[2] > 1e5 ? e[2] * 1e-5 : 1)) }' \
        && pass "text: $s worst path = $w" || fail "text: $s worst path: expected '$w' in: $(row $s)"
    eval "worst_$s=\$w"
done
printf '%s\n' "$out" | grep -q "errors: double-free" && pass "text: error kind named" || fail "text: no error kind: $out"
[ "$(printf '%s\n' "$out" | grep -n "^$host" | head -1 | cut -d: -f2 | awk '{print $2}')" = hardened ] \
    && pass "text: sorted by session" || fail "text: order: $out"
case $out in *"not read: broken.db: "*"not a readable SQLite database"*) pass "text: unreadable database listed";; *) fail "text: $out";; esac
grep -q "1 of 3 databases" "$work/err" && pass "stderr: count of unreadable" || fail "stderr: $(cat $work/err)"

"$HL" report --summary "$work/dir" --json >"$work/s.json" 2>/dev/null; check "json: exit" 3 $?
j() { python3 -c "import json,sys; d=json.load(open('$work/s.json')); s={r['session']: r for r in d['runs']}; print($1)"; }
check "json: runs" 2 "$(j 'len(d["runs"])')"
check "json: leaky" "leaky|7|700|0|complete" "$(j '"|".join(str(s["leaky"][k]) for k in ["session", "leaked_blocks", "leaked_bytes", "errors", "status"])')"
check "json: hardened" "1|double-free|$host" "$(j '"|".join(str(s["hardened"][k]) for k in ["errors", "error_kinds", "host"])')"
check "json: peak of leaky" 900 "$(j 's["leaky"]["peak_requested_bytes"]')"
check "json: full command" "$PROG leak 7" "$(j 's["leaky"]["command"]')"
for s in leaky hardened; do
    eval "w=\$worst_$s"
    check "json: worst path of $s" 1 "$(j "int(s['$s']['worst_path']['path'] == '${w% *}' and abs(s['$s']['worst_path']['p99_cycles'] - ${w#* }) <= max(1, ${w#* } * 1e-5))")"
done
check "json: not read" "broken.db" "$(j 'd["not_read"][0]["file"]')"

"$HL" report --summary "$work/dir" --html "$work/s.html" 2>/dev/null; check "html: exit" 3 $?
check "html: rows" 2 "$(grep -c '<tr[ >].*<td>' "$work/s.html")"
grep -q '<td>leaky</td>' "$work/s.html" && pass "html: leaky session" || fail "html: $(cat $work/s.html)"
grep -q 'class="err"' "$work/s.html" && pass "html: hardened row marked" || fail "html: no err row"

rm "$work/dir/broken.db"
"$HL" report --summary "$work/dir" >/dev/null 2>&1; check "all readable: exit" 0 $?
# bad input
out=$("$HL" report --summary "$work/none" 2>&1); check "missing dir: exit" 1 $?
case $out in *"--summary $work/none: No such file or directory"*) pass "missing dir: message";; *) fail "missing dir: $out";; esac
out=$("$HL" report --summary "$work/empty" 2>&1); check "empty dir: exit" 1 $?
case $out in *"no run database"*) pass "empty dir: message";; *) fail "empty dir: $out";; esac
out=$("$HL" report --summary "$work/dir" --pid 3 2>&1); check "summary with --pid: exit" 2 $?
case $out in *"takes only --json or --html"*) pass "summary with --pid: message";; *) fail "summary --pid: $out";; esac
out=$("$HL" report --summary "$work/dir" --json --html x.html 2>&1); check "--json --html: exit" 2 $?
exit $([ $fails -eq 0 ] && echo 0 || echo 1)
