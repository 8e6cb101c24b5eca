"""The `make demo` workload: a small, allocation-heavy Python program with a few leaks.

It builds an index of words, parses and re-serialises JSON, and keeps a cache that is never
cleared (the leak the report shows at exit).
"""
import json
import collections

cache = []  # never cleared: live at exit


def words(n):
    for i in range(n):
        yield "w%d" % (i * 7919 % 10007) * (i % 5 + 1)


def main():
    index = collections.defaultdict(list)
    for i, w in enumerate(words(60000)):
        index[w[:3]].append(i)
    doc = json.dumps({k: v[:20] for k, v in index.items()})
    back = json.loads(doc)
    for k in list(back)[:2000]:
        cache.append(bytearray(256 + len(k) * 64))
    print("keys", len(back), "cached", len(cache), "json bytes", len(doc))


if __name__ == "__main__":
    main()
