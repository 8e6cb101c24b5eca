#!/bin/sh
# tests/bpf/run.sh — kernel events and attach mode, loaded for real (needs root; CI is root).
#
# 1. kprog under krun: every mmap/munmap/mremap/brk/madvise it made is in kernel_event with
#    the exact address, length and result, timestamped inside the CLOCK_MONOTONIC window the
#    program measured around the call; page faults for exactly the pages it wrote; a forked
#    child's events under the child's pid; rss samples; nothing dropped.
# 2. kbig under LD_PRELOAD=libheapledger.so: each large block is one mmap containing it and
#    one munmap of that same mapping.
# 3. attach: the known leak of a running program (leaky) is found with its allocation site.
# 4. Without privileges (capabilities dropped, or not root): a message naming what is missing.
set -u
BUILD=${BUILD:-build}
T=$BUILD/tests/bpf
CLI=$BUILD/bin/heapledger
W=$(mktemp -d /tmp/hl-bpf-test.XXXXXX)
trap 'rm -rf "$W"' EXIT
fails=0
pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; fails=$((fails + 1)); }
check() { # check NAME EXPECTED SQL
    got=$(sqlite3 "$DB" "$3" 2>&1)
    if [ "$got" = "$2" ]; then pass "$1"; else fail "$1: expected '$2', got '$got'"; fi
}

echo "bpf: kernel events and attach mode"
if [ "${HL_BPF_ENABLED:-0}" != 1 ]; then
    echo "  SKIP built without BPF support (missing: ${HL_BPF_MISSING:-?})"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "  SKIP not root: the BPF tests load programs for real (CI runs as root)"
    exit 0
fi
if [ ! -f tracer/db.c ]; then
    echo "  SKIP this tree has no run-database module (tracer/db.c) yet"
    exit 0
fi
PG=$(getconf PAGESIZE)

# --- 1. known syscalls ---------------------------------------------------------------------
DB=$W/kprog.db
if ! "$T/krun" --db "$DB" -- "$T/kprog" > "$W/kprog.out" 2> "$W/kprog.err"; then
    fail "krun kprog: $(cat "$W/kprog.err")"
else
    field() { awk -v s="$1" -v f="$2" '$1 == s { print $f }' "$W/kprog.out"; }
    M=$(field mmap 2); Q=$(field mremap 2); B=$(field brk_grow 2); PID=$(sed -n 's/.*pid=//p' "$W/kprog.err")
    PID=$(sqlite3 "$DB" "select pid from kernel_event where kind='mmap' and addr=$M")
    in_window() { echo "ts between $(field "$1" 4) and $(field "$1" 5)"; }
    check "mmap 64 pages: address, length, result, time" 1 \
        "select count(*) from kernel_event where kind='mmap' and addr=$M and len=$((64 * PG)) and ret=$M and $(in_window mmap)"
    check "mmap prot/flags (rw, private|anonymous)" "3|34|1" \
        "select prot, flags, anonymous from kernel_mmap where addr=$M"
    check "16 written pages: one run of 16 page faults" "1|16" \
        "select count(*), sum(len) / $PG from kernel_event where kind='page_fault' and addr = $M and $(in_window touch)"
    check "page faults are writes by the user" "16|1" \
        "select sum(pages), min(write) from kernel_page_fault where addr between $M and $M + $((64 * PG - 1)) and $(in_window touch) and (error_code & 4) != 0"
    check "madvise DONTNEED 8 pages" "1|dontneed|0" \
        "select count(*), advice_name, ret from kernel_madvise where addr=$M and len=$((8 * PG)) and $(in_window madvise)"
    check "mremap 64 -> 96 pages" 1 \
        "select count(*) from kernel_syscall where kind='mremap' and addr=$M and len=$((96 * PG)) and ret=$Q and arg=64 and $(in_window mremap)"
    check "munmap 96 pages" 1 \
        "select count(*) from kernel_event where kind='munmap' and addr=$Q and len=$((96 * PG)) and ret=0 and $(in_window munmap)"
    check "brk +1 MiB" 1 \
        "select count(*) from kernel_event where kind='brk' and len=1048576 and ret=$B + 1048576 and $(in_window brk_grow)"
    check "5 faults in the brk heap, flagged" "5|1" \
        "select sum(pages), min(in_brk_heap) from kernel_page_fault where addr between $B and $B + $((5 * PG - 1)) and $(in_window brk_touch)"
    check "brk -1 MiB" 1 \
        "select count(*) from kernel_event where kind='brk' and len=-1048576 and ret=$B and $(in_window brk_shrink)"
    CA=$(awk '$1 == "child" { print $2 }' "$W/kprog.out"); CP=$(awk '$1 == "child" { print $5 }' "$W/kprog.out")
    check "forked child followed under its own pid" "1|1" \
        "select sum(kind='mmap' and addr=$CA and len=$((3 * PG))), sum(kind='munmap' and addr=$CA) from kernel_event where pid=$CP"
    check "rss samples grow and stay within the process" 1 \
        "select count(*) > 0 and max(rss_bytes) > 0 from kernel_rss where pid in ($PID, $CP)"
    check "only the followed tree" 0 \
        "select count(*) from kernel_event where pid not in ($PID, $CP)"
    check "nothing dropped" "0" "select value from meta where key='kernel_dropped'"
