#!/bin/sh
# tests/bpf/bench.sh — cost of kernel events on an allocation-heavy run (make bpf-bench).
#
# Runs kchurn (ITER iterations, default 2,000,000) under libheapledger.so (or glibc when it is
# not built), alternately with kernel events off and on (krun --off / krun), RUNS times each,
# and prints the minimum and median wall and CPU (user+sys) seconds of both and the
# overhead of the medians. Alternating runs keep machine noise from favouring one side.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-7}
ITER=${ITER:-2000000}
T=$BUILD/tests/bpf
LIB=$PWD/$BUILD/lib/libheapledger.so
[ -f "$LIB" ] && PRE="env LD_PRELOAD=$LIB" || PRE=env
W=$(mktemp -d /tmp/hl-bpf-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
for i in $(seq "$RUNS"); do
    for mode in off on; do
        flag=; [ $mode = off ] && flag=--off
        /usr/bin/time -f "%e %U %S" -o "$W/t" "$T/krun" $flag -- $PRE "$T/kchurn" "$ITER" 2>> "$W/$mode.log"
        awk '{ print $1, $2 + $3 }' "$W/t" >> "$W/$mode"
    done
done
stats() { # file column -> "min median"
    sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { printf "%.3f %.3f", v[1], v[int((NR + 1) / 2)] }'
}
echo "kernel events on kchurn $ITER iterations, $RUNS runs each ($([ -f "$LIB" ] && echo libheapledger.so || echo glibc)):"
for mode in off on; do
    set -- $(stats "$W/$mode" 1) $(stats "$W/$mode" 2)
    printf "  %-3s wall min %ss median %ss   cpu min %ss median %ss\n" $mode "$1" "$2" "$3" "$4"
    eval "${mode}_wall=$2 ${mode}_cpu=$4"
done
ev=$(sed -n 's/.*events=\([0-9]*\).*/\1/p' "$W/on.log" | tail -1)
echo "  events per run: $ev"
awk -v a="$off_wall" -v b="$on_wall" -v c="$off_cpu" -v d="$on_cpu" 'BEGIN {
    printf "  overhead of medians: wall %+.1f%%, cpu %+.1f%%\n", 100 * (b / a - 1), 100 * (d / c - 1) }'

# The target: `heapledger record --kernel` against `heapledger record`, whole command (run,
# trace, ingest, kernel events stored), alternating.
CLI=$BUILD/bin/heapledger
if [ -f "$LIB" ] && command -v lttng-sessiond > /dev/null && [ -x "$CLI" ]; then
    RITER=${RITER:-500000}
    RRUNS=${RRUNS:-5}
    for i in $(seq "$RRUNS"); do
        for mode in plain kernel; do
            flag=; [ $mode = kernel ] && flag=--kernel
            /usr/bin/time -f "%e %U %S" -o "$W/t" "$CLI" record $flag --force -o "$W/r.db" \
                -- "$T/kchurn" "$RITER" > /dev/null 2>&1
            awk '{ print $1, $2 + $3 }' "$W/t" >> "$W/rec_$mode"
        done
    done
    echo "heapledger record vs record --kernel on kchurn $RITER iterations, $RRUNS runs each:"
    for mode in plain kernel; do
        set -- $(stats "$W/rec_$mode" 1) $(stats "$W/rec_$mode" 2)
        printf "  %-6s wall min %ss median %ss   cpu min %ss median %ss\n" $mode "$1" "$2" "$3" "$4"
        eval "${mode}_wall=$2 ${mode}_cpu=$4"
    done
    echo "  kernel rows: $(sqlite3 "$W/r.db" 'select count(*) from kernel_event'), blocks: $(sqlite3 "$W/r.db" 'select count(*) from block')"
    awk -v a="$plain_wall" -v b="$kernel_wall" -v c="$plain_cpu" -v d="$kernel_cpu" 'BEGIN {
        printf "  overhead of medians: wall %+.1f%%, cpu %+.1f%%\n", 100 * (b / a - 1), 100 * (d / c - 1) }'
fi
