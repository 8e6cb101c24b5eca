#!/usr/bin/python3
"""heapledger benchmark runner (invoked by tests/bench/run.sh, i.e. `make bench`).

Runs every workload under LD_PRELOAD against glibc (nothing preloaded), jemalloc, mimalloc,
tcmalloc and heapledger, alternating the allocators (A B C D E A B C D E …) for REPS runs
each, takes medians, and prints one markdown table with ratios against heapledger and the
peak RSS of every cell (ru_maxrss of the child from wait4). Then the heapledger fixed-arena
configuration matrix (heap objects in-process), the fast-path probes (rdtsc and callgrind)
and a check of the issue's targets. The whole report goes to stdout and to OUT (markdown).

Programs speak the RESULT/SKIP protocol described in tests/bench/bench.h.

BENCH_QUICK=1: one run per cell, small sizes; the runner then only verifies that every
program printed all its figures for every allocator and exits non-zero otherwise (no timing
assertions). Environment: BENCH_BIN (program directory), BENCH_LIB (libheapledger.so),
BENCH_OUT (report path), BENCH_REPS (runs per cell, default 5), BENCH_ONLY (comma-separated
workload name prefixes, for development).
"""

import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
BIN = os.environ.get("BENCH_BIN", "build/bench/bin")
HL_LIB = os.environ.get("BENCH_LIB", "build/lib/libheapledger.so")
OUT = os.environ.get("BENCH_OUT", "build/bench/results.md")
REPS = 1 if QUICK else int(os.environ.get("BENCH_REPS", "5"))
ONLY = [p for p in os.environ.get("BENCH_ONLY", "").split(",") if p]
LIBDIR = "/usr/lib/x86_64-linux-gnu"
TIMEOUT = 120
LAUNCH = os.path.join(BIN, "launch")

ALLOCATORS = [
    ("glibc", None),
    ("jemalloc", f"{LIBDIR}/libjemalloc.so.2"),
    ("mimalloc", f"{LIBDIR}/libmimalloc.so.2"),
    ("tcmalloc", f"{LIBDIR}/libtcmalloc_minimal.so.4"),
    ("heapledger", HL_LIB),
]
OTHERS = [a for a, _ in ALLOCATORS if a != "heapledger"]

# Heapledger fixed-arena configurations (the hardening options may not exist yet: a
# configuration hl_options_parse rejects is reported as skipped).
CONFIGS = [("baseline", ""), ("harden", "harden=1"), ("rotate", "rotate=1"),
           ("rotate+harden", "rotate=1,harden=1")]

DISTS = ["g32", "g160", "g256", "mix"]
MODES = ["plain", "realloc"]
PCTS = ["p01", "p25", "p50", "p75", "p99"]
# Thread churn (tests/bench/churn.c): generations, threads, operations per thread — a longer
# lived mstress-like shape and a short-lived-threads one.
CHURN = [(20, 4, 1000), (300, 2, 50)]
SQL_ROWS = 10000 if QUICK else 100000


def b(name):
    return os.path.join(BIN, name)


class Workload:
    """One table row: a command, the figure keys it must print, optional stdin text.
    With wall=KEY the runner itself measures the process wall time as figure KEY."""

    def __init__(self, name, argv, keys, stdin=None, wall=None, group=""):
        self.name, self.argv, self.keys, self.stdin = name, argv, keys, stdin
        self.wall, self.group = wall, group


