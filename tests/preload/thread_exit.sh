#!/usr/bin/env bash
# Threads whose only allocator call comes during their teardown (thread_exit.c), in the
# default mode, under harden=1, with quarantine=1M alone, and without thread caches.
# usage: thread_exit.sh LIBHEAPLEDGER.so THREAD_EXIT_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
for opts in "" "harden=1" "quarantine=1M" "tcache=0" "arena=64M,harden=1"; do
    out=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" timeout 120 "$prog" 3 2>/dev/null)
    rc=$?
    if [ $rc -eq 0 ] && [ "$out" = "thread_exit: ok" ]; then
        echo "thread exit [${opts:-defaults}]: ok"
        pass=$((pass + 1))
    else
        echo "thread exit [${opts:-defaults}]: FAILED (status $rc): $out"
        fail=$((fail + 1))
    fi
done
echo "thread exit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
