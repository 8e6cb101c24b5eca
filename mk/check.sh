#!/usr/bin/env bash
# Runs each check target in turn (keep going on failure), keeps each one's output in
# $BUILD/check/<target>.log and ends with a summary naming every failed target and the
# lines of its output that say what failed, so the tail of a CI log tells the whole story.
set -u
build=${BUILD:-build}
make=${MAKE:-make}
logdir="$build/check"
mkdir -p "$logdir"
failed=()
start=$(date +%s)
for t in "$@"; do
    t0=$(date +%s)
    "$make" --no-print-directory "$t" 2>&1 | tee "$logdir/$t.log"
    rc=${PIPESTATUS[0]}
    echo "check: $t: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)") in $(($(date +%s) - t0)) s" |
        tee -a "$logdir/summary.txt"
    [ "$rc" -eq 0 ] || failed+=("$t")
done
echo
echo "check: ${#failed[@]} of $# targets failed, $(($(date +%s) - start)) s in all"
for t in "${failed[@]}"; do
    echo "---- $t (full output: $logdir/$t.log) ----"
    # The lines that name a failure, then the last lines of the target's output.
    grep -E 'FAIL|not ok|Error [0-9]|Crashing: [1-9]|Failing: [1-9]|\[FAIL\]|Assertion|error:' \
        "$logdir/$t.log" | grep -vE ', 0 failed|Failing: 0 \| Crashing: 0' | head -40
    echo "  [last lines]"
    tail -n 15 "$logdir/$t.log" | sed 's/^/  /'
done
[ "${#failed[@]}" -eq 0 ]
