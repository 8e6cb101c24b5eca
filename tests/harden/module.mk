# tests/harden/ — hardened mode: Criterion death tests per error kind and tier on heap
# objects, a corpus of small buggy programs run under LD_PRELOAD (each names the first report
# line it must produce), and real programs under harden=1 (no false positive, same output).

HARDEN_DIR  := $(TEST_DIR)/harden
HARDEN_TEST := $(HARDEN_DIR)/harden_tests
HARDEN_BUGS_C   := $(wildcard tests/harden/bugs/*.c)
HARDEN_BUGS_CXX := $(wildcard tests/harden/bugs/*.cc)
HARDEN_BUGS := $(patsubst tests/harden/bugs/%.c,$(HARDEN_DIR)/bugs/%,$(HARDEN_BUGS_C)) \
               $(patsubst tests/harden/bugs/%.cc,$(HARDEN_DIR)/bugs/%,$(HARDEN_BUGS_CXX))

# harden=full: programs whose bug faults at the access (tests/harden/full/, full_guard.sh).
HARDEN_FULL := $(patsubst tests/harden/full/%.c,$(HARDEN_DIR)/full/%,$(wildcard tests/harden/full/*.c)) \
               $(patsubst tests/harden/full/%.cc,$(HARDEN_DIR)/full/%,$(wildcard tests/harden/full/*.cc))
$(HARDEN_DIR)/full/%: tests/harden/full/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O0 -g -fno-builtin -w -o $@ $<

$(HARDEN_DIR)/full/%: tests/harden/full/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O0 -g -w -o $@ $<

# Transparency: signals the program raises or is sent, and descriptors (signals.c, fds.c).
HARDEN_PROGS := $(HARDEN_DIR)/signals $(HARDEN_DIR)/fds $(HARDEN_DIR)/entry_stacks
$(HARDEN_DIR)/signals: tests/harden/signals.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $<

# Every entry point's stacks start at the program's call (entry_stacks.sh): each function
# its own frame, no tail calls.
$(HARDEN_DIR)/entry_stacks: tests/harden/entry_stacks.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -fno-builtin -fno-optimize-sibling-calls -w -o $@ $< -lstdc++

$(HARDEN_DIR)/fds: tests/harden/fds.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(HARDEN_TEST): tests/harden/test_harden.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fno-optimize-sibling-calls -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# The call-site cache of hardened stacks (stack_cache.c): cached ids equal full unwinds'.
HARDEN_STACK_TEST := $(HARDEN_DIR)/stack_cache_tests
$(HARDEN_STACK_TEST): tests/harden/test_stack_cache.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fno-optimize-sibling-calls -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion \
	    $(LIBHL_CORE_LIBS)

# Stacks that start at the allocator's entry frame (stack_entry.c): the program's call site.
HARDEN_ENTRY_TEST := $(HARDEN_DIR)/stack_entry_tests
$(HARDEN_ENTRY_TEST): tests/harden/test_stack_entry.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fno-optimize-sibling-calls -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion \
	    $(LIBHL_CORE_LIBS)

# heapledger's own stack walker (unwind_fast.c) against libunwind on frames of every shape.
HARDEN_UNWIND_TEST := $(HARDEN_DIR)/unwind_fast_tests
$(HARDEN_UNWIND_TEST): tests/harden/test_unwind_fast.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fno-optimize-sibling-calls -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion \
	    $(LIBHL_CORE_LIBS)

# The per-thread buffers of a hardened heap (harden_cache.h): double frees, writes after free,
# thread exit and fork with blocks in a thread's quarantine buffer or reuse cache.
HARDEN_CACHE_TEST := $(HARDEN_DIR)/harden_cache_tests
$(HARDEN_CACHE_TEST): tests/harden/test_harden_cache.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# The quarantine's size: harden=1's follows the heap, an explicit one is kept, the ring's
# wrap point follows its capacity in FIFO order.
HARDEN_QUARANTINE_TEST := $(HARDEN_DIR)/quarantine_tests
$(HARDEN_QUARANTINE_TEST): tests/harden/test_quarantine.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# The out-of-line copies of tiny slots' trailers (metacopy.c): per slab, by slot.
HARDEN_METACOPY_TEST := $(HARDEN_DIR)/metacopy_tests
$(HARDEN_METACOPY_TEST): tests/harden/test_metacopy.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# The fill-pattern scan of every canary and poison check (pattern.c) against a reference.
HARDEN_PATTERN_TEST := $(HARDEN_DIR)/pattern_tests
$(HARDEN_PATTERN_TEST): tests/harden/test_pattern.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# A hardened tiny slot's state byte (harden.c, tiny.h) and the commit of racing frees.
HARDEN_SLOT_STATE_TEST := $(HARDEN_DIR)/slot_state_tests
$(HARDEN_SLOT_STATE_TEST): tests/harden/test_slot_state.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

# Bug programs: -O0 so that the bugs stay as written.
$(HARDEN_DIR)/bugs/%: tests/harden/bugs/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O0 -g -fno-builtin -w -o $@ $<

$(HARDEN_DIR)/bugs/%: tests/harden/bugs/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O0 -g -fsized-deallocation -w -o $@ $<

.PHONY: check-harden
check-harden: $(HARDEN_TEST) $(HARDEN_BUGS) $(HARDEN_FULL) $(LIBHL_SO) $(TEST_DIR)/stress $(BIN_DIR)/heapledger \
	$(AN_REPLAY_REC) $(HARDEN_PROGS) $(HL_SYMBOLIZER) $(HARDEN_STACK_TEST) $(HARDEN_ENTRY_TEST) $(HARDEN_CACHE_TEST) $(HARDEN_QUARANTINE_TEST) \
	$(HARDEN_METACOPY_TEST) $(HARDEN_PATTERN_TEST) $(HARDEN_SLOT_STATE_TEST)
	HEAPLEDGER_SYMBOLIZER=$(abspath $(HL_SYMBOLIZER)) $(HARDEN_TEST) --jobs 2
	$(HARDEN_STACK_TEST) --jobs 2
	$(HARDEN_ENTRY_TEST) --jobs 2
	$(HARDEN_CACHE_TEST) --jobs 2
	$(HARDEN_QUARANTINE_TEST) --jobs 2
	$(HARDEN_METACOPY_TEST) --jobs 2
	$(HARDEN_PATTERN_TEST) --jobs 2
	$(HARDEN_SLOT_STATE_TEST) --jobs 2
	tests/harden/signals.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)/signals
	tests/harden/fds.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)/fds
	tests/harden/entry_stacks.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)/entry_stacks
	tests/harden/replay_absurd.sh $(BIN_DIR)/heapledger $(AN_REPLAY_REC) schemas $(HARDEN_DIR)
	tests/harden/run_bugs.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)/bugs tests/harden/bugs
	tests/harden/real_programs.sh $(abspath $(LIBHL_SO))
	tests/harden/full_guard.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)/full tests/harden/full
	tests/harden/real_programs.sh $(abspath $(LIBHL_SO)) harden=full,check_at_exit=1
	@# threads, cross-thread frees, thread churn, fork: no report, contents intact
	HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD=$(abspath $(LIBHL_SO)) $(TEST_DIR)/stress 1
	HEAPLEDGER_OPTIONS=harden=1,rotate=1,quarantine=64K LD_PRELOAD=$(abspath $(LIBHL_SO)) \
	    $(TEST_DIR)/stress 1
	@# 8 threads, cross-thread reallocs and frees (the stress that once reported a false
	@# use-after-free), a few seconds; bench-harden-stress runs it for minutes
	HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD=$(abspath $(LIBHL_SO)) $(TEST_DIR)/stress 1 8 25000
	@# harden=full: guarded runs freed and reallocated across threads, thread churn, fork
	HEAPLEDGER_OPTIONS=harden=full LD_PRELOAD=$(abspath $(LIBHL_SO)) $(TEST_DIR)/stress 1 4 2000

# Minutes: the cross-thread stress under harden=1 with 8 threads (part of `make bench`).
.PHONY: bench-harden-stress
bench-harden-stress: $(LIBHL_SO) $(TEST_DIR)/stress
	HEAPLEDGER_OPTIONS=harden=1 LD_PRELOAD=$(abspath $(LIBHL_SO)) nice -n 10 $(TEST_DIR)/stress 8 8
	HEAPLEDGER_OPTIONS=harden=1,trim_keep=64 LD_PRELOAD=$(abspath $(LIBHL_SO)) nice -n 10 \
	    $(TEST_DIR)/stress 4 8
BENCH_TARGETS += bench-harden-stress

# Slow (about 15 minutes): CPython's regression tests under harden=1 against the same tests
# without heapledger (docs/hardening.md). Installs libpython3.11-testsuite when missing.
.PHONY: check-cpython
check-cpython: $(LIBHL_SO)
	tests/harden/cpython.sh $(abspath $(LIBHL_SO)) $(HARDEN_DIR)

# Slow (a minute or two): gcc -O2 of a real file and a python3 workload under harden=full,
# against the same runs without heapledger: same output, no report; prints time and peak RSS
# (docs/hardening.md, "harden=full").
.PHONY: check-harden-full
check-harden-full: $(LIBHL_SO)
	tests/harden/full_big.sh $(abspath $(LIBHL_SO))

# heapledger's stack walker against libunwind on real programs (unwind=check), hardened and
# recorded (tests/harden/unwind_check.sh, ~15 s).
.PHONY: unwind-check
unwind-check: $(BIN_DIR)/heapledger $(LIBHL_SO) $(LIB_DIR)/libheapledger-tp.so $(HARDEN_UNWIND_TEST)
	$(HARDEN_UNWIND_TEST) --jobs 2
	@BUILD=$(BUILD) tests/harden/unwind_check.sh

CHECK_TARGETS += check-harden unwind-check
