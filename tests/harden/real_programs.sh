#!/usr/bin/env bash
# tests/harden/real_programs.sh LIB [OPTIONS] — real programs under LD_PRELOAD=LIB with
# HEAPLEDGER_OPTIONS=OPTIONS (default harden=1,check_at_exit=1): same output and exit status
# as without the preload, and no report.
set -u
lib=$1 opts=${2:-harden=1,check_at_exit=1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
cat > "$tmp/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; char name[40]; };
int main(void)
{
    struct node *head = NULL;
    for (int i = 0; i < 1000; i++) {
        struct node *n = malloc(sizeof *n);
        snprintf(n->name, sizeof n->name, "node-%d", i);
        n->next = head;
        head = n;
    }
    size_t len = 0;
    for (struct node *n = head; n; n = n->next) len += strlen(n->name);
    printf("%zu\n", len);
    return 0;
}
C
printf 'id,name,score\n' > "$tmp/data.csv"
for i in $(seq 1 3000); do printf '%d,name%d,%d\n' "$i" "$i" $((i * 37 % 101)); done >> "$tmp/data.csv"
git -C "$tmp" init -q repo && cp "$tmp/prog.c" "$tmp/repo/" && \
    git -C "$tmp/repo" -c user.email=t@t -c user.name=t add prog.c && \
    git -C "$tmp/repo" -c user.email=t@t -c user.name=t commit -qm one

run() { # name, command...
    local name=$1; shift
    "$@" > "$tmp/plain.out" 2> "$tmp/plain.err"; local rc1=$?
    HEAPLEDGER_OPTIONS=$opts LD_PRELOAD=$lib "$@" > "$tmp/hard.out" 2> "$tmp/hard.err"
    local rc2=$?
    if grep -q '^heapledger: ERROR' "$tmp/hard.err"; then
        echo "FAIL $name: false positive"; head -20 "$tmp/hard.err"; fail=1
    elif [ $rc1 -ne $rc2 ] || ! cmp -s "$tmp/plain.out" "$tmp/hard.out"; then
        echo "FAIL $name: output or status differs ($rc1 vs $rc2)"; diff "$tmp/plain.out" "$tmp/hard.out" | head; head "$tmp/hard.err"; fail=1
    else
        echo "ok   $name [$opts] ($(wc -c < "$tmp/hard.out") bytes of identical output)"
    fi
}
run python3 /usr/bin/python3 -c '
import json, collections, re
d = [{"id": i, "tags": [str(i % 7)] * (i % 5), "name": "n%d" % i} for i in range(60000)]
s = json.dumps(d); e = json.loads(s)
c = collections.Counter(t for x in e for t in x["tags"])
print(len(s), sorted(c.items())[:3], len(re.findall(r"n1\d+", s)))'
run gcc gcc -O2 -Wall -o "$tmp/prog" "$tmp/prog.c"
run gcc-output "$tmp/prog"
run sqlite3 sqlite3 :memory: ".mode csv" ".import $tmp/data.csv t" \
    "select count(*), sum(score), max(name) from t;" \
    "create index i on t(score); select score, count(*) from t group by score order by 2 desc limit 3;"
run git-log git -C "$tmp/repo" log --stat
run git-status git -C "$tmp/repo" status --porcelain
run sort sort -t, -k3,3n -k1,1n "$tmp/data.csv"
exit $fail
