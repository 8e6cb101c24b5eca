#!/usr/bin/env bash
# tests/ingest/corrupt_test.sh HEAPLEDGER INGEST_GEN — bad traces never hang or crash collect.
# A corpus of corrupted copies of a freshly recorded trace (truncated and bit-flipped
# metadata, truncated and bit-flipped stream files, edited metadata; among them the cases
# that make babeltrace2 itself spin forever (metadata cut inside a packet) or abort (an
# integer size edited in the metadata)). Each case runs under a time bound; it must finish,
# print a message, exit 0, 1 or 3 (never a signal), and keep what decoded when it says partial.
# Also: a directory holding several sessions' traces is refused with the list.
set -u
HL=$(realpath "$1"); GEN=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
work=$(mktemp -d /tmp/hl-ingest-corrupt.XXXXXX)
trap 'rm -rf "$work"' EXIT
ensure_sessiond
cp "$GEN" "$work/$TAG" && GEN=$work/$TAG
echo "ingest: corrupt traces"
export HEAPLEDGER_DECODE_TIMEOUT=3 # the watchdog's limit for this test (default 30 s)
BOUND=20                           # seconds per case, hangs included

record_trace "$work/good" "$GEN" bench 20000 || fail "recording"
ctf=ust/uid/0/64-bit
good_events=$("$HL" collect "$work/good" -o "$work/good.db" -q && q "$work/good.db" 'select events from run')
check "intact trace: events > 40000" 1 "$(( ${good_events:-0} > 40000 ))"
stream=$(cd "$work/good/$ctf" && ls ch_* | while read -r f; do echo "$(stat -c %s "$f") $f"; done | sort -n | tail -1 | cut -d' ' -f2)
msize=$(stat -c %s "$work/good/$ctf/metadata")
ssize=$(stat -c %s "$work/good/$ctf/$stream")

# flip FILE OFFSET: invert the bits of one byte
flip() {
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $(( b ^ 255 )))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
# edit FILE FROM TO: same-length text edit of the first occurrence (the metadata is text
# in packets)
edit() {
    local off
    off=$(grep -abo -m1 -F -- "$2" "$1" | head -1 | cut -d: -f1)
    [ -n "$off" ] || return 1
    printf '%s' "$3" | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}

ncase=0; nhang=0; ncrash=0
# run_case NAME: collect $work/c; bounded; checks the outcome
run_case() {
    local name=$1 t0 t1 rc
    ncase=$((ncase + 1))
    rm -f "$work/c.db"
    t0=$(date +%s)
    out=$(timeout -k 2 $BOUND "$HL" collect "$work/c" -o "$work/c.db" -q 2>&1); rc=$?
    t1=$(date +%s)
    if [ $rc = 124 ] || [ $rc = 137 ]; then fail "$name: did not finish within $BOUND s"; return; fi
    if [ $rc -ge 128 ]; then fail "$name: heapledger died of signal $((rc - 128)): $out"; return; fi
    case $rc in
    0) [ -z "$out" ] && pass "$name: complete ($((t1 - t0)) s)" || fail "$name: exit 0 with output: $out" ;;
    1)
        [ -n "$out" ] && pass "$name: refused ($((t1 - t0)) s): ${out:0:150}" || fail "$name: exit 1 without a message"
        [ -e "$work/c.db" ] && fail "$name: exit 1 left a database"
        ;;
    3)
        local st ev
        st=$(q "$work/c.db" "select value from meta where key = 'ingest_status'")
        ev=$(q "$work/c.db" 'select events from run')
        if [ "$st" = partial ] && [ -n "$out" ] && [ "${ev:-0}" -gt 0 ]; then
            pass "$name: partial, $ev events kept ($((t1 - t0)) s): ${out:0:150}"
        else
            fail "$name: exit 3: status '$st', events '$ev', message '$out'"
        fi
        ;;
    *) fail "$name: exit status $rc: $out" ;;
    esac
    case $out in *"no progress"* | *"hangs or crashes on its metadata"*) nhang=$((nhang + 1)) ;; *crashed*) ncrash=$((ncrash + 1)) ;; esac
}
fresh() { rm -rf "$work/c"; cp -r "$work/good" "$work/c"; }

# metadata cut inside a packet: babeltrace2 spins forever on these
for cut in 100 1000 3000 $((msize - 1000)); do
    fresh; truncate -s $cut "$work/c/$ctf/metadata"; run_case "metadata cut at $cut"
done
fresh; truncate -s 4096 "$work/c/$ctf/metadata"; run_case "metadata cut at the packet boundary 4096"
fresh; : >"$work/c/$ctf/metadata"; run_case "empty metadata"
# metadata bit flips (packet header and text)
for off in 3 20 40 200 1000 2500 4100 $((msize - 200)); do
    fresh; flip "$work/c/$ctf/metadata" $off; run_case "metadata byte $off flipped"
