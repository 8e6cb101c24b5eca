# tests/fleet/ — the tracing daemon for a fleet: `record --relay` streaming to our own
# lttng-relayd on 127.0.0.1, `collectd --relay-dir`, three traced hosts in network namespaces
# of their own (hosts_test.sh, root), and the fleet view `report --summary`.

.PHONY: check-fleet check-fleet-relay check-fleet-summary check-fleet-memory
check-fleet: check-fleet-relay check-fleet-summary check-fleet-memory
check-fleet-relay: $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/relay_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/hosts_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/relay_gone_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/live_attach_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen

CHECK_TARGETS += check-fleet

# collectd's peak RSS for one session does not grow with the trace (0.5 M vs 2 M events).
check-fleet-memory: $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/memory_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen

# A program with known leaks and a double free, recorded by summary_test.sh.
FLEET_PROG := $(TEST_DIR)/fleet/fleet_prog
$(FLEET_PROG): tests/fleet/fleet_prog.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O0 -o $@ $<
ALL_TARGETS += $(FLEET_PROG)
check-fleet-summary: $(BIN_DIR)/heapledger $(FLEET_PROG)
	@tests/fleet/summary_test.sh $(BIN_DIR)/heapledger $(FLEET_PROG)

# collectd's throughput and memory with 1, 2 and 4 sessions at once (make bench).
.PHONY: bench-fleet
bench-fleet: $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@mkdir -p $(BUILD)/bench
	@tests/fleet/bench.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen $(BUILD)/bench/fleet.md
BENCH_TARGETS += bench-fleet
