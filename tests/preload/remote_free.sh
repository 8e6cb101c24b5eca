#!/usr/bin/env bash
# Cross-thread frees (remote_free.c) in the default mode, without thread caches, and under
# harden=1 (without quarantine, so that every freed block really goes back): after each
# phase, with every thread joined and malloc_trim(0), the bytes in use, the tiny slabs and the
# per-class slot counts must be the same after both phases and at most 4 KiB in use (glibc's
# thread bookkeeping kept with its cached thread stacks: no workload block may be left; 12 KiB
# under harden=1, whose first stack capture loads libunwind), and
# the second phase must get along with the memory of the first (held from the OS at most half
# as much again: what the first phase freed was reusable). With the default quarantine only
# the heap check and the contents are checked (the quarantine keeps blocks).
# usage: remote_free.sh LIBHEAPLEDGER.so REMOTE_FREE_BINARY
set -u
lib=$1 prog=$2
pass=0 fail=0
tmp=$(mktemp -d /tmp/remote_free.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# field STATS_FILE PHASE PATTERN: the value after PATTERN in phase PHASE's statistics.
field() {
    awk -v ph="$2" -v pat="$3" '/heap statistics of pid/ { n++ }
        n == ph && index($0, pat) == 1 { v = substr($0, length(pat) + 1); gsub(/^ +/, "", v)
                                         print v; exit }' "$1"
}

# classes STATS_FILE PHASE: the per-class table of phase PHASE.
classes() {
    awk -v ph="$2" '/heap statistics of pid/ { n++; t = 0 } n == ph && /^  class/ { t = 1; next }
        n == ph && t && NF == 0 { exit } n == ph && t { print }' "$1"
}

to_kib() {
    awk '{ m = ($2 == "GiB") ? 1048576 : ($2 == "MiB") ? 1024 : ($2 == "KiB") ? 1 : 1 / 1024
           printf "%d", $1 * m }' <<<"$1"
}

for opts in "" "tcache=0" "harden=1,quarantine=0" "harden=1"; do
    out=$(HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" timeout 240 "$prog" 3 40000 2>"$tmp/err")
    rc=$?
    why=""
    if [ $rc -ne 0 ] || [ "$out" != "remote_free: ok" ]; then
        why="status $rc: $out $(grep -v '^ ' "$tmp/err" | head -3)"
    elif [ "$opts" != "harden=1" ]; then
        u1=$(field "$tmp/err" 1 "  in use (usable)")
        u2=$(field "$tmp/err" 2 "  in use (usable)")
        s1=$(field "$tmp/err" 1 "  tiny slabs")
        s2=$(field "$tmp/err" 2 "  tiny slabs")
        h1=$(field "$tmp/err" 1 "  held from the OS")
        h2=$(field "$tmp/err" 2 "  held from the OS")
        [ -n "$u1" ] && [ -n "$s1" ] && [ -n "$h1" ] || why=" no heap statistics on stderr;"
        [ "$u1" = "$u2" ] || why="$why in use after phase 1 '$u1', after phase 2 '$u2';"
        # Hardened mode captures stacks: its first capture dlopens libunwind (liballoc/
        # unwind_load.c), and the dynamic loader keeps about 7 KiB of the heap for the library
        # for the rest of the run.
        bound=4
        case $opts in harden=1*) bound=12 ;; esac
        [ "$(to_kib "$u1")" -le $bound ] || why="$why in use '$u1' after every block was freed (at most $bound KiB);"
        [ "$s1" = "$s2" ] || why="$why tiny slabs after phase 1 '$s1', after phase 2 '$s2';"
        [ "$(classes "$tmp/err" 1)" = "$(classes "$tmp/err" 2)" ] ||
            why="$why per-class slot counts differ between the phases;"
        # The peak of the second phase may be higher (thread timing): half as much again.
        [ "$(to_kib "$h2")" -le $(($(to_kib "$h1") * 3 / 2)) ] ||
            why="$why held from the OS grew from $h1 to $h2 (memory of phase 1 not reused);"
    fi
    if [ -z "$why" ]; then
        echo "remote free [${opts:-defaults}]: ok"
        pass=$((pass + 1))
    else
        echo "remote free [${opts:-defaults}]: FAILED:$why"
        sed 's/^/    /' "$tmp/err" | head -40
        fail=$((fail + 1))
    fi
done
echo "remote free: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
