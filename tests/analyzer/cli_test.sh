#!/usr/bin/env bash
# tests/analyzer/cli_test.sh HEAPLEDGER DBDIR — the analyzer's CLI against golden output and
# its bad-input messages. Golden files: tests/analyzer/golden/ (the database path printed in
# reports is replaced by DB). UPDATE_GOLDEN=1 rewrites them (review the diff!).
set -u
hl=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/golden
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

# golden NAME CMD...: stdout of CMD (exit 0) equals golden/NAME.
golden() {
    local name=$1
    shift
    if ! "$@" >"$out/$name" 2>"$out/$name.err"; then
        ko "$name: exit status $? ($(head -c 300 "$out/$name.err"))"
        return
    fi
    sed -i "s#$dir/##g" "$out/$name"
    case $name in # one value a line: readable diffs
    *.json) python3 -m json.tool "$out/$name" >"$out/$name.pretty" && mv "$out/$name.pretty" "$out/$name" ;;
    esac
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$out/$name" "$golden/$name"
    fi
    if diff -u "$golden/$name" "$out/$name" >"$out/$name.diff"; then
        ok "$name"
    else
        ko "$name"
        head -40 "$out/$name.diff"
    fi
}

# fails NAME STATUS PATTERN CMD...: CMD exits STATUS and stderr matches PATTERN.
fails() {
    local name=$1 want=$2 pat=$3
    shift 3
    "$@" >"$out/$name.out" 2>"$out/$name.err"
    local st=$?
    if [ "$st" -eq "$want" ] && grep -q -- "$pat" "$out/$name.err"; then
        ok "$name"
    else
        ko "$name: status $st, stderr: $(head -c 300 "$out/$name.err")"
    fi
}

golden report-basic.txt "$hl" report "$dir/basic.db"
golden report-basic.json "$hl" report --json "$dir/basic.db"
golden report-arena.txt "$hl" report "$dir/arena.db"
golden report-window.txt "$hl" report "$dir/basic.db" --from 1us --to 4.5us --top 2

golden report-kernel.txt "$hl" report "$dir/kernel.db"
golden report-kernel.json "$hl" report --json "$dir/kernel.db"
golden diff-kernel.txt "$hl" diff "$dir/kernel.db" "$dir/kernel.db"
golden diff-kernel-basic.txt "$hl" diff "$dir/kernel.db" "$dir/basic.db"

golden diff-basic-arena.txt "$hl" diff "$dir/basic.db" "$dir/arena.db"
golden diff-three.txt "$hl" diff "$dir/basic.db" "$dir/arena.db" "$dir/realloc.db"
fails diff-one-run 2 "usage: heapledger diff" "$hl" diff "$dir/basic.db"
golden history-freed-and-error.txt "$hl" history "$dir/basic.db" 0x10010
golden history-live.txt "$hl" history "$dir/basic.db" 0x10095
golden history-header.txt "$hl" history "$dir/basic.db" 0x10085
fails history-unknown 1 "no block recorded at 0x99999" "$hl" history "$dir/basic.db" 0x99999
fails history-bad-address 2 "bad address 'zz'" "$hl" history "$dir/basic.db" zz
fails diff-bad-version 1 "schema version 2" "$hl" diff "$dir/basic.db" "$dir/badversion.db"

# The JSON documents parse and have the keys the schema requires.
if python3 - "$out/report-basic.json" "$here/../../schemas/report.schema.json" "$out/report-kernel.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
kdoc = json.load(open(sys.argv[3]))
def check(d, s, where):
    for k in s.get("required", []):
        assert k in d, f"{where}: missing {k}"
    for k, sub in s.get("properties", {}).items():
        if k in d and isinstance(d[k], dict) and sub.get("type") == "object":
            check(d[k], sub, f"{where}.{k}")
        if k in d and isinstance(d[k], list) and "items" in sub and "required" in sub["items"]:
            for i, item in enumerate(d[k]):
                check(item, sub["items"], f"{where}.{k}[{i}]")
check(doc, schema, "$")
assert doc["kernel"] is None
check(kdoc, schema, "$")
check(kdoc["kernel"], schema["properties"]["kernel"], "$.kernel")
assert kdoc["kernel"]["faults"]["pages"] == 26
assert all("rss" in s for s in kdoc["utilisation"]["timeline"])
assert 0 < doc["utilisation"]["peak"] < 1
assert doc["leaks"]["by_size"][0] == {"size": 200, "blocks": 1, "bytes": 200}
PY
then ok "json-schema-keys"; else ko "json-schema-keys"; fi

fails discarded-warns 0 "metrics are approximate" "$hl" report "$dir/discarded.db"
if grep -q "^WARNING: 40 events were discarded" "$out/discarded-warns.out"; then
    ok "discarded-flagged-in-report"
else
    ko "discarded-flagged-in-report"
fi
"$hl" report --json "$dir/discarded.db" 2>/dev/null | grep -q '"approximate":true' &&
    ok "discarded-json-approximate" || ko "discarded-json-approximate"
fails empty-run 1 "empty run: the recording holds no allocation events" "$hl" report "$dir/empty.db"
fails bad-version 1 "schema version 2, this heapledger reads version 1" "$hl" report "$dir/badversion.db"
fails not-a-db 1 "notadb.db: not a readable SQLite database" "$hl" report "$dir/notadb.db"
fails missing-file 1 "missing.db: No such file or directory" "$hl" report "$dir/missing.db"
sqlite3 "$out/other.db" "CREATE TABLE t(a)"
fails other-sqlite-db 1 "other.db: not a heapledger run database" "$hl" report "$out/other.db"
fails unknown-pid 1 "no allocation events for pid 999" "$hl" report --pid 999 "$dir/basic.db"
fails bad-time 2 "bad time '5x' for --from" "$hl" report --from 5x "$dir/basic.db"
fails bad-option 2 "unknown or incomplete option '--frobnicate'" "$hl" report --frobnicate "$dir/basic.db"

# The two block readers (the database file read directly, and SQLite) give the same reports,
# on every hand-made database and on the churn run, whole and for one process.
for db in basic arena realloc reorder kernel kshare churn discarded; do
    for args in "" "--pid $(sqlite3 "$dir/$db.db" 'SELECT max(pid) FROM block')"; do
        a=$("$hl" report --json $args "$dir/$db.db" 2>&1)
        b=$(HEAPLEDGER_READER=sqlite "$hl" report --json $args "$dir/$db.db" 2>&1)
        [ "$a" = "$b" ] && ok "readers-agree $db $args" || ko "readers-agree $db $args"
    done
done
HEAPLEDGER_STATS=1 "$hl" report "$dir/churn.db" 2>&1 >/dev/null | grep -q "block reader: database file" &&
    ok "reader-direct-by-default" || ko "reader-direct-by-default"

echo "analyzer cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
