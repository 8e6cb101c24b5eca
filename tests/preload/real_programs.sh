#!/usr/bin/env bash
# Real programs under the preloaded allocator: each output must equal the run without it.
# usage: real_programs.sh LIBHEAPLEDGER.so [HEAPLEDGER_OPTIONS]
set -uo pipefail
lib=$1
opts=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

run_case() { # name, then the command (a shell snippet run in $work)
    local name=$1 cmd=$2 want got
    want=$(cd "$work" && bash -c "$cmd" 2>&1)
    got=$(cd "$work" && HEAPLEDGER_OPTIONS="$opts" LD_PRELOAD="$lib" bash -c "$cmd" 2>&1)
    if [ "$want" == "$got" ] && [ -n "$want" ]; then
        echo "real program [$name]: ok"
        pass=$((pass + 1))
    else
        echo "real program [$name]: FAILED"
        diff <(echo "$want") <(echo "$got") | head -20
        fail=$((fail + 1))
    fi
}

cat > "$work/work.py" <<'PY'
import json, re, collections, hashlib
words = [("w%d" % (i * 7919 % 10007)) * (i % 13 + 1) for i in range(200000)]
c = collections.Counter(w[:4] for w in words)
d = {w: len(w) for w in words}
s = json.dumps(sorted(c.most_common(50)))
print(hashlib.sha256(s.encode()).hexdigest(), len(d), sum(d.values()))
print(len(re.findall(r"w1\d+", " ".join(words[:50000]))))
PY
run_case python3 "/usr/bin/python3 work.py"

run_case sqlite3 "sqlite3 :memory: \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000)
  SELECT count(*), sum(x), max(length(printf('%.*c', x % 300, 'a'))) FROM c;
  CREATE TABLE t(a, b); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<50000)
  INSERT INTO t SELECT x, hex(x * x) || x FROM c; CREATE INDEX ti ON t(b);
  SELECT count(*), min(b), max(b) FROM t;\""

cat > "$work/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { char *s = malloc(64); strcpy(s, "compiled and ran"); puts(s); free(s); return 0; }
C
run_case gcc "gcc -O2 -Wall prog.c -o prog && ./prog"

run_case git "rm -rf repo && git init -q repo && cd repo && git config user.email t@example.org &&
  git config user.name t && for i in \$(seq 1 40); do echo line \$i >> f\$((i % 7)).txt; git add -A; git commit -qm \"c\$i\"; done &&
  git log --format=%s | head -3 && git rev-list --count HEAD && git diff HEAD~10 --stat | tail -1 &&
  git gc -q && git fsck 2>&1 | wc -l"

seq 1 300000 | awk '{print ($1 * 7919) % 100003, $1}' > "$work/data.txt"
run_case sort "sort -n data.txt | md5sum && sort -k2,2 -r data.txt | head -3"

echo "real programs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
