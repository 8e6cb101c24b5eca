#!/usr/bin/env bash
# tests/bench/tp_floor_test.sh — the floor program (tests/bench/tp_floor.c) emits what the
# allocator's call sites emit: recorded by the real `heapledger record` (its own session
# daemon), every one of its N alloc/free pairs must come out of the ingest as a block with the
# values it passed through the schemas/heapledger_tp.h word builders (pointer, sizes, tier,
# class, both paths, both cycle counts, its own pid and tid), and nothing may be lost.
# The figures trace_cost.sh takes from it are only a floor if that holds.
#
# usage: BUILD=build tests/bench/tp_floor_test.sh        (`make tp-floor-check`)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=$ROOT/$BUILD/bin/heapledger
FLOOR=$ROOT/$BUILD/bench/bin/tp_floor
WORK=$(mktemp -d /tmp/hl-tp-floor-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
N=3000
fail() { echo "tp_floor_test: FAIL: $*" >&2; exit 1; }

"$HL" record --stacks 0 -f -o "$WORK/f.db" -- "$FLOOR" "$N" >"$WORK/out" 2>"$WORK/err" ||
    fail "record exited $? ($(tail -3 "$WORK/err"))"
grep -q "^events $((2 * N)) cpu_ns_per_event " "$WORK/out" || fail "tp_floor printed: $(cat "$WORK/out")"
pid=$(sed -n "s/.* ran .* (pid \([0-9]*\)).*/\1/p" "$WORK/err")
[ -n "$pid" ] || fail "no pid in record's output: $(cat "$WORK/err")"
q() { sqlite3 "$WORK/f.db" "$1"; }
[ "$(q 'SELECT discarded_events FROM run')" = 0 ] || fail "events discarded"
# The floor's blocks: pointers 0x100000000 + k * 0x80, sizes 32 + k (k = i mod 64).
want="$N"
got=$(q "SELECT count(*) FROM block b
         JOIN path a ON a.id = b.alloc_path JOIN path f ON f.id = b.free_path
         WHERE b.pid = $pid AND b.alloc_tid = $pid AND b.free_tid = $pid
           AND b.ptr >= 4294967296 AND b.ptr < 4294967296 + 64 * 128
           AND (b.ptr - 4294967296) / 128 = b.size - 32 AND b.usable = b.size + 15
           AND b.tier = 1 AND b.class = 3 AND a.name = 'tiny_cache_hit'
           AND f.name = 'tiny_cache_push' AND b.alloc_cycles = 20 AND b.free_cycles = 16
           AND b.free_seq = b.alloc_seq + 1")
[ "$got" = "$want" ] || fail "$got of $want blocks as emitted (pid $pid); the first rows:
$(q "SELECT * FROM block WHERE pid = $pid AND ptr >= 4294967296 LIMIT 3")"
echo "tp_floor_test: ok ($N pairs recorded and stored as emitted)"
