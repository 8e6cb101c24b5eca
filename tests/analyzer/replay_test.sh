#!/usr/bin/env bash
# tests/analyzer/replay_test.sh HEAPLEDGER REPLAY_REC DIR — what-if replay.
# replay_rec drives a heap object through the public API and writes the run database; a
# replay with the same options must reproduce its live set exactly (blocks, requested and
# usable bytes, and in a fixed arena the offsets); a smaller arena must report the first
# allocation that fails.
set -u
hl=$1
rec=$2
dir=$3/replay
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
mkdir -p "$dir"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

record() { # NAME OPTIONS OPS SEED
    "$rec" "$dir/$1.db" "$2" "$3" "$4" "$root/schemas/heapledger.sql" \
        "$root/schemas/heapledger_index.sql" >/dev/null || ko "record $1"
}

record grow "" 20000 42
record arena "arena=2M" 20000 7
record tiny "tcache=0,slab=4K" 5000 3

for name in grow arena tiny; do
    if "$hl" replay "$dir/$name.db" >"$dir/$name.out" 2>&1 &&
        grep -q "live set: identical to the recording (0 blocks with another usable size" \
            "$dir/$name.out"; then
        ok "same-options-$name"
    else
        ko "same-options-$name"
        head -12 "$dir/$name.out"
    fi
done
grep -q "0 at another arena offset" "$dir/arena.out" && ok "arena-offsets-identical" ||
    ko "arena-offsets-identical"

# The live set printed by the report of the recording is the replay's too.
rec_bytes=$("$hl" report --json "$dir/arena.db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["leaks"]["bytes"])')
rep_bytes=$("$hl" replay --json "$dir/arena.db" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["replay"]["live_match"]; print(d["leaks"]["bytes"])')
[ -n "$rec_bytes" ] && [ "$rec_bytes" = "$rep_bytes" ] && ok "report-and-replay-agree ($rec_bytes bytes)" ||
    ko "report-and-replay-agree ($rec_bytes vs $rep_bytes)"

# A smaller arena: the first failure is reported, with the utilisation at that point.
"$hl" replay "$dir/arena.db" --arena 256K >"$dir/small.out" 2>&1
if grep -q "^  first failure: block [0-9]* (seq [0-9]*" "$dir/small.out" &&
    grep -q "live set: DIFFERENT" "$dir/small.out"; then
    ok "small-arena-first-failure"
else
    ko "small-arena-first-failure"
    head -8 "$dir/small.out"
fi
# Other options on the same recording: rotation, no tiny tier.
"$hl" replay "$dir/grow.db" --options "tiny=0" >"$dir/notiny.out" 2>&1 &&
    grep -q "DIFFERENT" "$dir/notiny.out" && ok "other-options-differ" || ko "other-options-differ"

"$hl" replay "$dir/grow.db" --options "bogus=1" >"$dir/bad.out" 2>&1
[ $? -eq 1 ] && grep -q "bad options 'bogus=1'" "$dir/bad.out" && ok "bad-options" || ko "bad-options"
"$hl" replay "$dir/grow.db" --arena 12Q >"$dir/bad2.out" 2>&1
[ $? -eq 2 ] && grep -q "bad --arena '12Q'" "$dir/bad2.out" && ok "bad-arena" || ko "bad-arena"

echo "analyzer replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
