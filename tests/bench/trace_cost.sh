#!/usr/bin/env bash
# heapledger benchmarks — the traced program's instructions per event, split by who spends
# them (issue 12; docs/PERFORMANCE.md "The traced program's cost per event").
#
# usage: tests/bench/trace_cost.sh [BUILD]        (default build; `make bench-trace-cost`)
#   Records, with `heapledger record`, `valgrind --tool=callgrind` running
#     record_bench N     N × (malloc, touch, free): the allocator traced, --stacks 0 and 16
#     tp_floor N         the same events through LTTng-UST alone (tests/bench/tp_floor.c)
#   at N and 2N pairs, and prints per event (Ir(2N) − Ir(N)) / 2N, so that start-up and exit
#   cancel out, per the RESULT protocol of tests/bench/bench.h:
#     trace.CASE.total     the whole program
#     trace.CASE.lttng     inside the probes (lttng_ust__event_probe__heapledger___*): the
#                          probe, LTTng-UST's ring buffer reserve/write/commit, its clock and
#                          CPU reads
#     trace.CASE.tp_rcu    the tracepoint call's RCU read side (lttng_ust_tp_rcu_*)
#     trace.CASE.stacks    stack capture, interning and the tracer-frame test (liballoc/stack.c:
#                          hl_stack_capture_user, hl_stack_intern, hl_stack_in_tracer)
#     trace.CASE.ours      the rest: the malloc shim's traced path, the allocator, the emit
#                          functions and the call sites (and the loop: 6–12 instructions)
#   and trace.above_floor: record_bench --stacks 0 minus tp_floor, heapledger's own share.
# N: TRACE_COST_N (default 100000). Needs valgrind and a session daemon `record` can start.
set -euo pipefail
BUILD=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
hl=$root/$BUILD/bin/heapledger
rb=$root/$BUILD/tests/e2e/record_bench
fl=$root/$BUILD/bench/bin/tp_floor
n=${TRACE_COST_N:-100000}
command -v valgrind >/dev/null || { echo "trace_cost.sh: valgrind not installed" >&2; exit 1; }
for f in "$hl" "$rb" "$fl"; do
    [ -x "$f" ] || { echo "trace_cost.sh: $f not built (make bench-trace-cost builds it)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/hl-trace-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ir STACKS PROGRAM ITER [FUNCTION…] -> Ir of a recorded run under callgrind: the whole
# program, or only inside the calls to FUNCTION (inclusive, --toggle-collect; globs allowed).
ir() {
    local st=$1 prog=$2 it=$3 opts=() f
    shift 3
    [ $# -gt 0 ] && opts=(--collect-atstart=no)
    for f in "$@"; do opts+=(--toggle-collect="$f"); done
    "$hl" record --stacks "$st" -f -o "$tmp/x.db" -- valgrind --tool=callgrind "${opts[@]}" \
        --callgrind-out-file="$tmp/cg" "$prog" "$it" >"$tmp/log" 2>&1 || {
        echo "trace_cost.sh: recording $prog under callgrind failed:" >&2; tail -5 "$tmp/log" >&2
        exit 1; }
    awk '/^summary:/ {print $2}' "$tmp/cg"
}
# per STACKS PROGRAM [FUNCTION…] -> instructions per event over the 2N - N extra events
per() {
    local a b
    a=$(ir "$1" "$2" "$n" "${@:3}")
    b=$(ir "$1" "$2" "$((2 * n))" "${@:3}")
    awk -v a="$a" -v b="$b" -v e="$((2 * n))" 'BEGIN { printf "%.1f", (b - a) / e }'
}
for c in s0:0:$rb s16:16:$rb floor:0:$fl; do
    IFS=: read -r name st prog <<<"$c"
    t=$(per "$st" "$prog")
    l=$(per "$st" "$prog" 'lttng_ust__event_probe__heapledger___*')
    r=$(per "$st" "$prog" 'lttng_ust_tp_rcu_*')
    s=0
    [ "$st" != 0 ] && s=$(per "$st" "$prog" hl_stack_capture_user hl_stack_intern hl_stack_in_tracer)
    awk -v c="$name" -v t="$t" -v l="$l" -v r="$r" -v s="$s" 'BEGIN {
        printf "RESULT trace.%s.total %.1f instr lower\n", c, t
        printf "RESULT trace.%s.lttng %.1f instr lower\n", c, l
        printf "RESULT trace.%s.tp_rcu %.1f instr lower\n", c, r
        printf "RESULT trace.%s.stacks %.1f instr lower\n", c, s
        printf "RESULT trace.%s.ours %.1f instr lower\n", c, t - l - r - s
    }' | tee -a "$tmp/results"
done
awk '$2 == "trace.s0.total" { a = $3 } $2 == "trace.floor.total" { f = $3 }
     END { printf "RESULT trace.above_floor %.1f instr lower\n", a - f }' "$tmp/results"
