#!/usr/bin/env bash
# tests/ingest/run_tests.sh HEAPLEDGER INGEST_GEN — end-to-end tests of `heapledger collect`
# (and collectd when tests/ingest/collectd_test.sh exists): real traces recorded with the
# lttng CLI from ingest_gen (a program emitting a known sequence of heapledger events),
# exact row counts checked with sqlite3, and every bad input's message.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
[ -x "$HL" ] && [ -x "$GEN" ] || { echo "ingest tests: $1 or $2 missing" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-ingest-test.XXXXXX)
mnt=""
cleanup() { [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
ensure_sessiond
gen_dir=$(dirname "$GEN")
cp "$GEN" "$work/$TAG" && GEN=$work/$TAG   # unique process name, see lib.sh
echo "ingest: collect"

# --- basic: one process, 3 threads (one posing as LTTng's "-ust" thread) ---------------
record_trace "$work/basic" "$GEN" basic || fail "recording basic"
"$HL" collect "$work/basic" -o "$work/basic.db" -q; check "collect exit" 0 $?
db=$work/basic.db
check "blocks" 15 "$(q $db 'select count(*) from block')"
check "allocations view rows" 14 "$(q $db 'select count(*) from allocations')"
check "live at exit" 3 "$(q $db 'select count(*) from live_at_exit')"
check "live pointers" "6144,6400,45056" "$(q $db "select group_concat(ptr) from (select ptr from live_at_exit order by ptr)")"
check "failed allocations" 1 "$(q $db 'select count(*) from block where flags & 1')"
check "cross-thread frees" 3 "$(q $db 'select count(*) from block where free_tid != alloc_tid')"
check "realloc chain" "4|6|2" "$(q $db "select group_concat(flags, '|') from (select flags from block where ptr in (36864, 40960) order by id)")"
check "realloc prev links" 2 "$(q $db 'select count(*) from block b join block p on b.prev_block = p.id')"
check "orphan frees" 2 "$(q $db 'select count(*) from orphan_free')"
check "LTTng thread filtered" 0 "$(q $db 'select count(*) from block where ptr = 28672')"
check "filtered count" 1 "$(q $db "select value from meta where key = 'filtered_lttng_thread_events'")"
check "stacks" 1 "$(q $db 'select count(*) from stack')"
check "frames" 3 "$(q $db 'select count(*) from frame')"
check "frame 0 function" "ingest_gen_leaf" "$(q $db 'select function from frame where depth = 0')"
check "frame 1 function" "ingest_gen_mid" "$(q $db 'select function from frame where depth = 1')"
check "frame file:line" 1 "$(q $db "select count(*) from frame where depth = 0 and file like '%ingest_gen.c' and line > 0")"
check "frame module" 1 "$(q $db "select count(*) from frame where depth = 0 and module like '%/$TAG'")"
check "alloc stacks renumbered" 10 "$(q $db 'select count(*) from block where alloc_stack = (select id from stack) and tier = 1 and ptr < 8192')"
check "modules with build id" 1 "$(q $db "select count(*) > 0 from module where build_id is not null and path like '%$TAG'")"
check "errors" "double-free|freed twice" "$(q $db "select kind || '|' || details from error")"
check "os regions" "map|unmap" "$(q $db "select group_concat(op, '|') from (select op from os_region order by seq)")"
check "run" "stacks=3|2445000000|0" "$(q $db 'select options, tsc_hz, discarded_events from run' | tr -d '\n')"
check "run events >= 32" 1 "$(q $db 'select events >= 32 from run')"
check "threads" 1 "$(q $db "select count(*) from thread where name = '${TAG}_wkr'")"
check "process name" "$TAG" "$(q $db 'select procname from process')"
check "path_cycles free count (5 + 3 + 1 orphan)" 9 "$(q $db "select count from path_cycles where path = 'tiny_cache_push'")"
check "status" complete "$(q $db "select value from meta where key = 'ingest_status'")"

# --- layout 1 (before vpid/vtid moved into the payload): a kept trace of `basic` ----------
# tests/ingest/layout1 was recorded by the layout-1 ingest_gen (process "ig1gen") with the
# vpid/vtid/procname contexts and separate tier/cls/path fields; it must stay readable.
"$HL" collect "$here/layout1" -o "$work/layout1.db" -q; check "layout 1: collect exit" 0 $?
db=$work/layout1.db
check "layout 1: blocks" 15 "$(q $db 'select count(*) from block')"
check "layout 1: live at exit" 3 "$(q $db 'select count(*) from live_at_exit')"
check "layout 1: tier/class/path" "1|1|1|10" "$(q $db 'select tier, class, alloc_path, count(*) from block where ptr between 4096 and 8191 group by 1, 2, 3')"
check "layout 1: LTTng thread filtered" 1 "$(q $db "select value from meta where key = 'filtered_lttng_thread_events'")"
check "layout 1: threads" "ig1gen|ig1gen_wkr" "$(q $db "select group_concat(name, '|') from (select name from thread where name not like '%-ust' order by tid)")"
check "indexes after the load" 1 "$(q $db "select count(*) from sqlite_master where type = 'index' and name = 'kernel_event_ts'")"
check "schema version" 4 "$(q $db 'pragma user_version')"

# --- fork with liblttng-ust-fork: the child is its own process --------------------------
forklib=$(ls /usr/lib/*/liblttng-ust-fork.so* 2>/dev/null | head -1)
LD_PRELOAD=$forklib record_trace "$work/fork" "$GEN" fork || fail "recording fork"
"$HL" collect "$work/fork" -o "$work/fork.db" -q; check "fork collect exit" 0 $?
db=$work/fork.db
check "fork processes" 2 "$(q $db 'select count(distinct pid) from block')"
check "fork blocks" 30 "$(q $db 'select count(*) from block')"
check "fork live at exit" 6 "$(q $db 'select count(*) from live_at_exit')"
check "fork no inferred ends" 0 "$(q $db 'select count(*) from block where flags & 8')"

# --- stacks belong to their process: a forked child inherits its parent's as of the fork --
# (ingest_gen forkstacks: the child uses an id the parent described before the fork, one it
# described only after, and its own; an exec'ed process uses an id it never described)
LD_PRELOAD=$forklib record_trace "$work/fstk" "$GEN" forkstacks || fail "recording forkstacks"
"$HL" collect "$work/fstk" -o "$work/fstk.db" -q; check "forkstacks: collect exit" 0 $?
db=$work/fstk.db
parent=$(q $db "select pid from block where ptr = 987136")
child=$(q $db "select pid from block where ptr = 995328")
other=$(q $db "select pid from block where ptr = 999424")
check "forkstacks: three processes" 3 "$(q $db "select count(distinct pid) from block where ptr >= 987136")"
check "forkstacks: child's parent" "$parent" "$(q $db "select ppid from process where pid = $child")"
check "forkstacks: exec'ed process has no ppid" "" "$(q $db "select ppid from process where pid = $other")"
check "forkstacks: inherited id = the parent's stack" \
    "$(q $db "select alloc_stack from block where ptr = 987136")" "$(q $db "select alloc_stack from block where ptr = 995328")"
check "forkstacks: id described by the parent after the fork: unknown" 1 "$(q $db "select alloc_stack is null from block where ptr = 995584")"
check "forkstacks: the child's own stack" "$child" "$(q $db "select s.pid from block b join stack s on s.id = b.alloc_stack where b.ptr = 995840")"
check "forkstacks: unrelated process's undescribed id: unknown, not borrowed" 1 "$(q $db "select alloc_stack is null from block where ptr = 999424")"
check "forkstacks: no block has another process's stack but inherited ones" 1 \
    "$(q $db "select count(*) from block b join stack s on s.id = b.alloc_stack where s.pid != b.pid")"
check "forkstacks: unknown stack refs" 2 "$(q $db "select value from meta where key = 'unknown_stack_refs'")"

# --- per-pid buffers: one CTF directory per process, merged in time order ----------------
LD_PRELOAD=$forklib CHANNEL_OPTS="--buffers-pid --subbuf-size=1M --num-subbuf=4" \
    record_trace "$work/perpid" "$GEN" fork || fail "recording per-pid"
check "per-pid: several CTF directories" 1 "$(( $(find "$work/perpid" -name metadata | wc -l) >= 2 ))"
"$HL" collect "$work/perpid" -o "$work/perpid.db" -q; check "per-pid collect exit" 0 $?
db=$work/perpid.db
check "per-pid: processes" 2 "$(q $db 'select count(distinct pid) from block')"
check "per-pid: blocks" 30 "$(q $db 'select count(*) from block')"
check "per-pid: global order" 1 "$(q $db 'select count(distinct alloc_seq) = count(*) from block')"

# --- discard mode with tiny sub-buffers: lost events are counted, pairs stay consistent ----
CHANNEL_OPTS="--subbuf-size=4096 --num-subbuf=2 --discard" record_trace "$work/lossy" "$GEN" bench 200000 \
    || fail "recording lossy"
"$HL" collect "$work/lossy" -o "$work/lossy.db" -q; check "lossy collect exit" 0 $?
db=$work/lossy.db
check "lossy: discarded events counted" 1 "$(q $db 'select discarded_events > 0 from run')"
check "lossy: events + discarded <= emitted" 1 "$(q $db 'select events + discarded_events <= 400000 + 1000 from run')"
check "lossy: every block row is consistent" 0 "$(q $db 'select count(*) from block where free_seq is not null and free_seq < alloc_seq')"

# --- bad input ---------------------------------------------------------------------------
out=$("$HL" collect "$work/basic" -o "$work/basic.db" 2>&1); rc=$?
check "existing output: exit" 1 $rc
case $out in *"output file exists"*"--force"*) pass "existing output: message";; *) fail "existing output: message: $out";; esac
"$HL" collect "$work/basic" -o "$work/basic.db" --force -q; check "--force exit" 0 $?
mkdir -p "$work/empty"; out=$("$HL" collect "$work/empty" -o "$work/e.db" 2>&1); rc=$?
check "not a trace: exit" 1 $rc
case $out in *"not an LTTng trace"*) pass "not a trace: message";; *) fail "not a trace: message: $out";; esac
[ -e "$work/e.db" ] && fail "not a trace: no db left" || pass "not a trace: no db left"
out=$("$HL" collect "$work/nowhere" -o "$work/e.db" 2>&1); rc=$?
check "missing dir: exit" 1 $rc
case $out in *"No such file"*) pass "missing dir: message";; *) fail "missing dir: message: $out";; esac
out=$("$HL" collect "$work/basic" -o "$work/no/such/dir/x.db" 2>&1); rc=$?
check "unwritable output: exit" 1 $rc
case $out in *"cannot create"*"No such file"*) pass "unwritable output: message";; *) fail "unwritable output: message: $out";; esac
out=$("$HL" collect 2>&1); check "usage: exit" 2 $?
# The decoder child's internal option, typed by hand: refused, nothing decoded, no output file.
out=$("$HL" collect --decoder-child 1 "$work/scratch-none" "$work/basic" 2>&1); rc=$?
check "internal --decoder-child: exit" 2 $rc
case $out in *"--decoder-child is internal"*) pass "internal --decoder-child: message";; *) fail "internal --decoder-child: message: $out";; esac

# truncated stream file: what decoded is kept, the loss is reported
cp -r "$work/basic" "$work/trunc"
# The stream with the fewest events is cut, so that the others keep decodable events whichever
# CPU the program ran on (a stream of one packet cut in half loses all of its events).
f=""; fewest=""
for c in $(find "$work/trunc" -name 'ch_*' -path '*64-bit/ch_*' -size +0 | sort); do
    n=$(babeltrace2 "$work/basic" 2>/dev/null | grep -c "cpu_id = ${c##*ch_} ")
    if [ -z "$fewest" ] || [ "$n" -lt "$fewest" ]; then f=$c; fewest=$n; fi
done
truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"
out=$("$HL" collect "$work/trunc" -o "$work/trunc.db" -q 2>&1); rc=$?
check "truncated: exit (partial)" 3 $rc
case $out in *"warning: trace damaged"*) pass "truncated: message: $out";; *) fail "truncated: message: $out";; esac
check "truncated: status" partial "$(q $work/trunc.db "select value from meta where key = 'ingest_status'")"

# corrupt metadata: nothing decodes
cp -r "$work/basic" "$work/corrupt"
m=$(find "$work/corrupt" -name metadata | head -1)
printf 'garbage garbage garbage' | dd of="$m" bs=1 seek=40 conv=notrunc status=none
out=$("$HL" collect "$work/corrupt" -o "$work/corrupt.db" -q 2>&1); rc=$?
check "corrupt metadata: exit" 1 $rc
case $out in *"not a readable CTF trace"*) pass "corrupt metadata: message";; *) fail "corrupt metadata: message: $out";; esac

# full disk: a 1 MiB tmpfs (root only; CI runs as root)
if [ "$(id -u)" = 0 ]; then
    "$GEN" bench 20000 >/dev/null 2>&1 # warm
    record_trace "$work/big" "$GEN" bench 60000 || fail "recording big"
    mnt=$work/small; mkdir -p "$mnt"
    if mount -t tmpfs -o size=1m tmpfs "$mnt"; then
        out=$("$HL" collect "$work/big" -o "$mnt/full.db" -q 2>&1); rc=$?
        check "disk full: exit" 1 $rc
        case $out in *"disk full"*) pass "disk full: message";; *) fail "disk full: message: $out";; esac
        [ -e "$mnt/full.db" ] && fail "disk full: partial db removed" || pass "disk full: partial db removed"
        mount -o remount,ro "$mnt"
        out=$("$HL" collect "$work/basic" -o "$mnt/ro.db" -q 2>&1); rc=$?
        check "read-only output: exit" 1 $rc
        case $out in *"Read-only"*|*"readonly"*) pass "read-only output: message";; *) fail "read-only output: message: $out";; esac
        umount "$mnt"; mnt=""
    else
        echo "  skip full-disk test (cannot mount tmpfs)"
    fi
fi

# --- a real program through `heapledger record`, and its kept trace through collect ---------
prog=$gen_dir/ingest_prog
if [ -x "$prog" ] && "$HL" record --help >/dev/null 2>&1; then
    echo "ingest: record + collect of a real program"
    # A uniquely named copy: the checks only count this run's process, whatever else the
    # shared lttng-sessiond traced at the same time.
    cp "$prog" "$work/${TAG}p" && prog=$work/${TAG}p
    P="pid IN (SELECT pid FROM process WHERE procname = '${TAG}p')"
    timeout -k 5 120 "$HL" record -o "$work/rec.db" --keep-trace "$work/rec-trace" -- "$prog" >/dev/null 2>"$work/rec.err"
    rc=$?
    [ $rc = 124 ] && fail "record hung (killed after 120 s): $(tail -3 "$work/rec.err")"
    check "record exit" 0 $rc
    for db in "$work/rec.db" "$work/rec-collect.db"; do
        [ "$db" = "$work/rec-collect.db" ] && { "$HL" collect "$work/rec-trace" -o "$db" -q; check "collect of the kept trace: exit" 0 $?; }
        n=$(basename "$db" .db)
        check "$n: one process" 1 "$(q $db "select count(*) from process where procname = '${TAG}p'")"
        check "$n: malloc(12345) lifetimes" 100 "$(q $db "select count(*) from allocations where size = 12345 and $P")"
        check "$n: malloc(12345) leaked" 40 "$(q $db "select count(*) from live_at_exit where size = 12345 and $P")"
        check "$n: realloc chains" "10|10|10" "$(q $db "select sum(size = 777 and flags = 4) || '|' || sum(size = 1777 and flags = 6) || '|' || sum(size = 2777 and flags = 2 and free_ts is not null) from block where $P")"
        check "$n: cross-thread calloc frees" 20 "$(q $db "select count(*) from block where size = 4321 and free_tid != alloc_tid and $P")"
        check "$n: symbolised main" 1 "$(q $db "select count(*) > 0 from block b join frame f on f.stack_id = b.alloc_stack where b.size = 12345 and f.function = 'main' and b.$P")"
        check "$n: nothing discarded" 0 "$(q $db 'select discarded_events from run')"
        check "$n: every allocating thread named (heapledger:thread)" 0 "$(q $db "select count(*) from (select distinct pid, alloc_tid from block where $P) b left join thread t on t.pid = b.pid and t.tid = b.alloc_tid where t.name is null")"
    done
    check "record and collect agree" "$(q $work/rec.db 'select count(*) from block')" "$(q $work/rec-collect.db 'select count(*) from block')"

    # stacks across fork without exec and exec, with the real allocator (ingest_forkprog.c)
    fprog=$work/${TAG}f; cp "$gen_dir/ingest_forkprog" "$fprog"
    timeout -k 5 120 "$HL" record -o "$work/fork-rec.db" -- "$fprog" >/dev/null 2>"$work/fork-rec.err"
    check "fork program: record exit" 0 $?
    db=$work/fork-rec.db
    F="b.pid IN (SELECT pid FROM process WHERE procname = '${TAG}f')"
    site() { q $db "select group_concat(distinct (select function from frame f where f.stack_id = b.alloc_stack and f.depth = 0)) from block b where b.size = $1 and $F"; }
    check "fork program: three processes" 3 "$(q $db "select count(distinct pid) from block b where size in (1111, 2222, 3333, 4444) and $F")"
    check "fork program: parent and child site_a" site_a "$(site 1111)"
    check "fork program: child site_c" site_c "$(site 3333)"
    check "fork program: exec'ed process's own stacks" other_site "$(site 4444)"
    check "fork program: every block's stack is its own process's" 0 "$(q $db "select count(*) from block b join stack s on s.id = b.alloc_stack where s.pid != b.pid and $F")"
    check "fork program: every block has a stack" 0 "$(q $db "select count(*) from block b where size in (1111, 2222, 3333, 4444) and alloc_stack is null and $F")"
    check "fork program: the child's parent" 1 "$(q $db "select count(*) from process c join process p on c.ppid = p.pid where c.pid = (select pid from block where size = 3333 limit 1) and p.pid = (select pid from block where size = 2222 limit 1)")"
else
    echo "  skip record test (no heapledger record or ingest_prog)"
fi

if [ -x "$here/collectd_test.sh" ]; then "$here/collectd_test.sh" "$HL" "$GEN" "$work" || fails=$((fails + 1)); fi

if [ $fails -ne 0 ]; then echo "ingest: $fails FAILED"; exit 1; fi
echo "ingest: all passed"
