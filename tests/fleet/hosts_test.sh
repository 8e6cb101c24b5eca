#!/usr/bin/env bash
# tests/fleet/hosts_test.sh HEAPLEDGER INGEST_GEN — three traced "hosts" for real: network
# namespaces of our own (each with its own host name in a UTS namespace, and its own private
# session daemon through `record`), linked by veth pairs with private addresses to a
# "collector" namespace that runs one lttng-relayd and one collectd. Nothing is added to the
# machine's own network namespace. Round 1: the three stream at the same time and collectd
# is restarted in the middle: each database equals its host's offline recording. Round 2:
# the relay daemon is restarted in the middle: each database is 'partial' and says so.
# Needs root (ip netns); skipped otherwise.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
echo "fleet: three hosts in network namespaces"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then echo "  skip (needs root and ip)"; exit 0; fi
work=$(mktemp -d /tmp/fleet-hosts-test.XXXXXX)
col=hlfc$$; hosts="1 2 3"
pids=""
cleanup() {
    for p in $pids $cd_pid $relayd_pid; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    ip netns del $col 2>/dev/null
    for i in $hosts; do ip netns del hlfh$$_$i 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
ip netns add $col && ip -n $col link set lo up || { fail "cannot create network namespaces"; exit 1; }
for i in $hosts; do
    h=hlfh$$_$i
    ip netns add $h && ip -n $h link set lo up &&
    ip link add name hlfa$i netns $col type veth peer name hlfb$i netns $h &&
    ip -n $col addr add 10.213.$i.1/24 dev hlfa$i && ip -n $col link set hlfa$i up &&
    ip -n $h addr add 10.213.$i.2/24 dev hlfb$i && ip -n $h link set hlfb$i up || fail "host $i network"
done
C=5342; D=5343; L=5344
mkdir -p "$work/cd" "$work/relay"
relay() {
    ip netns exec $col lttng-relayd -C tcp://0.0.0.0:$C -D tcp://0.0.0.0:$D -L tcp://127.0.0.1:$L \
        -o "$work/relay" >/dev/null 2>&1 &
    relayd_pid=$!
    for _ in $(seq 50); do ip netns exec $col bash -c "exec 3<>/dev/tcp/127.0.0.1/$L" 2>/dev/null && return 0; sleep 0.1; done
    return 1
}
cores_in "$work/cores"
collector() {
    (cd "$cores_dir" && ulimit -c unlimited 2>/dev/null; exec ip netns exec $col "$HL" collectd --url net://127.0.0.1:$L --dir "$work/cd" \
        --relay-dir "$work/relay" --poll-ms 100 --commit-ms 200 >/dev/null 2>>"$work/cd.log") &
    cd_pid=$!
}
# traced HOST_INDEX SESSION — record on host i (host name fleethost$i) to the collector
traced() {
    ip netns exec hlfh$$_$1 unshare --uts bash -c \
        "hostname fleethost$1 && exec '$HL' record --relay net://10.213.$1.1:$C:$D -o $2 -- '$GEN' slow" \
        >"$work/rec$1-$2.log" 2>&1
}
relay || { fail "relayd in the collector namespace did not start"; exit 1; }
"$HL" record -o "$work/ref.db" -- "$GEN" slow >/dev/null 2>&1; check "offline record exit" 0 $?
ref=$(facts "$work/ref.db")

# Round 1: three hosts at once; collectd restarted in the middle.
collector
sleep 0.3
pids=""
for i in $hosts; do traced $i r1 & pids="$pids $!"; done
sleep 1.2
stop_collectd
collector
for p in $pids; do wait $p; check "round 1: record exit" 0 $?; done
pids=""
for i in $hosts; do
    db=$work/cd/fleethost$i-r1.db
    wait_for completed "$db" || fail "round 1: host $i not completed: $(cat $work/cd.log)"
    check "round 1: host $i equals its offline recording" "$ref" "$(facts $db)"
    check "round 1: host $i status" complete "$(q $db "select value from meta where key='ingest_status'")"
done
check "round 1: distinct host names" "fleethost1 fleethost2 fleethost3" \
    "$(for i in $hosts; do q $work/cd/fleethost$i-r1.db 'select host from run'; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
check "round 1: one database per host" 3 "$(cd $work/cd && ls *-r1*.db | wc -l)"

# Round 2: the relay daemon restarted in the middle.
for i in $hosts; do traced $i r2 & pids="$pids $!"; done
# The relay dies once it holds part of every session (a fixed sleep raced session set-up on a
# loaded machine: the relay then had nothing of the session to complete from).
for i in $hosts; do
    wait_for relay_copied "$work/relay" fleethost$i r2 || fail "round 2: no relay copy of host $i"
done
stop_relayd
relay || fail "relayd restart"
for p in $pids; do wait_rec $p 120 "round 2: record"; done
pids=""
for i in $hosts; do
    db=$work/cd/fleethost$i-r2.db
    wait_for finished "$db" || fail "round 2: host $i not finished: $(cat $work/cd.log)"
    completed "$db" && pass "round 2: host $i completed from the relay's copy" ||
        fail "round 2: host $i kept the live view: $(q $db "select value from meta where key='completion_failed'")"
    check "round 2: host $i status" partial "$(q $db "select value from meta where key='ingest_status'")"
    case $(q $db "select value from meta where key='ingest_warning'") in "the connection to the relay daemon was lost"*)
        pass "round 2: host $i says what is missing";; *) fail "round 2: host $i warning";; esac
done
stop_collectd
out=$("$HL" report --summary "$work/cd" 2>&1)
check "fleet view: rows" 6 "$(printf '%s\n' "$out" | grep -c '^fleethost')"
[ $fails -eq 0 ] || printf "%s\n" "$out"
exit $([ $fails -eq 0 ] && echo 0 || echo 1)
