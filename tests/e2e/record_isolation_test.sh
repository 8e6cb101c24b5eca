#!/usr/bin/env bash
# tests/e2e/record_isolation_test.sh — a recording holds exactly its own processes.
#
# Inside a mount namespace of its own (so the machine's shared lttng-sessiond is never
# touched), the test plays "the machine": its own root session daemon on /var/run/lttng with
# a session made by hand with `lttng`, tracing heapledger:* (per-UID buffers), while a third
# program with the probes loaded runs. At the same moment two `heapledger record` run:
#   A  a program that forks without exec (tp_emit ... fork, 2 threads per process)
#   B  a shell that fork+execs the program twice
# All three programs wait on one barrier, so their events interleave. Then:
#   - A's and B's databases hold exactly their own pids and block counts;
#   - the hand-made session's trace holds the third program's events and none of A's or
#     B's (a recorded program writes only into its own recording's buffers).
#
# usage: BUILD=build tests/e2e/record_isolation_test.sh
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=${HL:-$ROOT/$BUILD/bin/heapledger} # HL=... tests another build
EMIT=$ROOT/$BUILD/tests/e2e/tp_emit
TP=$ROOT/$BUILD/lib/libheapledger-tp.so

if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v lttng >/dev/null; then
    echo "record-isolation: skipped (needs root, unshare and lttng)"
    exit 0
fi

if [ "${1:-}" != --inside ]; then
    W=$(mktemp -d /tmp/hl-record-iso.XXXXXX)
    trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$W"' EXIT
    echo "record-isolation: work dir $W"
    # A bound: a hang is a failure, not a stuck make check.
    timeout -k 5 120 unshare -m "$0" --inside "$W"
    rc=$?
    [ $rc = 0 ] && echo "record-isolation: passed" || echo "record-isolation: FAILED ($rc)"
    exit $rc
fi

# --- inside the test's own mount namespace ------------------------------------------------
W=$2
fail() { echo "    FAIL: $*"; exit 1; }
sql() { sqlite3 -batch -noheader "$1" "$2"; }
pids_of() { sed -n 's/^pid \([0-9]*\).*/\1/p' "$1" | sort -n | paste -sd" "; }

mount --make-rslave / || fail "mount --make-rslave /"
mkdir -p /var/run/lttng
mount -t tmpfs -o mode=0755 hl-test-lttng /var/run/lttng || fail "tmpfs on /var/run/lttng"
mount -t tmpfs -o mode=1777 hl-test-shm /dev/shm || fail "tmpfs on /dev/shm"
export LTTNG_HOME=$W/home
mkdir -p "$LTTNG_HOME"
lttng-sessiond --no-kernel --daemonize >"$W/sessiond.log" 2>&1 || fail "test daemon: $(cat "$W/sessiond.log")"
stop_daemon() {
    lttng destroy -a >/dev/null 2>&1
    kill "$(cat /var/run/lttng/lttng-sessiond.pid 2>/dev/null)" 2>/dev/null
}
trap stop_daemon EXIT
lttng create hand --output="$W/hand" >/dev/null || fail "lttng create"
lttng enable-event -u 'heapledger:*' -s hand >/dev/null || fail "lttng enable-event"
lttng start hand >/dev/null || fail "lttng start"

mkdir -p "$W/lib"
cp "$ROOT/$BUILD/tests/e2e/stub/libheapledger.so" "$TP" "$W/lib/"
export HEAPLEDGER_LIBDIR=$W/lib
barrier="while [ ! -e $W/go ]; do sleep 0.02; done"

# A: fork without exec, two threads per process; B: fork+exec twice.
"$HL" record -o "$W/a.db" -- sh -c "touch $W/ready-a; $barrier; exec $EMIT 4000 2 fork" \
    >"$W/a.out" 2>"$W/a.err" &
ra=$!
"$HL" record -o "$W/b.db" -- sh -c "touch $W/ready-b; $barrier; $EMIT 3000 1; $EMIT 3000 1" \
    >"$W/b.out" 2>"$W/b.err" &
rb=$!
# The third program: probes loaded, traced by the hand-made session only.
LD_PRELOAD=$TP LTTNG_UST_REGISTER_TIMEOUT=10000 sh -c "$barrier; exec $EMIT 2500 1" \
    >"$W/c.out" 2>"$W/c.err" &
rc3=$!
for _ in $(seq 600); do [ -e "$W/ready-a" ] && [ -e "$W/ready-b" ] && break; sleep 0.05; done
[ -e "$W/ready-a" ] && [ -e "$W/ready-b" ] || fail "the recorded programs did not start: $(cat "$W/a.err" "$W/b.err")"
touch "$W/go"
wait $ra || fail "record A failed: $(cat "$W/a.err")"
wait $rb || fail "record B failed: $(cat "$W/b.err")"
wait $rc3 || fail "the third program failed: $(cat "$W/c.err")"
lttng destroy hand >/dev/null || fail "lttng destroy"

pa=$(pids_of "$W/a.out") pb=$(pids_of "$W/b.out") pc=$(pids_of "$W/c.out")
[ "$(echo $pa | wc -w)" = 2 ] || fail "A printed pids '$pa'"
[ "$(echo $pb | wc -w)" = 2 ] || fail "B printed pids '$pb'"
[ "$(echo $pc | wc -w)" = 1 ] || fail "C printed pids '$pc'"

check_db() { # check_db DB "PIDS" BLOCKS_PER_PID
    local got want p
    got=$(sql "$1" "SELECT DISTINCT pid FROM block ORDER BY pid" | paste -sd" ")
    [ "$got" = "$2" ] || fail "$1 holds the processes '$got', expected exactly '$2'"
    for p in $2; do
        want=$3
        got=$(sql "$1" "SELECT count(*) FROM block WHERE pid = $p")
        [ "$got" = "$want" ] || fail "$1: pid $p has $got blocks, expected $want"
    done
    got=$(sql "$1" "SELECT count(*) FROM block WHERE pid NOT IN ($(echo $2 | tr ' ' ','))")
    [ "$got" = 0 ] || fail "$1: $got foreign blocks"
}
check_db "$W/a.db" "$pa" 8000
check_db "$W/b.db" "$pb" 3000

# The hand-made session: the third program's 2500 allocations, nothing of A or B.
babeltrace2 "$W/hand" 2>/dev/null | grep ' heapledger:alloc: ' >"$W/hand.txt"
who_hex() { printf '0x%X' "$1"; } # layout-3 events: words[0] = vpid << 32 | vtid
got=$(grep -c "words = \[ \[0\] = $(who_hex "$pc")[0-9A-F]\{8\}," "$W/hand.txt")
[ "$got" = 2500 ] || fail "the hand-made session holds $got allocations of the third program, expected 2500"
total=$(wc -l <"$W/hand.txt")
[ "$total" = 2500 ] || fail "the hand-made session holds $total allocations, expected only the third program's 2500"
echo "    a.db pids $pa, b.db pids $pb, hand-made session: pid $pc only"
exit 0
