#!/usr/bin/env bash
# CPython's own regression tests under harden=1 give the same results as without heapledger
# (`make check-cpython`, a slow target: about 15 minutes on 2 cores). Needs Debian's
# libpython3.11-testsuite (25 MB installed; installed here when missing and root).
# Each test module runs verbosely twice, without heapledger and with
# LD_PRELOAD=libheapledger.so HEAPLEDGER_OPTIONS=harden=1; the per-case outcomes (ok, FAIL,
# ERROR, skipped, expected failure) and the module's result must be the same.
# usage: cpython.sh LIBHEAPLEDGER.so WORKDIR [TEST...]
set -u
lib=$1 dir=$2/cpython
shift 2
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(test_thread test_threading test_concurrent_futures test_faulthandler test_subprocess)
py=/usr/bin/python3
if [ ! -e /usr/lib/python3.11/test/test_threading.py ]; then
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            libpython3.11-testsuite >/dev/null || true
    fi
    if [ ! -e /usr/lib/python3.11/test/test_threading.py ]; then
        echo "cpython: CPython's regression tests are missing: apt-get install libpython3.11-testsuite"
        exit 1
    fi
fi
mkdir -p "$dir"
# One line per test case: "name (class) outcome", sorted (a case whose docstring line comes
# between its name and its outcome is joined); then the module's result line.
outcomes() {
    /usr/bin/python3 - "$1" <<'PY'
import re, sys
pat = re.compile(r"^(\w+ \([\w.]+\))")
res = re.compile(r" \.\.\. *(?:[0-9.]+s )?(ok|FAIL|ERROR|skipped|expected failure|unexpected success)")
out, pending, result = set(), None, ""
for line in open(sys.argv[1], errors="replace"):
    m, r = pat.match(line), res.search(line)
    if m and r:
        out.add(m.group(1) + " " + r.group(1)); pending = None
    elif m:
        pending = m.group(1)
    elif pending and r:
        out.add(pending + " " + r.group(1)); pending = None
    if line.startswith("Tests result:"):
        result = line.strip()
print("\n".join(sorted(out)))
print(result)
PY
}
fail=0
for t in "${tests[@]}"; do
    start=$(date +%s)
    timeout 1800 "$py" -m test -v "$t" >"$dir/$t.ref.log" 2>&1
    ref_rc=$?
    mid=$(date +%s)
    HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD="$lib" timeout 3600 "$py" -m test -v "$t" \
        >"$dir/$t.harden.log" 2>&1
    got_rc=$?
    end=$(date +%s)
    outcomes "$dir/$t.ref.log" >"$dir/$t.ref.txt"
    outcomes "$dir/$t.harden.log" >"$dir/$t.harden.txt"
    n=$(grep -c . "$dir/$t.ref.txt")
    if [ $ref_rc -eq $got_rc ] && diff -q "$dir/$t.ref.txt" "$dir/$t.harden.txt" >/dev/null &&
        ! grep -q 'heapledger: ERROR' "$dir/$t.harden.log"; then
        echo "cpython $t: same results ($((n - 1)) cases, status $ref_rc; $((mid - start)) s without heapledger, $((end - mid)) s under harden=1)"
    else
        echo "cpython $t: DIFFERENT (status $ref_rc without heapledger, $got_rc under harden=1)"
        diff "$dir/$t.ref.txt" "$dir/$t.harden.txt" | head -20
        grep -m3 'heapledger: ERROR' "$dir/$t.harden.log"
        fail=1
    fi
done
exit $fail
