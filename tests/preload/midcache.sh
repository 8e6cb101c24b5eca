#!/usr/bin/env bash
# The per-thread mid cache (docs/allocator.md, "Per-thread mid cache"): it serves mid requests
# in the default mode (mid_cache_hit in the statistics), leaves nothing behind when its threads
# exit (bytes in use back to their level before the threads), and is off where every free must
# reach the arena (harden=1, rotate=1, decay=0, tcache=0, a fixed arena).
# usage: midcache.sh LIBHEAPLEDGER.so MIDCACHE_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
check() { # name, condition result
    if [ "$2" -eq 0 ]; then echo "midcache [$1]: ok"; pass=$((pass + 1)); else
        echo "midcache [$1]: FAILED"; fail=$((fail + 1)); fi
}
out=$(HEAPLEDGER_OPTIONS=stats=1 LD_PRELOAD=$lib timeout 120 "$prog" 6 2>&1)
rc=$?
hits=$(awk '$2 == "mid_cache_hit" {print $3}' <<<"$out")
[ $rc -eq 0 ] && grep -q '^midcache: ok' <<<"$out" && [ "${hits:-0}" -gt 1000 ]
rc=$?
check "default: $(grep '^midcache:' <<<"$out"), mid_cache_hit ${hits:-0}" $rc
for opts in "harden=1" "rotate=1" "decay=0" "tcache=0" "arena=256M"; do
    out=$(HEAPLEDGER_OPTIONS=stats=1,$opts LD_PRELOAD=$lib timeout 120 "$prog" 2 2>&1)
    rc=$?
    # (harden=1's quarantine keeps freed blocks in use: only the blocks' contents are checked)
    [ $rc -eq 0 ] && grep -q '^midcache: ' <<<"$out" && ! grep -q 'mid_cache' <<<"$out" &&
        { [ "$opts" = harden=1 ] || grep -q '^midcache: ok' <<<"$out"; }
    rc=$?
    check "$opts: off, $(grep '^midcache:' <<<"$out")" $rc
done
echo "midcache: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
