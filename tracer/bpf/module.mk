# tracer/bpf/ — kernel events (kernel.bpf.c + kernel.c) and `heapledger attach` (attach.*).
# vmlinux.h is generated from the running kernel's BTF and skeletons with bpftool, into
# $(BUILD)/bpf. Without BTF/clang/bpftool/libbpf the part builds as stubs that say so.
include tracer/bpf/detect.mk

BPF_CLANG_FLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -I $(BPF_OUT) -I tracer/bpf
BPF_CFLAGS := $(BASE_CFLAGS) -I tracer -I tracer/bpf -I $(BPF_OUT)

ifeq ($(HL_BPF_ENABLED),1)
HL_BPF_CLI_OBJS := $(HL_BPF_KERNEL_OBJS) $(HL_BPF_OBJ)/attach.o $(HL_BPF_OBJ)/attach_model.o $(HL_BPF_OBJ)/attach_db.o \
                   $(HL_BPF_OBJ)/elfsym.o $(HL_BPF_OBJ)/ptrmap.o $(HL_BPF_DB_OBJ)
HL_BPF_GEN := $(BPF_OUT)/kernel.skel.h $(BPF_OUT)/attach.skel.h $(BPF_OUT)/kernel_views_sql.h

$(BPF_OUT)/vmlinux.h:
	@mkdir -p $(dir $@)
	bpftool btf dump file $(BPF_VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BPF_OUT)/%.bpf.o: tracer/bpf/%.bpf.c tracer/bpf/events.h $(BPF_OUT)/vmlinux.h
	clang $(BPF_CLANG_FLAGS) -c $< -o $@

$(BPF_OUT)/%.skel.h: $(BPF_OUT)/%.bpf.o
	bpftool gen skeleton $< name hl_$*_bpf > $@.tmp && mv $@.tmp $@

# The SQL of schemas/kernel_views.sql as a C string literal.
$(BPF_OUT)/kernel_views_sql.h: schemas/kernel_views.sql
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< > $@
else
$(info tracer/bpf: building without kernel events: missing $(HL_BPF_MISSING))
HL_BPF_CLI_OBJS := $(HL_BPF_KERNEL_OBJS) $(HL_BPF_OBJ)/attach_none.o
HL_BPF_GEN :=
endif

$(filter $(HL_BPF_OBJ)/%,$(HL_BPF_CLI_OBJS)): $(HL_BPF_OBJ)/%.o: tracer/bpf/%.c $(HL_BPF_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

HL_CLI_OBJS += $(HL_BPF_CLI_OBJS)
HL_CLI_LIBS += $(HL_BPF_LIBS)
-include $(HL_BPF_CLI_OBJS:.o=.d)
.SECONDARY: $(BPF_OUT)/kernel.bpf.o $(BPF_OUT)/attach.bpf.o
