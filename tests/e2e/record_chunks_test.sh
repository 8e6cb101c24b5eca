#!/usr/bin/env bash
# tests/e2e/record_chunks_test.sh — the database fills while the program runs (docs/record.md,
# "Storing during the run"): the session rotates into trace chunks, each closed chunk is
# stored into the one open ledger and deleted.
#
#   t_same         a recording that rotates several times (HEAPLEDGER_CHUNK_BYTES=2M, or
#                  SAME_CHUNK_BYTES) gives exactly the database that one pass over all its
#                  chunks gives (every row of every table: blocks with their seq and ts,
#                  stacks, frames, threads, modules), except rows of block/orphan_free/error
#                  with a time where two chunks overlap (same_tables: events of a migrating
#                  thread may swap there),
#                  and the same counts, blocks, leaks and stacks as a recording of the same
#                  program stored in one pass after the run (HEAPLEDGER_CHUNK_BYTES=0)
#   t_gone         without --keep-trace: chunks stored while the program ran, the backlog on
#                  disk stays small, nothing is left in TMPDIR at the end
#   t_prog_killed  the program SIGKILLed after a chunk was stored: every recorded event is in
#                  the database (equal to one pass over the kept chunks)
#   t_record_killed record SIGKILLed after a chunk was stored: the database keeps the stored
#                  chunks (valid, readable, ingest_status 'recording'), the reaper keeps the
#                  trace directory with the chunks not stored yet, and collect stores them; or,
#                  killed when no chunk was left to store, the reaper says so and removes it
#                  (record_reaper_test.c tests both cases deterministically)
#   t_throttle     a program faster than the ingest is paused while closed chunks wait above
#                  HEAPLEDGER_BACKLOG_BYTES (here 1 byte: any): at most 5 closed chunks wait
#                  (without the pauses 13 did, at load 7), nothing is lost; its 24 bursts are
#                  150 ms apart, so that LTTng closes chunks while it runs on a quiet machine
#                  too (back to back, a fresh-clone CI run once saw the program end first)
#   t_keep_throttle the same with --keep-trace: stored chunks kept on disk are not backlog, so
#                  the pauses end and the run completes
#   t_growing      record closes the chunks itself, small first (HEAPLEDGER_FIRST_CHUNK_BYTES=8M)
#                  and growing to HEAPLEDGER_CHUNK_BYTES (32M): the first chunk is under 28 MiB
#                  (LTTng's own size schedule made it 32 MiB and more), nothing is lost
#   t_stop_poll    the session's stop looks at the consumer every 10 ms, not 200: in the first of
#                  three runs where it looked twice or more, N looks took less than N x 0.2 s
#   t_bad_env      a malformed HEAPLEDGER_CHUNK_BYTES, HEAPLEDGER_BACKLOG_BYTES or
#                  HEAPLEDGER_FIRST_CHUNK_BYTES is refused
#                  before anything runs
#
# usage: BUILD=build tests/e2e/record_chunks_test.sh [TEST...]      (default: all)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=${HL:-$ROOT/$BUILD/bin/heapledger} # HL=... tests another build
PROG=$ROOT/$BUILD/tests/e2e/record_chunks_prog
WORK=$(mktemp -d /tmp/hl-record-chunks.XXXXXX)
pass=0 fail=0
failed=()
BG=()
cleanup() {
    local p
    for p in "${BG[@]}"; do kill -9 "$p" 2>/dev/null; done
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

. "$ROOT/tests/checks.sh"
wait_for() { # wait_for SECONDS COMMAND...: poll until COMMAND succeeds
    local end=$((SECONDS + $1))
    shift
    until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.1; done
}
# At least one chunk stored: the database (WAL) already holds blocks of the program.
stored() { [ -e "$1" ] && [ "$(sql "$1" 'SELECT count(*) FROM block' 2>/dev/null || echo 0)" -gt 0 ]; }

# Every table, row for row (the run row without what only record knows: command, options,
# exit status; meta without the source path and record's last_chunk). A recording stored
# chunk by chunk orders events by time within a chunk and by chunk across chunks; one pass
# over all chunks orders them all by time. The two differ only where chunks overlap in time
# (docs/record.md "Ordering at chunk boundaries": a thread that migrated between two
# per-CPU streams while they rotated): with TRACE (the kept trace), rows of block,
# orphan_free and error may differ only if one of their times lies in the overlap of two
# consecutive chunks (from a database of each chunk alone); every other row, and every other
# table, must be equal. Blocks are compared without their ids (the id follows the allocation
# order): prev_block by the previous block's alloc time.
same_tables() { # same_tables A.db B.db [TRACE]
    local t a b bad=0
    for t in stack frame thread process module os_region; do
        a=$(sql "$1" "SELECT * FROM $t ORDER BY 1, 2" | md5sum)
        b=$(sql "$2" "SELECT * FROM $t ORDER BY 1, 2" | md5sum)
        [ "$a" = "$b" ] || { note "FAIL: table $t differs between $1 and $2"; bad=1; }
    done
    overlaps "${3:-}" >"$1.windows" || bad=1
    local w w2 n
    w=$(awk '{ printf "%s(ts BETWEEN %s AND %s)", (NR > 1 ? " OR " : ""), $1, $2 }' "$1.windows")
    w2=${w//ts/ts2}
    n=$(sql "$1" "ATTACH '$2' AS r;
        CREATE TEMP VIEW pa AS SELECT pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, alloc_tid,
            alloc_path, alloc_cycles, alloc_stack, free_seq, free_ts, free_tid, free_path, free_cycles,
            free_stack, flags, (SELECT p.alloc_ts FROM main.block p WHERE p.id = b.prev_block) AS prev
            FROM main.block b;
        CREATE TEMP VIEW pb AS SELECT pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, alloc_tid,
            alloc_path, alloc_cycles, alloc_stack, free_seq, free_ts, free_tid, free_path, free_cycles,
            free_stack, flags, (SELECT p.alloc_ts FROM r.block p WHERE p.id = b.prev_block) AS prev
            FROM r.block b;
        CREATE TEMP TABLE diff AS
            SELECT 'block' AS t, alloc_ts AS ts, free_ts AS ts2 FROM (SELECT * FROM pa EXCEPT SELECT * FROM pb)
            UNION ALL SELECT 'block', alloc_ts, free_ts FROM (SELECT * FROM pb EXCEPT SELECT * FROM pa)
            UNION ALL SELECT 'orphan_free', ts, NULL FROM (SELECT * FROM main.orphan_free EXCEPT SELECT * FROM r.orphan_free)
            UNION ALL SELECT 'orphan_free', ts, NULL FROM (SELECT * FROM r.orphan_free EXCEPT SELECT * FROM main.orphan_free)
            UNION ALL SELECT 'error', ts, NULL FROM (SELECT ts, pid, tid, kind, addr, size, tier, class, details, stack, alloc_stack, free_stack FROM main.error
                EXCEPT SELECT ts, pid, tid, kind, addr, size, tier, class, details, stack, alloc_stack, free_stack FROM r.error)
            UNION ALL SELECT 'error', ts, NULL FROM (SELECT ts, pid, tid, kind, addr, size, tier, class, details, stack, alloc_stack, free_stack FROM r.error
                EXCEPT SELECT ts, pid, tid, kind, addr, size, tier, class, details, stack, alloc_stack, free_stack FROM main.error);
        SELECT count(*) || ' ' || coalesce(sum(NOT (${w:-0}) AND (ts2 IS NULL OR NOT (${w2:-0}))), 0) FROM diff;")
    case $n in
    "0 0") ;;
    *" 0") note "rows of block/orphan_free/error differing, all in the chunks' overlaps ($(tr '\n' ' ' <"$1.windows")): ${n% *}" ;;
    *) note "FAIL: rows differ between $1 and $2 outside the chunks' overlaps: $n (differing, outside)"; bad=1 ;;
    esac
    a=$(sql "$1" "SELECT host, version, tsc_hz, start_ts, end_ts, events, discarded_events FROM run")
    b=$(sql "$2" "SELECT host, version, tsc_hz, start_ts, end_ts, events, discarded_events FROM run")
    check "run row" "$b" "$a" || bad=1
    a=$(sql "$1" "SELECT key, value FROM meta WHERE key NOT IN ('source', 'last_chunk') ORDER BY 1")
    b=$(sql "$2" "SELECT key, value FROM meta WHERE key NOT IN ('source', 'last_chunk') ORDER BY 1")
    check "meta" "$b" "$a" || bad=1
    return $bad
}
# overlaps TRACE — "FROM TO" (trace clock, ns) where two consecutive chunks of TRACE overlap
# in time: the first allocator event of the later chunk is before the last of the earlier one
overlaps() {
    [ -n "$1" ] || return 0
    local c prev_end="" first last db=$WORK/overlap.db
    for c in $(ls "$1/archives" | sort -t- -k3 -n); do
        rm -f "$db"
        "$HL" collect --all "$1/archives/$c" -o "$db" >/dev/null 2>&1 || { note "FAIL: collect of chunk $c"; return 1; }
        read -r first last < <(sql "$db" "SELECT min(t), max(t) FROM (SELECT alloc_ts AS t FROM block
            UNION ALL SELECT free_ts FROM block WHERE free_ts IS NOT NULL UNION ALL SELECT ts FROM orphan_free)" | tr '|' ' ')
        [ -n "$prev_end" ] && [ -n "$first" ] && [ "$first" -le "$prev_end" ] && echo "$first $prev_end"
        [ -n "$last" ] && prev_end=$last
    done
    return 0
}

