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
fails diff-bad-version 1 "schema version 1" "$hl" diff "$dir/basic.db" "$dir/badversion.db"

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
fails bad-version 1 "schema version 1, this heapledger reads version 4 (an older heapledger wrote it" "$hl" report "$dir/badversion.db"
# Schema version 2 (before block_data's ten columns): every command that reads a database says
# what to do (ingest the trace again, or the heapledger that wrote it).
v2msg="oldversion.db: run database schema version 2, this heapledger reads version 4 (an older heapledger wrote it: ingest its trace again with .heapledger collect TRACE -o NEW.db."
fails v2-report 1 "$v2msg" "$hl" report "$dir/oldversion.db"
fails v2-report-json 1 "$v2msg" "$hl" report --json "$dir/oldversion.db"
fails v2-diff 1 "$v2msg" "$hl" diff "$dir/basic.db" "$dir/oldversion.db"
fails v2-history 1 "$v2msg" "$hl" history "$dir/oldversion.db" 0x10010
fails v2-replay 1 "$v2msg" "$hl" replay "$dir/oldversion.db"
# Schema version 3 (block_data in ten columns, before version 4's seven): the same message.
cp "$dir/basic.db" "$out/v3.db"
sqlite3 "$out/v3.db" "PRAGMA user_version = 3"
fails v3-report 1 "v3.db: run database schema version 3, this heapledger reads version 4 (an older heapledger wrote it: ingest its trace again with .heapledger collect TRACE -o NEW.db." "$hl" report "$out/v3.db"
fails not-a-db 1 "notadb.db: not a readable SQLite database" "$hl" report "$dir/notadb.db"
fails missing-file 1 "missing.db: No such file or directory" "$hl" report "$dir/missing.db"
sqlite3 "$out/other.db" "CREATE TABLE t(a)"
fails other-sqlite-db 1 "other.db: not a heapledger run database" "$hl" report "$out/other.db"
fails unknown-pid 1 "no allocation events for pid 999" "$hl" report --pid 999 "$dir/basic.db"
fails bad-time 2 "bad time '5x' for --from" "$hl" report --from 5x "$dir/basic.db"
fails bad-option 2 "unknown option '--frobnicate' ('heapledger report --help' lists them)" \
    "$hl" report --frobnicate "$dir/basic.db"

# "Did you mean" for commands and options; a flag without its value says so.
fails command-did-you-mean 2 "unknown command 'reprot'; did you mean 'report'?" "$hl" reprot x.db
fails command-unknown 2 "usage: heapledger <command>" "$hl" frobnicate
fails option-did-you-mean 2 "unknown option '--jsno' (did you mean '--json'?)" \
    "$hl" report --jsno "$dir/basic.db"
fails option-needs-value 2 "option --pid needs a value" "$hl" report "$dir/basic.db" --pid
fails diff-did-you-mean 2 "unknown option '--form' (did you mean '--from'?)" \
    "$hl" diff "$dir/basic.db" "$dir/basic.db" --form 1s
fails history-did-you-mean 2 "unknown option '--lmit' (did you mean '--limit'?)" \
    "$hl" history "$dir/basic.db" 0x10010 --lmit 5
fails record-did-you-mean 2 "heapledger record: did you mean '--options'?" \
    "$hl" record --optons harden=1 -- true
fails replay-did-you-mean 2 "unknown option '--arna' (did you mean '--arena'?)" \
    "$hl" replay "$dir/basic.db" --arna 64K

# A window that starts past the end of the run is an error that says how long the run is.
fails report-past-end 2 "--from 10s is past the end of the run: .*basic.db lasts 0.000010000 s" \
    "$hl" report "$dir/basic.db" --from 10s
fails diff-past-end 2 "--from 7us is past the end of the run: .*arena.db lasts 0.000005000 s" \
    "$hl" diff "$dir/basic.db" "$dir/arena.db" --from 7us
fails history-past-end 2 "--from 1s is past the end of the run: .*basic.db lasts 0.000010000 s" \
    "$hl" history "$dir/basic.db" 0x10010 --from 1s
fails report-to-before-from 2 "--to is before --from" "$hl" report "$dir/basic.db" --from 5us --to 2us
golden diff-window.txt "$hl" diff "$dir/basic.db" "$dir/basic.db" --from 1us --to 4.5us

# history: time filters keep the lifetimes that overlap the window.
"$hl" history "$dir/basic.db" 0x10010 --from 5.5us >"$out/hist-from.txt" 2>&1
if ! grep -q "^block 1" "$out/hist-from.txt" && grep -q "^error double-free" "$out/hist-from.txt"; then
    ok "history-from (block 1 freed at 4 us is out, the error at 8.6 us is in)"
