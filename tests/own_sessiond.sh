#!/usr/bin/env bash
# tests/own_sessiond.sh CMD [ARGS…] — runs CMD with an LTTng session daemon of its own, so that
# a test neither needs nor touches the machine's shared lttng-sessiond (which may run, or not:
# CI starts with none). As root: inside a private mount namespace, with tmpfs on
# /var/run/lttng (the root daemon's run directory) and /dev/shm (the per-UID buffers' wait
# files); otherwise a private LTTNG_HOME. The daemon is stopped when CMD ends, also when CMD or
# the script was interrupted (Ctrl-C, SIGTERM, SIGHUP: the stop runs once CMD has ended, then
# the script exits 128 + the signal; tests/own_sessiond_test.sh); CMD's status is the script's.
set -u
if [ "$(id -u)" = 0 ] && [ -z "${HL_OWN_SESSIOND_NS:-}" ]; then
    command -v unshare >/dev/null || { echo "own_sessiond: unshare (util-linux) is missing" >&2; exit 1; }
    exec unshare -m --propagation slave env HL_OWN_SESSIOND_NS=self "$0" "$@"
fi
work=$(mktemp -d /tmp/hl-own-sessiond.XXXXXX)
if [ "$(id -u)" = 0 ]; then
    mkdir -p /var/run/lttng
    mount -t tmpfs -o mode=0755 hl-own-lttng /var/run/lttng &&
        mount -t tmpfs -o mode=1777 hl-own-shm /dev/shm ||
        { echo "own_sessiond: cannot mount a private /var/run/lttng or /dev/shm" >&2; exit 1; }
    pidfile=/var/run/lttng/lttng-sessiond.pid
else
    pidfile=$work/home/.lttng/lttng-sessiond.pid
fi
export LTTNG_HOME=$work/home
mkdir -p "$LTTNG_HOME"
if ! lttng-sessiond --no-kernel --daemonize >"$work/sessiond.log" 2>&1; then
    echo "own_sessiond: lttng-sessiond did not start: $(cat "$work/sessiond.log")" >&2
    rm -rf "$work"
    exit 1
fi
stop_daemon() {
    lttng destroy -a >/dev/null 2>&1
    local pid
    pid=$(cat "$pidfile" 2>/dev/null)
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    fi
    rm -rf "$work"
}
# Without these, an interrupted run (bash exits on the SIGINT its foreground command died of)
# left the daemon running in its private namespace, out of every later test's sight.
trap 'stop_daemon; exit 130' INT
trap 'stop_daemon; exit 143' TERM
trap 'stop_daemon; exit 129' HUP
"$@"
rc=$?
trap - INT TERM HUP
stop_daemon
exit $rc
