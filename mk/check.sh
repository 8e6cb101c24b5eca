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
flaky=()
start=$(date +%s)
for t in "$@"; do
    t0=$(date +%s)
    "$make" --no-print-directory "$t" 2>&1 | tee "$logdir/$t.log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ] && [ "${CHECK_RETRY:-1}" = 1 ]; then
        # One more run of a failed suite, so that a failure of the loaded machine (a timeout,
        # a scheduling race) is told apart from a broken build: the first run's log is kept,
        # and a suite that passes only the second time is named as flaky below.
        mv "$logdir/$t.log" "$logdir/$t.first.log"
        echo "check: $t: FAILED (exit $rc); running it once more (first run: $logdir/$t.first.log)"
        "$make" --no-print-directory "$t" 2>&1 | tee "$logdir/$t.log"
        rc2=${PIPESTATUS[0]}
        [ "$rc2" -eq 0 ] && flaky+=("$t")
        rc=$rc2
    fi
    if [ "$rc" -eq 0 ]; then
        verdict=passed
        [[ " ${flaky[*]} " == *" $t "* ]] && verdict="passed the second time (FLAKY)"
    else
        verdict="FAILED (exit $rc)"
        failed+=("$t")
    fi
    echo "check: $t: $verdict in $(($(date +%s) - t0)) s" | tee -a "$logdir/summary.txt"
done
echo
echo "check: ${#failed[@]} of $# targets failed, $(($(date +%s) - start)) s in all"
for t in "${flaky[@]}"; do
    echo "---- FLAKY $t: failed once, then passed (first run: $logdir/$t.first.log) ----"
    grep -E 'FAIL|not ok|Error [0-9]|Crashing: [1-9]|Failing: [1-9]' "$logdir/$t.first.log" |
        grep -vE ', 0 failed|Failing: 0 \| Crashing: 0' | head -20
done
for t in "${failed[@]}"; do
    echo "---- $t (full output: $logdir/$t.log) ----"
    # The lines that name a failure, then the last lines of the target's output.
    grep -E 'FAIL|not ok|Error [0-9]|Crashing: [1-9]|Failing: [1-9]|\[FAIL\]|Assertion|error:' \
        "$logdir/$t.log" | grep -vE ', 0 failed|Failing: 0 \| Crashing: 0' | head -40
    echo "  [last lines]"
    tail -n 15 "$logdir/$t.log" | sed 's/^/  /'
done
[ "${#failed[@]}" -eq 0 ]