fi

# --- 2. the allocator's large blocks ----------------------------------------------------------
LIB=$BUILD/lib/libheapledger.so
if [ -f "$LIB" ]; then
    DB=$W/kbig.db
    if ! "$T/krun" --db "$DB" -- env LD_PRELOAD="$PWD/$LIB" "$T/kbig" > "$W/kbig.out" 2> "$W/kbig.err"; then
        fail "krun kbig: $(cat "$W/kbig.err")"
    else
        while read -r _ P S; do
            # The mapping: the last mmap before the block's munmap that holds it whole.
            MAP="(select ts, ret, len from kernel_event where kind='mmap' and $P >= ret and $P + $S <= ret + len and len < $S + 65536 order by ts desc limit 1)"
            check "large block of $S bytes: one mmap holding it" 1 "select count(*) from $MAP"
            MAPQ="from kernel_event u join $MAP m on u.addr = m.ret and u.ts > m.ts where u.kind='munmap'"
            if [ "$(sqlite3 "$DB" "select count(*) $MAPQ and u.len=m.len")" = 1 ]; then
                pass "large block of $S bytes: munmap of that mapping"
            elif [ "$(sqlite3 "$DB" "select count(*) $MAPQ")" -ge 1 ]; then
                fail "large block of $S bytes: munmap of the mapping's address with length $(sqlite3 "$DB" "select group_concat(u.len) $MAPQ") instead of $(sqlite3 "$DB" "select len from $MAP")"
            else
                fail "large block of $S bytes: no munmap of its mapping"
            fi
        done < "$W/kbig.out"
    fi
else
    echo "  skip $LIB not built: allocator check"
fi

# --- 2b. heapledger record --kernel: the allocator's own os_map/os_unmap events and the
# kernel's mmap/munmap agree, address for address, on one clock: the allocator emits os_map
# after mmap returned and os_unmap before calling munmap.
if [ -f "$LIB" ] && command -v lttng-sessiond > /dev/null; then
    DB=$W/record.db
    if ! "$CLI" record --kernel -o "$DB" -- "$T/kbig" > "$W/record.out" 2>&1; then
        fail "record --kernel kbig: $(tail -3 "$W/record.out")"
    else
        check "record --kernel: kernel events stored, none lost" "1|0" \
            "select (select count(*) > 0 from kernel_event), (select value from meta where key='kernel_dropped')"
        check "record --kernel: every large os_map has its mmap, just before it" "0" \
            "select count(*) from os_region o where op='map' and purpose='large' and not exists (select 1 from kernel_event k where k.pid=o.pid and k.kind='mmap' and k.ret=o.addr and k.len=o.len and k.ts <= o.ts and o.ts - k.ts < 50000000)"
        # Segments, pools and arenas mapped before tracing started are reported at the first
        # traced operation; aligned ones were over-mapped and trimmed: an earlier mmap holds them.
        check "record --kernel: every other os_map lies in an earlier mmap" "0" \
            "select count(*) from os_region o where op='map' and purpose!='large' and not exists (select 1 from kernel_event k where k.pid=o.pid and k.kind='mmap' and k.ret <= o.addr and o.addr + o.len <= k.ret + k.len and k.ts <= o.ts)"
        check "record --kernel: the regions mapped before tracing are reported" "1" \
            "select count(*) > 0 from os_region where op='map' and purpose in ('slab_segment', 'tlsf_pool')"
        check "record --kernel: every os_unmap has its munmap, just after it" "0" \
            "select count(*) from os_region o where op='unmap' and not exists (select 1 from kernel_event k where k.pid=o.pid and k.kind='munmap' and k.addr=o.addr and k.len=o.len and k.ts >= o.ts and k.ts - o.ts < 50000000)"
        check "record --kernel: the two large blocks seen both ways" "2|2" \
            "select sum(op='map' and len > 3000000), sum(op='unmap' and len > 3000000) from os_region"
        check "record --kernel: the large mappings were touched whole (kernel_region_touch)" "2|0" \
            "select count(*), max(never_touched_bytes) from kernel_region_touch where purpose = 'large' and len > 3000000 and faulted_bytes >= len - 4096"
    fi