else
    ko "history-from: $(head -c 300 "$out/hist-from.txt")"
fi
fails history-window-empty 1 "no allocation covered it in the window" \
    "$hl" history "$dir/basic.db" 0x10010 --to 0.5us
fails history-bad-limit 2 "bad --limit 'many' (a number; 0 for no limit)" \
    "$hl" history "$dir/basic.db" 0x10010 --limit many
# history: at most --limit lifetimes (default 1000), with a count of the rest.
busy=$out/busy.db
cat "$here/../../schemas/heapledger.sql" "$here/basic.sql" >"$out/busy.sql"
cat >>"$out/busy.sql" <<'SQL'
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1499)
INSERT INTO block SELECT 100 + i, 100, 65552, 100, 112, 2, -1, 20 + 2 * i, 10000 + 2 * i, 101,
    5, 100, 1, 21 + 2 * i, 10001 + 2 * i, 101, 11, 50, 1, NULL, 0 FROM n;
UPDATE run SET end_ts = 20000;
SQL
sqlite3 "$busy" <"$out/busy.sql"
"$hl" history "$busy" 0x10010 >"$out/busy.txt" 2>&1
n=$(grep -c '^block ' "$out/busy.txt")
if [ "$n" -eq 1000 ] && grep -q "^… 501 more block lifetimes not shown (1501 in all" "$out/busy.txt"; then
    ok "history-default-limit"
else
    ko "history-default-limit: $n blocks, $(grep '^…' "$out/busy.txt")"
fi
"$hl" history "$busy" 0x10010 --limit 3 >"$out/busy3.txt" 2>&1
[ "$(grep -c '^block ' "$out/busy3.txt")" -eq 3 ] &&
    grep -q "^… 1498 more block lifetimes not shown (1501 in all" "$out/busy3.txt" &&
    ok "history-limit-3" || ko "history-limit-3"
"$hl" history "$busy" 0x10010 --limit 0 >"$out/busy0.txt" 2>&1
[ "$(grep -c '^block ' "$out/busy0.txt")" -eq 1501 ] && ! grep -q '^…' "$out/busy0.txt" &&
    ok "history-limit-0-shows-all" || ko "history-limit-0-shows-all"

# record checks HEAPLEDGER_OPTIONS like --options, before the program starts (no LTTng
# needed: the check comes first).
marker=$out/started
HEAPLEDGER_OPTIONS=rotat=1 "$hl" record -o "$out/rec.db" -- sh -c "touch $marker" \
    >/dev/null 2>"$out/rec-env.err"
st=$?
if [ $st -eq 2 ] && [ ! -e "$marker" ] && [ ! -e "$out/rec.db" ] && grep -qF \
    "heapledger record: HEAPLEDGER_OPTIONS: unknown option 'rotat' (did you mean 'rotate'?) (docs/options.md lists them)" \
    "$out/rec-env.err"; then
    ok "record-env-options-checked"
else
    ko "record-env-options-checked: status $st, started $([ -e "$marker" ] && echo yes || echo no): $(cat "$out/rec-env.err")"
fi
fails record-options-values 2 "--options: bad value in option 'stats=yes' (stats takes 0 or 1) (docs/options.md" \
    "$hl" record --options stats=yes -o "$out/rec.db" -- true
fails record-options-arena 2 "bad value in option 'arena=1K' (arena takes 0 (off) or a size of at least 4K" \
    "$hl" record --options arena=1K -o "$out/rec.db" -- true
fails record-options-slab 2 "bad value in option 'slab=3K' (slab takes 0 (the default) or a power of two" \
    "$hl" record --options slab=3K -o "$out/rec.db" -- true

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

# heapledger(1) lists every subcommand of `heapledger --help`, each has its own page, and every
# page renders without warnings.
man1=$here/../../docs/man
missing=""
for c in $("$hl" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}'); do
    [ "$c" = version ] && continue
    grep -q "^\.BR $c " "$man1/heapledger.1" && [ -f "$man1/heapledger-$c.1" ] || missing="$missing $c"
done
warn=$(for f in "$man1"/*.1; do man --warnings -l "$f" 2>&1 >/dev/null; done)
if [ -z "$missing" ] && [ -z "$warn" ] && grep -q '^\.SH WORKFLOW' "$man1/heapledger.1"; then
    ok "man-pages (heapledger(1) lists every command and the workflow)"
else
    ko "man-pages: missing:$missing warnings: $warn"
fi

echo "analyzer cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
