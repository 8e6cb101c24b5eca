#!/usr/bin/env bash
# HEAPLEDGER_OPTIONS as the preloaded library reads it: warnings for bad items, stats=1 at
# exit, a fixed arena that runs out with ENOMEM.
# usage: options_env.sh LIBHEAPLEDGER.so ARENA_ENV_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
check() { # name, condition result
    if [ "$2" -eq 0 ]; then echo "options [$1]: ok"; pass=$((pass + 1)); else
        echo "options [$1]: FAILED"; fail=$((fail + 1)); fi
}
err=$(HEAPLEDGER_OPTIONS="bogus=1,arena=12Q,stats=0" LD_PRELOAD=$lib /usr/bin/python3 -c 'print(1)' 2>&1 >/dev/null)
[ "$(grep -c "HEAPLEDGER_OPTIONS: ignored: unknown option 'bogus'" <<<"$err")" -eq 1 ] &&
    grep -q "HEAPLEDGER_OPTIONS: ignored: bad value in option 'arena=12Q'" <<<"$err"
check "bad items warned once each" $?
err=$(HEAPLEDGER_OPTIONS="stats=1" LD_PRELOAD=$lib /usr/bin/python3 -c 'x=[str(i) for i in range(10000)]' 2>&1 >/dev/null)
grep -q "heap statistics of pid" <<<"$err" && grep -q "tiny_cache_hit" <<<"$err"
check "stats=1 prints counters at exit" $?
out=$(HEAPLEDGER_OPTIONS="arena=4M" LD_PRELOAD=$lib "$prog" 2>&1)
check "arena=4M runs out with ENOMEM ($out)" $?
out=$(HEAPLEDGER_OPTIONS="arena=4M,tiny=1" LD_PRELOAD=$lib "$prog" 2>&1)
check "arena=4M,tiny=1 runs out with ENOMEM ($out)" $?
echo "options: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
