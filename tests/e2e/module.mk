# tests/e2e/ — end-to-end tests: the real CLI, a real lttng-sessiond, real programs, checked
# against the CTF trace (babeltrace2) and the SQLite run database. Each part of the tree adds
# its own scripts here with distinct names (record_*, ingest_*, analyzer_*).

E2E_DIR := $(TEST_DIR)/e2e

# tp_emit: the tracing backend linked into a program of its own (no allocator), so the
# recording pipeline is tested exactly (known event counts) independently of liballoc.
$(E2E_DIR)/tp_emit: tests/e2e/tp_emit.c liballoc/trace_lttng.c liballoc/stack.c liballoc/stack.h \
                    liballoc/stack_entry.c liballoc/unwind_load.c liballoc/unwind_fast.c \
                    liballoc/trace.h schemas/heapledger_tp.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DHL_TRACE_LTTNG -DHL_UNWIND_LINKED -o $@ tests/e2e/tp_emit.c \
	    liballoc/trace_lttng.c liballoc/stack.c liballoc/stack_entry.c liballoc/unwind_load.c \
	    liballoc/unwind_fast.c \
	    -lunwind -ldl -lpthread

# A stand-in libheapledger.so for the tp_emit tests (record insists on preloading one).
$(E2E_DIR)/stub/libheapledger.so:
	@mkdir -p $(dir $@)
	echo 'int hl_e2e_stub;' | $(CC) -x c -shared -fPIC -o $@ -

# A program with known allocations, recorded under the real allocator.
$(E2E_DIR)/record_known: tests/e2e/record_known.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

# Unit tests of the stack table (Criterion).
$(E2E_DIR)/record_stack_test: tests/e2e/record_stack_test.c liballoc/stack.c liballoc/stack.h \
                              liballoc/stack_entry.c liballoc/unwind_load.c liballoc/unwind_fast.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DHL_UNWIND_LINKED -o $@ tests/e2e/record_stack_test.c liballoc/stack.c \
	    liballoc/stack_entry.c liballoc/unwind_load.c liballoc/unwind_fast.c -lcriterion -lunwind \
	    -lpthread

# Allocation-heavy loop for the tracing-cost benchmark (record_bench.sh).
$(E2E_DIR)/record_bench: tests/e2e/record_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

E2E_RECORD_DEPS := $(E2E_DIR)/tp_emit $(E2E_DIR)/record_known $(E2E_DIR)/record_stack_test $(E2E_DIR)/stub/libheapledger.so \
                   $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger-tp.so

.PHONY: record-check
record-check: $(E2E_RECORD_DEPS)
	@$(E2E_DIR)/record_stack_test --jobs 1
	@BUILD=$(BUILD) tests/e2e/record_test.sh

CHECK_TARGETS += record-check

# Isolation: two recordings and a hand-made lttng session at the same time (root only; in a
# mount namespace of the test's own, never on the machine's shared session daemon).
.PHONY: record-isolation-check
record-isolation-check: $(E2E_DIR)/tp_emit $(E2E_DIR)/stub/libheapledger.so $(BIN_DIR)/heapledger \
                        $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/e2e/record_isolation_test.sh

CHECK_TARGETS += record-isolation-check

# Faults: record SIGKILLed, its private daemons killed mid-run, output problems, no events.
.PHONY: record-faults-check
record-faults-check: $(E2E_DIR)/tp_emit $(E2E_DIR)/stub/libheapledger.so $(BIN_DIR)/heapledger \
                     $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/e2e/record_faults_test.sh

CHECK_TARGETS += record-faults-check

# No door for another user: planted symlinks, file modes, a --keep-trace of someone else.
.PHONY: record-private-check
record-private-check: $(E2E_DIR)/tp_emit $(E2E_DIR)/stub/libheapledger.so $(BIN_DIR)/heapledger \
                      $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/e2e/record_private_test.sh

CHECK_TARGETS += record-private-check

.PHONY: record-bench
record-bench: $(E2E_DIR)/record_bench $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/e2e/record_bench.sh

BENCH_TARGETS += record-bench

# The database fills while the program runs: trace chunks stored during the run equal one
# pass, deleted once stored, kills lose nothing stored (record_chunks_test.sh).
$(E2E_DIR)/record_chunks_prog: tests/e2e/record_chunks_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

# What the reaper leaves of a kept trace directory when record dies (Criterion, no daemon).
$(E2E_DIR)/record_reaper_test: tests/e2e/record_reaper_test.c tracer/record_reaper.c \
                               tracer/record_reaper.h tracer/procstat.c tracer/record_ns.c \
                               tracer/fstree.c tracer/fstree.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ tests/e2e/record_reaper_test.c tracer/record_reaper.c \
	    tracer/procstat.c tracer/record_ns.c tracer/fstree.c -lcriterion

.PHONY: record-chunks-check
record-chunks-check: $(E2E_DIR)/record_chunks_prog $(E2E_DIR)/record_reaper_test $(BIN_DIR)/heapledger \
                     $(LIB_DIR)/libheapledger.so $(LIB_DIR)/libheapledger-tp.so
	@$(E2E_DIR)/record_reaper_test --jobs 1
	@BUILD=$(BUILD) tests/e2e/record_chunks_test.sh

CHECK_TARGETS += record-chunks-check

# Storing during the run against storing after it: time to a ready database, peak disk,
# record's RSS, the program's CPU per event (record_overlap_bench.sh; 10 M events).
.PHONY: record-overlap-bench
record-overlap-bench: $(E2E_DIR)/record_bench $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger.so \
                      $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/e2e/record_overlap_bench.sh

BENCH_TARGETS += record-overlap-bench
