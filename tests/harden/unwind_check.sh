#!/usr/bin/env bash
# tests/harden/unwind_check.sh — heapledger's own stack walker (liballoc/unwind_fast.c) on real
# programs, against libunwind: with unwind=check every captured stack is walked by both and
# the process aborts at the first difference.
#
#   1. real programs under harden=1,unwind=check (python3, gcc, sqlite3, git, sort: the corpus
#      of real_programs.sh) and gcc -O2 on a real file of this tree (liballoc/tlsf.c, object
#      identical to the one compiled without heapledger);
#   2. `heapledger record --options unwind=check` of sqlite3 and python3 (every event's stack);
#      and the same sqlite3 script recorded with unwind=libunwind and with the default walker
#      gives the same stacks, frame for frame (function + offset + module);
#   3. a bad value of unwind= is refused with a message that names the valid ones.
#
# usage: BUILD=build tests/harden/unwind_check.sh
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/$BUILD/lib/libheapledger.so
HL=$ROOT/$BUILD/bin/heapledger
WORK=$(mktemp -d /tmp/hl-unwind-check.XXXXXX)
pass=0 fail=0
failed=()
cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
. "$ROOT/tests/checks.sh"

t_real_programs() {
    "$ROOT/tests/harden/real_programs.sh" "$LIB" harden=1,unwind=check
}

t_gcc_real_file() {
    local cc=(gcc -O2 -D_GNU_SOURCE -I "$ROOT/liballoc" -I "$ROOT/schemas" -c "$ROOT/liballoc/tlsf.c")
    "${cc[@]}" -o "$WORK/plain.o" || { note "gcc failed without heapledger"; return 1; }
    HEAPLEDGER_OPTIONS=harden=1,unwind=check LD_PRELOAD=$LIB "${cc[@]}" -o "$WORK/check.o" \
        2>"$WORK/gcc.err" || { note "gcc under unwind=check: $(tail -3 "$WORK/gcc.err")"; return 1; }
    cmp -s "$WORK/plain.o" "$WORK/check.o" || { note "objects differ"; return 1; }
}

SQL="create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000)
insert into t select x, printf('row %d', x) from c; create index i on t(b);
select count(*), sum(a), max(b) from t; select a % 7, count(*) from t group by 1;"

rec() { # rec NAME OPTIONS PROGRAM...
    local name=$1 opts=$2
    shift 2
    "$HL" record -o "$WORK/$name.db" --options "$opts" --stacks 16 -- "$@" >"$WORK/$name.out" 2>&1 &&
        ! grep -q "the fast stack walk differs" "$WORK/$name.out" && return 0
    note "FAIL: record $name: $(tail -5 "$WORK/$name.out")"
    return 1
}

# Every distinct stack of a database as one line: function+offset@module per frame. Stacks
# through the tracer's own exit work (liblttng-ust's destructors, frames in no module) depend
# on its threads' timing: left out.
stacks_of() {
    sqlite3 "$1" "select (select group_concat(f, ' ') from (select coalesce(function, '?') || '+' ||
        coalesce(offset, ip) || '@' || coalesce(module, '?') as f from frame where stack_id = s.id
        order by depth)) from stack s;" | grep -v -e liblttng -e '@?' | sort -u
}

t_record_check() {
    rec sql_check unwind=check sqlite3 :memory: "$SQL" &&
        rec py_check unwind=check python3 -c 'import json; print(len(json.dumps([{"k": i} for i in range(20000)])))' ||
        return 1
    local n
    n=$(sqlite3 "$WORK/py_check.db" "select count(*) from stack")
    [ "${n:-0}" -gt 10 ] || { note "python3: only ${n:-0} stacks recorded"; return 1; }
}

t_record_same_stacks() {
    rec sql_lib unwind=libunwind sqlite3 :memory: "$SQL" && rec sql_fast unwind=fast sqlite3 :memory: "$SQL" ||
        return 1
    stacks_of "$WORK/sql_lib.db" >"$WORK/lib.stacks"
    stacks_of "$WORK/sql_fast.db" >"$WORK/fast.stacks"
    [ -s "$WORK/lib.stacks" ] || { note "no stacks recorded"; return 1; }
    cmp -s "$WORK/lib.stacks" "$WORK/fast.stacks" && return 0
    note "stacks differ ($(wc -l <"$WORK/lib.stacks") with libunwind, $(wc -l <"$WORK/fast.stacks") fast):"
    diff "$WORK/lib.stacks" "$WORK/fast.stacks" | head -6
    return 1
}

t_bad_value() {
    local err
    err=$(HEAPLEDGER_OPTIONS=unwind=slow LD_PRELOAD=$LIB /bin/true 2>&1)
    contains_text "$err" "bad value in option 'unwind=slow' (unwind takes fast, libunwind or check)" ||
        return 1
    "$HL" record -o "$WORK/bad.db" --options unwind=slow -- /bin/true >"$WORK/bad.out" 2>&1
    local rc=$?
    check "record refuses unwind=slow" 2 "$rc" || { cat "$WORK/bad.out"; return 1; }
}

contains_text() { # contains_text TEXT NEEDLE
    grep -qF -- "$2" <<<"$1" && return 0
    note "FAIL: '$2' not in: $1"
    return 1
}

if [ ! -x "$HL" ] || [ ! -f "$LIB" ]; then
    echo "unwind_check.sh: build first ($HL, $LIB)" >&2
    exit 1
fi
for t in t_real_programs t_gcc_real_file t_record_check t_record_same_stacks t_bad_value; do
    run "$t"
done
echo "unwind_check: $pass passed, $fail failed${failed:+ (${failed[*]})}"
[ "$fail" -eq 0 ]