def main_workloads():
    w = []
    for m in ["mixed", "128", "256", "512", "1024"]:
        w.append(Workload(f"tiny.{m}", [b("tiny"), m], [f"tiny.{m}"], group="1 tiny"))
    for size, n, rounds in [(16, 25, 240000), (128, 100, 60000), (1024, 400, 5000)]:
        k = f"simple.{size}x{n}"
        w.append(Workload(k, [b("simple"), str(size), str(n), str(rounds)], [k], group="2 loops"))
    for t in [1, 2, 4]:
        w.append(Workload(f"thread.{t}t", [b("thread"), str(t)], [f"thread.{t}t"], group="2 loops"))
    for t in [2, 4]:
        w.append(Workload(f"larson.{t}t", [b("larson"), str(t), "200"], [f"larson.{t}t"],
                          group="3 server"))
    for t in [8]:
        w.append(Workload(f"larson.{t}t", [b("larson"), str(t), "100"], [f"larson.{t}t"],
                          group="3 server"))
    for p in [1, 2, 4]:
        items = {1: "2000000", 2: "1000000", 4: "500000"}[p]
        w.append(Workload(f"prodcons.{p}p", [b("prodcons"), str(p), items], [f"prodcons.{p}p"],
                          group="3 server"))
    # Issue 14's shapes of a public suite (our own programs): shbench, alloc-test.
    for mode, t in [("local", 2), ("cross", 2), ("cross", 4)]:
        k = f"shbench.{mode}.{t}t"
        w.append(Workload(k, [b("shbench"), mode, str(t)], [k], group="3 server"))
    for t in [1, 2]:
        w.append(Workload(f"alloctest.{t}t", [b("alloctest"), str(t)], [f"alloctest.{t}t"],
                          group="3 server"))
    w.append(Workload("large", [b("large"), "4", "200"], ["large.replace", "large.rss_free", "large.rss_idle"],
                      group="7 large"))
    for gens, t, ops in CHURN:
        k = f"churn.{t}t.{ops}"
        w.append(Workload(k, [b("churn"), str(gens), str(t), str(ops)], [k, f"{k}.rss"],
                          group="7 large"))
    for d in DISTS:
        for m in MODES:
            k = f"arena.{d}.{m}"
            w.append(Workload(k, [b("arena_malloc"), d, m],
                              [f"{k}.kops"] + [f"{k}.{p}" for p in PCTS], group="4 arena"))
    w.append(Workload("nbe", [b("nbe_malloc")], ["nbe.runs"], group="4 arena"))
    w.append(Workload("python", ["/usr/bin/python3", os.path.join(HERE, "workloads/python_workload.py")],
                      ["python.wall"], wall="python.wall", group="5 programs"))
    with open(os.path.join(HERE, "workloads/sqlite_workload.sql")) as f:
        sql = f.read().replace("@ROWS@", str(SQL_ROWS))
    w.append(Workload("sqlite3", ["/usr/bin/sqlite3", ":memory:"], ["sqlite3.wall"], stdin=sql,
                      wall="sqlite3.wall", group="5 programs"))
    w.append(Workload("fastpath", [b("fastpath"), "cycles"],
                      ["fastpath.pair", "fastpath.free", "fastpath.malloc"], group="6 fast path"))
    if ONLY:
        w = [x for x in w if any(x.name.startswith(p) for p in ONLY)]
    return w


def matrix_workloads():
    w = []
    for d in DISTS:
        for m in MODES:
            k = f"arena.{d}.{m}"
            w.append(Workload(k, [b("arena_heap"), d, m, "{config}"],
                              [f"{k}.kops"] + [f"{k}.{p}" for p in PCTS]))
    w.append(Workload("nbe", [b("nbe_heap"), "100", "15", "5", "{config}"], ["nbe.runs"]))
    for size in ["1M", "256K"]:
        w.append(Workload(f"util.{size}", [b("util_heap"), size, "50", "{config}"],
                          [f"util.{size}", f"util.{size}.min"]))
    # Issue 15's mixes: Gaussian 32/160/256 B and wide (85% 16-512 B, 15% 1-6 KiB), seeds 1-5.
    for dist in ["gauss", "wide"]:
        for size in ["1M", "256K"]:
            k = f"util.{dist}.{size}"
            w.append(Workload(k, [b("util_heap"), size, "5", "{config}", dist], [k, f"{k}.min"]))
    if ONLY:
        w = [x for x in w if any(x.name.startswith(p) for p in ONLY)]
    return w


class Cell:
    def __init__(self):
        self.values = {}   # key -> list of floats
        self.units = {}    # key -> (unit, better)
        self.rss = []      # KiB
        self.cpu = []      # s, user + system, of the whole process
        self.flt = []      # minor page faults of the whole process
        self.error = None
        self.skip = None

    def med(self, key):
        v = self.values.get(key)
        return statistics.median(v) if v else None