else
    echo "  skip record --kernel (no allocator or no lttng-sessiond)"
fi

# --- 3. attach finds the leak of a running program -------------------------------------------
DB=$W/attach.db
mkfifo "$W/leaky.out"
"$T/leaky" > "$W/leaky.out" &
LPID=$!
exec 3< "$W/leaky.out"
read -r line <&3 # "ready"
"$CLI" attach --pid "$LPID" -o "$DB" --kernel 2> "$W/attach.err" &
APID=$!
i=0
while ! grep -q "attached to pid" "$W/attach.err" 2>/dev/null && [ $i -lt 100 ]; do
    sleep 0.1; i=$((i + 1))
done
kill -USR1 "$LPID"
read -r line <&3 # "done"
kill -TERM "$LPID"
wait "$LPID"
wait "$APID"; arc=$?
exec 3<&-
if [ $arc != 0 ]; then
    fail "attach exited $arc: $(cat "$W/attach.err")"
else
    check "attach: all calls become blocks" "109" "select count(*) from block"
    check "attach: the leak, 3 x 12345 bytes, from leak_site" "3|12345|leak_site" \
        "select count(*), size, f.function from live_at_exit l join frame f on f.stack_id = l.alloc_stack and f.depth = 0 group by size, f.function"
    check "attach: callers above the site (frame pointers)" "main" \
        "select distinct f.function from live_at_exit l join frame f on f.stack_id = l.alloc_stack and f.depth = 1"
    check "attach: realloc chain linked" "1000|4|2000|6|100000|2" \
        "select group_concat(size || '|' || flags, '|') from (select size, flags from block where id >= (select id from block where size = 1000 and flags = 4) and prev_block is not null or (size = 1000 and flags = 4) order by id)"
    check "attach: calloc, posix_memalign, aligned_alloc freed" "1000|4096|512" \
        "select group_concat(size, '|') from (select size from block where id between 101 and 103 and free_ts is not null order by id)"
    check "attach: schema version" 4 "pragma user_version"
    check "attach --kernel: the process's page faults, and only its" "1|1" \
        "select count(*) > 0, min(pid) = $LPID and max(pid) = $LPID from kernel_event where kind = 'page_fault'"
fi

# --- 4. without privileges ------------------------------------------------------------------
msg=$(setpriv --inh-caps=-all --bounding-set=-all "$CLI" attach --pid $$ -o "$W/np.db" 2>&1); rc=$?
case "$rc:$msg" in
1:*"missing CAP_BPF and CAP_PERFMON"*) pass "attach without capabilities: '$msg'" ;;
*) fail "attach without capabilities: rc=$rc '$msg'" ;;
esac
msg=$(setpriv --inh-caps=-all --bounding-set=-all "$T/krun" -- true 2>&1); rc=$?
case "$rc:$msg" in
70:*"missing CAP_BPF and CAP_PERFMON"*) pass "kernel events without capabilities: '$msg'" ;;
*) fail "kernel events without capabilities: rc=$rc '$msg'" ;;
esac
msg=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$T/krun" -- true 2>&1); rc=$?
case "$rc:$msg" in
70:*"not root"*) pass "kernel events as nobody: '$msg'" ;;
*) fail "kernel events as nobody: rc=$rc '$msg'" ;;
esac
msg=$("$CLI" attach --pid 0 2>&1); rc=$?
case "$rc:$msg" in 2:*"--pid wants a process id"*) pass "attach --pid 0 refused" ;; *) fail "attach --pid 0: $rc '$msg'" ;; esac
msg=$("$CLI" attach --pid 1 --relay net://127.0.0.1 2>&1); rc=$?
case "$rc:$msg" in 2:*"--relay does not apply"*"report --summary DIR"*) pass "attach --relay: says why not and what to do" ;; *) fail "attach --relay: $rc '$msg'" ;; esac
msg=$("$CLI" attach --pid 999999999 2>&1); rc=$?
case "$rc:$msg" in 2:*|1:*"no process"*) pass "attach to a missing pid refused" ;; *) fail "attach missing pid: $rc '$msg'" ;; esac

[ $fails = 0 ] && echo "bpf: all passed" || echo "bpf: $fails failed"
[ $fails = 0 ]