done
# metadata edits: an event's integer size (babeltrace2 aborts on this one), an array length,
# the packet header's sizes
fresh; edit "$work/c/$ctf/metadata" "loglevel = 13;
	fields := struct {
		integer { size = 64" "loglevel = 13;
	fields := struct {
		integer { size = 54" && run_case "metadata: build_id baddr 64 -> 54 bits"
fresh; edit "$work/c/$ctf/metadata" "_words[6]" "_words[1]" && run_case "metadata: words[6] -> words[1]"
fresh; edit "$work/c/$ctf/metadata" "uint64_t packet_size" "uint8_t  packet_size" && run_case "metadata: packet_size 8 bits"
# stream files: cut and flipped
for cut in 10 100 $((ssize / 3)) $((ssize / 2 + 7)); do
    fresh; truncate -s $cut "$work/c/$ctf/$stream"; run_case "stream cut at $cut"
done
for off in 0 9 33 48 64 100 5000 $((ssize / 2)) $((ssize - 100)); do
    fresh; flip "$work/c/$ctf/$stream" $off; run_case "stream byte $off flipped"
done
fresh; rm -f "$work/c/$ctf/index/"*; truncate -s $((ssize / 2)) "$work/c/$ctf/$stream"; run_case "stream cut, no index"
# babeltrace2's crashes (2 of 201 random corruptions) depend on where the damage falls in
# the packets, so the corpus above may or may not hold one: the decoder child dies of SIGSEGV
# here on purpose (HEAPLEDGER_TEST_DECODER_SEGV=N: after N events), mid-trace and at once.
fresh; HEAPLEDGER_TEST_DECODER_SEGV=20000 run_case "decoder SIGSEGV after 20000 events"
fresh; HEAPLEDGER_TEST_DECODER_SEGV=1 run_case "decoder SIGSEGV at the first batch"
# babeltrace2's hangs on metadata are caught by the bounded probe; a hang while decoding the
# streams is the watchdog's (the child stops making progress on purpose here)
fresh; HEAPLEDGER_TEST_DECODER_HANG=20000 run_case "decoder hang after 20000 events"
case $out in *"no progress for 3 s after"*) pass "hang while decoding: the watchdog's message";;
*) fail "hang while decoding: message: $out";; esac

# per-pid buffers, one CTF dir per process: the metadata of one is cut (babeltrace2 spins on
# it), the other process's events are kept
forklib=$(ls /usr/lib/*/liblttng-ust-fork.so* 2>/dev/null | head -1)
LD_PRELOAD=$forklib CHANNEL_OPTS="--buffers-pid --subbuf-size=1M --num-subbuf=4" \
    record_trace "$work/perpid" "$GEN" fork || fail "recording per-pid"
rm -rf "$work/c"; cp -r "$work/perpid" "$work/c"
m=$(find "$work/c" -name metadata | sort | head -1)
truncate -s 3000 "$m"
run_case "per-pid: one process's metadata cut"
case $out in *"hangs or crashes on its metadata: dropped"*) pass "per-pid: the dropped directory is named";;
*) fail "per-pid: message: $out";; esac
check "per-pid: the other process's blocks kept" 15 "$(q "$work/c.db" 'select count(*) from block')"
echo "  $ncase cases: $nhang hangs stopped (bounded probe or watchdog), $ncrash decoder crashes contained"
check "the corpus holds decoder hangs" 1 "$(( nhang >= 3 ))"
check "the corpus holds decoder crashes" 1 "$(( ncrash >= 2 ))"
[ -z "$(ls -d /tmp/heapledger-ingest.* 2>/dev/null | xargs -r -n1 stat -c %U 2>/dev/null | grep -x "$(id -un)" | head -1)" ] ||
    echo "  note: /tmp/heapledger-ingest.* directories exist (another ingest running?)"

# --- a directory holding several sessions' traces --------------------------------------
mkdir -p "$work/many"
cp -r "$work/good" "$work/many/s1"; cp -r "$work/good" "$work/many/s2"
out=$("$HL" collect "$work/many" -o "$work/many.db" -q 2>&1); rc=$?
check "several sessions: exit" 1 $rc
case $out in *"2 sessions"*"$work/many/s1"*"$work/many/s2"*"--all"*) pass "several sessions: listed, with how to pick" ;;
*) fail "several sessions: message: $out" ;; esac
[ -e "$work/many.db" ] && fail "several sessions: no database" || pass "several sessions: no database"
"$HL" collect "$work/many/s2" -o "$work/one.db" -q; check "one of them: exit" 0 $?
"$HL" collect "$work/many/s2/ust" -o "$work/below.db" -q; check "a directory inside one session: exit" 0 $?
"$HL" collect "$work/many" --all -o "$work/all.db" -q; check "--all: exit" 0 $?
check "--all: both sessions' events" $((2 * good_events)) "$(q "$work/all.db" 'select events from run')"

[ $fails -eq 0 ] || { echo "ingest corrupt traces: $fails FAILED"; exit 1; }
echo "ingest corrupt traces: all passed"
