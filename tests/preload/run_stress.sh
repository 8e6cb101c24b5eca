#!/usr/bin/env bash
# Run the stress program under the preloaded allocator in several configurations.
# usage: run_stress.sh LIBHEAPLEDGER.so STRESS_BINARY
set -euo pipefail
lib=$1 prog=$2
configs=("" "tcache=0" "arenas=1" "mid_max=64K,trim_keep=0" "tiny=0" "slab=16K" "slab=1M")
pass=0 fail=0
for opts in "${configs[@]}"; do
    if out=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" timeout 300 "$prog" 1 2>&1) &&
        [ "$out" = "stress: ok" ]; then
        echo "stress [${opts:-defaults}]: ok"
        pass=$((pass + 1))
    else
        echo "stress [${opts:-defaults}]: FAILED: $out"
        fail=$((fail + 1))
    fi
done
echo "stress: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
