# tests/fleet/lib.sh — helpers for the fleet tests (sourced): our own lttng-relayd on
# 127.0.0.1 with random ports, our own collectd, checks on the databases with sqlite3.
fails=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
check() { if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: expected '$2', got '$3'"; fi; }
q() { sqlite3 "$1" "$2" 2>&1; }
relayd_pid=""; cd_pid=""
# Core dumps of collectd (and its live readers), so that a crash leaves its backtrace
# (crash_check): collectd runs with `ulimit -c unlimited` in $cores_dir (cores_in DIR, a
# directory of the test's own; start_collectd makes DIR/.cores if none was set). With the
# usual core_pattern ("core") the file lands there; a pipe handler takes it elsewhere (then
# crash_check reports the signal only).
cores_dir=""
cores_in() { cores_dir=$1; mkdir -p "$cores_dir"; }
# crash_check STATUS WHAT — STATUS of `wait` on WHAT (collectd): a crash (SIGSEGV, SIGABRT,
# SIGBUS, SIGILL, SIGFPE) fails the test, with the backtrace of every thread from the core.
crash_check() {
    case $1 in 132 | 134 | 135 | 136 | 139) ;; *) return 0 ;; esac
    fail "$2 crashed: signal $(($1 - 128)) ($(kill -l $(($1 - 128))))"
    local core
    [ -n "$cores_dir" ] || return 0
    for core in "$cores_dir"/core*; do
        [ -f "$core" ] || continue
        if command -v gdb >/dev/null; then
            gdb -batch -nx -ex 'info threads' -ex 'thread apply all bt' -ex 'echo crashing thread:\n' -ex 'bt full' "$HL" "$core" 2>&1 | sed 's/^/    /'
        fi
        [ -n "${FLEET_KEEP_CORES:-}" ] && mkdir -p "$FLEET_KEEP_CORES" &&
            cp "$core" "$FLEET_KEEP_CORES/collectd-$$-$(basename "$core")" && echo "    core kept in $FLEET_KEEP_CORES"
        rm -f "$core"
    done
}
pick_ports() { local b=$((20000 + RANDOM % 20000)); C=$b; D=$((b + 1)); L=$((b + 2)); }
# start_relayd OUTDIR [NETNS-EXEC...] — our relayd, its live port answering
start_relayd() {
    lttng-relayd -C tcp://127.0.0.1:$C -D tcp://127.0.0.1:$D -L tcp://127.0.0.1:$L \
        -o "$1" >/dev/null 2>&1 &
    relayd_pid=$!
    for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$L) 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
stop_relayd() { [ -n "$relayd_pid" ] && kill "$relayd_pid" 2>/dev/null && wait "$relayd_pid" 2>/dev/null; relayd_pid=""; }
# start_collectd DIR RELAYDIR LOG
start_collectd() {
    [ -n "$cores_dir" ] || cores_in "$1/.cores"
    (cd "$cores_dir" && ulimit -c unlimited 2>/dev/null; exec "$HL" collectd --url net://127.0.0.1:$L --dir "$1" --relay-dir "$2" --poll-ms 100 \
        --commit-ms 200 >/dev/null 2>>"$3") &
    cd_pid=$!
}
# stop_collectd — SIGTERM (it exits 0), or its crash reported if it died before
stop_collectd() {
    [ -n "$cd_pid" ] || return 0
    kill "$cd_pid" 2>/dev/null
    wait "$cd_pid" 2>/dev/null
    crash_check $? collectd
    cd_pid=""
}
# wait_rec PID SECONDS WHAT — the exit status of PID (a `record --relay`, or a subshell whose
# children run one), or 124 after SECONDS: PID and its children are then killed and the test
# fails. A record --relay whose relay daemon was killed can hang for good in an lttng-ctl call
# to its private session daemon (seen 2 times in about 190 sessions of relay restarts: the
# consumer daemon's threads wait on futexes); without a bound the test, and CI, would hang.
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
wait_rec() {
    local i=0
    while alive "$1" && [ $i -lt $(($2 * 10)) ]; do sleep 0.1; i=$((i + 1)); done
    if alive "$1"; then
        fail "$3: still running after $2 s (record --relay hung after the relay daemon went away): killed"
        pkill -9 -P "$1" 2>/dev/null
        kill -9 "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        return 124
    fi
    wait "$1"
}
# wait_for CMD… — up to 20 s
wait_for() { for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done; return 1; }
status_is() { [ -f "$1" ] && [ "$(sqlite3 "$1" "select value from meta where key='ingest_status'" 2>/dev/null)" = "$2" ]; }
completed() { [ -f "$1" ] && [ -n "$(sqlite3 "$1" "select value from meta where key='completed_from'" 2>/dev/null)" ]; }
# finished DB — collectd is done with it: completed from the relay's copy, or kept as the live
# view with the reason (meta.completion_failed)
finished() { [ -f "$1" ] && [ -n "$(sqlite3 "$1" "select value from meta where key in ('completed_from', 'completion_failed')" 2>/dev/null)" ]; }
# The facts a database must share with its offline recording.
facts() {
    sqlite3 "$1" "select (select events from run), (select count(*) from block),
        (select count(*) from live_at_exit), (select coalesce(sum(size),0) from live_at_exit),
        (select count(*) from orphan_free), (select count(*) from stack),
        (select count(*) from frame where function is not null),
        (select group_concat(function, ',') from (select function from frame where depth = 0 order by function))" || echo "no database $1"
}
# relay_copied RELAYDIR HOST SESSION — the relay daemon's on-disk copy of the session holds its
# metadata and stream data (so a relay restart after this point leaves a copy to complete from)
relay_copied() {
    local m
    for m in "$1/$2/$3"-*/ust/uid/*/64-bit/metadata; do
        [ -s "$m" ] && [ -n "$(find "$(dirname "$m")" -maxdepth 1 -name 'heapledger_*' -size +0 -print -quit)" ] && return 0
    done
    return 1
}
