# tracer/ — the heapledger CLI front and the recording pipeline.
# Other modules add objects and libraries to the CLI through HL_CLI_OBJS / HL_CLI_LIBS
# (this fragment is included last, see the top-level Makefile).

HL_CLI := $(BIN_DIR)/heapledger
HL_TP_LIB := $(LIB_DIR)/libheapledger-tp.so
TRACER_OBJS := $(OBJ_DIR)/tracer/main.o

# `heapledger record`: session daemon and session control (liblttng-ctl), the traced
# program's environment, the summary (reads the run database with SQLite).
HL_RECORD_OBJS := $(addprefix $(OBJ_DIR)/tracer/,record.o record_env.o record_ns.o \
                    procstat.o fstree.o record_reaper.o record_rotate.o record_schedule.o record_stats.o record_summary.o session.o \
                    sessiond.o)
TRACER_OBJS += $(HL_RECORD_OBJS)
# record validates --options with the allocator's own parser (liballoc/options.c).
HL_CLI_OBJS += $(LIBHL_CORE_A)
HL_CLI_LIBS += -llttng-ctl -lsqlite3 $(LIBHL_CORE_LIBS)

# Where an installed heapledger finds its libraries (record_env.c).
$(OBJ_DIR)/tracer/record_env.o: TRACER_DEFS := -DHL_LIBDIR=\"$(PREFIX)/lib\"

$(OBJ_DIR)/tracer/%.o: tracer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(TRACER_DEFS) -I tracer -MMD -MP -c $< -o $@

$(HL_CLI): $(TRACER_OBJS) $(HL_CLI_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $^ $(HL_CLI_LIBS)

# The probe provider: preloaded by `record` only, so untraced runs never load liblttng-ust.
$(HL_TP_LIB): tracer/tp/probe.c schemas/heapledger_tp.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fPIC -shared -Wl,-soname,libheapledger-tp.so -o $@ $< -llttng-ust

ALL_TARGETS += $(HL_CLI) $(HL_TP_LIB)

# Every command's man page (docs/man/heapledger-*.1) is installed from here.
HL_MAN_PAGES := $(wildcard docs/man/*.1)

.PHONY: install-tracer
install-tracer: $(HL_CLI) $(HL_TP_LIB)
	install -D -m 755 $(HL_CLI) $(DESTDIR)$(PREFIX)/bin/heapledger
	install -D -m 755 $(HL_TP_LIB) $(DESTDIR)$(PREFIX)/lib/libheapledger-tp.so
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	$(if $(HL_MAN_PAGES),install -m 644 $(HL_MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/)
INSTALL_TARGETS += install-tracer

-include $(TRACER_OBJS:.o=.d)
