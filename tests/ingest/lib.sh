# tests/ingest/lib.sh — helpers for the ingest end-to-end tests (sourced).
# Real components: lttng-sessiond (the test's own: tests/ingest/module.mk runs each script
# under tests/own_sessiond.sh; one is started if none answers), lttng CLI sessions with unique
# names, sqlite3 on the produced databases.

fails=0
# Unique process name of this test run (<= 10 characters): sessions filter on it.
: "${TAG:=ig$$}"; export TAG
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; fails=$((fails + 1)); }
# check NAME EXPECTED ACTUAL
check() { if [ "$2" = "$3" ]; then pass "$1 = $3"; else fail "$1: expected '$2', got '$3'"; fi; }
q() { sqlite3 "$1" "$2"; }

ensure_sessiond() {
    if ! lttng list >/dev/null 2>&1; then
        lttng-sessiond --daemonize >/dev/null 2>&1 || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do lttng list >/dev/null 2>&1 && break; sleep 0.3; done
    fi
    lttng list >/dev/null 2>&1 || { echo "ingest tests: no lttng-sessiond" >&2; exit 1; }
}

# record_trace OUTDIR CMD ARGS… — a session with the heapledger events, statedump and dl
# events and the vpid/vtid/procname contexts, blocking channel with large sub-buffers
# (CHANNEL_OPTS replaces the channel options).
record_trace() {
    local out=$1; shift
    local s="hlig_$$_$RANDOM"
    rm -rf "$out"
    lttng create "$s" --output="$out" >/dev/null &&
    lttng enable-channel -u -s "$s" ch ${CHANNEL_OPTS:---subbuf-size=1M --num-subbuf=8 --blocking-timeout=inf} >/dev/null &&
    lttng enable-event -u -s "$s" -c ch 'heapledger:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng enable-event -u -s "$s" -c ch 'lttng_ust_statedump:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng enable-event -u -s "$s" -c ch 'lttng_ust_dl:*' --filter "\$ctx.procname == \"$TAG*\"" >/dev/null &&
    lttng add-context -u -s "$s" -c ch -t vpid -t vtid -t procname >/dev/null &&
    lttng start "$s" >/dev/null || { lttng destroy "$s" >/dev/null 2>&1; return 1; }
    LTTNG_UST_ALLOW_BLOCKING=1 "$@"
    local rc=$?
    lttng stop "$s" >/dev/null
    lttng destroy "$s" >/dev/null
    return $rc
}
