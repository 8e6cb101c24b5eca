#!/usr/bin/env bash
# Absurd sizes and bad alignments, per entry point and per mode: the Criterion table
# (absurd_sizes.c) and the C++ operator new program (absurd_new.cc) under LD_PRELOAD with
# every HEAPLEDGER_OPTIONS below (defaults, harden, each guard mode, arena, rotate, and their
# combinations). The C++ program also runs without heapledger: libstdc++'s own aligned new
# returns a block for new(SIZE_MAX, align) — shown, not failed.
# usage: absurd_sizes.sh LIBHEAPLEDGER.so ABSURD_SIZES_BIN ABSURD_NEW_BIN
set -u
lib=$1 table=$2 cxx=$3
configs=("" "harden=1" "guard=large" "guard=all" "guard=sample:3" "harden=1,guard=none"
    "quarantine=1M" "canary=1" "arena=8M" "arena=8M,harden=1" "arena=8M,tiny=1,harden=1"
    "rotate=1" "rotate=1,harden=1" "rotate=1,arena=4M,harden=1" "harden=1,guard=all,rotate=1"
    "tiny=0,harden=1" "tcache=0" "mid_max=64K,harden=1,guard=all" "stacks=0,harden=1")
pass=0 fail=0
for opts in "${configs[@]}"; do
    if out=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" "$table" --jobs 2 2>&1) &&
        out2=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" "$cxx" 2>&1); then
        echo "absurd sizes [${opts:-defaults}]: ok"
        pass=$((pass + 1))
    else
        echo "absurd sizes [${opts:-defaults}]: FAILED"
        printf '%s\n%s\n' "$out" "${out2:-}" | grep -v '^\s*$' | head -20
        fail=$((fail + 1))
    fi
    out2=
done
n=$("$cxx" 2>/dev/null | grep -c '^FAIL new.*align' || true)
echo "absurd sizes: without heapledger, libstdc++'s aligned new accepts $n absurd requests"
echo "absurd sizes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
