# tests/analyzer/ — the analyzer's tests: Criterion tests of the metric functions and of the
# analysis of hand-made databases (tests/analyzer/*.sql), golden CLI output, the HTML report
# rendered in headless Chromium, replay. `make analyzer-check` (part of `make check`).

AN_TEST_DIR := $(TEST_DIR)/analyzer
AN_SCHEMA := schemas/heapledger.sql schemas/heapledger_index.sql
AN_DBS := $(addprefix $(AN_TEST_DIR)/,basic.db arena.db empty.db discarded.db badversion.db oldversion.db \
          reorder.db realloc.db churn.db kernel.db kshare.db leakclass.db leakneg.db \
          notadb.db)

# A hand-made database: the v1 schema, the test's rows, the indexes.
$(AN_TEST_DIR)/%.db: tests/analyzer/%.sql $(AN_SCHEMA)
	@mkdir -p $(dir $@)
	@rm -f $@
	cat schemas/heapledger.sql $< schemas/heapledger_index.sql | sqlite3 $@

# With kernel events: the kernel's tables and views too (tracer/bpf stores them with the rows).
$(AN_TEST_DIR)/kernel.db $(AN_TEST_DIR)/kshare.db: $(AN_TEST_DIR)/%.db: tests/analyzer/%.sql \
		$(AN_SCHEMA) schemas/kernel_views.sql
	@mkdir -p $(dir $@)
	@rm -f $@
	cat schemas/heapledger.sql schemas/kernel_views.sql $< schemas/heapledger_index.sql | sqlite3 $@

# basic.sql with one more statement on top.
$(AN_TEST_DIR)/discarded.db $(AN_TEST_DIR)/badversion.db $(AN_TEST_DIR)/oldversion.db: $(AN_TEST_DIR)/%.db: \
		tests/analyzer/basic.sql tests/analyzer/%.sql $(AN_SCHEMA)
	@mkdir -p $(dir $@)
	@rm -f $@
	cat schemas/heapledger.sql tests/analyzer/basic.sql tests/analyzer/$*.sql \
	    schemas/heapledger_index.sql | sqlite3 $@

# leakclass.sql with one more statement on top.
$(AN_TEST_DIR)/leakneg.db: tests/analyzer/leakclass.sql tests/analyzer/leakneg.sql $(AN_SCHEMA)
	@mkdir -p $(dir $@)
	@rm -f $@
	cat schemas/heapledger.sql tests/analyzer/leakclass.sql tests/analyzer/leakneg.sql \
	    schemas/heapledger_index.sql | sqlite3 $@

# A churning synthetic run (gen_big): 60 000 events over 500 live blocks.
$(AN_TEST_DIR)/churn.db: $(AN_TEST_DIR)/gen_big $(AN_SCHEMA)
	$(AN_TEST_DIR)/gen_big $@ 60000 schemas/heapledger.sql schemas/heapledger_index.sql 500

$(AN_TEST_DIR)/notadb.db:
	@mkdir -p $(dir $@)
	echo "this is a text file, not a database" > $@

AN_UNIT := $(AN_TEST_DIR)/test_analyzer
$(AN_UNIT): tests/analyzer/test_analyzer.c $(ANALYZER_LIB) $(OBJ_DIR)/tracer/db.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I analyzer -o $@ $< $(ANALYZER_LIB) $(OBJ_DIR)/tracer/db.o \
	    -lcriterion -lsqlite3 -lm -lpthread

