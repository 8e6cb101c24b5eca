# tests/sideheap/ — the tracer's memory is not the program's: a run under `heapledger record`
# uses the program's heap (and a fixed arena) exactly as the same run untraced does.

SIDEHEAP_DIR := $(TEST_DIR)/sideheap

$(SIDEHEAP_DIR)/arena_work: tests/sideheap/arena_work.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

.PHONY: sideheap-check
sideheap-check: $(SIDEHEAP_DIR)/arena_work $(BIN_DIR)/heapledger $(LIBHL_SO) $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/sideheap/sideheap_test.sh

CHECK_TARGETS += sideheap-check
