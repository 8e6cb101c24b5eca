#!/usr/bin/env bash
# tests/e2e/record_faults_test.sh — `heapledger record` under faults (docs/record.md, "Faults").
#
#   t_sigkill       SIGKILL to record: the reaper kills the traced processes and the private
#                   daemons, removes the trace directory; no session is left anywhere
#   t_sigkill_user  the same as an unprivileged user (no namespace: the environment marker)
#   t_sessiond_dies the private session daemon is killed mid-run: non-zero status, a message,
#                   the events that reached the disk are kept, no hang
#   t_consumerd_dies the same for the consumer daemon (the program must not block forever)
#   t_output        output problems are refused before the program starts
#   t_no_events     a program that is not traced at all (static): no "success" with 0 events
#
# The daemons killed here are the recording's own private ones (record starts one per
# recording), never the machine's shared lttng-sessiond. Every run is time-bounded.
#
# usage: BUILD=build tests/e2e/record_faults_test.sh [TEST...]      (default: all)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=${HL:-$ROOT/$BUILD/bin/heapledger} # HL=... tests another build
EMIT=$ROOT/$BUILD/tests/e2e/tp_emit
WORK=$(mktemp -d /tmp/hl-record-faults.XXXXXX)
mkdir -p "$WORK/lib"
cp "$ROOT/$BUILD/tests/e2e/stub/libheapledger.so" "$ROOT/$BUILD/lib/libheapledger-tp.so" "$WORK/lib/"
export HEAPLEDGER_LIBDIR=$WORK/lib
# Copies that user nobody can run whatever the tree's own directories allow (a clone below a
# 0700 directory): the cases run as nobody use these.
mkdir -p "$WORK/bin" && cp "$HL" "$WORK/bin/heapledger" && cp "$EMIT" "$WORK/bin/tp_emit"
NOBODY_HL=$WORK/bin/heapledger NOBODY_EMIT=$WORK/bin/tp_emit
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
pids_of() { sed -n 's/^pid \([0-9]*\).*/\1/p' "$1" | paste -sd" "; }
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${s:0:1}" != Z ]; }
wait_for() { # wait_for SECONDS COMMAND...: poll until COMMAND succeeds
    local end=$((SECONDS + $1))
    shift
    until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.05; done
}
need_root() { [ "$(id -u)" = 0 ] || { SKIPPED="needs root"; return 1; }; }
lines() { [ -e "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
# A trace data file of the recording's big channel holds at least one complete 8 MiB packet
# ... and its metadata has been flushed (record flushes it every 200 ms).
has_data() {
    find "$1" -name 'heapledger_[0-9]*' -size +8192k 2>/dev/null | grep -q . &&
        find "$1" -name metadata -size +0 2>/dev/null | grep -q .
}

# --- the tests ----------------------------------------------------------------------------

t_sigkill() {
    local d=$WORK/kill
    mkdir -p "$d/tmp"
    TMPDIR=$d/tmp "$HL" record -o "$d.db" -- sh -c "$EMIT 500 1 sleep & exec $EMIT 500 1 sleep" \
        >"$d.out" 2>"$d.err" &
    local r=$!
    BG+=("$r")
    wait_for 30 lines "$d.out" 2 || { note "FAIL: the programs did not start: $(cat "$d.err")"; return 1; }
    local pids s c p ok=0
    pids=$(pids_of "$d.out")
    BG+=($pids) # killed at exit if a failing build leaves them
    s=$(pgrep -P "$r" -x lttng-sessiond)
    c=$(pgrep -P "${s:-0}" -x lttng-consumerd | paste -sd" ")
    [ -n "$s" ] && [ -n "$c" ] || { note "FAIL: no private daemons (sessiond '$s', consumerd '$c')"; ok=1; }
    # The session is there, on the recording's own daemon (seen from its namespace).
    if [ $ok = 0 ] && [ "$(id -u)" = 0 ] && command -v nsenter >/dev/null; then
        nsenter -t "$r" -m env LTTNG_HOME=/var/run/lttng/home lttng list >"$d.list" 2>&1
        contains "$d.list" "heapledger-$r-" || ok=1
    fi
    kill -9 "$r"
    wait "$r" 2>/dev/null
    # No session named after this record in the machine's shared daemon. (A build that leaves
    # one there gets it destroyed: it is this test's own debris.)
    local left
    left=$(lttng list 2>/dev/null | grep -o "heapledger-$r-[0-9]*")
    if [ -n "$left" ]; then
        note "FAIL: record $r left the session $left on the shared daemon (destroyed now)"
        lttng destroy "$left" >/dev/null 2>&1
        return 1
    fi
    [ $ok = 0 ] || return 1
    # The reaper says so when it is done.
    wait_for 20 grep -q "record ended before it finished" "$d.err" ||
        { note "FAIL: the reaper did not report: $(cat "$d.err")"; return 1; }
    for p in $pids $s $c; do
        wait_for 15 eval "! alive $p" || { note "FAIL: process $p ($(ps -o comm= -p $p)) still runs"; return 1; }
    done
    check "files left in TMPDIR (trace directory, private LTTng home)" "" "$(ls -A "$d/tmp")" || return 1
    check "database" "" "$(ls "$d.db" 2>/dev/null)" || return 1
    contains "$d.err" "record ended before it finished; killed 2 traced processes" || return 1
}

# The same for an unprivileged user: no mount namespace, the reaper finds the recording's
# processes by the HEAPLEDGER_RECORDING marker in their environment.
t_sigkill_user() {
    need_root || return 0
    command -v setpriv >/dev/null || { SKIPPED="setpriv missing"; return 0; }
    local d=$WORK/killuser
    mkdir -p "$d/tmp" && chmod 777 "$d" "$d/tmp" && chmod o+rx "$WORK" "$WORK/lib" "$WORK/bin" && chmod o+r "$WORK"/lib/*
    setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$d/tmp" HOME=/nonexistent \
        "$NOBODY_HL" record -o "$d/x.db" -- sh -c "$NOBODY_EMIT 500 1 sleep & exec $NOBODY_EMIT 500 1 sleep" \
        >"$d/out" 2>"$d/err" &
    local r=$!
    BG+=("$r")
    wait_for 30 lines "$d/out" 2 || { note "FAIL: the programs did not start: $(cat "$d/err")"; return 1; }
    local pids s c p
    pids=$(pids_of "$d/out")
    BG+=($pids)
    s=$(pgrep -P "$r" -x lttng-sessiond)
    c=$(pgrep -P "$s" -x lttng-consumerd | paste -sd" ")
    [ -n "$s" ] && [ -n "$c" ] || { note "FAIL: no private daemons (sessiond '$s', consumerd '$c')"; return 1; }
    kill -9 "$r"
    wait "$r" 2>/dev/null
    wait_for 20 grep -q "record ended before it finished" "$d/err" ||
        { note "FAIL: the reaper did not report: $(cat "$d/err")"; return 1; }
    for p in $pids $s $c; do
        alive "$p" && { note "FAIL: process $p ($(ps -o comm= -p $p)) still runs"; return 1; }
    done
    check "files left in TMPDIR (trace directory, private LTTng home)" "" "$(ls -A "$d/tmp")" || return 1
    contains "$d/err" "killed 2 traced processes" || return 1
}

# Kill one of the recording's daemons once the trace holds data; record must end (bounded),
# with a non-zero status and a message, and keep the events already on disk.
daemon_dies() { # daemon_dies NAME sessiond|consumerd
    local d=$WORK/$1
    need_root || return 0
    timeout -k 5 120 "$HL" record -o "$d.db" --keep-trace "$d.trace" -- "$EMIT" 40000000 1 \
        >"$d.out" 2>"$d.err" &
    local t=$!
    BG+=("$t")
    wait_for 60 has_data "$d.trace" || { note "FAIL: no trace data: $(cat "$d.err")"; return 1; }
    local r s c victim
    r=$(pgrep -P "$t" -x heapledger)
    s=$(pgrep -P "$r" -x lttng-sessiond)
    c=$(pgrep -P "$s" -x lttng-consumerd | head -1)
    [ -n "$s" ] && [ -n "$c" ] || { note "FAIL: no private daemons (sessiond '$s', consumerd '$c')"; return 1; }
    [ "$2" = sessiond ] && victim=$s || victim=$c
    kill -9 "$victim"
    wait "$t"
    local rc=$?
    [ $rc != 124 ] && [ $rc != 137 ] || { note "FAIL: record hung (killed by timeout)"; return 1; }
    check "exit status" 125 $rc || { cat "$d.err"; return 1; }
    local what="session daemon"
    [ "$2" = consumerd ] && what="consumer daemon"
    contains "$d.err" "the private LTTng $what (pid $victim) died while the program ran" || return 1
    contains "$d.err" "the recording is incomplete: the $what died" || return 1
    local n
    n=$(sql "$d.db" "SELECT count(*) FROM block")
    [ "${n:-0}" -gt 0 ] || { note "FAIL: no blocks kept in $d.db"; return 1; }
    note "kept $n blocks of 40000000"
    check "ingest_status" partial "$(sql "$d.db" "SELECT value FROM meta WHERE key = 'ingest_status'")" || return 1
    case "$(sql "$d.db" "SELECT value FROM meta WHERE key = 'ingest_warning'")" in
    *"the private LTTng $what died while the program ran"*) ;;
    *) note "FAIL: ingest_warning does not name the $what"; return 1 ;;
    esac
    for p in $s $c; do alive "$p" && { note "FAIL: daemon $p still runs"; return 1; }; done
    return 0
}
t_sessiond_dies() { daemon_dies sessiond sessiond; }
t_consumerd_dies() { daemon_dies consumerd consumerd; }

# Output problems: refused with status 2 before the program runs (it would create $d/ran).
t_output() {
    local d=$WORK/output
    mkdir -p "$d"
    : >"$d/exists.db"
    : >"$d/file"
    local o
    for o in "$d/missing/x.db" "$d/exists.db" "$d/file/x.db"; do
        "$HL" record -o "$o" -- touch "$d/ran" >"$d/out" 2>"$d/err"
        check "exit status for -o $o" 2 $? || return 1
        [ ! -e "$d/ran" ] || { note "FAIL: the program ran with -o $o"; return 1; }
    done
    contains "$d/err" "$d/file is not a directory" || return 1
    "$HL" record -o "$d/missing/x.db" -- true >"$d/out" 2>"$d/err"
    contains "$d/err" "cannot write $d/missing/x.db: $d/missing does not exist" || return 1
    if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then # a directory nobody cannot write
        mkdir -p "$d/ro" && chmod 755 "$d/ro" && chmod o+rx "$WORK" "$d" "$WORK/lib" "$WORK/bin" && chmod o+r "$WORK"/lib/*
        setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent \
            "$NOBODY_HL" record -o "$d/ro/x.db" -- touch "$d/ran" >"$d/out" 2>"$d/err"
        check "exit status (unwritable)" 2 $? || return 1
        contains "$d/err" "cannot write $d/ro/x.db: directory $d/ro: Permission denied" || return 1
        [ ! -e "$d/ran" ] || { note "FAIL: the program ran (unwritable)"; return 1; }
    fi
}

# A static program ignores LD_PRELOAD: nothing is traced, and that is not a success.
t_no_events() {
    local d=$WORK/noevents
    mkdir -p "$d"
    echo 'int main(void) { return 0; }' >"$d/s.c"
    cc -static -o "$d/static" "$d/s.c" 2>/dev/null || { SKIPPED="no static libc"; return 0; }
    mkdir -p "$d/tmp"
    TMPDIR=$d/tmp "$HL" record -o "$d/x.db" -- "$d/static" >"$d/out" 2>"$d/err"
    check "exit status" 125 $? || { cat "$d/err"; return 1; }
    contains "$d/err" "nothing was recorded: no process of '$d/static' reached the session daemon" || return 1
    [ ! -e "$d/x.db" ] || { note "FAIL: a database was written"; return 1; }
    check "files left in TMPDIR" "" "$(ls -A "$d/tmp")" || return 1
}

all=(t_sigkill t_sigkill_user t_sessiond_dies t_consumerd_dies t_output t_no_events)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${all[@]}")
echo "record-faults: ${#tests[@]} tests (work dir $WORK)"
for t in "${tests[@]}"; do
    SKIPPED=
    start=$(date +%s.%N)
    if "$t"; then
        pass=$((pass + 1))
        printf '  ok    %-20s %5.1f s%s\n' "$t" "$(echo "$(date +%s.%N) - $start" | bc)" \
            "${SKIPPED:+ (skipped: $SKIPPED)}"
    else
        fail=$((fail + 1))
        failed+=("$t")
        echo "  FAIL  $t"
    fi
done
echo "record-faults: $pass passed, $fail failed ${failed[*]:-}"
[ "$fail" = 0 ]
