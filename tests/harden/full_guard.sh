#!/usr/bin/env bash
# tests/harden/full_guard.sh LIB BINDIR SRCDIR — harden=full (every block on its own guarded
# page run, right-aligned to its guard page) on the programs of tests/harden/full/ under
# LD_PRELOAD=LIB. Each faulting case must die of SIGABRT with the report's first line (kind,
# size, guarded/page), the bad byte's offset, READ or WRITE, the stack at the access whose
# frame #0 is the function doing the access at the source line marked ACCESS (the programs
# are built with -g), the allocation (and free) stack and the SUMMARY line. Faults that are
# not heapledger's reach the program as without it.
set -u
lib=$1 bindir=$2 srcdir=$3
fail=0 n=0
opts=harden=full

# name args | first-line glob | offset-line glob | READ/WRITE-line glob | access function | more
cases=(
  "uaf_read|use-after-free on 0x* (24-byte block, guarded/page)|*offset 8 (0x*): inside the 24-byte block|READ faulted on a freed block*|read_freed|freed by thread T*"
  "uaf_write|use-after-free on 0x* (40-byte block, guarded/page)|*offset 20 (0x*): inside the 40-byte block|WRITE faulted on a freed block*|write_freed|freed by thread T*"
  "overflow_read|heap-overflow on 0x* (32-byte block, guarded/page)|*offset 32 (0x*): 0 bytes after the 32-byte block|READ faulted on the guard page after the block|read_past|allocated by thread T*"
  "overflow_write|heap-overflow on 0x* (64-byte block, guarded/page)|*offset 64 (0x*): 0 bytes after the 64-byte block|WRITE faulted on the guard page after the block|fill|allocated by thread T*"
  "zero_read|heap-overflow on 0x* (0-byte block, guarded/page)|*offset 0 (0x*): 0 bytes after the 0-byte block|READ faulted on the guard page after the block|peek|allocated by thread T*"
  "gap_overflow|heap-overflow on 0x* (13-byte block, guarded/page)|*offset 13 (0x*): 0 bytes after the 13-byte block|the gap between the block and its guard page was written (found on free)|main|allocated by thread T*"
)
for e in "malloc 48" "calloc 48" "realloc 48" "reallocarray 48" "memalign 128" \
         "aligned_alloc 512" "posix_memalign 96" "valloc 4096" "pvalloc 4096"; do
    set -- $e
    cases+=("entries $1|heap-overflow on 0x* ($2-byte block, guarded/page)|*offset $2 (0x*): 0 bytes after the $2-byte block|READ faulted on the guard page after the block|read_at|allocated by thread T*")
done
for e in "new 48" "nothrow 48" "aligned 64"; do
    set -- $e
    cases+=("entries_cxx $1|heap-overflow on 0x* ($2-byte block, guarded/page)|*offset $2 (0x*): 0 bytes after the $2-byte block|READ faulted on the guard page after the block|read_at|allocated by thread T*")
done

check() { # description, glob, text
    if ! printf '%s\n' "$3" | grep -q . || ! printf '%s\n' "$3" | while IFS= read -r l; do
        [[ "$l" == $2 ]] && exit 0; done; then
        echo "FAIL $1: no line matching: $2"; return 1
    fi
    return 0
}

for c in "${cases[@]}"; do
    IFS='|' read -r cmd first offset rw fn more <<< "$c"
    prog=${cmd%% *} args=${cmd#"$prog"}
    src=$(ls "$srcdir/$prog".c* 2>/dev/null | head -1)
    line=$(grep -n 'ACCESS' "$src" | head -1 | cut -d: -f1)
    n=$((n + 1))
    # shellcheck disable=SC2086
    err=$(HEAPLEDGER_OPTIONS=$opts LD_PRELOAD=$lib timeout 60 "$bindir/$prog" $args 2>&1 >/dev/null)
    rc=$?
    name="$cmd [$opts]"
    if [ "$rc" -ne 134 ]; then
        echo "FAIL $name: exit status $rc, want 134 (SIGABRT)"; printf '%s\n' "$err" | head -8
        fail=1; continue
    fi
    ok=1
    check "$name" "heapledger: ERROR: $first" "$err" || ok=0
    check "$name" "  bad byte at $offset" "$err" || ok=0
    check "$name" "  $rw" "$err" || ok=0
    check "$name" "    #0 0x* in $fn+0x* */$(basename "$src"):$line (/*+0x*)" "$err" || ok=0
    check "$name" "$more" "$err" || ok=0
    check "$name" "SUMMARY: heapledger: ${first%% *} */$(basename "$src"):$line in $fn" "$err" || ok=0
    if [ $ok -eq 1 ]; then
        echo "ok   $name: $(printf '%s\n' "$err" | sed -n 3p | sed 's/^ *//')"
    else
        printf '%s\n' "$err" | head -12; fail=1
    fi
done

# Faults that are not ours: the program's own handler, or death by SIGSEGV, no report.
n=$((n + 2))
out=$(HEAPLEDGER_OPTIONS=$opts LD_PRELOAD=$lib timeout 60 "$bindir/own_segv" handler 2>&1)
rc=$?
if [ $rc -ne 7 ] || [ "$out" != "own handler: SIGSEGV" ]; then
    echo "FAIL own_segv handler [$opts]: status $rc, output: $out"; fail=1
else
    echo "ok   own_segv handler [$opts]: the program's handler got its SIGSEGV"
fi
err=$(HEAPLEDGER_OPTIONS=$opts LD_PRELOAD=$lib timeout 60 "$bindir/own_segv" 2>&1)
rc=$?
if [ $rc -ne 139 ] || printf '%s\n' "$err" | grep -q heapledger; then
    echo "FAIL own_segv [$opts]: status $rc (want 139, SIGSEGV), output: $err"; fail=1
else
    echo "ok   own_segv [$opts]: died of SIGSEGV, no report"
fi

# harden=1 samples the same protection: with guard=sample:1 every block is guarded.
n=$((n + 1))
err=$(HEAPLEDGER_OPTIONS=harden=1,guard=sample:1 LD_PRELOAD=$lib timeout 60 "$bindir/uaf_read" 2>&1 >/dev/null)
rc=$?
if [ $rc -ne 134 ] || ! printf '%s\n' "$err" | grep -q '^  READ faulted on a freed block'; then
    echo "FAIL uaf_read [harden=1,guard=sample:1]: status $rc"; printf '%s\n' "$err" | head -5; fail=1
else
    echo "ok   uaf_read [harden=1,guard=sample:1]: READ caught at the access"
fi
echo "full guard: $n cases, $([ $fail -eq 0 ] && echo all passed || echo FAILURES)"
exit $fail
