#!/usr/bin/env bash
# A signal the program raises or is sent, and a fault that is not heapledger's, reach the
# program exactly as without heapledger (tests/harden/signals.c): same exit status (killed
# by the same signal), same output, in the default mode and under harden=1 / guard=all. Then
# heapledger's own guard-page detection still works after such a signal.
# usage: signals.sh LIBHEAPLEDGER.so SIGNALS_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
run() { # OUT_VAR_PREFIX OPTIONS PRELOAD CASE
    local out rc
    out=$(env HEAPLEDGER_OPTIONS="$2" ${3:+LD_PRELOAD=$3} "$prog" "$4" 2>&1)
    rc=$?
    printf '%s|%s' "$rc" "$out"
}
for case in raise kill sigbus null handler signal reraise fault_handler ignored; do
    ref=$(run ref "" "" "$case")
    for opts in "" "harden=1" "harden=1,guard=all"; do
        got=$(run got "$opts" "$lib" "$case")
        if [ "$got" = "$ref" ]; then
            pass=$((pass + 1))
        else
            echo "signals [$case, ${opts:-defaults}]: FAILED"
            echo "  without heapledger: ${ref//$'\n'/ / }"
            echo "  with heapledger:    ${got//$'\n'/ / }"
            fail=$((fail + 1))
        fi
    done
done
# After an ignored SIGSEGV the handler is still ours: a guard-page overflow is reported.
out=$(SIGNALS_OVERFLOW=1 HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD="$lib" "$prog" ignored 2>&1)
if grep -q "ERROR: heap-overflow" <<<"$out" && ! grep -q "overflow not caught" <<<"$out"; then
    pass=$((pass + 1))
else
    echo "signals [guard page after an ignored SIGSEGV]: FAILED: $out" | head -5
    fail=$((fail + 1))
fi
echo "signals: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
