# tests/ingest/ — the ingest half of the recording pipeline: tracer/ingest_*.c, tracer/db.c,
# `heapledger collect` and `heapledger collectd`, and their end-to-end tests.
# (Lives here because the top Makefile includes */*/module.mk; tracer/module.mk is another
# engineer's and compiles tracer/%.c with its own pattern rule.)

INGEST_SRCS := db ingest_ckpt ingest_source ingest_queue ingest_map ingest_ledger ingest_store ingest_decoder \
               ingest_symbols ingest_demangle ingest_progress ingest_run ingest_salvage collect collectd \
               collectd_prefix ingest_leakclass ingest_totals ingest_order ingest_writer ctf_meta ctf_tsdl ctf_plan ctf_stream ctf_source
INGEST_OBJS := $(INGEST_SRCS:%=$(OBJ_DIR)/tracer/%.o)
INGEST_LIBS := $(shell pkg-config --libs babeltrace2 sqlite3 libdw 2>/dev/null || \
                 echo -lbabeltrace2 -lsqlite3 -ldw -lelf) -lpthread

HL_CLI_OBJS += $(INGEST_OBJS)
HL_CLI_LIBS += $(INGEST_LIBS)

# db.c embeds the schema text with .incbin: rebuild it when the schema changes.
$(OBJ_DIR)/tracer/db.o: schemas/heapledger.sql schemas/heapledger_index.sql

# The test trace generator: defines the heapledger provider itself (no allocator needed).
INGEST_GEN := $(TEST_DIR)/ingest/ingest_gen
$(INGEST_GEN): tests/ingest/ingest_gen.c schemas/heapledger_tp.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -I tests/ingest -o $@ $< -llttng-ust -ldl -lpthread

# Criterion test of tracer/db.c (schema version check, messages).
INGEST_DB_TEST := $(TEST_DIR)/ingest/ingest_db_test
$(INGEST_DB_TEST): tests/ingest/ingest_db_test.c $(OBJ_DIR)/tracer/db.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion -lsqlite3

# Criterion test of heapledger's CTF reader: metadata parser and stream decoder, hostile input.
INGEST_CTF_TEST := $(TEST_DIR)/ingest/ctf_reader_test
$(INGEST_CTF_TEST): tests/ingest/ctf_reader_test.c $(OBJ_DIR)/tracer/ctf_meta.o $(OBJ_DIR)/tracer/ctf_tsdl.o \
		$(OBJ_DIR)/tracer/ctf_plan.o $(OBJ_DIR)/tracer/ctf_stream.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion

# Criterion test of the decoding plans (tracer/ctf_plan.c) against the tree walk.
INGEST_PLAN_TEST := $(TEST_DIR)/ingest/ctf_plan_test
$(INGEST_PLAN_TEST): tests/ingest/ctf_plan_test.c $(OBJ_DIR)/tracer/ctf_meta.o $(OBJ_DIR)/tracer/ctf_tsdl.o \
		$(OBJ_DIR)/tracer/ctf_plan.o $(OBJ_DIR)/tracer/ctf_stream.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion

# Criterion test of the hash map behind the live-block table.
INGEST_MAP_TEST := $(TEST_DIR)/ingest/ingest_map_test
$(INGEST_MAP_TEST): tests/ingest/ingest_map_test.c $(OBJ_DIR)/tracer/ingest_map.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion

# Criterion test of the store's SQLite thread (order, bound, sync).
INGEST_WRITER_TEST := $(TEST_DIR)/ingest/ingest_writer_test
$(INGEST_WRITER_TEST): tests/ingest/ingest_writer_test.c $(OBJ_DIR)/tracer/ingest_writer.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion -lpthread

# Criterion test of the block-lifetime rules (ledger + store on a real database file).
INGEST_LEDGER_TEST := $(TEST_DIR)/ingest/ingest_ledger_test
INGEST_LEDGER_DEPS := db ingest_ledger ingest_store ingest_map ingest_symbols ingest_demangle \
                      ingest_leakclass ingest_totals ingest_order ingest_writer
