#!/usr/bin/env bash
# tests/harden/run_bugs.sh LIB BINDIR SRCDIR — run each buggy program of the corpus under
# LD_PRELOAD=LIB with HEAPLEDGER_OPTIONS=harden=1 (or the program's own "OPTIONS:" line) and
# check that it dies of SIGABRT with the first report line its source names ("EXPECT:",
# a glob pattern), that a frame of main carries the program's own file:line and its
# module+offset (the programs are built with -g; the library execs ../bin/heapledger-symbolize),
# and that the report ends with a SUMMARY line.
set -u
lib=$1 bindir=$2 srcdir=$3
fail=0 n=0
for src in "$srcdir"/*.c "$srcdir"/*.cc; do
    [ -e "$src" ] || continue
    name=$(basename "${src%.*}")
    want=$(sed -n 's|.*EXPECT: \(.*\)|\1|p' "$src" | head -1 | sed 's| \*/$||')
    opts=$(sed -n 's|.*OPTIONS: \(.*\)|\1|p' "$src" | head -1 | sed 's| \*/$||')
    [ -n "$want" ] || { echo "FAIL $name: no EXPECT line"; fail=1; continue; }
    n=$((n + 1))
    err=$(HEAPLEDGER_OPTIONS=${opts:-harden=1} LD_PRELOAD=$lib "$bindir/$name" 2>&1 >/dev/null)
    rc=$?
    got=$(printf '%s\n' "$err" | grep -m1 '^heapledger: ERROR')
    if [ "$rc" -ne 134 ]; then
        echo "FAIL $name: exit status $rc, want 134 (SIGABRT)"; printf '%s\n' "$err" | head -5
        fail=1
    elif [[ "$got" != $want ]]; then
        echo "FAIL $name: first report line"; echo "  want: $want"; echo "  got:  $got"
        fail=1
    elif ! printf '%s\n' "$err" | grep -q 'in main+0x'; then
        echo "FAIL $name: the report's stacks do not name main"; printf '%s\n' "$err" | head -12
        fail=1
    elif ! printf '%s\n' "$err" | grep -Eq "in main\+0x[0-9a-f]+ [^ ]*$name\.cc?:[0-9]+ \(/"; then
        echo "FAIL $name: no frame of main with $name.c:LINE and (module+offset)"
        printf '%s\n' "$err" | head -12
        fail=1
    elif ! printf '%s\n' "$err" | grep -Eq "^SUMMARY: heapledger: [a-z-]+ "; then
        echo "FAIL $name: no SUMMARY line"; printf '%s\n' "$err" | tail -4
        fail=1
    else
        echo "ok   $name: $got"
    fi
done
echo "bugs: $n programs, $([ $fail -eq 0 ] && echo all passed || echo FAILURES)"
exit $fail
