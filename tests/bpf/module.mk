# tests/bpf/ — kernel events and attach mode, loaded for real (make check runs as root).
include tracer/bpf/detect.mk

BPF_TEST_DIR := $(TEST_DIR)/bpf
BPF_TEST_TOOLS := $(BPF_TEST_DIR)/krun $(BPF_TEST_DIR)/kprog $(BPF_TEST_DIR)/kbig $(BPF_TEST_DIR)/leaky $(BPF_TEST_DIR)/kchurn

$(BPF_TEST_DIR)/krun: tests/bpf/krun.c $(HL_BPF_KERNEL_OBJS) $(HL_BPF_DB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer -o $@ $^ $(HL_BPF_LIBS)

$(BPF_TEST_DIR)/%: tests/bpf/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

.PHONY: bpf-check
BPF_UNIT_TESTS := $(if $(filter 1,$(HL_BPF_ENABLED)),$(BPF_TEST_DIR)/attach_model_test)
bpf-check: $(BPF_TEST_TOOLS) $(BIN_DIR)/heapledger $(BPF_UNIT_TESTS)
	@for t in $(BPF_UNIT_TESTS); do $$t --jobs 1 || exit 1; done
	@HL_BPF_ENABLED=$(HL_BPF_ENABLED) HL_BPF_MISSING="$(HL_BPF_MISSING)" BUILD=$(BUILD) \
	  tests/bpf/run.sh

CHECK_TARGETS += bpf-check

# The attach test wants stacks beyond the caller: frame pointers.
$(BPF_TEST_DIR)/leaky: tests/bpf/leaky.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fno-omit-frame-pointer -o $@ $<

# Cost of kernel events on an allocation-heavy run (docs/PERFORMANCE.md, "Kernel events").
.PHONY: bpf-bench
bpf-bench: $(BPF_TEST_TOOLS)
	@if [ "$(HL_BPF_ENABLED)" = 1 ]; then BUILD=$(BUILD) tests/bpf/bench.sh; \
	 else echo "bpf-bench: skipped (missing $(HL_BPF_MISSING))"; fi
BENCH_TARGETS += bpf-bench

# Attach mode's bookkeeping (no BPF needed): Criterion.
$(BPF_TEST_DIR)/attach_model_test: tests/bpf/attach_model_test.c $(HL_BPF_OBJ)/attach_model.o \
                                   $(HL_BPF_OBJ)/ptrmap.o
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I tracer/bpf -o $@ $^ -lcriterion