# The direct database-file reader against SQLite's reading of the same files.
AN_BTREE := $(AN_TEST_DIR)/test_btree
$(AN_BTREE): tests/analyzer/test_btree.c $(ANALYZER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I analyzer -o $@ $< $(ANALYZER_LIB) -lcriterion -lsqlite3 -lpthread

# Output safety: the text escape and JSON strings (safetext.c, jsonw.c).
AN_SAFETEXT := $(AN_TEST_DIR)/test_safetext
$(AN_SAFETEXT): tests/analyzer/test_safetext.c $(ANALYZER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I analyzer -o $@ $< $(ANALYZER_LIB) -lcriterion -lpthread

# Both under ASan+UBSan, with the analyzer built from its sources the same way: it parses
# files it did not write (the corrupt-page test), and every metric runs on the test
# databases. (cmd_* are the CLI entry points; replay.c needs the allocator core.)
AN_ASAN := $(AN_TEST_DIR)/test_analyzer_asan
AN_ASAN_SRCS := $(filter-out analyzer/cmd_%.c analyzer/replay.c,$(ANALYZER_SRCS)) tracer/db.c
$(AN_ASAN): tests/analyzer/test_analyzer.c tests/analyzer/test_btree.c $(AN_ASAN_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I analyzer -I tracer -o $@ $^ -lcriterion -lsqlite3 -lm \
	    -lpthread

.PHONY: analyzer-check analyzer-unit analyzer-cli
analyzer-unit: $(AN_UNIT) $(AN_BTREE) $(AN_SAFETEXT) $(AN_ASAN) $(AN_DBS)
	HL_TEST_DB_DIR=$(AN_TEST_DIR) $(AN_UNIT)
	$(AN_BTREE)
	$(AN_SAFETEXT)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 HL_TEST_DB_DIR=$(AN_TEST_DIR) $(AN_ASAN)

analyzer-cli: $(AN_DBS) $(BIN_DIR)/heapledger
	tests/analyzer/cli_test.sh $(BIN_DIR)/heapledger $(AN_TEST_DIR)

analyzer-check: analyzer-unit analyzer-cli

CHECK_TARGETS += analyzer-check

# Replay: a run made through the public heap API replays to the same live set.
AN_REPLAY_REC := $(AN_TEST_DIR)/replay_rec
$(AN_REPLAY_REC): tests/analyzer/replay_rec.c $(LIB_DIR)/libheapledger_core.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_DIR)/libheapledger_core.a -lsqlite3 -lunwind -lpthread

.PHONY: analyzer-replay
analyzer-replay: $(AN_REPLAY_REC) $(BIN_DIR)/heapledger
	tests/analyzer/replay_test.sh $(BIN_DIR)/heapledger $(AN_REPLAY_REC) $(AN_TEST_DIR)

analyzer-check: analyzer-replay

# The HTML report in headless Chromium: hand-made runs, then a real recording of html_prog
# driven like a reader (tests/analyzer/html_drive.py).
AN_HTML_PROG := $(AN_TEST_DIR)/html_prog
$(AN_HTML_PROG): tests/analyzer/html_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -fno-omit-frame-pointer -o $@ $< -lpthread

.PHONY: analyzer-html
analyzer-html: $(AN_DBS) $(BIN_DIR)/heapledger $(AN_HTML_PROG)
	tests/analyzer/html_test.sh $(BIN_DIR)/heapledger $(AN_TEST_DIR) $(AN_HTML_PROG) \
	    tests/analyzer/html_prog.c

analyzer-check: analyzer-html

# End to end: a real recording (heapledger record under LTTng) of a program with known leaks.
AN_LEAKY := $(AN_TEST_DIR)/leaky
$(AN_LEAKY): tests/analyzer/leaky.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -fno-omit-frame-pointer -o $@ $<

.PHONY: analyzer-e2e
analyzer-e2e: $(AN_LEAKY) $(BIN_DIR)/heapledger
	tests/analyzer/e2e_test.sh $(BIN_DIR)/heapledger $(AN_LEAKY) $(AN_TEST_DIR)

analyzer-check: analyzer-e2e

# Cycles per call site and the slowest operations on a recording whose slow paths are known.
AN_SITES_PROG := $(AN_TEST_DIR)/sites_prog
$(AN_SITES_PROG): tests/analyzer/sites_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $<

.PHONY: analyzer-sites
analyzer-sites: $(AN_SITES_PROG) $(BIN_DIR)/heapledger
	tests/analyzer/sites_test.sh $(BIN_DIR)/heapledger $(AN_SITES_PROG) $(AN_TEST_DIR)

analyzer-check: analyzer-sites

# Benchmark (make bench): a synthetic run of AN_BENCH_EVENTS events (tests/analyzer/gen_big.c),
# then `heapledger report` on it: wall time, CPU per thread, peak RSS, events per second.
AN_GEN_BIG := $(AN_TEST_DIR)/gen_big
AN_BENCH_EVENTS ?= 10000000
AN_BENCH_DB := $(BUILD)/bench/analyzer-$(AN_BENCH_EVENTS).db
$(AN_GEN_BIG): tests/analyzer/gen_big.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $< -lsqlite3

$(AN_BENCH_DB): $(AN_GEN_BIG)
	@mkdir -p $(dir $@)
	$(AN_GEN_BIG) $@ $(AN_BENCH_EVENTS) schemas/heapledger.sql schemas/heapledger_index.sql

.PHONY: analyzer-bench
analyzer-bench: $(AN_BENCH_DB) $(BIN_DIR)/heapledger
	tests/analyzer/bench.sh $(BIN_DIR)/heapledger $(AN_BENCH_DB)

BENCH_TARGETS += analyzer-bench

# The kernel view end to end: `heapledger record --kernel` of a program whose page faults are
# known (tests/analyzer/ktouch.c). Skips with the recorder's message without kernel events.
AN_KTOUCH := $(AN_TEST_DIR)/ktouch
$(AN_KTOUCH): tests/analyzer/ktouch.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $<

.PHONY: analyzer-kernel-e2e
analyzer-kernel-e2e: $(AN_KTOUCH) $(BIN_DIR)/heapledger
	tests/analyzer/kernel_e2e.sh $(BIN_DIR)/heapledger $(AN_KTOUCH) $(AN_TEST_DIR)

analyzer-check: analyzer-kernel-e2e

# Hostile databases (make check): the analyzer's commands built under ASan+UBSan
# (hostile_cli.c: the entry points of report, diff, history, replay) run on a corpus of
# damaged run databases that hostile_gen.py writes; hostile_test.sh says what must hold.
AN_HOSTILE_CLI := $(AN_TEST_DIR)/hostile_cli
AN_HOSTILE_SRCS := tests/analyzer/hostile_cli.c $(ANALYZER_SRCS) tracer/db.c
$(AN_HOSTILE_CLI): $(AN_HOSTILE_SRCS) $(LIB_DIR)/libheapledger_core.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 $(SAN_FLAGS) -I analyzer -I tracer -o $@ $(AN_HOSTILE_SRCS) \
	    $(LIB_DIR)/libheapledger_core.a -lsqlite3 -lm -lunwind -lpthread

.PHONY: analyzer-hostile
analyzer-hostile: $(AN_HOSTILE_CLI)
	tests/analyzer/hostile_test.sh $(AN_HOSTILE_CLI) $(AN_TEST_DIR)/hostile

analyzer-check: analyzer-hostile

# Frames name the lines of their calls: a -O2 -g program recorded, its frames checked against
# the FRAMES_* markers of its source.
AN_FRAMES := $(AN_TEST_DIR)/frames_prog
$(AN_FRAMES): tests/analyzer/frames_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -fno-builtin -o $@ $<

.PHONY: analyzer-frames
analyzer-frames: $(AN_FRAMES) $(BIN_DIR)/heapledger
	tests/analyzer/frames_test.sh $(BIN_DIR)/heapledger $(AN_FRAMES) tests/analyzer/frames_prog.c \
	    $(AN_TEST_DIR)

analyzer-check: analyzer-frames

# Suppressions: the C runtime's blocks leave the leak list of a real recording; user files.
AN_SUPP := $(AN_TEST_DIR)/supp_prog
$(AN_SUPP): tests/analyzer/supp_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $< -lpthread

.PHONY: analyzer-supp
analyzer-supp: $(AN_SUPP) $(BIN_DIR)/heapledger
	tests/analyzer/supp_test.sh $(BIN_DIR)/heapledger $(AN_SUPP) $(AN_TEST_DIR)

analyzer-check: analyzer-supp

# Replay's embedded answers (first failure's stack and arena map, --fit, --matrix, --html) on
# a real recording of tests/analyzer/fitprog.
AN_FITPROG := $(AN_TEST_DIR)/fitprog
$(AN_FITPROG): tests/analyzer/fitprog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -fno-omit-frame-pointer -o $@ $<

.PHONY: analyzer-fit
analyzer-fit: $(AN_FITPROG) $(BIN_DIR)/heapledger
	tests/analyzer/fit_test.sh $(BIN_DIR)/heapledger $(AN_FITPROG) $(AN_TEST_DIR)

analyzer-check: analyzer-fit

# `heapledger report` against heaptrack_print on the same 10 M-event run (tests/e2e/
# record_bench), medians of REPORT_REPS alternating runs (tests/analyzer/report_vs.sh); the
# recordings are kept in build/bench/report-vs and reused. AN_VS_EVENTS=100000000 for 100 M.
AN_VS_EVENTS ?= 10000000
.PHONY: bench-report
bench-report: $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench $(LIB_DIR)/libheapledger-tp.so
	@tests/analyzer/report_vs.sh $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench \
	    $(AN_VS_EVENTS) $(BUILD)/bench/report-vs-$(AN_VS_EVENTS)

BENCH_TARGETS += bench-report
