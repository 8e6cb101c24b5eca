#!/usr/bin/env bash
# Adaptive thread-cache caps through the malloc shim (tcap_phases.c: threads allocating and
# freeing batches of 16-400 B blocks round after round). With the defaults the bins grow, so
# refills are rare: fewer than 500 for 2 threads x 300 rounds x 600 blocks (at the base caps
# it takes about 4,800). Every configuration must keep the contents and pass the heap check
# after malloc_trim: the defaults, decay=1 (grown bins shrink while the program runs),
# tcache=0 and harden=1 (no adaptation).
# usage: tcap_phases.sh LIBHEAPLEDGER.so TCAP_PHASES_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
tmp=$(mktemp -d /tmp/tcap_phases.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok   tcap: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL tcap: $1"; fail=$((fail + 1)); }

for opts in "" "decay=1" "tcache=0" "harden=1"; do
    out=$(HEAPLEDGER_OPTIONS="stats=1${opts:+,$opts}" LD_PRELOAD="$lib" timeout 240 \
        "$prog" 2 300 600 2>"$tmp/err")
    rc=$?
    if [ $rc -ne 0 ] || [ "$out" != "tcap_phases: ok" ]; then
        bad "[${opts:-defaults}] exit $rc, output '$out': $(head -c 400 "$tmp/err")"
        continue
    fi
    ok "[${opts:-defaults}] contents kept, heap consistent after malloc_trim"
    if [ -z "$opts" ]; then
        refills=$(awk '$1 == "alloc" && $2 == "tiny_refill" { print $3 }' "$tmp/err")
        if [ -n "$refills" ] && [ "$refills" -lt 500 ]; then
            ok "[defaults] grown bins: $refills refills (fewer than 500)"
        else
            bad "[defaults] ${refills:-no} refills (expected fewer than 500: did the caps grow?)"
        fi
    fi
done

echo "tcap: $pass passed, $fail failed"
[ $fail -eq 0 ]
