#!/usr/bin/env bash
# What an untraced process maps (docs/allocator.md, "Fixed cost per process"): neither libunwind
# (nor liblzma, which it pulls in) nor LTTng-UST's tracepoint library, until a stack is captured;
# hardened mode, which captures stacks, loads libunwind at its first capture and its reports
# still carry the stacks.
# usage: lazy_load.sh LIBHEAPLEDGER.so
set -u
lib=$1
pass=0 fail=0
check() { # name, condition result
    if [ "$2" -eq 0 ]; then echo "lazy_load [$1]: ok"; pass=$((pass + 1)); else
        echo "lazy_load [$1]: FAILED"; fail=$((fail + 1)); fi
}
maps=$(LD_PRELOAD=$lib cat /proc/self/maps)
grep -q libheapledger <<<"$maps" && ! grep -q 'libunwind\|liblzma\|liblttng' <<<"$maps"
rc=$?
check "untraced: libunwind, liblzma, LTTng-UST not mapped ($(grep -o '[^/]*\(unwind\|lzma\|lttng\)[^ ]*' <<<"$maps" | sort -u | tr '\n' ' '))" $rc
maps=$(LD_PRELOAD=$lib python3 -c 'import threading; t=threading.Thread(target=lambda: [str(i) for i in range(1000)]); t.start(); t.join(); print(open("/proc/self/maps").read())')
! grep -q 'libunwind\|liblttng' <<<"$maps"
check "untraced python with a thread: nothing loaded" $?
maps=$(HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD=$lib cat /proc/self/maps)
grep -q libheapledger <<<"$maps" && ! grep -q 'libunwind\|liblzma\|liblttng' <<<"$maps"
check "harden=1: stacks captured, fault handler installed, libunwind not loaded (no walk deferred)" $?
maps=$(HEAPLEDGER_OPTIONS=harden=1,unwind=libunwind LD_PRELOAD=$lib cat /proc/self/maps)
grep -q 'libunwind' <<<"$maps" && ! grep -q 'liblttng' <<<"$maps"
check "harden=1,unwind=libunwind: libunwind loaded at the first capture, LTTng-UST not" $?
maps=$(HEAPLEDGER_OPTIONS=harden=1,stacks=0 LD_PRELOAD=$lib cat /proc/self/maps)
! grep -q 'libunwind' <<<"$maps"
check "harden=1,stacks=0: no capture, libunwind not loaded" $?
# A double free's report names the stacks of the allocation, the first free and the second.
err=$(HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD=$lib python3 -c '
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
p = libc.malloc(40)
libc.free(ctypes.c_void_p(p))
libc.free(ctypes.c_void_p(p))' 2>&1)
[ "$(grep -c '^ *#0 ' <<<"$err")" -ge 2 ]
rc=$?
check "harden=1 report carries stacks ($(grep -m1 'ERROR' <<<"$err"))" $rc
echo "lazy_load: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
