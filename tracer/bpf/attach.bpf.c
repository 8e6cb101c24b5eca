// SPDX-License-Identifier: GPL-2.0
/* tracer/bpf/attach.bpf.c — the malloc family of one running process, seen by uprobes.
 *
 * Entry probes save the arguments per thread; return probes emit one record per call. Only
 * the outermost call of a thread is recorded: glibc's realloc(NULL, n) calls malloc and
 * realloc(p, 0) calls free through the same entry points, and those inner calls must not
 * count twice (`depth`). free() has no return probe: it is recorded at entry when no other
 * call of the family is in progress on the thread.
 *
 * The loader attaches with the target pid as the uprobe filter, so these programs only ever
 * run in that process. Each hit costs a few microseconds (trap + probe): this mode is for
 * processes that were not started under heapledger, not for the recorder.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

char LICENSE[] SEC("license") = "GPL";

#define STACK_DEPTH 32

const volatile __u32 want_stacks = 1;

struct call {
    __u64 size;
    __u64 ptr;    /* realloc: old pointer; posix_memalign: where the result goes */
    __u64 caller; /* return address */
    __s32 stack;
    __u32 kind;
    __u32 depth;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32); /* tid */
    __type(value, struct call);
} calls SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(max_entries, 16384);
    __uint(key_size, sizeof(__u32));
    __uint(value_size, STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4 << 20);
} ucalls SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} udrops SEC(".maps");

static __always_inline void send(struct pt_regs *ctx, __u32 kind, __u64 ptr, __u64 old, __u64 size,
                                 __u64 caller, __s32 stack)
{
    struct hl_ucall *e = bpf_ringbuf_reserve(&ucalls, sizeof(*e), 0);
    if (!e) {
        __u32 zero = 0;
        __u64 *d = bpf_map_lookup_elem(&udrops, &zero);
        if (d) *d += 1;
        return;
    }
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    e->ts = bpf_ktime_get_ns();
    e->pid = pid_tgid >> 32;
    e->tid = (__u32)pid_tgid;
    e->kind = kind;
    e->ptr = ptr;
    e->old_ptr = old;
    e->size = size;
    e->caller = caller;
    e->stack = stack;
    bpf_ringbuf_submit(e, 0);
}

/* At a function's first instruction the return address is at the stack pointer. */
static __always_inline __u64 return_address(struct pt_regs *ctx)
{
    __u64 ra = 0;
    bpf_probe_read_user(&ra, sizeof ra, (void *)PT_REGS_SP(ctx));
    return ra;
}

static __always_inline void enter(struct pt_regs *ctx, __u32 kind, __u64 size, __u64 ptr)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct call *c = bpf_map_lookup_elem(&calls, &tid);
    if (c && c->depth > 0) {
        c->depth++;
        return;
    }
    struct call n = {.size = size, .ptr = ptr, .kind = kind, .depth = 1, .stack = -1};
    n.caller = return_address(ctx);
    if (want_stacks) n.stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
    bpf_map_update_elem(&calls, &tid, &n, BPF_ANY);
}

static __always_inline void leave(struct pt_regs *ctx, __u64 ret)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct call *c = bpf_map_lookup_elem(&calls, &tid);
    if (!c || c->depth == 0) return;
    if (--c->depth > 0) return;
    struct call a = *c;
    bpf_map_delete_elem(&calls, &tid);
    __u64 ptr = ret, old = 0;
    if (a.kind == HL_UCALL_REALLOC) old = a.ptr;
    if (a.kind == HL_UCALL_MEMALIGN && a.ptr) { /* posix_memalign: 0 or an error number */
        ptr = 0;
        if (ret == 0) bpf_probe_read_user(&ptr, sizeof ptr, (void *)a.ptr);
    }
    send(ctx, a.kind, ptr, old, a.size, a.caller, a.stack);
}

SEC("uprobe")
int BPF_KPROBE(hl_malloc, __u64 size)
{
    enter(ctx, HL_UCALL_MALLOC, size, 0);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(hl_calloc, __u64 nmemb, __u64 size)
{
    enter(ctx, HL_UCALL_CALLOC, nmemb * size, 0);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(hl_realloc, __u64 ptr, __u64 size)
{
    enter(ctx, HL_UCALL_REALLOC, size, ptr);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(hl_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
    enter(ctx, HL_UCALL_MEMALIGN, size, memptr);
    return 0;
}

/* aligned_alloc(align, size) and memalign(align, size) */
SEC("uprobe")
int BPF_KPROBE(hl_aligned_alloc, __u64 align, __u64 size)
{
    enter(ctx, HL_UCALL_MEMALIGN, size, 0);
    return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(hl_alloc_ret, __u64 ret)
{
    leave(ctx, ret);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(hl_free, __u64 ptr)
{
    if (!ptr) return 0;
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct call *c = bpf_map_lookup_elem(&calls, &tid);
    if (c && c->depth > 0) return 0;
    __s32 stack = want_stacks ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -1;
    send(ctx, HL_UCALL_FREE, ptr, 0, 0, return_address(ctx), stack);
    return 0;
}
