# heapledger benchmark: a python3 workload heavy on small objects (dicts, tuples, strings,
# lists) with a JSON round trip. Scale: first argument (default 1.0); BENCH_QUICK=1 → 0.05.
import json
import os
import random
import sys

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
if os.environ.get("BENCH_QUICK", "0") not in ("", "0"):
    scale = 0.05
n = int(40000 * scale)
rng = random.Random(1)
records = [
    {"id": i, "name": "item-%d" % rng.randrange(1 << 20), "tags": [str(rng.random())[:6] for _ in range(3)],
     "score": rng.random()}
    for i in range(n)
]
index = {}
for r in records:
    index.setdefault(r["name"][-2:], []).append(r["id"])
records.sort(key=lambda r: (r["score"], r["name"]))
text = json.dumps(records[: n // 2])
back = json.loads(text)
words = " ".join(r["name"] for r in back).split()
counts = {}
for w in words:
    counts[w] = counts.get(w, 0) + 1
total = sum(len(v) for v in index.values()) + len(counts)
print("RESULT python.check %d items info" % total)