def run_once(argv, preload, stdin, cell, wall_key, extra_env=None):
    """Run argv once through the launcher (wall time, peak RSS) and add its figures to cell.
    The launcher itself runs without LD_PRELOAD; the preload applies to the command only."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("HEAPLEDGER_OPTIONS", None)
    if QUICK:
        env["BENCH_QUICK"] = "1"
    if extra_env:
        env.update(extra_env)
    cmd = [LAUNCH, None] + (["env", f"LD_PRELOAD={preload}"] if preload else []) + argv
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="bench-launch-") as rf:
        cmd[1] = rf.name
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                 stdout=out, stderr=err, env=env, start_new_session=True)
        except OSError as e:
            cell.error = f"cannot start {LAUNCH}: {e}"
            return
        try:
            p.communicate(input=stdin.encode() if stdin is not None else None, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
            cell.error = f"timeout after {TIMEOUT} s"
            return
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        etext = err.read().decode(errors="replace").strip()
        report = open(rf.name).read().split()
    if len(report) != 5:
        cell.error = f"launcher failed (exit {p.returncode}): {etext[-200:]}"
        return
    wall_ns, rss_kib, rc = int(report[0]), int(report[1]), int(report[2])
    cpu_ns, minflt = int(report[3]), int(report[4])
    if rc == 3 and text.startswith("SKIP"):
        cell.skip = text.split("\n", 1)[0][5:].strip()
        return
    if rc != 0:
        last = etext.splitlines()[-1] if etext else ""
        cell.error = f"exit {rc}" + (f": {last}" if last else "")
        return
    cell.rss.append(rss_kib)
    cell.cpu.append(cpu_ns / 1e9)
    cell.flt.append(minflt)
    for line in text.splitlines():
        m = re.match(r"RESULT (\S+) (\S+) (\S+) (\S+)$", line)
        if m:
            cell.values.setdefault(m.group(1), []).append(float(m.group(2)))
            cell.units[m.group(1)] = (m.group(3), m.group(4))
    if wall_key:
        cell.values.setdefault(wall_key, []).append(wall_ns / 1e9)
        cell.units[wall_key] = ("s", "lower")


def fmt(v):
    if v is None:
        return "—"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def fmt_rss(kib):
    return f"{kib / 1024:.1f} MiB"


def ratio(hl, other, better):
    """>1 means heapledger is better."""
    if hl is None or other is None or hl == 0 or other == 0:
        return None
    return hl / other if better == "higher" else other / hl


def machine_info():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return (f"{os.cpu_count()} cores, {model}, Linux {platform.release()}, "
            f"{platform.freedesktop_os_release().get('PRETTY_NAME', '?')}"), load


class Report:
    def __init__(self):
        self.lines = []

    def add(self, s=""):
        self.lines.append(s)
        print(s, flush=True)


def run_main(rep, workloads):
    cells = {(w.name, a): Cell() for w in workloads for a, _ in ALLOCATORS}
    for w in workloads:
        t0 = time.monotonic()
        for r in range(REPS):
            for a, lib in ALLOCATORS:
                c = cells[(w.name, a)]
                if c.error:
                    continue
                run_once(w.argv, lib, w.stdin, c, w.wall)
        if not QUICK:
            sys.stderr.write(f"bench: {w.name} done ({time.monotonic() - t0:.1f} s)\n")
    return cells


def main_table(rep, workloads, cells):
    rep.add("## Allocators side by side")
    rep.add()
    rep.add("Each cell: median of the figure, in parentheses heapledger's advantage "
            "(>1.00× = heapledger better: other/heapledger for times, heapledger/other for "
            "rates), then the median peak RSS. Last column: heapledger's peak RSS relative to "
            "glibc's.")
    rep.add()
    rep.add("| workload | figure | " + " | ".join(a for a, _ in ALLOCATORS) + " | hl RSS / glibc |")
    rep.add("|---|---|" + "---|" * len(ALLOCATORS) + "---|")
    for w in workloads:
        key = w.keys[0]
        hl = cells[(w.name, "heapledger")]
        unit, better = hl.units.get(key) or next(
            (cells[(w.name, a)].units[key] for a, _ in ALLOCATORS if key in cells[(w.name, a)].units),
            ("?", "higher"))
        row = [w.name, f"{unit} ({'↑' if better == 'higher' else '↓'})"]
        for a, _ in ALLOCATORS:
            c = cells[(w.name, a)]
            if c.error:
                row.append(f"FAIL: {c.error}")
                continue
            v = c.med(key)
            s = fmt(v)
            if a != "heapledger":
                r = ratio(hl.med(key), v, better)
                if r is not None:
                    s += f" ({r:.2f}×)"
            if c.rss:
                s += " · " + fmt_rss(statistics.median(c.rss))
            row.append(s)
        g = cells[(w.name, "glibc")]
        if hl.rss and g.rss:
            row.append(f"{statistics.median(hl.rss) / statistics.median(g.rss):.2f}×")
        else:
            row.append("—")
        rep.add("| " + " | ".join(row) + " |")
    rep.add()
    lat = [w for w in workloads if w.name.startswith("arena.")]
    if lat:
        rep.add("### Fixed-arena action latency (malloc and free calls), ns p01 / p25 / p50 / p75 / p99")
        rep.add()
        rep.add("| workload | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
        rep.add("|---|" + "---|" * len(ALLOCATORS))
        for w in lat:
            row = [w.name]
            for a, _ in ALLOCATORS:
                c = cells[(w.name, a)]
                row.append("FAIL" if c.error else " / ".join(fmt(c.med(f"{w.name}.{p}")) for p in PCTS))
            rep.add("| " + " | ".join(row) + " |")
        rep.add()
    burst = [w for w in workloads if w.group == "7 large"]
    if burst:
        rep.add("### Large blocks and thread churn: memory after the burst")
        rep.add()
        rep.add("Resident set (MiB, median) once every block is freed: `rss_free` right after "
                "the last free, `rss_idle`/`rss` after a further 250 ms of small-block work "
                "(tests/bench/bench.c, bench_idle_small); in parentheses the ratio to glibc.")
        rep.add()
        rep.add("| figure | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
        rep.add("|---|" + "---|" * len(ALLOCATORS))
        for w in burst:
            for k in w.keys[1:]:
                g = cells[(w.name, "glibc")].med(k)
                row = []
                for a, _ in ALLOCATORS:
                    c = cells[(w.name, a)]
                    v = c.med(k)
                    s = "FAIL" if c.error else fmt(v)
                    if a != "glibc" and v is not None and g:
                        s += f" ({v / g:.2f}×)"
                    row.append(s)
                rep.add(f"| {k} | " + " | ".join(row) + " |")
        rep.add()
        rep.add("Whole process, medians: CPU time (user + system, s; from wait4 — steadier than "
                "wall time on a shared machine) and minor page faults; in parentheses "
                "heapledger's advantage (other / heapledger).")
        rep.add()
        rep.add("| workload | figure | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
        rep.add("|---|---|" + "---|" * len(ALLOCATORS))
        for w in burst:
            for label, attr, f in [("CPU s", "cpu", fmt), ("minor faults", "flt", lambda v: f"{v:,.0f}")]:
                hv = getattr(cells[(w.name, "heapledger")], attr)
                h = statistics.median(hv) if hv else None
                row = []
                for a, _ in ALLOCATORS:
                    vals = getattr(cells[(w.name, a)], attr)
                    v = statistics.median(vals) if vals else None
                    s = "—" if v is None else f(v)
                    if a != "heapledger" and v and h:
                        s += f" ({v / h:.2f}×)"
                    row.append(s)
                rep.add(f"| {w.name} | {label} | " + " | ".join(row) + " |")
        rep.add()
    server = [w for w in workloads if w.group == "3 server"]
    if server:
        rep.add("### Cross-thread frees and the suite's shapes: CPU time")
        rep.add()
        rep.add("Whole process, median CPU time (user + system, s; from wait4): the threads "
                "of these programs wait for each other (barriers, rings), so on a loaded "
                "machine their rates carry descheduling; in parentheses heapledger's "
                "advantage (other / heapledger).")
        rep.add()
        rep.add("| workload | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
        rep.add("|---|" + "---|" * len(ALLOCATORS))
        for w in server:
            hv = cells[(w.name, "heapledger")].cpu
            h = statistics.median(hv) if hv else None
            row = []
            for a, _ in ALLOCATORS:
                vals = cells[(w.name, a)].cpu
                v = statistics.median(vals) if vals else None
                s = "—" if v is None else f"{v:.3f}"
                if a != "heapledger" and v and h:
                    s += f" ({v / h:.2f}×)"
                row.append(s)
            rep.add(f"| {w.name} | " + " | ".join(row) + " |")
        rep.add()
    fp = [w for w in workloads if w.name == "fastpath"]
    if fp:
        rep.add("### Fast path, rdtsc (TSC ticks per call, timer floor subtracted)")
        rep.add()
        rep.add("| probe | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
        rep.add("|---|" + "---|" * len(ALLOCATORS))
        for k in fp[0].keys:
            rep.add("| " + k + " | " + " | ".join(
                "FAIL" if cells[("fastpath", a)].error else fmt(cells[("fastpath", a)].med(k))
                for a, _ in ALLOCATORS) + " |")
        rep.add()


def run_matrix(workloads):
    cells = {(w.name, c): Cell() for w in workloads for c, _ in CONFIGS}
    for w in workloads:
        t0 = time.monotonic()
        for r in range(REPS):
            for cname, cfg in CONFIGS:
                c = cells[(w.name, cname)]
                if c.error or c.skip:
                    continue
                argv = [x.replace("{config}", cfg) for x in w.argv]
                run_once(argv, None, None, c, None)
        if not QUICK:
            sys.stderr.write(f"bench: matrix {w.name} done ({time.monotonic() - t0:.1f} s)\n")
    return cells


def matrix_tables(rep, workloads, cells):
    rep.add("## heapledger fixed-arena configuration matrix (heap objects in-process)")
    rep.add()
    rep.add("Each cell: median, then the change against baseline (throughput in %, "
            "utilisation in points). Configurations: " +
            ", ".join(f"{n} = `arena=…{(',' + c) if c else ''}`" for n, c in CONFIGS) + ".")
    rep.add()
    skipped = {}
    for w in workloads:
        for cname, _ in CONFIGS:
            c = cells[(w.name, cname)]
            if c.skip:
                skipped[cname] = c.skip
    for cname, why in skipped.items():
        rep.add(f"- **{cname}: skipped** — {why}")
    if skipped:
        rep.add()
    rep.add("| workload | figure | " + " | ".join(n for n, _ in CONFIGS) + " |")
    rep.add("|---|---|" + "---|" * len(CONFIGS))
    for w in workloads:
        key = w.keys[0]
        base = cells[(w.name, "baseline")].med(key)
        unit = next((cells[(w.name, n)].units[key] for n, _ in CONFIGS
                     if key in cells[(w.name, n)].units), ("?", "higher"))[0]
        row = [w.name, unit]
        for cname, _ in CONFIGS:
            c = cells[(w.name, cname)]
            if c.skip:
                row.append("skipped")
            elif c.error:
                row.append(f"FAIL: {c.error}")
            else:
                v = c.med(key)
                s = fmt(v)
                if cname != "baseline" and v is not None and base:
                    if unit == "%":
                        s += f" ({v - base:+.1f} pt)"
                    else:
                        s += f" ({100 * (v - base) / base:+.1f}%)"
                row.append(s)
        rep.add("| " + " | ".join(row) + " |")
    rep.add()
    utils = [w for w in workloads if w.name.startswith("util.")]
    if utils:
        rep.add("Utilisation breakdown at the first failure (means over the rounds, % of the "
                "arena; from hl_heap_info): usable bytes of live blocks / free tiny slots / "
                "free TLSF bytes / largest free TLSF block, and the mean failing request.")
        rep.add()
        for w in utils:
            for cname, _ in CONFIGS:
                c = cells[(w.name, cname)]
                if c.skip or c.error or not c.values:
                    continue
                parts = [fmt(c.med(f"{w.name}.{k}")) for k in ["usable", "free_tiny", "free_mid", "largest"]]
                rep.add(f"- {w.name} {cname}: {' / '.join(parts)} %, failing request "
                        f"{fmt(c.med(w.name + '.fail_size'))} B")
        rep.add()
    lat = [w for w in workloads if w.name.startswith("arena.")]
    if lat:
        rep.add("### Matrix latency, ns p01 / p25 / p50 / p75 / p99")
        rep.add()
        rep.add("| workload | " + " | ".join(n for n, _ in CONFIGS) + " |")
        rep.add("|---|" + "---|" * len(CONFIGS))
        for w in lat:
            row = [w.name]
            for cname, _ in CONFIGS:
                c = cells[(w.name, cname)]
                row.append("skipped" if c.skip else "FAIL" if c.error else
                           " / ".join(fmt(c.med(f"{w.name}.{p}")) for p in PCTS))
            rep.add("| " + " | ".join(row) + " |")
        rep.add()


def run_callgrind(rep):
    t0 = time.monotonic()
    script = os.path.join(HERE, "callgrind.sh")
    res = {}
    for a, lib in ALLOCATORS:
        c = Cell()
        env = {"BENCH_BIN": BIN}
        run_once([script, a, lib or ""], None, None, c, None, env)
        res[a] = c
    if not QUICK:
        sys.stderr.write(f"bench: callgrind done ({time.monotonic() - t0:.1f} s)\n")
    rep.add("### Fast path, callgrind (instructions per operation: Ir(2N) − Ir(N), divided by N)")
    rep.add()
    rep.add("| figure | " + " | ".join(a for a, _ in ALLOCATORS) + " |")
    rep.add("|---|" + "---|" * len(ALLOCATORS))
    for k, label in [("callgrind.loop", "whole loop iteration (malloc+free+loop)"),
                     ("callgrind.malloc", "malloc (inclusive)"), ("callgrind.free", "free (inclusive)"),
                     ("callgrind.pair", "malloc+free (inclusive)")]:
        rep.add(f"| {label} | " + " | ".join(
            (f"FAIL: {res[a].error}" if res[a].error else fmt(res[a].med(k))) for a, _ in ALLOCATORS) + " |")
    rep.add()
    return res


def targets(rep, main_cells, mws, mat_cells, matws, cg):
    rep.add("## Targets (issue 3 and issue 4)")
    rep.add()
    names = {w.name for w in mws}

    def med(w, a, k=None):
        if w not in names:
            return None
        return main_cells[(w, a)].med(k or next(x.keys[0] for x in mws if x.name == w))

    lines = []

    def check(label, ok, detail):
        lines.append(f"- {'MET' if ok else ('MISSED' if ok is not None else 'N/A')}: {label} — {detail}")

    for w in [x.name for x in mws if x.name.startswith("tiny.")]:
        hl = med(w, "heapledger")
        rs = {a: ratio(hl, med(w, a), "higher") for a in ["mimalloc", "tcmalloc", "glibc"]}
        ok = None if None in rs.values() else (rs["mimalloc"] >= 1 and rs["tcmalloc"] >= 1 and rs["glibc"] >= 2)
        check(f"{w} ≥1.0× mimalloc, ≥1.0× tcmalloc, ≥2× glibc", ok,
              ", ".join(f"{r:.2f}× {a}" if r else f"n/a {a}" for a, r in rs.items()))
    for w in [x.name for x in mws if x.group in ("3 server",) or x.name.startswith("thread.")]:
        key = next(x.keys[0] for x in mws if x.name == w)
        better = main_cells[(w, "heapledger")].units.get(key, ("", "higher"))[1]
        hl = med(w, "heapledger")
        vals = {a: med(w, a) for a in OTHERS}
        if hl is None or None in vals.values():
            check(f"{w} ≥0.9× best, ≥ glibc", None, "missing figures")
            continue
        best_a = min(OTHERS, key=lambda a: ratio(hl, vals[a], better) or 0)
        rb = ratio(hl, vals[best_a], better)
        rg = ratio(hl, vals["glibc"], better)
        check(f"{w} ≥0.9× best of four, never behind glibc", rb >= 0.9 and rg >= 1.0,
              f"{rb:.2f}× best ({best_a}), {rg:.2f}× glibc")
    # Issue 14: the cross-thread and suite-shaped rows against the fastest of the three peers,
    # per workload and as a geomean, in the figure and in whole-process CPU time.
    server = [x for x in mws if x.group == "3 server"]
    peers = ["jemalloc", "mimalloc", "tcmalloc"]
    logs = {"figure": [], "CPU time": []}
    for w in server:
        key = w.keys[0]
        hl = med(w.name, "heapledger")
        vals = {a: med(w.name, a) for a in OTHERS}
        cpu = {a: statistics.median(main_cells[(w.name, a)].cpu)
               for a in OTHERS + ["heapledger"] if main_cells[(w.name, a)].cpu}
        if hl is None or None in vals.values() or len(cpu) != len(OTHERS) + 1:
            check(f"{w.name} ≥1.0× the fastest of jemalloc/mimalloc/tcmalloc (issue 14)", None,
                  "missing figures")
            continue
        best_a = min(peers, key=lambda a: ratio(hl, vals[a], "higher") or 0)
        rb = ratio(hl, vals[best_a], "higher")
        best_c = min(peers, key=lambda a: cpu[a])
        rc = cpu[best_c] / cpu["heapledger"]
        logs["figure"].append(math.log(rb))
        logs["CPU time"].append(math.log(rc))
        check(f"{w.name} ≥1.0× the fastest of jemalloc/mimalloc/tcmalloc (issue 14)", rb >= 1.0,
              f"{rb:.2f}× {best_a} in {main_cells[(w.name, 'heapledger')].units[key][0]}, "
              f"{rc:.2f}× {best_c} in CPU time")
    for what, l in logs.items():
        if l:
            g = math.exp(sum(l) / len(l))
            check(f"geomean over the {len(l)} issue-14 rows ≥ 1.1× the fastest peer ({what})",
                  g >= 1.1, f"{g:.2f}×")
    for w in [x for x in mws if x.group == "7 large"]:
        key = w.keys[0]
        hl = med(w.name, "heapledger")
        vals = {a: med(w.name, a) for a in OTHERS}
        if hl is None or None in vals.values():
            check(f"{w.name} ≥1.0× the fastest of jemalloc/mimalloc/tcmalloc, ≥ glibc", None,
                  "missing figures")
            continue
        peers = ["jemalloc", "mimalloc", "tcmalloc"]
        best_a = min(peers, key=lambda a: ratio(hl, vals[a], "lower") or 0)
        rb = ratio(hl, vals[best_a], "lower")
        rg = ratio(hl, vals["glibc"], "lower")
        check(f"{w.name} ≥1.0× the fastest of jemalloc/mimalloc/tcmalloc, never behind glibc",
              rb >= 1.0 and rg >= 1.0, f"{rb:.2f}× {best_a}, {rg:.2f}× glibc")
        cpu = {a: statistics.median(main_cells[(w.name, a)].cpu)
               for a in OTHERS + ["heapledger"] if main_cells[(w.name, a)].cpu}
        if len(cpu) == len(OTHERS) + 1:
            best_c = min(peers, key=lambda a: cpu[a])
            rc, rcg = cpu[best_c] / cpu["heapledger"], cpu["glibc"] / cpu["heapledger"]
            check(f"{w.name} CPU time (user+sys, whole process) ≥1.0× the leanest peer, ≥ glibc",
                  rc >= 1.0 and rcg >= 1.0, f"{rc:.2f}× {best_c}, {rcg:.2f}× glibc")
        k = w.keys[-1]
        h, g = med(w.name, "heapledger", k), med(w.name, "glibc", k)
        if h is not None and g:
            check(f"{k}: memory returned after the burst, within 1.1× glibc's RSS or 1 MiB of it",
                  h <= 1.1 * g or h - g <= 1.0, f"{h:.1f} MiB against glibc's {g:.1f} MiB")
    v = med("simple.1024x400", "heapledger")
    check("simple loop 1024 B × 400 live ≤ 40 ns per malloc+free", None if v is None else v <= 40,
          f"{fmt(v)} ns")
    v = med("fastpath", "heapledger", "fastpath.free")
    check("tiny free fast path ≤ 10 cycles (rdtsc, TSC ticks)", None if v is None else v <= 10,
          f"{fmt(v)} ticks")
    if cg:
        v = cg["heapledger"].med("callgrind.pair")
        check("malloc+free pair on the cache-hit path ≤ 40 instructions (callgrind)",
              None if v is None else v <= 40, f"{fmt(v)} instructions (inclusive malloc + free)")
    worst = []
    for w in mws:
        hl, g = main_cells[(w.name, "heapledger")].rss, main_cells[(w.name, "glibc")].rss
        if hl and g:
            h, gg = statistics.median(hl), statistics.median(g)
            worst.append((h / gg, w.name, (h - gg) / 1024))
    if worst:
        bad = sorted([x for x in worst if x[0] > 1.1], reverse=True)
        check("peak RSS within 1.1× glibc on every workload", not bad,
              ("over on " + ", ".join(f"{n} {r:.2f}× ({d:+.1f} MiB)" for r, n, d in bad)) if bad
              else f"worst {max(worst)[1]} {max(worst)[0]:.2f}×")
    if mat_cells:
        for size in ["1M", "256K"]:
            if ("util." + size, "baseline") in mat_cells:
                v = mat_cells[("util." + size, "baseline")].med("util." + size)
                check(f"peak utilisation before exhaustion ≥ 90% (arena {size})",
                      None if v is None else v >= 90, f"{fmt(v)} %")
        for cname, limit in [("harden", 5), ("rotate", 10)]:
            deltas = []
            for w in matws:
                if w.name.startswith("util."):
                    continue
                base = mat_cells[(w.name, "baseline")].med(w.keys[0])
                c = mat_cells[(w.name, cname)]
                if c.skip:
                    deltas = None
                    break
                v = c.med(w.keys[0])
                if base and v:
                    deltas.append((100 * (base - v) / base, w.name))
            if deltas is None:
                check(f"{cname} costs ≤ {limit}% throughput", None, "configuration skipped")
            elif deltas:
                worst_d = max(deltas)
                check(f"{cname} costs ≤ {limit}% throughput on the fixed-arena workloads",
                      worst_d[0] <= limit, f"worst {worst_d[1]} {worst_d[0]:.1f}%")
        for un in [w.name for w in matws if w.name.startswith("util.")]:
            for cname, what in [("rotate", "rotation"), ("harden", "hardening")]:
                k = (un, cname)
                if k in mat_cells and not mat_cells[k].skip:
                    base = mat_cells[(un, "baseline")].med(un)
                    v = mat_cells[k].med(un)
                    if base is not None and v is not None:
                        check(f"{what} loses ≤ 3 points of peak utilisation ({un})",
                              base - v <= 3, f"{base - v:.1f} points")
        for un, floor in [("util.gauss.256K", 85), ("util.wide.256K", 92)]:
            if (un, "baseline") in mat_cells:
                v = mat_cells[(un, "baseline")].med(un)
                check(f"baseline peak utilisation ≥ {floor}% ({un})",
                      None if v is None else v >= floor, f"{fmt(v)} %")
    for l in lines:
        rep.add(l)
    rep.add()


def verify_quick(rep, mws, main_cells, matws, mat_cells, cg):
    bad = []
    for w in mws:
        for a, _ in ALLOCATORS:
            c = main_cells[(w.name, a)]
            if c.error:
                bad.append(f"{w.name} under {a}: {c.error}")
                continue
            for k in w.keys:
                if k not in c.values:
                    bad.append(f"{w.name} under {a}: no figure {k}")
    for w in matws:
        for cname, _ in CONFIGS:
            c = mat_cells[(w.name, cname)]
            if c.skip and cname != "baseline":
                continue
            if c.error or c.skip:
                bad.append(f"matrix {w.name} {cname}: {c.error or 'skipped: ' + c.skip}")
                continue
            for k in w.keys:
                if k not in c.values:
                    bad.append(f"matrix {w.name} {cname}: no figure {k}")
    for a, c in (cg or {}).items():
        if c.error or "callgrind.pair" not in c.values:
            bad.append(f"callgrind under {a}: {c.error or 'no figure'}")
    return bad


def main():
    for a, lib in ALLOCATORS:
        if lib and not os.path.exists(lib):
            sys.exit(f"bench: {a} library {lib} not found (make deps installs the packages; "
                     f"build heapledger with make all)")
    start = time.time()
    mach, load0 = machine_info()
    rep = Report()
    rep.add(f"# heapledger benchmark results{' (BENCH_QUICK smoke run)' if QUICK else ''}")
    rep.add()
    rep.add(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(start))}")
    rep.add(f"- machine: {mach}")
    rep.add(f"- command: `make bench` (tests/bench/run.sh); {REPS} runs per cell, allocators "
            "alternated A B C D E per run, medians")
    rep.add(f"- load average at start: {load0}")
    rep.add()
    mws = main_workloads()
    main_cells = run_main(rep, mws)
    matws = matrix_workloads()
    mat_cells = run_matrix(matws) if matws else {}
    cg = None
    main_table(rep, mws, main_cells)
    if not ONLY or "callgrind" in ONLY:
        cg = run_callgrind(rep)
    if matws:
        matrix_tables(rep, matws, mat_cells)
    targets(rep, main_cells, mws, mat_cells, matws, cg)
    _, load1 = machine_info()
    rep.add(f"Load average at the end: {load1}; total time {time.time() - start:.0f} s.")
    if max(float(load0.split()[0]), float(load1.split()[0])) > 1.5:
        rep.add()
        rep.add("Note: the load average was above 1.5 — other work shared the machine's cores "
                "during this run, so absolute figures are noisy; compare within rows.")
    os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(rep.lines) + "\n")
    sys.stderr.write(f"bench: report written to {OUT}\n")
    if QUICK:
        bad = verify_quick(rep, mws, main_cells, matws, mat_cells, cg)
        if bad:
            sys.stderr.write("bench-quick: FAILED\n" + "\n".join("  " + x for x in bad) + "\n")
            sys.exit(1)
        sys.stderr.write("bench-quick: every program printed its figures for every allocator\n")


if __name__ == "__main__":
    main()
