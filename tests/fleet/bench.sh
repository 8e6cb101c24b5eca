#!/usr/bin/env bash
# tests/fleet/bench.sh HEAPLEDGER INGEST_GEN [OUT.md] — collectd's throughput and memory with
# several sessions at once: K traced programs (K = 1, 2, 4) each run `ingest_gen bench N` (about
# 4N events: allocations, frees and their stacks) with
# `record --relay` to our own lttng-relayd on 127.0.0.1, one collectd (with --relay-dir)
# stores them. For each K: the time from the first record's start until every database is
# finished, the aggregate events/s over that time, collectd's peak RSS (VmHWM; a fresh
# collectd per K) and its share per session. FLEET_N sets N (default 1000000), FLEET_KS the
# session counts, FLEET_RUNS the runs per K (median; default 3). FLEET_RSS_LOG=FILE appends
# collectd's memory every 0.5 s ("K RUN SECONDS VmHWM VmRSS", KiB) to FILE.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2"); OUT=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
N=${FLEET_N:-1000000}; KS=${FLEET_KS:-1 2 4}; RUNS=${FLEET_RUNS:-3}
work=$(mktemp -d /tmp/fleet-bench.XXXXXX)
cores_in "$work/cores"
finish() { stop_collectd; stop_relayd; rm -rf "$work"; }
trap finish EXIT
pick_ports
mkdir -p "$work/relay"
start_relayd "$work/relay" || { echo "fleet bench: lttng-relayd did not start" >&2; exit 1; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now() { date +%s.%N; }
rows=""
for k in $KS; do
    : >"$work/t"; : >"$work/r"; : >"$work/m"; : >"$work/e"
    for run in $(seq "$RUNS"); do
        cd_dir=$work/cd-$k-$run
        mkdir -p "$cd_dir"
        start_collectd "$cd_dir" "$work/relay" "$work/cd.log"
        sleep 0.5
        t0=$(now)
        sampler=""
        if [ -n "${FLEET_RSS_LOG:-}" ]; then
            (while [ -r "/proc/$cd_pid/status" ]; do
                echo "$k $run $(awk -v t0="$t0" -v t="$(now)" 'BEGIN {printf "%.1f", t - t0}') $(awk '/VmRSS|VmHWM/ {printf " %s", $2}' "/proc/$cd_pid/status" 2>/dev/null)"
                sleep 0.5
            done >>"$FLEET_RSS_LOG") &
            sampler=$!
        fi
        pids=""
        for i in $(seq "$k"); do
            "$HL" record --relay net://127.0.0.1:$C:$D -o "b${k}r${run}s$i" -- "$GEN" bench "$N" \
                >/dev/null 2>>"$work/rec.log" &
            pids="$pids $!"
        done
        for p in $pids; do wait "$p"; done
        host=$(hostname | tr -c 'A-Za-z0-9_.\n-' _)
        for i in $(seq "$k"); do
            db=$cd_dir/$host-b${k}r${run}s$i.db
            for _ in $(seq 3000); do finished "$db" && break; sleep 0.1; done
            finished "$db" || { echo "fleet bench: $db not finished: $(tail -3 "$work/cd.log")" >&2; exit 1; }
        done
        t1=$(now)
        hwm=$(awk '/VmHWM/ {print $2}' "/proc/$cd_pid/status")
        stop_collectd
        [ -n "$sampler" ] && wait "$sampler"
        ev=0
        for i in $(seq "$k"); do
            ev=$((ev + $(q "$cd_dir/$host-b${k}r${run}s$i.db" 'select events from run')))
        done
        awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}' >>"$work/t"
        awk -v a="$t0" -v b="$t1" -v e="$ev" 'BEGIN {printf "%.0f\n", e / (b - a)}' >>"$work/r"
        echo "$hwm" >>"$work/m"
        echo "$ev" >>"$work/e"
        rm -rf "$cd_dir" "$work/relay/$host"
        echo "  K=$k run $run: $ev events in $(tail -1 "$work/t") s, $(tail -1 "$work/r") events/s, collectd peak $((hwm / 1024)) MiB" >&2
    done
    t=$(median <"$work/t"); r=$(median <"$work/r"); m=$(median <"$work/m"); e=$(median <"$work/e")
    rows="$rows| $k | $e | $t | $r | $((m / 1024)) | $((m / 1024 / k)) |\n"
done
table="fleet: collectd, $RUNS runs per row (median), ingest_gen bench $N per session, load $(cut -d' ' -f1-3 /proc/loadavg)

| sessions at once | events | start to every database finished (s) | aggregate events/s | collectd peak RSS (MiB) | per session (MiB) |
|---|---|---|---|---|---|
$rows"
printf "%b" "$table"
[ -n "$OUT" ] && printf "%b" "$table" >"$OUT"
exit 0
