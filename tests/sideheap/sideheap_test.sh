#!/usr/bin/env bash
# tests/sideheap/sideheap_test.sh — the tracer's memory is not the program's.
#
# LTTng-UST's, libunwind's and heapledger's own tracing allocations are served by the side heap
# (liballoc/sideheap.c), so a program run under `heapledger record` sees its heap, and a fixed
# arena, exactly as it does untraced; the recording holds none of the tracer's blocks.
# Real lttng-sessiond (record starts one when none runs), real allocator, real CLI.
#
#   arena_small    malloc/free 100 B in arena=256K: the same in-use bytes traced and untraced
#   arena_random   a random workload in arena=256K until the first failure: the same failing
#                  allocation (index and size) and utilisation within 0.5 points
#   no_tracer      the database holds no "-ust" thread, no frame in LTTng-UST, no free of a
#                  block it never saw allocated
#   fork_exact     fork without exec: the child's blocks are exactly its own (LTTng-UST's fork
#                  handler frees the parent's tracer blocks in the child: none recorded)
#   dlopen_python  python3 importing extension modules: LTTng-UST's statedump after each
#                  dlopen (and liblttng-ust-dl's build-id reading) allocates on the program's
#                  thread while tracing is on; none of it is recorded
#
# usage: BUILD=build tests/sideheap/sideheap_test.sh [TEST...]      (default: all)
# PROG overrides the test program (to run this suite against another build).
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
HL=$B/bin/heapledger
LIB=$B/lib/libheapledger.so
PROG=${PROG:-$B/tests/sideheap/arena_work}
WORK=$(mktemp -d /tmp/hl-sideheap-test.XXXXXX)
pass=0 fail=0
failed=()

cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT

. "$ROOT/tests/checks.sh"
# The pid `record` started (its summary line "… ran 0.1 s (pid N)").
record_pid() { sed -n 's/.*(pid \([0-9]*\)).*/\1/p' "$1" | head -1; }
in_pids() { echo "pid IN ($(echo "$@" | tr ' ' ','))"; }

untraced() { HEAPLEDGER_OPTIONS=$1 LD_PRELOAD=$LIB "${@:2}"; }
record() { # record NAME OPTIONS PROG ARGS... -> $WORK/NAME.db, program output in NAME.out
    local name=$1 opts=$2
    shift 2
    (cd "$WORK" && HEAPLEDGER_OPTIONS=$opts "$HL" record -o "$WORK/$name.db" -- "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err")
}

test_arena_small() {
    local u t
    u=$(untraced arena=256K "$PROG" small) || { note "FAIL: untraced run"; return 1; }
    record small arena=256K "$PROG" small || { note "FAIL: record"; cat "$WORK/small.err"; return 1; }
    t=$(grep '^inuse' "$WORK/small.out")
    check "in-use bytes after malloc/free of 100 B (traced vs untraced)" "$u" "$t"
}

test_arena_random() {
    local u t ok=0
    u=$(untraced arena=256K "$PROG" random 262144 7) || { note "FAIL: untraced run"; return 1; }
    record random arena=256K "$PROG" random 262144 7 || {
        note "FAIL: record"; cat "$WORK/random.err"; return 1; }
    t=$(grep '^fail' "$WORK/random.out")
    note "untraced: $u"
    note "recorded: $t"
    # fields: fail index I size S live R util U
    check "first failing allocation (index, size)" "$(echo "$u" | cut -d' ' -f3,5)" \
        "$(echo "$t" | cut -d' ' -f3,5)" || ok=1
    awk -v a="$(echo "$u" | cut -d' ' -f9)" -v b="$(echo "$t" | cut -d' ' -f9)" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 0.005) }' || {
        note "FAIL: utilisation differs by more than 0.5 points"; ok=1; }
    # The database agrees with the program: its first failed allocation is that one.
    local pid
    pid=$(record_pid "$WORK/random.err")
    check "size of the first failed allocation in the database" "$(echo "$u" | cut -d' ' -f5)" \
        "$(sql "$WORK/random.db" "SELECT size FROM block WHERE pid = $pid AND ptr = 0 ORDER BY alloc_ts LIMIT 1")" ||
        ok=1
    return $ok
}

