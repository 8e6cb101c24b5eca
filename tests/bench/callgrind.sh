#!/usr/bin/env bash
# heapledger benchmarks — instructions per operation on the tiny cache-hit path, measured
# with valgrind's callgrind on `fastpath loop N` (N × { p = malloc(64); free(p); }).
#
# usage: tests/bench/callgrind.sh NAME [PRELOAD_LIB]
#   Runs the loop with N and 2N iterations under `valgrind --tool=callgrind` (LD_PRELOAD =
#   PRELOAD_LIB, empty = glibc) and prints, per the RESULT protocol of tests/bench/bench.h:
#     callgrind.loop    (Ir(2N) − Ir(N)) / N over the whole program: one loop iteration
#                       (malloc + free + the loop and call overhead); start-up cancels out
#     callgrind.malloc  the same difference counting only inside malloc (inclusive, collected
#                       with --toggle-collect=malloc)
#     callgrind.free    the same for free
#     callgrind.pair    malloc + free
# BENCH_BIN: directory of the fastpath program (default build/bench/bin); BENCH_QUICK=1
# uses N = 2000 instead of 50000.
set -euo pipefail
name=${1:?usage: callgrind.sh NAME [PRELOAD_LIB]}
lib=${2:-}
bin=${BENCH_BIN:-build/bench/bin}/fastpath
n=50000
[ "${BENCH_QUICK:-0}" != 0 ] && n=2000
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not installed" >&2; exit 1; }
[ -x "$bin" ] || { echo "callgrind.sh: $bin not built" >&2; exit 1; }
[ -z "$lib" ] || [ -e "$lib" ] || { echo "callgrind.sh: $lib not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure ITER [FUNCTION] -> total Ir of the run, or only of the calls to FUNCTION (inclusive,
# collected with --toggle-collect, so it does not depend on how callgrind splits a function
# over the source files inlined into it).
measure() {
    local out="$tmp/cg.$1.${2:-all}" opts=()
    [ -n "${2:-}" ] && opts=(--collect-atstart=no --toggle-collect="$2")
    env ${lib:+LD_PRELOAD="$lib"} valgrind --tool=callgrind "${opts[@]}" \
        --callgrind-out-file="$out" "$bin" loop "$1" 64 >"$tmp/log" 2>&1 || {
        echo "callgrind.sh: valgrind failed for $name:" >&2; tail -5 "$tmp/log" >&2; exit 1; }
    awk '/^summary:/ {print $2}' "$out"
}
t1=$(measure "$n"); t2=$(measure "$((2 * n))")
m1=$(measure "$n" malloc); m2=$(measure "$((2 * n))" malloc)
f1=$(measure "$n" free); f2=$(measure "$((2 * n))" free)
awk -v n="$n" -v t1="$t1" -v t2="$t2" -v m1="$m1" -v m2="$m2" -v f1="$f1" -v f2="$f2" 'BEGIN {
    printf "RESULT callgrind.loop %.2f instr lower\n", (t2 - t1) / n
    if (m2 - m1 > 0 && f2 - f1 > 0) {
        printf "RESULT callgrind.malloc %.2f instr lower\n", (m2 - m1) / n
        printf "RESULT callgrind.free %.2f instr lower\n", (f2 - f1) / n
        printf "RESULT callgrind.pair %.2f instr lower\n", (m2 - m1 + f2 - f1) / n
    } else {
        print "callgrind.sh: no instructions counted inside malloc/free (symbols named otherwise?)" > "/dev/stderr"
    }
}'
