# liballoc/ — the allocator.
#
# Three builds of the same sources:
#   pic   -> build/lib/libheapledger.so and libheapledger.a (tracepoints compiled in when the
#            LTTng backend liballoc/trace_lttng.c exists)
#   core  -> build/lib/libheapledger_core.a and libheapledger_core.so (heap-object API, no
#            malloc shim, no tracing: for programs of their own, tests, benchmarks and the
#            analyzer's replay) and libheapledger-notrace.so
#   asan  -> objects for the unit tests under ASan+UBSan

# symbolizer.c is a program of its own (heapledger-symbolize, below), not part of the library.
ALLOC_SRCS := $(filter-out liballoc/trace_lttng.c liballoc/symbolizer.c,$(wildcard liballoc/*.c))
ALLOC_CORE_SRCS := $(filter-out liballoc/shim.c,$(ALLOC_SRCS))
ALLOC_TRACE_SRCS := $(wildcard liballoc/trace_lttng.c)

ALLOC_CFLAGS := $(BASE_CFLAGS) -DHL_BUILDING_LIBRARY -fPIC -fvisibility=hidden -fno-builtin-malloc \
	-fno-builtin-calloc -fno-builtin-free -fno-builtin-realloc
# -ffunction-sections: libheapledger.so's text is ordered by liballoc/hot_text.ld (what an
# untraced program runs first, so that it shares one 64 KiB fault-around window).
ALLOC_PIC_CFLAGS := $(ALLOC_CFLAGS) $(if $(ALLOC_TRACE_SRCS),-DHL_TRACE_LTTNG) -ffunction-sections
ALLOC_HOT_LD := liballoc/hot_text.ld
# Libraries every build needs (stack capture), and those of the tracing backend.
# Programs linking libheapledger_core.a link $(LIBHL_CORE_LIBS) after it. The shared libraries
# do not link libunwind: they dlopen it at the first stack capture (unwind_load.c), so that a
# program that captures no stack never maps it; the archives link it (unwind_linked.o, below).
LIBHL_CORE_LIBS := -lunwind -lpthread
LIBHL_SO_LIBS := -ldl -lpthread
ALLOC_TRACE_LIBS ?= $(if $(ALLOC_TRACE_SRCS),-ldl)

ALLOC_PIC_OBJS  := $(patsubst liballoc/%.c,$(OBJ_DIR)/liballoc/pic/%.o,$(ALLOC_SRCS) $(ALLOC_TRACE_SRCS))
ALLOC_CORE_OBJS := $(patsubst liballoc/%.c,$(OBJ_DIR)/liballoc/core/%.o,$(ALLOC_CORE_SRCS))
ALLOC_SHIM_CORE := $(OBJ_DIR)/liballoc/core/shim.o
ALLOC_ASAN_OBJS := $(patsubst liballoc/%.c,$(OBJ_DIR)/liballoc/asan/%.o,$(ALLOC_CORE_SRCS))
# The archives' libunwind: unwind_load.c built to call unw_backtrace directly (a static program
# cannot dlopen), instead of the shared libraries' dlopen.
ALLOC_ARCHIVE = $(filter-out %/unwind_load.o,$(1)) $(dir $(firstword $(1)))unwind_linked.o

LIBHL_SO      := $(LIB_DIR)/libheapledger.so
LIBHL_A       := $(LIB_DIR)/libheapledger.a
LIBHL_CORE_A  := $(LIB_DIR)/libheapledger_core.a
LIBHL_CORE_SO := $(LIB_DIR)/libheapledger_core.so
LIBHL_NOTRACE := $(LIB_DIR)/libheapledger-notrace.so

$(OBJ_DIR)/liballoc/pic/%.o: liballoc/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_PIC_CFLAGS) -MMD -MP -c $< -o $@

$(OBJ_DIR)/liballoc/core/%.o: liballoc/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_CFLAGS) -MMD -MP -c $< -o $@

$(OBJ_DIR)/liballoc/asan/%.o: liballoc/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_CFLAGS) -O1 $(SAN_FLAGS) -MMD -MP -c $< -o $@

$(OBJ_DIR)/liballoc/pic/unwind_linked.o: liballoc/unwind_load.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_PIC_CFLAGS) -DHL_UNWIND_LINKED -MMD -MP -c $< -o $@

$(OBJ_DIR)/liballoc/core/unwind_linked.o: liballoc/unwind_load.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_CFLAGS) -DHL_UNWIND_LINKED -MMD -MP -c $< -o $@

$(OBJ_DIR)/liballoc/asan/unwind_linked.o: liballoc/unwind_load.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_CFLAGS) -O1 $(SAN_FLAGS) -DHL_UNWIND_LINKED -MMD -MP -c $< -o $@

$(LIBHL_SO): $(ALLOC_PIC_OBJS) $(ALLOC_HOT_LD)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(ALLOC_PIC_OBJS) -Wl,-T,$(ALLOC_HOT_LD) -Wl,-z,now -Wl,-soname,libheapledger.so $(ALLOC_TRACE_LIBS) $(LIBHL_SO_LIBS)

$(LIBHL_NOTRACE): $(ALLOC_CORE_OBJS) $(ALLOC_SHIM_CORE)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -Wl,-z,now $(LIBHL_SO_LIBS)

$(LIBHL_A): $(call ALLOC_ARCHIVE,$(ALLOC_PIC_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBHL_CORE_A): $(call ALLOC_ARCHIVE,$(ALLOC_CORE_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The heap-object API as a shared library: its exports are heapledger.h's hl_heap_* and
# hl_options_* (heapledger_core.map), so linking it takes over nothing of the program.
$(LIBHL_CORE_SO): $(ALLOC_CORE_OBJS) liballoc/heapledger_core.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(ALLOC_CORE_OBJS) -Wl,-z,now -Wl,-soname,libheapledger_core.so \
	    -Wl,--version-script,liballoc/heapledger_core.map $(LIBHL_SO_LIBS)

$(LIB_DIR)/libheapledger_asan.a: $(call ALLOC_ARCHIVE,$(ALLOC_ASAN_OBJS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

.PHONY: size-tables
size-tables: ## regenerate liballoc/size_tables.c from schemas/classes.def
	python3 liballoc/gen_size_tables.py schemas/classes.def > liballoc/size_tables.c

# The helper a hardened-mode report execs to name its frames (function, file:line) with libdw,
# so that neither libdw nor its allocations are ever in the reporting process. A report finds
# it at $HEAPLEDGER_SYMBOLIZER, else next to the library's directory (../bin).
HL_SYMBOLIZER := $(BIN_DIR)/heapledger-symbolize
$(HL_SYMBOLIZER): liballoc/symbolizer.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -o $@ $< -ldw -lelf

ALL_TARGETS += $(LIBHL_SO) $(LIBHL_A) $(LIBHL_CORE_A) $(LIBHL_CORE_SO) $(LIBHL_NOTRACE) $(HL_SYMBOLIZER)

# The pkg-config files name PREFIX: they are written by the install itself, so that a later
# install with another PREFIX never ships a stale one (docs/allocator.md, "Install"):
#   heapledger.pc          the header only (a program run under LD_PRELOAD: links nothing)
#   heapledger-core.pc     the heap-object API, libheapledger_core.{so,a}
#   heapledger-preload.pc  the malloc replacement linked in on purpose, libheapledger.{so,a}
# RPATH=1 (default) puts -Wl,-rpath,PREFIX/lib in their Libs; RPATH=0 leaves it out (then
# PREFIX/lib must be known to the dynamic linker: ldconfig).
RPATH ?= 1
HL_RPATH_FLAG := -Wl,-rpath,$${libdir}
HL_PC_RPATH = $(if $(filter 1,$(RPATH)),$(HL_RPATH_FLAG))
HL_PCS := heapledger heapledger-core heapledger-preload
.PHONY: install-liballoc
install-liballoc: $(LIBHL_SO) $(LIBHL_A) $(LIBHL_CORE_A) $(LIBHL_CORE_SO) $(HL_SYMBOLIZER) \
		$(patsubst %,liballoc/%.pc.in,$(HL_PCS))
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(LIBHL_SO) $(LIBHL_CORE_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(LIBHL_A) $(LIBHL_CORE_A) $(DESTDIR)$(PREFIX)/lib/
	install -D -m 755 $(HL_SYMBOLIZER) $(DESTDIR)$(PREFIX)/bin/heapledger-symbolize
	install -m 644 liballoc/heapledger.h $(DESTDIR)$(PREFIX)/include/
	for pc in $(HL_PCS); do \
	  sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	      -e 's|@RPATH@|$(HL_PC_RPATH)|g' -e 's|  *-l| -l|' liballoc/$$pc.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc || exit 1; \
	done
INSTALL_TARGETS += install-liballoc

-include $(ALLOC_PIC_OBJS:.o=.d) $(ALLOC_CORE_OBJS:.o=.d) $(ALLOC_ASAN_OBJS:.o=.d)
-include $(patsubst %,$(OBJ_DIR)/liballoc/%/unwind_linked.d,pic core asan)