# What does not depend on addresses or times: counts, blocks by size, leaks by size and
# function, stacks by their functions.
shape() { # shape DB PID
    sql "$1" "SELECT count(*), sum(free_seq IS NULL) FROM block WHERE pid = $2"
    sql "$1" "SELECT size, count(*), sum(free_seq IS NULL), sum(flags) FROM block WHERE pid = $2
              GROUP BY size ORDER BY size"
    sql "$1" "SELECT b.size, count(*), group_concat(DISTINCT f.function) FROM block b
              JOIN frame f ON f.stack_id = b.alloc_stack AND f.depth = 0
              WHERE b.pid = $2 AND b.free_seq IS NULL GROUP BY b.size ORDER BY b.size"
    sql "$1" "SELECT group_concat(fn, '<') FROM (SELECT s.id, f.function AS fn FROM stack s
              JOIN frame f ON f.stack_id = s.id WHERE s.pid = $2 ORDER BY s.id, f.depth)
              GROUP BY id ORDER BY 1"
}
pid_of() { sed -n 's/^pid \([0-9]*\).*/\1/p' "$1"; }
chunks_of() { ls "$1/archives" 2>/dev/null | wc -l; }
# max_chunks TMP PID INTERVAL: the most closed chunks seen waiting in record's trace directory
# under TMP, sampled every INTERVAL s while PID runs
max_chunks() {
    local max=0 n tr
    while kill -0 "$2" 2>/dev/null; do
        tr=$(ls -d "$1"/heapledger-trace-* 2>/dev/null | head -1)
        n=$(chunks_of "${tr:-/nonexistent}")
        [ "$n" -gt "$max" ] && max=$n
        sleep "$3"
    done
    echo "$max"
}

