#!/usr/bin/env bash
# heapledger benchmark suite: `make bench` (full) and `make bench-quick` (BENCH_QUICK=1 smoke
# test). Runs every workload under each allocator and writes the markdown report to stdout
# and to $BENCH_OUT (default build/bench/results.md). See tests/bench/runner.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
# /usr/bin/python3 on purpose: a pyenv shim would run a shell first.
exec /usr/bin/python3 tests/bench/runner.py "$@"
