#!/usr/bin/env bash
# tests/ingest/fuzz_test.sh HEAPLEDGER_ASAN HEAPLEDGER PROG CORPUS — hostile traces under
# ASan+UBSan. A real small trace (PROG recorded with `HEAPLEDGER record --keep-trace`) is
# turned into a corpus of hostile copies by tests/ingest/fuzz_gen.py (byte flips,
# truncations, packet-header lies, event ids out of range, timestamps going backwards,
# hostile field values, huge sequence lengths, bad strings, metadata edits) plus the
# regression cases of CORPUS; each is collected by HEAPLEDGER_ASAN (the CLI with the ingest
# side built with -fsanitize=address,undefined). Every case must end within its bound with
# exit 0 (no output), 1 (a message, no database) or 3 (a message, a database marked partial),
# never a signal, and without a sanitizer report from our code: a report fails the test with
# the case named and the report's first lines. Reports whose first frame outside the
# sanitizer runtime and libc is in libbabeltrace2 (the decoder child runs it; not ours) are
# counted and listed, not failed.
set -u
ASAN=$(realpath "$1"); HL=$(realpath "$2"); PROG=$(realpath "$3"); CORPUS=$(realpath "$4")
here=$(cd "$(dirname "$0")" && pwd)
fails=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
work=$(mktemp -d /tmp/hl-ingest-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "ingest: hostile traces under ASan+UBSan"
export HEAPLEDGER_DECODE_TIMEOUT=5 # the watchdog's limit (default 30 s)
BOUND=40                           # seconds per case, hangs included (2 run at once)

"$HL" record --keep-trace "$work/good" -o "$work/good.db" -- "$PROG" >"$work/rec.log" 2>&1 ||
    { cat "$work/rec.log"; echo "ingest fuzz: recording $PROG failed"; exit 1; }
python3 "$here/fuzz_gen.py" "$work/good" "$work/cases" "$CORPUS" || { echo "ingest fuzz: fuzz_gen.py failed"; exit 1; }

# run_case NNN: one collect; writes res/NNN ("ok|FAIL|BT<TAB>text")
run_case() {
    local n=$1 rc out st res db=$work/db/$1.db
    out=$(ASAN_OPTIONS=detect_leaks=0:log_path=$work/san/$n \
        UBSAN_OPTIONS=print_stacktrace=1:log_path=$work/san/$n \
        timeout -k 5 $BOUND "$ASAN" collect "$work/cases/$n" -o "$db" -q 2>&1); rc=$?
    out=${out//$'\n'/ }
    case $rc in
    0) [ -z "$out" ] && res="ok	complete" || res="FAIL	exit 0 with output: ${out:0:200}" ;;
    1) if [ -z "$out" ]; then res="FAIL	exit 1 without a message"
       elif [ -e "$db" ]; then res="FAIL	exit 1 left a database"
       else res="ok	refused: ${out:0:120}"; fi ;;
    3) st=$(sqlite3 "$db" "select value from meta where key = 'ingest_status'" 2>&1)
       if [ "$st" = partial ] && [ -n "$out" ]; then
           res="ok	partial, $(sqlite3 "$db" 'select events from run') events: ${out:0:120}"
       else res="FAIL	exit 3: status '$st', message '${out:0:200}'"; fi ;;
    124 | 137) res="FAIL	did not finish within $BOUND s" ;;
    *) res="FAIL	exit status $rc: ${out:0:200}" ;;
    esac
    local f first
    for f in "$work/san/$n".*; do
        [ -e "$f" ] || continue
        first=$(grep -E '^ *#[0-9]+ ' "$f" | grep -vE 'libasan|libubsan|/libc\.so| nptl/| sysdeps/| stdlib/| csu/|_start |sanitizer_common|compiler-rt|/asan_|/ubsan_' | head -1)
        if ! grep -q 'runtime error' "$f" && grep -q babeltrace <<<"$first"; then
            res="BT	${res#*	}; decoder's report: $(grep -m1 -E 'ERROR|SUMMARY' "$f")"
        else
            res="FAIL	sanitizer report in our code: $(grep -m1 -E 'ERROR|runtime error' "$f") | $first"
            cp "$f" "$work/report-$n.txt"
        fi
    done
    printf '%s\n' "$res" >"$work/res/$n"
}
mkdir -p "$work/san" "$work/db" "$work/res"
cut -f1 "$work/cases/cases.txt" >"$work/ids"
while read -r n; do
    run_case "$n" &
    [ "$(jobs -rp | wc -l)" -ge 2 ] && wait -n
done <"$work/ids"
wait

nok=0; nbt=0; nref=0; npart=0
while IFS=$'\t' read -r n name recipe; do
    IFS=$'\t' read -r verdict text <"$work/res/$n" || { verdict=FAIL; text="no result"; }
    case $verdict in
    ok) nok=$((nok + 1)) ;;
    BT) nbt=$((nbt + 1)); echo "  note $n $name: $text" ;;
    *) fail "$n $name [$recipe]: $text"
       [ -e "$work/report-$n.txt" ] && sed -n '1,30p' "$work/report-$n.txt" ;;
    esac
    case $text in refused*) nref=$((nref + 1)) ;; partial*) npart=$((npart + 1)) ;; esac
done <"$work/cases/cases.txt"
total=$(wc -l <"$work/ids")
echo "  $total cases: $nok clean ($nref refused, $npart partial, the rest complete), $nbt with a report from libbabeltrace2, $fails failed"
[ "$total" -ge 150 ] && pass "the corpus holds $total cases" || fail "the corpus holds only $total cases"
[ $fails -eq 0 ] || { echo "ingest fuzz: $fails FAILED"; exit 1; }
echo "ingest fuzz: all passed"