# --- the tests ----------------------------------------------------------------------------

t_same() {
    local d=$WORK/same
    mkdir -p "$d"
    HEAPLEDGER_CHUNK_BYTES=${SAME_CHUNK_BYTES:-2M} "$HL" record -o "$d/a.db" --keep-trace "$d/tr" -- "$PROG" 3 120000 1200 \
        >"$d/a.out" 2>"$d/a.err"
    check "exit status" 0 $? || { cat "$d/a.err"; return 1; }
    local n
    n=$(chunks_of "$d/tr")
    [ "$n" -ge 3 ] || { note "FAIL: $n trace chunks, expected several"; cat "$d/a.err"; return 1; }
    contains "$d/a.err" "events in $n trace chunks" || return 1
    check "ingest_status" complete "$(sql "$d/a.db" "SELECT value FROM meta WHERE key = 'ingest_status'")" || return 1
    "$HL" collect --all "$d/tr" -o "$d/ref.db" >"$d/ref.out" 2>&1 || { cat "$d/ref.out"; return 1; }
    same_tables "$d/a.db" "$d/ref.db" "$d/tr" || return 1
    # The same program recorded and stored in one pass after the run.
    HEAPLEDGER_CHUNK_BYTES=0 "$HL" record -o "$d/b.db" -- "$PROG" 3 120000 0 >"$d/b.out" 2>"$d/b.err"
    check "exit status (one pass)" 0 $? || { cat "$d/b.err"; return 1; }
    contains "$d/b.err" "b.db: " || return 1
    shape "$d/a.db" "$(pid_of "$d/a.out")" >"$d/a.shape"
    shape "$d/b.db" "$(pid_of "$d/b.out")" >"$d/b.shape"
    diff "$d/b.shape" "$d/a.shape" >"$d/shape.diff" ||
        { note "FAIL: chunked and one-pass recordings differ:"; sed 's/^/      | /' "$d/shape.diff" | head; return 1; }
    # Known values: 3 × 120000 loop blocks, 8 leaks (3 × 3331 in leak, 5 × 2223 in leak).
    check "loop blocks" 360000 "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/a.out") AND size BETWEEN 40 AND 103")" || return 1
    check "leaks" "2223|5|leak
