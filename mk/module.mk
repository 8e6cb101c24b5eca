# mk/ — project-wide targets: the demo.
#
# `make demo` (after deps and all): record a real program (python3 on a small workload) with
# the preloaded allocator and the tracing pipeline, then print the report.

DEMO_DIR := $(BUILD)/demo
DEMO_DB  := $(DEMO_DIR)/python-demo.db

.PHONY: demo-run
demo-run:
	@mkdir -p $(DEMO_DIR)
	@rm -f $(DEMO_DB)
	$(BIN_DIR)/heapledger record -o $(DEMO_DB) -- /usr/bin/python3 tests/demo/workload.py
	$(BIN_DIR)/heapledger report $(DEMO_DB)
	@echo
	@echo "demo: run database $(DEMO_DB); try: $(BIN_DIR)/heapledger report --html $(DEMO_DIR)/report.html $(DEMO_DB)"
