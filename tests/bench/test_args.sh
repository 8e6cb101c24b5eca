#!/usr/bin/env bash
# heapledger benchmarks — bad input gets a clear message: each case runs a benchmark program
# (or script) with bad arguments and checks the exit status and the message. Run by
# `make bench-quick`. BENCH_BIN: program directory (default build/bench/bin).
set -uo pipefail
bin=${BENCH_BIN:-build/bench/bin}
here=$(cd "$(dirname "$0")" && pwd)
fails=0

# expect STATUS PATTERN COMMAND… : COMMAND must exit with STATUS and print PATTERN (stdout
# or stderr, extended regex).
expect() {
    local want=$1 pat=$2 out rc
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -Eq -- "$pat" <<<"$out"; then
        echo "test_args: FAIL: $* -> exit $rc (want $want), output: $out" >&2
        fails=$((fails + 1))
    fi
}

expect 1 'usage: tiny' "$bin/tiny"
expect 1 "bad size 'x1'" "$bin/tiny" x1
expect 1 'size 2048 outside 1..1024' "$bin/tiny" 2048
expect 1 "bad op count '5Q': trailing characters" "$bin/tiny" 64 16 5Q
expect 1 'size and block count must be positive' "$bin/simple" 0 10
expect 1 'thread count must be 1..64' "$bin/thread" 0
expect 1 'frees must cross threads' "$bin/larson" 1
expect 1 'pair count must be 1..32' "$bin/prodcons" 99
expect 1 'usage: shbench' "$bin/shbench" local
expect 1 "mode must be 'local' or 'cross', not 'sideways'" "$bin/shbench" sideways 2
expect 1 'cross mode needs at least 2 threads' "$bin/shbench" cross 1
expect 1 'batch must be 2..1M blocks' "$bin/shbench" local 2 10 1
expect 1 'usage: alloctest' "$bin/alloctest"
expect 1 'alloctest: thread count must be 1..64' "$bin/alloctest" 0
expect 1 'live set must be 1..4M slots' "$bin/alloctest" 1 10 0
expect 1 "unknown distribution 'g999'" "$bin/arena_malloc" g999 plain
expect 1 "mode must be 'plain' or 'realloc'" "$bin/arena_malloc" g32 sometimes
expect 1 'needs the heap-API build' "$bin/arena_malloc" g32 plain harden=1
expect 3 '^SKIP option rejected: .*no_such_option' "$bin/arena_heap" g32 plain no_such_option=1
expect 3 '^SKIP option rejected' "$bin/nbe_heap" 100 15 8 no_such_option=1
expect 1 'arena must be at least 4K' "$bin/util_heap" 1K
expect 1 'usage: fastpath' "$bin/fastpath" sideways
expect 1 'usage: large' "$bin/large" 4 10 5M
expect 1 'slot count must be 1..64' "$bin/large" 0
expect 1 'sizes must satisfy 0 < MIN <= MAX' "$bin/large" 4 10 9M 8M
expect 1 "bad iterations 'many'" "$bin/large" 4 many
expect 1 'usage: churn' "$bin/churn" 1 2
expect 1 'churn: thread count must be 1..64' "$bin/churn" 1 0 10
expect 1 'generations and operations must be positive' "$bin/churn" 0 1 1
expect 2 'usage: launch' "$bin/launch"
expect 1 'usage: tp_floor N' "$bin/tp_floor"
expect 1 'usage: tp_floor N' "$bin/tp_floor" 12x
expect 127 'launch: cannot run /nonexistent' "$bin/launch" /dev/null /nonexistent
expect 1 'not found' env BENCH_BIN="$bin" "$here/callgrind.sh" x /nonexistent/lib.so
expect 1 'usage: callgrind.sh' "$here/callgrind.sh"
# The line model (linemodel.c): its mode is checked, and LINEMODEL_LINKS=side touches no block
# line at free (no free-link accesses), the default does.
model=${BENCH_LINEMODEL:-$bin/../lib/linemodel.so}
expect 2 "LINEMODEL_LINKS must be 'block' .* or 'side'" \
    env LINEMODEL_LINKS=inside LD_PRELOAD="$model" "$bin/shbench" cross 2 4 100
expect 0 'LINES free-link +accesses +0 ' \
    env LINEMODEL_LINKS=side LD_PRELOAD="$model" "$bin/shbench" cross 2 4 100
expect 0 'LINES free-link +accesses +[1-9]' env LD_PRELOAD="$model" "$bin/shbench" cross 2 4 100

if [ "$fails" -ne 0 ]; then
    echo "test_args: $fails case(s) failed" >&2
    exit 1
fi
echo "test_args: all bad-input cases give their message"