3331|3|leak" "$(sed -n '/|leak$/p' "$d/a.shape")" || return 1
}

t_gone() {
    local d=$WORK/gone
    mkdir -p "$d/tmp"
    HEAPLEDGER_CHUNK_BYTES=2M TMPDIR=$d/tmp "$HL" record -o "$d/a.db" -- "$PROG" 4 100000 1500 \
        >"$d/out" 2>"$d/err" &
    local r=$! max
    BG+=("$r")
    max=$(max_chunks "$d/tmp" "$r" 0.2)
    wait "$r"
    check "exit status" 0 $? || { cat "$d/err"; return 1; }
    local during
    during=$(sed -n 's/.* trace chunks (\([0-9]*\) stored while the program ran).*/\1/p' "$d/err")
    [ "${during:-0}" -ge 1 ] || { note "FAIL: no chunk stored while the program ran"; cat "$d/err"; return 1; }
    note "$during chunks stored during the run; at most $max closed chunks waited on disk"
    check "files left in TMPDIR" "" "$(ls -A "$d/tmp")" || return 1
    check "integrity" ok "$(sql "$d/a.db" 'PRAGMA integrity_check')" || return 1
    check "loop blocks" 400000 "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/out") AND size BETWEEN 40 AND 103")" || return 1
}

t_prog_killed() {
    local d=$WORK/progkill
    mkdir -p "$d"
    HEAPLEDGER_CHUNK_BYTES=2M "$HL" record -o "$d/a.db" --keep-trace "$d/tr" -- "$PROG" 30 100000 2000 \
        >"$d/out" 2>"$d/err" &
    local r=$!
    BG+=("$r")
    wait_for 120 stored "$d/a.db" || { note "FAIL: nothing stored during the run"; cat "$d/err"; return 1; }
    local p
    p=$(pid_of "$d/out")
    kill -9 "$p"
    wait "$r"
    check "exit status" 137 $? || { cat "$d/err"; return 1; }
    contains "$d/err" "was killed by signal 9" || return 1
    "$HL" collect --all "$d/tr" -o "$d/ref.db" >"$d/ref.out" 2>&1 || { cat "$d/ref.out"; return 1; }
    same_tables "$d/a.db" "$d/ref.db" "$d/tr" || return 1
    [ "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $p")" -gt 100000 ] ||
        { note "FAIL: too few blocks"; return 1; }
}

