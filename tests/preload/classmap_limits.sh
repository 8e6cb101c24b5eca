#!/usr/bin/env bash
# The class map under address-space limits (liballoc/classmap.h): with room for the read-only
# zero map but not for the real one (ulimit -v about 2.9 GiB), every free takes the
# header-byte path and a program still works; with room for neither (1 GB), the first
# allocator call stops the process with a message that says what to do, not a crash.
# usage: classmap_limits.sh LIBHEAPLEDGER.so STRESS_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
ok() { echo "classmap limits: $1: ok"; pass=$((pass + 1)); }
bad() { echo "classmap limits: $1: FAILED: $2"; fail=$((fail + 1)); }

out=$( (ulimit -v 3000000 && LD_PRELOAD="$lib" timeout 300 "$prog" 1 2 2000) 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = "stress: ok" ]; then ok "zero map only"; else bad "zero map only" "exit $rc: $out"; fi

out=$( (ulimit -v 1000000 && LD_PRELOAD="$lib" timeout 300 "$prog" 1 2 2000) 2>&1)
rc=$?
want="heapledger: ERROR: init: cannot reserve the class map"
if [ "$rc" -eq 134 ] && [[ "$out" == *"$want"*"raise the address-space limit (ulimit -v)"* ]]; then
    ok "no map"
else
    bad "no map" "exit $rc (want 134 and the message): $out"
fi
echo "classmap limits: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
