#!/usr/bin/env bash
# tests/harden/full_big.sh LIB — gcc- and python-size programs under harden=full: gcc -O2 of
# a real file of this repository (liballoc/harden.c) and a python3 workload, each without
# heapledger, under harden=1 and under harden=full (LD_PRELOAD=LIB): same output and status,
# no report. Prints each run's wall and CPU time and peak RSS (GNU time when installed, else
# bash's time). Run from the repository root.
set -u
lib=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
tm() { # out-file, command...: run it, print "wall user sys maxrss"
    local out=$1; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -o "$tmp/time" -f '%e s wall, %U s user, %S s sys, %M KiB peak RSS' "$@" \
            > "$out" 2> "$tmp/err"
    else
        { TIMEFORMAT='%R s wall, %U s user, %S s sys'; time "$@" > "$out" 2> "$tmp/err"; } 2> "$tmp/time"
    fi
}
big() { # name, command...
    local name=$1; shift
    tm "$tmp/plain.out" "$@"; local rc1=$?
    echo "     $name [no heapledger]: $(tail -1 "$tmp/time")"
    for o in harden=1 harden=full; do
        HEAPLEDGER_OPTIONS=$o LD_PRELOAD=$lib tm "$tmp/hard.out" "$@"; local rc2=$?
        if grep -q '^heapledger: ERROR' "$tmp/err"; then
            echo "FAIL $name [$o]: false positive"; head -20 "$tmp/err"; fail=1
        elif [ $rc1 -ne $rc2 ] || ! cmp -s "$tmp/plain.out" "$tmp/hard.out"; then
            echo "FAIL $name [$o]: output or status differs ($rc1 vs $rc2)"; head "$tmp/err"; fail=1
        else
            echo "ok   $name [$o]: $(tail -1 "$tmp/time")"
        fi
    done
}
big gcc-O2 sh -c "gcc -O2 -c -I liballoc -I schemas -D_GNU_SOURCE -o $tmp/h.o liballoc/harden.c && size $tmp/h.o | tail -1 | cut -f1-3"
big python3 /usr/bin/python3 -c '
import json, collections, re
d = [{"id": i, "tags": [str(i % 7)] * (i % 5), "name": "n%d" % i * (1 + i % 20)} for i in range(50000)]
s = json.dumps(d); e = json.loads(s)
c = collections.Counter(t for x in e for t in x["tags"])
print(len(s), sorted(c.items())[:3], len(re.findall(r"n1\d+", s)))'
exit $fail
