#!/usr/bin/env bash
# tests/harden/entry_stacks.sh LIB PROG — every entry point's stacks start at the program's
# call (stack_entry.c): PROG (entry_stacks.c) allocates each block through another entry in
# its own alloc_<entry> function, frees it in free_<how> and again in dfree; under
# harden=1,abort_on_error=0 each double-free report's error, allocation and free stacks must
# begin in those functions. With unwind=check every walk from an entry is compared with
# libunwind's (a difference aborts).
set -u
lib=$1 prog=$2
allocs=(malloc_tiny malloc_mid malloc_large calloc realloc_null realloc_move reallocarray
    posix_memalign aligned_alloc memalign valloc pvalloc new_aligned)
frees=(free delete_sized free realloc0 free free free free free free free free free)
fail=0
for opts in harden=1,abort_on_error=0 harden=1,abort_on_error=0,unwind=check; do
    err=$(HEAPLEDGER_OPTIONS=$opts LD_PRELOAD=$lib "$prog" 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -ne 0 ] || grep -q 'unwind=check' <<<"$err"; then
        echo "FAIL entry_stacks ($opts): exit status $rc"; grep -m3 'unwind=check\|entry_stacks' <<<"$err"
        fail=1; continue
    fi
    # One line per report: the function of frame #0 of the error, allocation and free stacks.
    got=$(awk '/^heapledger: ERROR/ { if (line) print line; line = ""; n = 0 }
               /^ *#0 / { sub(/\+0x.*/, "", $4); line = line " " $4 }
               END { if (line) print line }' <<<"$err")
    want=$(for i in "${!allocs[@]}"; do echo " dfree alloc_${allocs[$i]} free_${frees[$i]}"; done)
    if [ "$got" != "$want" ]; then
        echo "FAIL entry_stacks ($opts): first frames (error, allocated, freed) per report"
        diff <(echo "$want") <(echo "$got") | head -20
        fail=1
    else
        echo "ok   entry_stacks ($opts): ${#allocs[@]} entries, every stack starts at the program's call"
    fi
done
exit $fail
