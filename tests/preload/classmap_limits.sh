#!/usr/bin/env bash
# The class map under address-space limits (liballoc/classmap.h). Without a limit both maps
# (2 GiB each, no memory) are reserved and free's entry is the class-map fast path. Under a
# finite RLIMIT_AS without room for both (ulimit -v 3000000, 1000000, 600000, prlimit --as)
# neither is kept and free's entry is a jump to its header-byte variant: real programs
# (python3, sqlite3, gcc -c) and the stress program run as without heapledger, in the default
# mode and with harden=1, and a wild free is still reported.
# usage: classmap_limits.sh LIBHEAPLEDGER.so STRESS_BINARY
set -u
lib=$1 prog=$2
py=/usr/bin/python3
pass=0 fail=0
ok() { echo "classmap limits: $1: ok"; pass=$((pass + 1)); }
bad() { echo "classmap limits: $1: FAILED: $2"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# limited LIMIT CMD... : run CMD with the library preloaded under the address-space limit
# LIMIT ("ulimit:KB" or "prlimit:BYTES"; "none" for no limit).
limited() {
    local how=$1
    shift
    case $how in
    none) LD_PRELOAD="$lib" timeout 300 "$@" ;;
    ulimit:*) (ulimit -v "${how#ulimit:}" && LD_PRELOAD="$lib" exec timeout 300 "$@") ;;
    prlimit:*) LD_PRELOAD="$lib" timeout 300 prlimit --as="${how#prlimit:}" "$@" ;;
    esac
}

# What a process sees of the maps: whether its mappings of 2 GiB or more (a map may merge with
# a neighbour) add up to the two maps' 4 GiB, and free's first byte (0xe9: a jump, the
# header-byte variant).
probe='import ctypes, sys
sizes = [(lambda a, b: int(b, 16) - int(a, 16))(*l.split()[0].split("-"))
         for l in open("/proc/self/maps")]
maps = int(sum(n for n in sizes if n >= 1 << 31) >= 4 << 30)
free = ctypes.cast(ctypes.CDLL(sys.argv[1]).free, ctypes.c_void_p).value
print(maps, ctypes.string_at(free, 1).hex())'

out=$(limited none "$py" -c "$probe" "$lib" 2>&1)
if [ "$out" = "1 48" ]; then ok "no limit: both maps, the class-map free"; else bad "no limit" "$out (want: 1 48)"; fi

for how in ulimit:3000000 ulimit:1000000; do
    out=$(limited "$how" "$py" -c "$probe" "$lib" 2>&1)
    if [ "$out" = "0 e9" ]; then ok "$how: no map kept, free jumps to its header variant"; else bad "$how" "$out (want: 0 e9)"; fi
    out=$(limited "$how" "$prog" 1 2 2000 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$out" = "stress: ok" ]; then ok "$how: stress"; else bad "$how: stress" "exit $rc: $out"; fi
done

printf 'struct s { int a[16]; };\nint f(struct s *p) { return p->a[3] * 2; }\n' >"$tmp/unit.c"
sql="create table t(x, y); with recursive c(i) as (select 1 union all select i + 1 from c
     where i < 50000) insert into t select i, printf('%08d', i) from c;
     create index ty on t(y); select count(*), sum(x) from t where y > '00010000';"
pywork='import json, re; s = json.dumps({str(i): [i] * 8 for i in range(20000)})
print(len(json.loads(s)), len(re.findall("[0-9]+", s)))'
for how in ulimit:600000 prlimit:614400000; do
    for opts in "" harden=1; do
        name="$how ${opts:-default}"
        export HEAPLEDGER_OPTIONS=$opts
        out=$(limited "$how" "$py" -c "$pywork" 2>&1)
        if [ "$out" = "20000 180000" ]; then ok "$name: python3"; else bad "$name: python3" "$out"; fi
        out=$(limited "$how" sqlite3 :memory: "$sql" 2>&1)
        if [ "$out" = "40000|1200020000" ]; then ok "$name: sqlite3"; else bad "$name: sqlite3" "$out"; fi
        rm -f "$tmp/unit.o"
        out=$(cd "$tmp" && limited "$how" gcc -O2 -c unit.c -o unit.o 2>&1)
        rc=$?
        if [ "$rc" -eq 0 ] && [ -s "$tmp/unit.o" ] && [ -z "$out" ]; then ok "$name: gcc -c"; else bad "$name: gcc -c" "exit $rc: $out"; fi
        unset HEAPLEDGER_OPTIONS
    done
done

# A wild pointer's fault in the header-byte variant is an invalid free, as in free itself.
out=$(HEAPLEDGER_OPTIONS=harden=1 limited ulimit:600000 "$py" -c \
    'import ctypes; ctypes.CDLL(None).free(ctypes.c_void_p(0x100000000010))' 2>&1)
rc=$?
if [ "$rc" -eq 134 ] && [[ "$out" == *"heapledger: ERROR: invalid-free on 0x"*"not in any heap region"* ]]; then
    ok "ulimit:600000 harden=1: wild free reported"
else
    bad "ulimit:600000 harden=1: wild free" "exit $rc (want 134 and the report): $(echo "$out" | head -5)"
fi
echo "classmap limits: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
