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
# Messages say what is valid: the closest name, the valid values, the page that lists them.
err=$(HEAPLEDGER_OPTIONS="rotat=1,slab=3K,stats=yes" LD_PRELOAD=$lib /bin/true 2>&1)
grep -qF "HEAPLEDGER_OPTIONS: ignored: unknown option 'rotat' (did you mean 'rotate'?) (see docs/options.md)" <<<"$err" &&
    grep -qF "bad value in option 'slab=3K' (slab takes 0 (the default) or a power of two from 1K to 1M" <<<"$err" &&
    grep -qF "bad value in option 'stats=yes' (stats takes 0 or 1)" <<<"$err"
check "warnings name the closest option and the valid values ($err)" $?
# Spaces around '=' (and after commas) are accepted.
err=$(HEAPLEDGER_OPTIONS="arena = 256K, stats = 1" LD_PRELOAD=$lib /bin/true 2>&1)
grep -q "options arena=262144,stats=1" <<<"$err" && ! grep -q "ignored" <<<"$err"
check "spaces around '=' ($err)" $?
# A fixed arena too small for its slabs says why, before the fallback to the defaults.
err=$(HEAPLEDGER_OPTIONS="arena=8K" LD_PRELOAD=$lib /bin/true 2>&1)
grep -qF "arena=8192 is too small: a fixed arena holds at least 4 slabs (16384 bytes with slab=4096)" <<<"$err"
check "arena too small for 4 slabs ($err)" $?
echo "options: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