t_record_killed() {
    local d=$WORK/reckill
    mkdir -p "$d/tmp"
    HEAPLEDGER_CHUNK_BYTES=2M TMPDIR=$d/tmp "$HL" record -o "$d/a.db" -- "$PROG" 30 100000 2000 \
        >"$d/out" 2>"$d/err" &
    local r=$!
    BG+=("$r")
    wait_for 120 stored "$d/a.db" || { note "FAIL: nothing stored during the run"; cat "$d/err"; return 1; }
    local p
    p=$(pid_of "$d/out")
    BG+=("$p")
    kill -9 "$r"
    wait "$r" 2>/dev/null
    wait_for 30 grep -q "record ended before it finished" "$d/err" ||
        { note "FAIL: the reaper did not report: $(cat "$d/err")"; return 1; }
    check "integrity" ok "$(sql "$d/a.db" 'PRAGMA integrity_check')" || return 1
    check "ingest_status" recording "$(sql "$d/a.db" "SELECT value FROM meta WHERE key = 'ingest_status'")" || return 1
    [ "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $p")" -gt 0 ] ||
        { note "FAIL: no block kept"; return 1; }
    # Killed just after a rotation (every closed chunk stored, the new one not written yet):
    # nothing is left to store, and the reaper removes the directory instead of naming it.
    if grep -q "no other chunk had reached the disk" "$d/err"; then
        note "killed when no chunk was left to store"
        check "files left in TMPDIR" "" "$(ls -A "$d/tmp")" || return 1
        return 0
    fi
    # The chunks not stored yet are kept where the reaper says, and collect stores them.
    local kept
    kept=$(sed -n 's/.* the others are kept in \(.*\) (heapledger collect.*/\1/p' "$d/err")
    [ -n "$kept" ] && [ -d "$kept" ] || { note "FAIL: no kept trace directory named"; cat "$d/err"; return 1; }
    # The last chunk stored may still be there (killed between its commit and its deletion).
    local last
    last=$(sql "$d/a.db" "SELECT value FROM meta WHERE key = 'last_chunk'")
    [ -n "$last" ] || { note "FAIL: no meta.last_chunk"; return 1; }
    rm -rf "$last"
    "$HL" collect --all "$kept" -o "$d/rest.db" >"$d/rest.out" 2>&1
    local rc=$? # 3: the chunk being filled was cut off mid-packet (partial)
    [ $rc = 0 ] || [ $rc = 3 ] || { note "FAIL: collect of the kept chunks: $rc"; cat "$d/rest.out"; return 1; }
    # They are the chunks after the stored ones (none stored twice). They may hold no event:
    # killed in one of the program's pauses, the chunk being filled had no complete packet yet.
    local rest_min db_max
    rest_min=$(sql "$d/rest.db" "SELECT min(alloc_ts) FROM block WHERE pid = $p")
    db_max=$(sql "$d/a.db" "SELECT max(alloc_ts) FROM block WHERE pid = $p")
    [ -z "$rest_min" ] || [ "$rest_min" -gt "$db_max" ] ||
        { note "FAIL: the kept chunks overlap the stored ones ($rest_min <= $db_max)"; return 1; }
}

t_throttle() { # T_BACKLOG=0 shows the run without the pauses (then it fails)
    local d=$WORK/throttle
    mkdir -p "$d/tmp"
    HEAPLEDGER_CHUNK_BYTES=1M HEAPLEDGER_BACKLOG_BYTES=${T_BACKLOG:-1} TMPDIR=$d/tmp "$HL" record -o "$d/a.db" \
        -- "$PROG" 24 100000 150 >"$d/out" 2>"$d/err" &
    local r=$! max
    BG+=("$r")
    max=$(max_chunks "$d/tmp" "$r" 0.1)
    wait "$r"
    check "exit status" 0 $? || { cat "$d/err"; return 1; }
    # Paused at the first closed chunk; the LTTng buffers (8 x 8 MiB per CPU) still reach the
    # disk after the pause and may close a few 1 MiB chunks more.
    note "at most $max closed chunks waited on disk; $(grep -o 'paused [0-9]* times ([0-9.]* s' "$d/err")"
    [ "$max" -le 5 ] || { note "FAIL: $max closed chunks waited (the program was not held back)"; return 1; }
    contains "$d/err" "the program was paused" || return 1
    check "lost events" 0 "$(sql "$d/a.db" 'SELECT discarded_events FROM run')" || return 1
    check "loop blocks" 2400000 "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/out") AND size BETWEEN 40 AND 103")" || return 1
    check "files left in TMPDIR" "" "$(ls -A "$d/tmp")" || return 1
}

