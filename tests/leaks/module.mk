# tests/leaks/ — the leak scan at exit (liballoc/leakscan.c): a program whose blocks have known
# classes, run under the preloaded library (leaks=1), under `heapledger record` (the classes in
# the run database and in every report) and under valgrind's memcheck for comparison.

LEAKS_DIR := $(TEST_DIR)/leaks

$(LEAKS_DIR)/leak_known: tests/leaks/leak_known.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

$(LEAKS_DIR)/leak_list: tests/leaks/leak_list.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

$(LEAKS_DIR)/leak_large: tests/leaks/leak_large.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

.PHONY: leaks-check
leaks-check: $(LEAKS_DIR)/leak_known $(LEAKS_DIR)/leak_list $(LEAKS_DIR)/leak_large \
             $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger.so \
             $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/leaks/leaks_test.sh

# The classes in record's summary, diff and the fleet view (report --summary).
.PHONY: leaks-reports-check
leaks-reports-check: $(LEAKS_DIR)/leak_list $(BIN_DIR)/heapledger $(LIB_DIR)/libheapledger.so \
                     $(LIB_DIR)/libheapledger-tp.so
	@BUILD=$(BUILD) tests/leaks/classes_reports_test.sh

CHECK_TARGETS += leaks-check leaks-reports-check