$(INGEST_LEDGER_TEST): tests/ingest/ingest_ledger_test.c $(INGEST_LEDGER_DEPS:%=$(OBJ_DIR)/tracer/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lcriterion -lsqlite3 -ldw -lelf

# A real program with known allocations, recorded with `heapledger record` by the tests.
INGEST_PROG := $(TEST_DIR)/ingest/ingest_prog
$(INGEST_PROG): tests/ingest/ingest_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

# Stacks across fork without exec and exec, recorded with `heapledger record`.
INGEST_FORKPROG := $(TEST_DIR)/ingest/ingest_forkprog
$(INGEST_FORKPROG): tests/ingest/ingest_forkprog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $<

# A C++ program: demangled frames, one libdw lookup per distinct address.
INGEST_CXX := $(TEST_DIR)/ingest/cxx_prog
$(INGEST_CXX): tests/ingest/cxx_prog.cc
	@mkdir -p $(dir $@)
	g++ -O2 -g -fno-builtin -o $@ $<

# One count everywhere (tests/ingest/counts_test.sh): a program with every kind of realloc
# and failed allocations, and the record summary printed for any database.
INGEST_COUNTS := $(TEST_DIR)/ingest/counts_prog
$(INGEST_COUNTS): tests/ingest/counts_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<
INGEST_SUMMARY := $(TEST_DIR)/ingest/summary_print
$(INGEST_SUMMARY): tests/ingest/summary_print.c $(OBJ_DIR)/tracer/record_summary.o $(ANALYZER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lsqlite3 -lm -lpthread
# The summary sets the C runtime's live blocks apart with the analyzer's suppression rules.
$(OBJ_DIR)/tracer/record_summary.o: TRACER_DEFS := -I analyzer

ALL_TARGETS += $(INGEST_COUNTS) $(INGEST_SUMMARY)
# The function names of a database against libdw's own lookup.
INGEST_SYMCHECK := $(TEST_DIR)/ingest/symcheck
$(INGEST_SYMCHECK): tests/ingest/symcheck.c $(OBJ_DIR)/tracer/ingest_demangle.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ -lsqlite3 -ldw -lelf

ALL_TARGETS += $(INGEST_SYMCHECK)
ALL_TARGETS += $(INGEST_GEN) $(INGEST_DB_TEST) $(INGEST_CTF_TEST) $(INGEST_PLAN_TEST) $(INGEST_MAP_TEST) $(INGEST_LEDGER_TEST) $(INGEST_WRITER_TEST) \
               $(INGEST_PROG) $(INGEST_CXX) $(INGEST_FORKPROG)

# heapledger's CTF reader against babeltrace2, database for database (tests/ingest/ctfread_test.sh).
.PHONY: check-ingest-ctfread
check-ingest-ctfread: $(BIN_DIR)/heapledger $(INGEST_GEN) $(INGEST_CTF_TEST) $(INGEST_PLAN_TEST) $(LIBHL_SO)
	@$(INGEST_CTF_TEST) --short-filename
	@$(INGEST_PLAN_TEST) --short-filename
	@tests/own_sessiond.sh tests/ingest/ctfread_test.sh $(BIN_DIR)/heapledger $(INGEST_GEN)

.PHONY: check-ingest bench-ingest
check-ingest: $(BIN_DIR)/heapledger $(INGEST_GEN) $(INGEST_DB_TEST) $(INGEST_CTF_TEST) $(INGEST_PLAN_TEST) $(INGEST_MAP_TEST) \
              $(INGEST_LEDGER_TEST) $(INGEST_WRITER_TEST) $(INGEST_PROG) $(INGEST_FORKPROG) $(INGEST_CXX) $(INGEST_COUNTS) $(INGEST_SUMMARY) $(INGEST_SYMCHECK)
	@$(INGEST_DB_TEST) --short-filename
	@$(INGEST_CTF_TEST) --short-filename
	@$(INGEST_PLAN_TEST) --short-filename
	@$(INGEST_MAP_TEST) --short-filename
	@$(INGEST_LEDGER_TEST) --short-filename
	@$(INGEST_WRITER_TEST) --short-filename
	@tests/own_sessiond_test.sh
	@tests/own_sessiond.sh tests/ingest/run_tests.sh $(BIN_DIR)/heapledger $(INGEST_GEN)
	@tests/own_sessiond.sh tests/ingest/corrupt_test.sh $(BIN_DIR)/heapledger $(INGEST_GEN)
	@tests/own_sessiond.sh tests/ingest/ctfread_test.sh $(BIN_DIR)/heapledger $(INGEST_GEN)
	@tests/own_sessiond.sh tests/ingest/interrupt_test.sh $(BIN_DIR)/heapledger $(INGEST_GEN)
	@tests/own_sessiond.sh tests/ingest/counts_test.sh $(BIN_DIR)/heapledger $(INGEST_GEN) $(INGEST_COUNTS) $(INGEST_SUMMARY)
	@tests/own_sessiond.sh tests/ingest/symbols_test.sh $(BIN_DIR)/heapledger $(INGEST_CXX) tests/ingest/cxx_prog.cc \
	    $(TEST_DIR)/ingest $(INGEST_SYMCHECK)

bench-ingest: $(BIN_DIR)/heapledger $(INGEST_GEN)
	@tests/own_sessiond.sh tests/ingest/bench_ingest.sh $(BIN_DIR)/heapledger $(INGEST_GEN)

# SQLite's instructions per block for block_data layouts the store does not use (one, two,
# four, eight blocks per row; a virtual table), under callgrind (tests/ingest/rowcost_bench.sh;
# not in `make bench`: about a minute of callgrind).
INGEST_ROWCOST := $(TEST_DIR)/ingest/rowcost_bench
$(INGEST_ROWCOST): tests/ingest/rowcost_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $^ -lsqlite3
ALL_TARGETS += $(INGEST_ROWCOST)
.PHONY: bench-rowcost
bench-rowcost: $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench $(INGEST_ROWCOST) $(LIBHL_SO)
	@tests/ingest/rowcost_bench.sh $(BIN_DIR)/heapledger $(TEST_DIR)/e2e/record_bench $(INGEST_ROWCOST)

CHECK_TARGETS += check-ingest
BENCH_TARGETS += bench-ingest
-include $(INGEST_OBJS:.o=.d)

# Hostile traces under ASan+UBSan (tests/ingest/fuzz_test.sh): the CLI with the ingest side
# (tracer/ingest_*.c, db.c, collect.c, collectd*.c: everything `collect` runs of ours) built
# with the sanitizers; the rest of the CLI is linked as it is. The decoder child is a fork
# of this binary, so our sink (ingest_source.c) runs instrumented there too.
INGEST_ASAN_OBJS := $(INGEST_SRCS:%=$(OBJ_DIR)/asan/tracer/%.o)
INGEST_ASAN_CLI := $(TEST_DIR)/ingest/heapledger_asan
$(OBJ_DIR)/asan/tracer/%.o: tracer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) -I tracer -MMD -MP -c $< -o $@
$(OBJ_DIR)/asan/tracer/db.o: schemas/heapledger.sql schemas/heapledger_index.sql
# (tracer/module.mk and tracer/bpf/module.mk come later: their objects are named at the
# second expansion.)
.SECONDEXPANSION:
$(INGEST_ASAN_CLI): $$(TRACER_OBJS) $$(filter-out $$(INGEST_OBJS),$$(HL_CLI_OBJS)) $(INGEST_ASAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) -o $@ $^ $(HL_CLI_LIBS)

ALL_TARGETS += $(INGEST_ASAN_CLI)

.PHONY: check-ingest-fuzz
check-ingest-fuzz: $(BIN_DIR)/heapledger $(INGEST_ASAN_CLI) $(INGEST_PROG) $(LIBHL_SO) \
                   $(LIB_DIR)/libheapledger-tp.so
	@tests/ingest/fuzz_test.sh $(INGEST_ASAN_CLI) $(BIN_DIR)/heapledger $(INGEST_PROG) tests/ingest/fuzz_corpus.txt
CHECK_TARGETS += check-ingest-fuzz
-include $(INGEST_ASAN_OBJS:.o=.d)
