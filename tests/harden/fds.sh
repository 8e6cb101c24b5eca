#!/usr/bin/env bash
# No descriptor of heapledger's is visible to the program (tests/harden/fds.c): the open
# descriptors at main, after allocations that capture stacks and after threads, and the
# lowest free one, are those of the run without heapledger.
# usage: fds.sh LIBHEAPLEDGER.so FDS_BINARY
set -u
lib=$1 prog=$2
ref=$("$prog" 2>&1)
fail=0
for opts in "" "harden=1" "harden=1,stacks=32" "harden=1,guard=all"; do
    got=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" "$prog" 2>&1)
    if [ "$got" = "$ref" ]; then
        echo "fds [${opts:-defaults}]: ok"
    else
        echo "fds [${opts:-defaults}]: FAILED"
        echo "  without heapledger: ${ref//$'\n'/ / }"
        echo "  with heapledger:    ${got//$'\n'/ / }"
        fail=1
    fi
done
exit $fail
