# tests/ — unit tests (Criterion, on heap objects; also under ASan+UBSan) and the preload
# tests (stress and real programs under LD_PRELOAD).

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(TEST_DIR)/unit_tests
UNIT_ASAN := $(TEST_DIR)/unit_tests_asan
UNIT_CFLAGS := $(TEST_CFLAGS) -I tests/unit

$(UNIT_BIN): $(UNIT_SRCS) $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $(UNIT_SRCS) $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

$(UNIT_ASAN): $(UNIT_SRCS) $(LIB_DIR)/libheapledger_asan.a
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -O1 $(SAN_FLAGS) -o $@ $(UNIT_SRCS) $(LIB_DIR)/libheapledger_asan.a \
	  -lcriterion $(LIBHL_CORE_LIBS)

.PHONY: check-unit check-asan check-preload
check-unit: $(UNIT_BIN)
	$(UNIT_BIN) --jobs 2

check-asan: $(UNIT_ASAN)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_ASAN) --jobs 2

PRELOAD_PROGS := $(TEST_DIR)/stress $(TEST_DIR)/api_preload $(TEST_DIR)/arena_env \
	$(TEST_DIR)/absurd_sizes $(TEST_DIR)/absurd_new $(TEST_DIR)/thread_exit $(TEST_DIR)/remote_free \
	$(TEST_DIR)/tcap_phases
$(TEST_DIR)/tcap_phases: tests/preload/tcap_phases.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(TEST_DIR)/remote_free: tests/preload/remote_free.c liballoc/heapledger.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(TEST_DIR)/thread_exit: tests/preload/thread_exit.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(TEST_DIR)/absurd_sizes: tests/preload/absurd_sizes.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lcriterion

$(TEST_DIR)/absurd_new: tests/preload/absurd_new.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Werror -o $@ $<

$(TEST_DIR)/arena_env: tests/preload/arena_env.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

$(TEST_DIR)/stress: tests/preload/stress.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(TEST_DIR)/api_preload: tests/preload/api_preload.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lcriterion

check-preload: $(PRELOAD_PROGS) $(LIBHL_SO)
	LD_PRELOAD=$(abspath $(LIBHL_SO)) $(TEST_DIR)/api_preload --jobs 2
	tests/preload/run_stress.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/stress
	tests/preload/absurd_sizes.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/absurd_sizes $(TEST_DIR)/absurd_new
	tests/preload/thread_exit.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/thread_exit
	tests/preload/remote_free.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/remote_free
	tests/preload/classmap_limits.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/stress
	tests/preload/tcap_phases.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/tcap_phases
	tests/preload/real_programs.sh $(abspath $(LIBHL_SO))
	tests/preload/options_env.sh $(abspath $(LIBHL_SO)) $(TEST_DIR)/arena_env
	tests/preload/lazy_load.sh $(abspath $(LIBHL_SO))
	tests/preload/hot_text.sh $(abspath $(LIBHL_SO))
	tests/preload/install_test.sh

CHECK_TARGETS += check-unit check-asan check-preload
