#!/usr/bin/env bash
# tests/analyzer/bench.sh HEAPLEDGER RUN.db — time `heapledger report` on a large run: wall
# and CPU time (per thread, HEAPLEDGER_STATS=1), peak RSS, events per second.
set -eu
hl=$1
db=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
HEAPLEDGER_STATS=1 HEAPLEDGER_PROGRESS=0 /usr/bin/time -f "wall %e s user %U s sys %S s maxrss %M KB" \
    "$hl" report "$db" >/dev/null 2>"$out"
cat "$out"
events=$(sed -n 's/^heapledger: \([0-9]*\) events.*/\1/p' "$out")
wall=$(sed -n 's/^wall \([0-9.]*\) s.*/\1/p' "$out")
main=$(sed -n 's/.*main thread: \([0-9.]*\) s CPU.*/\1/p' "$out")
reader=$(sed -n 's/.*reader thread: \([0-9.]*\) s CPU.*/\1/p' "$out")
python3 - "$events" "$wall" "$main" "$reader" <<'PY'
import sys
ev, wall, main, reader = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print(f"analyzer: {ev} events, {ev / wall / 1e6:.2f} M events/s wall, "
      f"{ev / max(main, reader) / 1e6:.2f} M events/s on the busier thread's CPU "
      f"(main {main:.2f} s, reader {reader:.2f} s)")
PY
