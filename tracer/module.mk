# tracer/ — the heapledger CLI front and the recording pipeline.
# Other modules add objects and libraries to the CLI through HL_CLI_OBJS / HL_CLI_LIBS
# (this fragment is included last, see the top-level Makefile).

HL_CLI := $(BIN_DIR)/heapledger
TRACER_OBJS := $(OBJ_DIR)/tracer/main.o

$(OBJ_DIR)/tracer/%.o: tracer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -I tracer -MMD -MP -c $< -o $@

$(HL_CLI): $(TRACER_OBJS) $(HL_CLI_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(HL_CLI_LIBS)

ALL_TARGETS += $(HL_CLI)
-include $(TRACER_OBJS:.o=.d)
