#!/usr/bin/env bash
# `heapledger replay --options harden=1` of a run database holding absurd request sizes
# (SIZE_MAX, 2^63, stored as negative integers) counts them as allocations failing in the
# replay and finishes; the replay heap used to serve them as 0-byte blocks and then abort
# with a false heap-overflow.
# usage: replay_absurd.sh HEAPLEDGER REPLAY_REC SCHEMA_DIR WORKDIR
set -u
hl=$1 rec=$2 schemas=$3 dir=$4/replay_absurd
mkdir -p "$dir"
db=$dir/absurd.db
rm -f "$db"
"$rec" "$db" "" 2000 5 "$schemas/heapledger.sql" "$schemas/heapledger_index.sql" >/dev/null ||
    { echo "replay absurd: FAILED to record"; exit 1; }
sqlite3 "$db" "UPDATE block SET size = -1 WHERE id = (SELECT id FROM block ORDER BY id LIMIT 1 OFFSET 100);
UPDATE block SET size = -9223372036854775808 WHERE id = (SELECT id FROM block ORDER BY id LIMIT 1 OFFSET 200);"
fail=0
for opts in harden=1 "harden=1,guard=all" "" "arena=64M,harden=1"; do
    out=$("$hl" replay "$db" --options "$opts" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q "allocations failing in the replay only: 2" <<<"$out" &&
        ! grep -q "ERROR" <<<"$out"; then
        echo "replay absurd [${opts:-defaults}]: ok"
    else
        echo "replay absurd [${opts:-defaults}]: FAILED (rc $rc)"
        head -8 <<<"$out"
        fail=1
    fi
done
exit $fail
