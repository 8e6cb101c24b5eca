#!/usr/bin/env bash
# tests/analyzer/hostile_test.sh HOSTILE_CLI OUTDIR — the analyzer on hostile databases.
# hostile_gen.py writes the corpus into OUTDIR; every command (report as text, JSON and HTML,
# a window, diff, history, replay) runs on every database under ASan+UBSan (HOSTILE_CLI,
# built from the analyzer's sources with -fsanitize=address,undefined and no recovery) with a
# time bound, and must: end by itself within the bound, not crash, print no sanitizer report,
# exit 0, 1 or 2 (with a message; 2: the window lies outside that run), print text without raw control characters (messages too)
# and JSON that is valid. A database with a malformed block record must fail with SQLite's "malformed" error.
# On the leak_* cases the leak classes of a report of every process (counted in the pass) must
# be those of a report of one process (SQLite's).
set -u
cli=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
limit=${HL_HOSTILE_TIMEOUT:-30}
rm -rf "$dir"
python3 "$here/hostile_gen.py" "$dir" "$root/schemas/heapledger.sql" \
    "$root/schemas/heapledger_index.sql" "$root/schemas/kernel_views.sql" \
    "$here/basic.sql" "$here/kernel.sql" "$here/leakclass.sql" || exit 1
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:print_summary=1
export UBSAN_OPTIONS=print_stacktrace=1
pass=0
fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

# run NAME MODE CMD...: CMD within the time bound; its stdout checked as MODE (text, json or
# none). Leaves the exit status in $rc and stderr in $dir/NAME.err.
run() {
    local name=$1 mode=$2
    shift 2
    timeout -s KILL "$limit" "$cli" "$@" >"$dir/$name.out" 2>"$dir/$name.err"
    rc=$?
    if [ $rc -eq 137 ]; then
        ko "$name: did not end within ${limit}s"
    elif grep -qE 'runtime error|AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer' \
        "$dir/$name.err"; then
        ko "$name: sanitizer report"
        grep -m5 -E 'runtime error|ERROR|SUMMARY' "$dir/$name.err"
    elif [ $rc -gt 2 ]; then
        ko "$name: exit status $rc"
        head -5 "$dir/$name.err"
    elif [ $rc -ne 0 ] && ! grep -q '^heapledger [a-z]*: ' "$dir/$name.err"; then
        ko "$name: exit status $rc without a message"
    else
        [ $rc -eq 0 ] && [ "$mode" != none ] && checks+=("$mode:$dir/$name.out")
        checks+=("text:$dir/$name.err")
        ok
    fi
}

checks=()
n=0
for db in "$dir"/*.db; do
    c=$(basename "$db" .db)
    n=$((n + 1))
    run "$c.report" text report "$db"
    run "$c.json" json report "$db" --json
    run "$c.html" none report "$db" --html "$dir/$c.html"
    run "$c.window" text report "$db" --from 3us --to 8us --top 3
    run "$c.history" text history "$db" 0x10010
    run "$c.diff" text diff "$db" "$db"
    run "$c.diff-json" json diff "$db" "$db" --json --sort cycles
    run "$c.replay" text replay "$db"
    run "$c.replay-json" json replay "$db" --json --arena 64K
done

# The leak classes counted in the pass (a report of every process) against SQLite's (a
# report of one process: the stream does not see every block), on the leak_* cases.
for db in "$dir"/leak_*.db; do
    c=$(basename "$db" .db)
    pid=$(sqlite3 "$db" "SELECT pid FROM block WHERE typeof(pid) = 'integer' AND pid > 0 ORDER BY id LIMIT 1")
    run "$c.pid" json report "$db" --json --pid "$pid"
    if [ $rc -eq 0 ] && [ -s "$dir/$c.json.out" ]; then
        checks+=("same_classes:$dir/$c.json.out,$dir/$c.pid.out")
    else
        ko "$c: no report of pid $pid to compare the leak classes with (exit $rc)"
    fi
done

# Every output and every message, in one check (hostile_check.py).
if ! python3 "$here/hostile_check.py" "${checks[@]}"; then
    ko "outputs with raw control characters or invalid JSON, or leak classes that differ (above)"
fi

# A malformed record is an error, in SQLite's words, whichever reader meets it first.
for c in record_short_width record_long_width record_reserved_type; do
    for reader in file sqlite; do
        HEAPLEDGER_READER=$reader timeout -s KILL "$limit" "$cli" report "$dir/$c.db" \
            >"$dir/$c.$reader.out" 2>"$dir/$c.$reader.err"
        rc=$?
        if [ $rc -eq 1 ] && grep -q 'malformed' "$dir/$c.$reader.err"; then
            ok
        else
            ko "$c ($reader reader): exit $rc, expected 1 and SQLite's malformed error: $(head -c 300 "$dir/$c.$reader.err")"
        fi
    done
done

# The escapes are there, not just the control characters gone.
if grep -qF 'command       \x1b[31mred\x1b]0;pwned\x07\u009b2J\x7f\u202etxt\x08\x08\x80\xbf' \
    "$dir/control_chars.report.out"; then
    ok
else
    ko "control_chars: the command line is not printed escaped: $(grep -a command "$dir/control_chars.report.out")"
fi

echo "hostile databases: $n files, $pass passed, $fail failed"
[ $fail -eq 0 ]