t_keep_throttle() { # kept chunks are not backlog: a throttled --keep-trace run ends
    local d=$WORK/keepthrottle
    mkdir -p "$d"
    HEAPLEDGER_CHUNK_BYTES=1M HEAPLEDGER_BACKLOG_BYTES=1 timeout -s KILL 600 "$HL" record -o "$d/a.db" \
        --keep-trace "$d/tr" -- "$PROG" 12 100000 500 >"$d/out" 2>"$d/err"
    check "exit status (137: still paused after 600 s)" 0 $? || { cat "$d/err"; return 1; }
    contains "$d/err" "the program was paused" || return 1
    check "loop blocks" 1200000 "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/out") AND size BETWEEN 40 AND 103")" || return 1
    local kept
    kept=$(find "$d/tr" -type f -path '*/archives/*' | wc -l)
    [ "$kept" -gt 0 ] || { note "FAIL: --keep-trace kept no chunk"; return 1; }
}

t_growing() { # record closes the chunks: a small first one, then larger ones
    local d=$WORK/growing
    mkdir -p "$d"
    HEAPLEDGER_FIRST_CHUNK_BYTES=8M HEAPLEDGER_CHUNK_BYTES=32M "$HL" record --stats -o "$d/a.db" \
        --keep-trace "$d/tr" -- "$PROG" 3 500000 0 >"$d/out" 2>"$d/err"
    check "exit status" 0 $? || { cat "$d/err"; return 1; }
    local sizes n first
    sizes=$(for c in $(ls "$d/tr/archives" | sort -t- -k3 -n); do du -sm --apparent-size "$d/tr/archives/$c" | cut -f1; done | tr '\n' ' ')
    n=$(echo $sizes | wc -w)
    first=${sizes%% *}
    note "chunks (MiB, in order): $sizes; $(grep -o '[0-9]* rotations asked by record' "$d/err")"
    [ "$n" -ge 3 ] || { note "FAIL: $n chunks, expected 3 or more"; cat "$d/err"; return 1; }
    # 8 MiB and what the buffers held when it closed (LTTng writes 8 MiB sub-buffers); LTTng's
    # own size schedule at 32M made it 32 MiB and more.
    [ "$first" -lt 28 ] || { note "FAIL: the first chunk has $first MiB"; return 1; }
    contains "$d/err" "rotations asked by record (the first at 8 MiB)" || return 1
    check "loop blocks" 1500000 "$(sql "$d/a.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/out") AND size BETWEEN 40 AND 103")" || return 1
}

t_final() { # the last chunk is read once the session stopped, before the destroy archived it
    local d=$WORK/final
    mkdir -p "$d"
    HEAPLEDGER_CHUNK_BYTES=2M "$HL" record --stats -o "$d/a.db" --keep-trace "$d/tr" -- "$PROG" 3 120000 0 \
        >"$d/a.out" 2>"$d/a.err"
    check "exit status" 0 $? || { cat "$d/a.err"; return 1; }
    contains "$d/a.err" "the last chunk read once the session stopped" || return 1
    local n
    n=$(chunks_of "$d/tr")
    contains "$d/a.err" "events in $n trace chunks" || return 1
    [ -z "$(ls -A "$d/tr" | grep '^\.final')" ] || { note "FAIL: the links to the last chunk stayed"; return 1; }
    "$HL" collect --all "$d/tr" -o "$d/ref.db" >"$d/ref.out" 2>&1 || { cat "$d/ref.out"; return 1; }
    same_tables "$d/a.db" "$d/ref.db" "$d/tr" || return 1
    # Without --keep-trace no chunk stays: neither the links nor the destroy's archive.
    HEAPLEDGER_CHUNK_BYTES=2M TMPDIR=$d "$HL" record --stats -o "$d/b.db" -- "$PROG" 3 120000 0 >"$d/b.out" 2>"$d/b.err"
    check "exit status (no --keep-trace)" 0 $? || { cat "$d/b.err"; return 1; }
    contains "$d/b.err" "the last chunk read once the session stopped" || return 1
    [ -z "$(ls -d "$d"/heapledger-trace-* 2>/dev/null)" ] || { note "FAIL: a trace stayed: $(ls -R "$d"/heapledger-trace-* | head)"; return 1; }
    check "loop blocks" 360000 "$(sql "$d/b.db" "SELECT count(*) FROM block WHERE pid = $(pid_of "$d/b.out") AND size BETWEEN 40 AND 103")" || return 1
}

