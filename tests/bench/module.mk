# tests/bench/ — the benchmark suite (issue 3): `make bench` runs it (tests/bench/run.sh,
# report in build/bench/results.md); `bench-quick` (in `make check`) checks the programs'
# bad-input messages (test_args.sh), then runs every program once with small sizes under
# every allocator and only checks that each prints its figures.
#
# Programs: plain malloc ones (run under LD_PRELOAD); the fixed-arena workloads are built
# twice from one source, <name>_malloc (plain malloc) and <name>_heap (-DBENCH_HEAP_API,
# heapledger heap objects from libheapledger_core.a, no malloc shim).

BENCH_DIR     := $(BUILD)/bench
BENCH_BIN     := $(BENCH_DIR)/bin
BENCH_CFLAGS  := $(TEST_CFLAGS) -I tests/bench
BENCH_COMMON  := tests/bench/bench.c tests/bench/bench_alloc.c
BENCH_HDRS    := tests/bench/bench.h tests/bench/bench_alloc.h liballoc/heapledger.h
BENCH_CORE_A  := $(LIB_DIR)/libheapledger_core.a
BENCH_HL_SO   := $(LIB_DIR)/libheapledger.so
# Libraries the core archive needs (liballoc/module.mk says which).
BENCH_CORE_LIBS := $(LIBHL_CORE_LIBS) -lpthread -lm

BENCH_PLAIN   := $(addprefix $(BENCH_BIN)/,tiny simple thread larson prodcons shbench alloctest \
                   fastpath large churn)
BENCH_MALLOC  := $(addprefix $(BENCH_BIN)/,arena_malloc nbe_malloc)
BENCH_HEAP    := $(addprefix $(BENCH_BIN)/,arena_heap nbe_heap util_heap)
BENCH_PROGS   := $(BENCH_PLAIN) $(BENCH_MALLOC) $(BENCH_HEAP) $(BENCH_BIN)/launch $(BENCH_BIN)/tp_floor

$(BENCH_BIN)/launch: tests/bench/launch.c
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $<

# The floor of a traced event (issue 12): heapledger's events through LTTng-UST and nothing
# else, call sites linked like libheapledger.so's (tests/bench/trace_cost.sh).
$(BENCH_BIN)/tp_floor: tests/bench/tp_floor.c schemas/heapledger_tp.h schemas/hl_schema.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -ldl

$(BENCH_PLAIN): $(BENCH_BIN)/%: tests/bench/%.c $(BENCH_COMMON) $(BENCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< $(BENCH_COMMON) -lpthread -lm

$(BENCH_MALLOC): $(BENCH_BIN)/%_malloc: tests/bench/%.c $(BENCH_COMMON) $(BENCH_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -o $@ $< $(BENCH_COMMON) -lpthread -lm

$(BENCH_HEAP): $(BENCH_BIN)/%_heap: tests/bench/%.c $(BENCH_COMMON) $(BENCH_HDRS) $(BENCH_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -DBENCH_HEAP_API -o $@ $< $(BENCH_COMMON) $(BENCH_CORE_A) $(BENCH_CORE_LIBS)

BENCH_ENV = BENCH_BIN=$(BENCH_BIN) BENCH_LIB=$(BENCH_HL_SO)

# The line-sharing model (tests/bench/linemodel.c): an interposer that counts the cache lines
# larson's blocks move between threads, for profiles on a VM without hardware counters
# (LINEMODEL_LINKS=side: links kept outside the blocks; test_args.sh checks both modes).
BENCH_LINEMODEL := $(BENCH_DIR)/lib/linemodel.so
$(BENCH_LINEMODEL): tests/bench/linemodel.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -shared -fPIC -o $@ $< -ldl
.PHONY: bench-linemodel
bench-linemodel: $(BENCH_LINEMODEL) $(BENCH_PROGS)

.PHONY: bench-suite bench-quick bench-programs
bench-programs: $(BENCH_PROGS)

bench-suite: $(BENCH_PROGS) $(BENCH_HL_SO)
	$(BENCH_ENV) BENCH_OUT=$(BENCH_DIR)/results.md tests/bench/run.sh

bench-quick: $(BENCH_PROGS) $(BENCH_HL_SO) $(BENCH_LINEMODEL)
	@$(BENCH_ENV) BENCH_LINEMODEL=$(BENCH_LINEMODEL) tests/bench/test_args.sh
	@$(BENCH_ENV) BENCH_QUICK=1 BENCH_OUT=$(BENCH_DIR)/quick.md tests/bench/run.sh >/dev/null

# Hardened mode's price (issue 13 item 5): glibc, scudo, default heapledger and harden=1 side
# by side on the tiny mixed / fixed-size / 2-thread micro-benchmarks, gcc and python3
# (tests/bench/harden_runner.py; report in build/bench/harden.md, docs/PERFORMANCE.md).
.PHONY: bench-harden
bench-harden: $(BENCH_PROGS) $(BENCH_HL_SO)
	$(BENCH_ENV) BENCH_OUT=$(BENCH_DIR)/harden.md nice -n 10 /usr/bin/python3 tests/bench/harden_runner.py

BENCH_TARGETS += bench-suite bench-harden
CHECK_TARGETS += bench-quick

# heapledger record side by side with heaptrack (issue 12; tests/bench/heaptrack_vs.sh):
# 10 M events in `make bench` (a few minutes on a loaded machine), 100 M events apart in
# `make bench-scale` (tens of minutes, and several GB of transient trace and database).
.PHONY: bench-heaptrack bench-scale
HT_VS_DEPS := $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench $(LIB_DIR)/libheapledger-tp.so
bench-heaptrack: $(HT_VS_DEPS)
	@tests/bench/heaptrack_vs.sh $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench 10000000
bench-scale: $(HT_VS_DEPS)
	@tests/bench/heaptrack_vs.sh $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench 100000000
BENCH_TARGETS += bench-heaptrack

# The traced program's instructions per event, split (issue 12; tests/bench/trace_cost.sh):
# callgrind under `heapledger record`, record_bench against the tp_floor program.
.PHONY: bench-trace-cost
bench-trace-cost: $(HT_VS_DEPS) $(BENCH_BIN)/tp_floor
	@tests/bench/trace_cost.sh $(BUILD)
BENCH_TARGETS += bench-trace-cost

# The floor program records as the allocator's events do (tests/bench/tp_floor_test.sh).
.PHONY: tp-floor-check
tp-floor-check: $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger.so $(LIB_DIR)/libheapledger-tp.so \
                $(BENCH_BIN)/tp_floor
	@BUILD=$(BUILD) tests/bench/tp_floor_test.sh
CHECK_TARGETS += tp-floor-check
