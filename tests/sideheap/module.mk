# tests/sideheap/ — the tracer's memory is not the program's: a run under `heapledger record`
# uses the program's heap (and a fixed arena) exactly as the same run untraced does.

SIDEHEAP_DIR := $(TEST_DIR)/sideheap

$(SIDEHEAP_DIR)/arena_work: tests/sideheap/arena_work.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

# Unit tests of the side heap itself (heap-object API, no preload).
$(SIDEHEAP_DIR)/test_sideheap: tests/sideheap/test_sideheap.c $(LIBHL_CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I liballoc -I schemas -o $@ $< $(LIBHL_CORE_A) -lcriterion $(LIBHL_CORE_LIBS)

$(SIDEHEAP_DIR)/test_sideheap_asan: tests/sideheap/test_sideheap.c $(LIB_DIR)/libheapledger_asan.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I liballoc -I schemas -o $@ $< \
	    $(LIB_DIR)/libheapledger_asan.a -lcriterion $(LIBHL_CORE_LIBS)

.PHONY: sideheap-check
sideheap-check: $(SIDEHEAP_DIR)/arena_work $(SIDEHEAP_DIR)/test_sideheap \
                $(SIDEHEAP_DIR)/test_sideheap_asan $(BIN_DIR)/heapledger $(LIBHL_SO) \
                $(LIB_DIR)/libheapledger-tp.so
	@$(SIDEHEAP_DIR)/test_sideheap --jobs 2
	@ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 $(SIDEHEAP_DIR)/test_sideheap_asan --jobs 2
	@BUILD=$(BUILD) tests/sideheap/sideheap_test.sh

CHECK_TARGETS += sideheap-check
