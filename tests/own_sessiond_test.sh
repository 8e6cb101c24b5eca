#!/usr/bin/env bash
# tests/own_sessiond_test.sh — tests/own_sessiond.sh stops its daemon when the run is
# interrupted, not only when CMD ends:
#   t_end   CMD ends: the daemon is gone, CMD's status is the script's
#   t_int   SIGINT to the whole process group (what Ctrl-C in a terminal sends) while CMD runs
#   t_term  SIGTERM to the script alone while CMD runs (the stop comes once CMD has ended)
# Each run writes its daemon's pid where this test can read it; a daemon left over is killed
# here and counts as a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/hl-own-sessiond-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
note() { echo "  $*"; }

# The command run under own_sessiond.sh: note the daemon's pid, then $1.
cat >"$work/cmd.sh" <<'EOS'
#!/usr/bin/env bash
out=$1; shift
for f in /var/run/lttng/lttng-sessiond.pid "$LTTNG_HOME/.lttng/lttng-sessiond.pid"; do
    [ -s "$f" ] && { cat "$f" >"$out.tmp"; mv "$out.tmp" "$out"; break; }
done
eval "$*"
EOS
chmod +x "$work/cmd.sh"

# gone PIDFILE: 0 when the daemon named in it is gone within 10 s (else kills it, returns 1)
gone() {
    local pid
    pid=$(cat "$1" 2>/dev/null) || { note "FAIL: no daemon pid noted"; return 1; }
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    note "FAIL: daemon $pid still running after the run"
    return 1
}

# wait_pid FILE: until the command noted the daemon (at most 20 s)
wait_pid() {
    for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.1; done
    return 1
}

t_end() {
    "$here/own_sessiond.sh" "$work/cmd.sh" "$work/end.pid" "exit 7"
    local rc=$?
    [ "$rc" = 7 ] || { note "FAIL: status $rc, not CMD's 7"; return 1; }
    gone "$work/end.pid"
}

t_int() {
    # A job of its own process group (job control on), so that it does not ignore SIGINT as a
    # shell's plain background command would.
    set -m
    "$here/own_sessiond.sh" "$work/cmd.sh" "$work/int.pid" "sleep 30" &
    local leader=$! start=$SECONDS
    set +m
    wait_pid "$work/int.pid" || { note "FAIL: the command did not start"; return 1; }
    kill -INT -- "-$leader" 2>/dev/null
    wait "$leader"
    local rc=$?
    [ $((SECONDS - start)) -lt 25 ] || { note "FAIL: SIGINT did not end the command"; return 1; }
    [ "$rc" = 130 ] || { note "FAIL: status $rc after SIGINT, not 130"; gone "$work/int.pid"; return 1; }
    gone "$work/int.pid"
}

t_term() {
    "$here/own_sessiond.sh" "$work/cmd.sh" "$work/term.pid" "sleep 2" &
    local script=$!
    wait_pid "$work/term.pid" || { note "FAIL: the command did not start"; return 1; }
    kill -TERM "$script"
    wait "$script"
    local rc=$?
    [ "$rc" = 143 ] || { note "FAIL: status $rc after SIGTERM, not 143"; gone "$work/term.pid"; return 1; }
    gone "$work/term.pid"
}

for t in t_end t_int t_term; do
    if $t; then echo "  ok   $t"; else echo "  FAIL $t"; fails=$((fails + 1)); fi
done
echo "own_sessiond: $((3 - fails)) passed, $fails failed"
[ "$fails" = 0 ]
