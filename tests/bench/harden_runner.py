#!/usr/bin/python3
"""heapledger hardened-mode price (issue 13 item 5): `make bench-harden`.

Runs the micro-benchmarks that issue 13 names (tiny mixed sizes, one fixed size, the
2-thread loop) and two real programs (gcc compiling a C file, a python3 workload) under
glibc, scudo (libclang-rt-14-dev's libclang_rt.scudo-x86_64.so), default heapledger and
heapledger with `harden=1` (plus `harden=1,stacks=0`, to split the price), alternating the
configurations run by run (A B C D E A B C D E …), and prints medians with the load average.
Figures: throughput or time for the micro-benchmarks, CPU time (user + system, children
included) for the programs, and the peak RSS of every cell. Then the targets: harden=1's
throughput >= scudo's on the three micro-benchmarks, its CPU <= 1.3x default heapledger's
on gcc and python, its peak RSS <= 1.3x default's on every row.

Environment: BENCH_BIN, BENCH_LIB (libheapledger.so), BENCH_REPS (default 5), BENCH_OUT
(default build/bench/harden.md), SCUDO_LIB (default the Debian path), BENCH_QUICK=1 (one run,
small sizes: only checks that every cell printed its figure), HARDEN_BEFORE_LIB (another
libheapledger.so run with harden=1 as one more column, e.g. a build of the commit before).
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner  # noqa: E402  (run_once, Cell, fmt, machine_info)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUICK = runner.QUICK
REPS = runner.REPS
OUT = os.environ.get("BENCH_OUT", "build/bench/harden.md")
SCUDO = os.environ.get("SCUDO_LIB",
                       "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.scudo-x86_64.so")
HL = runner.HL_LIB

CONFIGS = [  # name, preload, HEAPLEDGER_OPTIONS
    ("glibc", None, None),
    ("scudo", SCUDO, None),
    ("heapledger", HL, None),
    ("harden=1", HL, "harden=1"),
    ("harden=1,stacks=0", HL, "harden=1,stacks=0"),
]
# HARDEN_BEFORE_LIB=path: one more column, harden=1 with another build (before a change).
if os.environ.get("HARDEN_BEFORE_LIB"):
    CONFIGS.append(("harden=1 before", os.environ["HARDEN_BEFORE_LIB"], "harden=1"))

OPS = "200000" if QUICK else "2000000"
ITERS = "50000" if QUICK else "500000"
GCC_SRC = os.path.join(ROOT, "liballoc", "tlsf.c")


def workloads():
    b = runner.b
    gcc = ["/usr/bin/gcc", "-O2", "-D_GNU_SOURCE", "-I", os.path.join(ROOT, "liballoc"),
           "-I", os.path.join(ROOT, "schemas"), "-c", GCC_SRC, "-o", "/dev/null"]
    py = ["/usr/bin/python3", os.path.join(HERE, "workloads/python_workload.py")]
    return [  # name, argv, figure key (None: CPU time), unit, better
        ("tiny.mixed", [b("tiny"), "mixed", "1024", OPS], "tiny.mixed"),
        ("tiny.128", [b("tiny"), "128", "1024", OPS], "tiny.128"),
        ("thread.2t", [b("thread"), "2", ITERS], "thread.2t"),
        ("gcc", gcc, None),
        ("python", py, None),
    ]


def main():
    if not os.path.exists(SCUDO):
        sys.stderr.write(f"bench-harden: {SCUDO} not found: install libclang-rt-14-dev "
                         "(make deps) or set SCUDO_LIB\n")
        sys.exit(1)
    start = time.time()
    _, load0 = runner.machine_info()
    ws = workloads()
    cells = {(w[0], c[0]): runner.Cell() for w in ws for c in CONFIGS}
    for rep in range(REPS):
        for name, argv, key in ws:
            for cname, preload, opts in CONFIGS:
                env = {"HEAPLEDGER_OPTIONS": opts} if opts else None
                runner.run_once(argv, preload, None, cells[(name, cname)], None, env)
    _, load1 = runner.machine_info()
    lines = ["# heapledger hardened mode against glibc and scudo", "",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
             f"- command: `make bench-harden` (tests/bench/harden_runner.py); {REPS} runs per cell, "
             "configurations alternated per run, medians",
             f"- load average at start: {load0}; at the end: {load1}", "",
             "| workload | figure | " + " | ".join(c[0] for c in CONFIGS) + " |",
             "|---|---|" + "---|" * len(CONFIGS)]
    med = {}
    bad = []
    for name, argv, key in ws:
        row, rrow = [], []
        unit = "CPU s (↓)"
        for cname, _, _ in CONFIGS:
            c = cells[(name, cname)]
            if c.error or c.skip:
                bad.append(f"{name} under {cname}: {c.error or c.skip}")
                row.append("—")
                rrow.append("—")
                continue
            if key:
                v = c.med(key)
                u, better = c.units.get(key, ("?", "?"))
                unit = f"{u} ({'↑' if better == 'higher' else '↓'})"
            else:
                v = statistics.median(c.cpu) if c.cpu else None
            if v is None:
                bad.append(f"{name} under {cname}: no figure")
            rss = statistics.median(c.rss) if c.rss else None
            med[(name, cname)] = (v, rss)
            row.append(runner.fmt(v))
            rrow.append(f"{rss / 1024:.1f}" if rss else "—")
        lines.append(f"| {name} | {unit} | " + " | ".join(row) + " |")
        lines.append(f"| {name} | peak RSS MiB | " + " | ".join(rrow) + " |")
    lines += ["", "## Targets", ""]

    def get(n, c, i=0):
        return med.get((n, c), (None, None))[i]

    for name, _, key in ws:
        h, s, d = get(name, "harden=1"), get(name, "scudo"), get(name, "heapledger")
        if h is None:
            continue
        if key:
            better_high = cells[(name, "harden=1")].units.get(key, ("", "higher"))[1] == "higher"
            r = (h / s if better_high else s / h) if s else None
            if r is not None:
                lines.append(f"- {name}: harden=1 throughput {r:.2f}x scudo's "
                             f"({'met' if r >= 1 else 'MISSED'}, target >= 1)")
        elif d:
            lines.append(f"- {name}: harden=1 CPU {h / d:.2f}x default heapledger's "
                         f"({'met' if h / d <= 1.3 else 'MISSED'}, target <= 1.3)")
        hr, dr = get(name, "harden=1", 1), get(name, "heapledger", 1)
        if hr and dr:
            lines.append(f"- {name}: harden=1 peak RSS {hr / dr:.2f}x default heapledger's "
                         f"({'met' if hr / dr <= 1.3 else 'MISSED'}, target <= 1.3)")
    lines += ["", f"Total time {time.time() - start:.0f} s."]
    os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if bad:
        sys.stderr.write("bench-harden: FAILED\n" + "\n".join("  " + x for x in bad) + "\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
