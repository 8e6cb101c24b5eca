# heapledger — one entry point: all, check, check-asan, bench, demo, install, deps, format, clean.
# Each part of the tree adds its own rules in a module.mk fragment; this file holds the
# shared flags and the top-level targets only.

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= gcc
VERSION := 0.1.0

# Build levels (see liballoc/internal.h): HL_DEBUG=1 enables the debug asserts.
HL_DEBUG ?= 0

WARN     := -Wall -Wextra -Werror
CSTD     := -std=gnu11
OPT      ?= -O2
BASE_CFLAGS := $(CSTD) $(WARN) $(OPT) -g -D_GNU_SOURCE -DHL_VERSION=\"$(VERSION)\" \
               -DHL_DEBUG=$(HL_DEBUG) -I liballoc -I schemas
# Tests and benchmarks: the compiler must not fold malloc/free pairs away.
TEST_CFLAGS := $(BASE_CFLAGS) -fno-builtin
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_DIR := $(BUILD)/lib
BIN_DIR := $(BUILD)/bin
OBJ_DIR := $(BUILD)/obj
TEST_DIR := $(BUILD)/tests

# Targets that module fragments extend.
ALL_TARGETS     :=
CHECK_TARGETS   :=
BENCH_TARGETS   :=
INSTALL_TARGETS :=
CLEAN_EXTRA     :=

.PHONY: all check check-asan bench demo install deps format clean
.DEFAULT_GOAL := all

# A build on a machine without the Debian packages of mk/packages.txt says what to do instead
# of a compiler's "No such file". check, bench and demo run `make deps` first, then build in a
# second make: the test is made there, once the packages are in.
HL_DEP_HEADERS ?= lttng/tracepoint.h lttng/lttng.h babeltrace2/babeltrace.h sqlite3.h \
                  libunwind.h elfutils/libdw.h criterion/criterion.h
HL_DEP_TRIPLET := $(shell $(CC) -dumpmachine 2>/dev/null)
HL_DEP_MISSING := $(strip $(foreach h,$(HL_DEP_HEADERS),$(if $(wildcard /usr/include/$(h) \
                  /usr/include/$(HL_DEP_TRIPLET)/$(h)),,$(h))))
ifneq ($(HL_DEP_MISSING),)
ifneq ($(filter-out deps check bench demo clean format,$(or $(MAKECMDGOALS),all)),)
$(error missing build dependencies ($(HL_DEP_MISSING)): run `make deps` as root (it installs \
the Debian packages of mk/packages.txt), or `make demo` / `make check`, which run it first)
endif
endif

include $(sort $(wildcard */module.mk */*/module.mk))

all: $(ALL_TARGETS)

deps:
	@mk/deps.sh

# `make check` sets up everything itself (packages, services), builds, then runs every test.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

check: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@rm -f $(BUILD)/check/summary.txt
	@BUILD=$(BUILD) MAKE="$(MAKE)" mk/check.sh $(CHECK_TARGETS) ; rc=$$?; \
	 if [ $$rc -eq 0 ]; then echo "check: all suites passed"; else echo "check: FAILED"; fi; exit $$rc

bench: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory $(BENCH_TARGETS)

demo: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@$(MAKE) --no-print-directory demo-run

install: all $(INSTALL_TARGETS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(CLEAN_EXTRA)