t_stop_poll() { # the stop looks at the consumer every 10 ms (session.c)
    local d=$WORK/stop i looks gap
    mkdir -p "$d"
    for i in 1 2 3; do
        "$HL" record --stats -o "$d/$i.db" -- "$PROG" 3 200000 0 >"$d/$i.out" 2>"$d/$i.err"
        check "exit status" 0 $? || { cat "$d/$i.err"; return 1; }
        looks=$(sed -n 's/.*the session stopped after \([0-9]*\) looks at the consumer still writing, 10 ms apart/\1/p' "$d/$i.err")
        [ -n "$looks" ] || { note "FAIL: no stop line: $(cat "$d/$i.err")"; return 1; }
        gap=$(awk '$1 == "program" && $2 == "ended" { e = $3 } $1 == "session" && $2 == "stopped" { s = $3 }
                   END { printf "%.3f", s - e }' "$d/$i.err")
        note "run $i: $looks looks, stopped $gap s after the program ended"
        [ "$looks" -ge 2 ] || continue
        # lttng_stop_tracing looked every 200 ms: LOOKS looks would have taken LOOKS x 0.2 s
        awk -v g="$gap" -v n="$looks" 'BEGIN { exit !(g < n * 0.2) }' ||
            { note "FAIL: $looks looks in $gap s: not more often than every 200 ms"; return 1; }
        return 0
    done
    SKIPPED_PART="the consumer had written everything by the stop's second look in 3 runs"
}

t_bad_env() {
    local d=$WORK/badenv
    mkdir -p "$d"
    HEAPLEDGER_CHUNK_BYTES=lots "$HL" record -o "$d/a.db" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status" 2 $? || return 1
    contains "$d/err" "HEAPLEDGER_CHUNK_BYTES=lots: expected a size in bytes" || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran"; return 1; }
    HEAPLEDGER_BACKLOG_BYTES=-5 "$HL" record -o "$d/b.db" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status" 2 $? || return 1
    contains "$d/err" "HEAPLEDGER_BACKLOG_BYTES=-5: expected a size in bytes" || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran"; return 1; }
    HEAPLEDGER_FIRST_CHUNK_BYTES=16Q "$HL" record -o "$d/c.db" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status" 2 $? || return 1
    contains "$d/err" "HEAPLEDGER_FIRST_CHUNK_BYTES=16Q: expected a size in bytes" || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran"; return 1; }
}

all=(t_same t_gone t_prog_killed t_record_killed t_throttle t_keep_throttle t_growing t_final t_stop_poll t_bad_env)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${all[@]}")
echo "record-chunks: ${#tests[@]} tests (work dir $WORK)"
for t in "${tests[@]}"; do
    start=$(date +%s.%N)
    if "$t"; then
        pass=$((pass + 1))
        printf '  ok    %-20s %5.1f s\n' "$t" "$(echo "$(date +%s.%N) - $start" | bc)"
    else
        fail=$((fail + 1))
        failed+=("$t")
        echo "  FAIL  $t"
    fi
done
echo "record-chunks: $pass passed, $fail failed ${failed[*]:-}"
[ "$fail" = 0 ]
