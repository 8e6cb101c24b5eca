#!/usr/bin/env bash
# tests/e2e/record_private_test.sh — no door for another user (docs/record.md, "Files").
#
#   t_tmp_symlink   a symlink planted at the old predictable log name
#                   /tmp/heapledger-sessiond-UID.log (no daemon running) points to a file
#                   that must stay untouched
#   t_side_symlink  symlinks planted at FILE.db-wal / -shm: refused, their target untouched
#   t_modes         the run database is 0600, a --keep-trace directory 0700 (also an existing
#                   one of ours that was 0755)
#   t_keep_foreign  --keep-trace DIR owned by someone else (nobody) is refused before the
#                   program starts
#
# t_tmp_symlink runs in a mount namespace of the test's own with private /tmp and
# /var/run/lttng (so no session daemon answers and nothing of the machine's /tmp is touched).
#
# usage: BUILD=build tests/e2e/record_private_test.sh [TEST...]      (default: all)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HL=${HL:-$ROOT/$BUILD/bin/heapledger} # HL=... tests another build
EMIT=$ROOT/$BUILD/tests/e2e/tp_emit
WORK=$(mktemp -d /tmp/hl-record-private.XXXXXX)
mkdir -p "$WORK/lib"
cp "$ROOT/$BUILD/tests/e2e/stub/libheapledger.so" "$ROOT/$BUILD/lib/libheapledger-tp.so" "$WORK/lib/"
export HEAPLEDGER_LIBDIR=$WORK/lib
pass=0 fail=0
failed=()
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

. "$ROOT/tests/checks.sh"
mode() { stat -c %a "$1"; }

t_tmp_symlink() {
    [ "$(id -u)" = 0 ] && command -v unshare >/dev/null || { SKIPPED="needs root and unshare"; return 0; }
    # Outside /tmp, which the namespace hides: under the build directory.
    local d=$ROOT/$BUILD/tests/e2e/private-tmplink
    rm -rf "$d" && mkdir -p "$d/lib" && cp "$WORK"/lib/* "$d/lib/"
    # Inside: private /tmp and /var/run/lttng; plant the link, record, look at the victim;
    # then stop any daemon left in this namespace (an old build leaves one running).
    # The tree itself may live under /tmp (a CI clone): the real /tmp is first bound below a
    # private tmpfs on /mnt, and paths under /tmp are reached through it.
    timeout -k 5 60 unshare -m bash -c '
        mount --make-rslave / && mount -t tmpfs hl-m /mnt && mkdir /mnt/tmp &&
            mount --bind /tmp /mnt/tmp && mount -t tmpfs hl-t /tmp && mkdir -p /var/run/lttng &&
            mount -t tmpfs hl-l /var/run/lttng || exit 99
        remap() { case $1 in /tmp/*) echo "/mnt/tmp/${1#/tmp/}" ;; *) echo "$1" ;; esac; }
        hl=$(remap "$1") d=$(remap "$2") emit=$(remap "$3")
        echo "must stay" >/tmp/victim
        ln -s /tmp/victim /tmp/heapledger-sessiond-$(id -u).log
        HEAPLEDGER_LIBDIR=$d/lib "$hl" record -o "$d/x.db" -- "$emit" 10 1 >"$d/out" 2>"$d/err"
        echo "record $?" >"$d/result"
        echo "victim $(cat /tmp/victim)" >>"$d/result"
        for p in $(pgrep --ns $$ --nslist mnt -x lttng-sessiond); do kill $p; done
        sleep 0.5
        for p in $(pgrep --ns $$ --nslist mnt lttng-); do kill -9 $p; done
        exit 0' _ "$HL" "$d" "$EMIT"
    check "namespace" 0 $? || return 1
    check "record" "record 0" "$(sed -n 1p "$d/result")" || { cat "$d/err"; return 1; }
    check "the symlink's target" "victim must stay" "$(sed -n 2p "$d/result")" || return 1
    rm -rf "$d"
}

t_side_symlink() {
    local d=$WORK/side
    mkdir -p "$d"
    echo "must stay" >"$d/victim"
    ln -s "$d/victim" "$d/x.db-wal"
    "$HL" record -o "$d/x.db" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status" 2 $? || return 1
    contains "$d/err" "$d/x.db-wal exists (use --force to replace it)" || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran"; return 1; }
    check "the symlink's target" "must stay" "$(cat "$d/victim")" || return 1
}

t_modes() {
    local d=$WORK/modes
    mkdir -p "$d/old"
    chmod 755 "$d/old"
    "$HL" record -o "$d/x.db" --keep-trace "$d/new" -- "$EMIT" 10 1 >"$d/out" 2>"$d/err" ||
        { note "record failed: $(cat "$d/err")"; return 1; }
    check "database mode" 600 "$(mode "$d/x.db")" || return 1
    check "new --keep-trace directory mode" 700 "$(mode "$d/new")" || return 1
    "$HL" record -o "$d/y.db" --keep-trace "$d/old" -- "$EMIT" 10 1 >"$d/out" 2>"$d/err" ||
        { note "record failed: $(cat "$d/err")"; return 1; }
    check "existing --keep-trace directory mode" 700 "$(mode "$d/old")" || return 1
    check "database mode (2)" 600 "$(mode "$d/y.db")" || return 1
}

t_keep_foreign() {
    [ "$(id -u)" = 0 ] || { SKIPPED="needs root to chown"; return 0; }
    local d=$WORK/foreign
    mkdir -p "$d/theirs"
    chown 65534:65534 "$d/theirs"
    "$HL" record -o "$d/x.db" --keep-trace "$d/theirs" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status" 2 $? || return 1
    contains "$d/err" "--keep-trace $d/theirs belongs to uid 65534, not to you (uid 0)" || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran"; return 1; }
    check "files in their directory" "" "$(ls -A "$d/theirs")" || return 1
    ln -s "$d/theirs" "$d/link" # our own symlink to their directory: still theirs
    "$HL" record -o "$d/x.db" --keep-trace "$d/link" -- touch "$d/ran" >"$d/out" 2>"$d/err"
    check "exit status (symlink)" 2 $? || return 1
    [ ! -e "$d/ran" ] || { note "FAIL: the program ran (symlink)"; return 1; }
}

all=(t_tmp_symlink t_side_symlink t_modes t_keep_foreign)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("${all[@]}")
echo "record-private: ${#tests[@]} tests (work dir $WORK)"
for t in "${tests[@]}"; do
    SKIPPED=
    if "$t"; then
        pass=$((pass + 1))
        echo "  ok    $t${SKIPPED:+ (skipped: $SKIPPED)}"
    else
        fail=$((fail + 1))
        failed+=("$t")
        echo "  FAIL  $t"
    fi
done
echo "record-private: $pass passed, $fail failed ${failed[*]:-}"
[ "$fail" = 0 ]
