# analyzer/ — heapledger report | diff | replay | history.
# The objects join the CLI through HL_CLI_OBJS / HL_CLI_LIBS (tracer/module.mk links it).

ANALYZER_SRCS := $(wildcard analyzer/*.c)
ANALYZER_OBJS := $(patsubst analyzer/%.c,$(OBJ_DIR)/analyzer/%.o,$(ANALYZER_SRCS))
ANALYZER_CFLAGS := $(BASE_CFLAGS) -I analyzer -I tracer

$(OBJ_DIR)/analyzer/%.o: analyzer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ANALYZER_CFLAGS) -MMD -MP -c $< -o $@

# The library part (everything but the command entry points) is also what the analyzer's
# unit tests link.
ANALYZER_LIB := $(LIB_DIR)/libhl_analyzer.a
$(ANALYZER_LIB): $(filter-out $(OBJ_DIR)/analyzer/cmd_%.o,$(ANALYZER_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# replay runs on heap objects of the allocator core (liballoc/module.mk builds it; its
# variables are not defined yet here: that fragment sorts after this one).
HL_CORE_A := $(LIB_DIR)/libheapledger_core.a
HL_CLI_OBJS += $(filter $(OBJ_DIR)/analyzer/cmd_%.o,$(ANALYZER_OBJS)) $(ANALYZER_LIB) $(HL_CORE_A)
HL_CLI_LIBS += -lsqlite3 -lm -lunwind -lpthread
ALL_TARGETS += $(ANALYZER_LIB)
-include $(ANALYZER_OBJS:.o=.d)

# The HTML report's style and script are built into render_html_asset.o (.incbin).
$(OBJ_DIR)/analyzer/render_html_asset.o: analyzer/assets/report.css analyzer/assets/report.js
