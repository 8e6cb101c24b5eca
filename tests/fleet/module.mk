# tests/fleet/ — the tracing daemon for a fleet: `record --relay` streaming to our own
# lttng-relayd on 127.0.0.1, `collectd --relay-dir`, and the fleet view `report --summary`.

.PHONY: check-fleet
check-fleet: $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen
	@tests/fleet/relay_test.sh $(BIN_DIR)/heapledger $(TEST_DIR)/ingest/ingest_gen

CHECK_TARGETS += check-fleet