test_no_tracer() {
    local db=$WORK/random.db pid ok=0
    [ -f "$db" ] || record random arena=256K "$PROG" random 262144 7 || return 1
    pid=$(record_pid "$WORK/random.err")
    check "threads of the program" 1 \
        "$(sql "$db" "SELECT count(*) FROM thread WHERE pid = $pid")" || ok=1
    check "threads named *-ust" 0 \
        "$(sql "$db" "SELECT count(*) FROM thread WHERE name LIKE '%-ust'")" || ok=1
    check "stack frames inside LTTng-UST or the probe provider" 0 \
        "$(sql "$db" "SELECT count(*) FROM frame WHERE module LIKE '%lttng%' OR module LIKE '%heapledger-tp%'")" ||
        ok=1
    check "frees of blocks never seen allocated" 0 \
        "$(sql "$db" "SELECT count(*) FROM orphan_free WHERE pid = $pid")" || ok=1
    return $ok
}

test_fork_exact() {
    local db=$WORK/fork.db parent child ok=0
    record fork "" "$PROG" fork || { note "FAIL: record"; cat "$WORK/fork.err"; return 1; }
    parent=$(sed -n 1p "$WORK/fork.out" | cut -d' ' -f2)
    child=$(sed -n 2p "$WORK/fork.out" | cut -d' ' -f2)
    # The parent: its 3 blocks, freed, and stdout's buffer (printf after the child ended).
    check "the parent's blocks, freed" "4 3" \
        "$(sql "$db" "SELECT count(*) || ' ' || sum(free_ts IS NOT NULL) FROM block WHERE pid = $parent")" ||
        ok=1
    check "the child's blocks, freed" "5 4" \
        "$(sql "$db" "SELECT count(*) || ' ' || sum(free_ts IS NOT NULL) FROM block WHERE pid = $child")" ||
        ok=1
    check "frees in the child of blocks it never allocated" 0 \
        "$(sql "$db" "SELECT count(*) FROM orphan_free WHERE pid = $child")" || ok=1
    return $ok
}

test_dlopen_python() {
    local db=$WORK/py.db pid ok=0
    record py "" /usr/bin/python3 -c 'import json, ctypes, decimal, sqlite3' || {
        note "FAIL: record"; cat "$WORK/py.err"; return 1; }
    pid=$(record_pid "$WORK/py.err")
    [ "$(sql "$db" "SELECT count(*) FROM block WHERE pid = $pid")" -gt 1000 ] || {
        note "FAIL: python3's own blocks are missing"; ok=1; }
    # liblttng-ust-dl's dlopen may appear as a caller of the loader's work for the program's
    # dlopen (the program's memory); LTTng-UST's own libraries never.
    check "stack frames inside LTTng-UST's libraries" 0 \
        "$(sql "$db" "SELECT count(*) FROM frame WHERE module LIKE '%liblttng-ust.so%' OR module LIKE '%liblttng-ust-common%' OR module LIKE '%liblttng-ust-tracepoint%'")" ||
        ok=1
    check "blocks allocated by liblttng-ust-dl's own code" 0 \
        "$(sql "$db" "SELECT count(*) FROM frame f WHERE f.depth = 0 AND f.module LIKE '%liblttng-ust-dl%'")" ||
        ok=1
    return $ok
}

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(arena_small arena_random no_tracer fork_exact dlopen_python)
for t in "${tests[@]}"; do
    echo "sideheap: $t"
    if "test_$t"; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        failed+=("$t")
    fi
done
echo "sideheap: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ "$fail" -eq 0 ]
