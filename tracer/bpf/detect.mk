# tracer/bpf/detect.mk — can this machine build the BPF part? Included by tracer/bpf/module.mk
# and tests/bpf/module.mk (whichever comes first defines it).
ifndef HL_BPF_DETECTED
HL_BPF_DETECTED := 1
BPF_VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
HL_BPF_MISSING := $(strip \
    $(if $(wildcard $(BPF_VMLINUX_BTF)),,BTF ($(BPF_VMLINUX_BTF))) \
    $(if $(shell command -v bpftool 2>/dev/null),,bpftool) \
    $(if $(shell command -v clang 2>/dev/null),,clang) \
    $(if $(wildcard /usr/include/bpf/libbpf.h),,libbpf-dev))
HL_BPF_ENABLED := $(if $(HL_BPF_MISSING),0,1)
BPF_OUT := $(BUILD)/bpf
HL_BPF_OBJ := $(OBJ_DIR)/tracer/bpf
# What the recorder links for hl_kernel_* (kernel.h).
HL_BPF_KERNEL_OBJS := $(if $(filter 1,$(HL_BPF_ENABLED)),\
    $(HL_BPF_OBJ)/kernel.o $(HL_BPF_OBJ)/kernel_store.o $(HL_BPF_OBJ)/privilege.o,\
    $(HL_BPF_OBJ)/kernel_none.o)
# The run-database module (tracer/db.c), when this tree has it.
HL_BPF_DB_OBJ := $(if $(wildcard tracer/db.c),$(OBJ_DIR)/tracer/db.o)
HL_BPF_LIBS := $(if $(filter 1,$(HL_BPF_ENABLED)),-lbpf -lelf -lz) -lsqlite3 -lpthread
endif
