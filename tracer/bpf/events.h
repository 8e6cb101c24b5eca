/* tracer/bpf/events.h — records the BPF programs send to user space.
 *
 * Shared by the BPF programs (*.bpf.c, which include vmlinux.h first) and the loaders.
 * Fixed-size records, one per ring-buffer reservation.
 */
#ifndef HL_BPF_EVENTS_H
#define HL_BPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Kinds of kernel events (kernel.bpf.c). The names are kernel_event.kind in the database. */
typedef enum hl_kevent_kind_e {
    HL_KEV_MMAP = 0,
    HL_KEV_MUNMAP = 1,
    HL_KEV_MREMAP = 2,
    HL_KEV_BRK = 3,
    HL_KEV_MADVISE = 4,
    HL_KEV_PAGE_FAULT = 5,
    HL_KEV_RSS = 6,
    HL_KEV_COUNT = 7,
} hl_kevent_kind_t;

/* One kernel event. Field meaning per kind: docs/kernel.md. 48 bytes. */
struct hl_kevent {
    __u64 ts;  /* bpf_ktime_get_ns(): CLOCK_MONOTONIC ns */
    __u32 pid; /* tgid */
    __u32 tid;
    __u64 addr;
    __u64 len;
    __s64 ret;  /* syscall result (address or -errno), fault error code, anon RSS bytes */
    __u32 kind; /* hl_kevent_kind_t */
    __u32 arg;  /* mmap: prot | flags << 8 … see docs/kernel.md */
};

/* Attach mode (attach.bpf.c): one call of the malloc family, seen by uprobes. */
typedef enum hl_ucall_kind_e {
    HL_UCALL_MALLOC = 0,
    HL_UCALL_CALLOC = 1,
    HL_UCALL_REALLOC = 2,
    HL_UCALL_FREE = 3,
    HL_UCALL_MEMALIGN = 4, /* posix_memalign, aligned_alloc, memalign */
} hl_ucall_kind_t;

struct hl_ucall {
    __u64 ts;
    __u32 pid;
    __u32 tid;
    __u64 ptr;     /* result (alloc, realloc) or argument (free) */
    __u64 old_ptr; /* realloc: the pointer passed in */
    __u64 size;    /* requested bytes (calloc: nmemb * size) */
    __u64 caller;  /* return address of the call (the allocation site) */
    __s32 stack;   /* stack-trace map id (frame-pointer walk above the caller), < 0: none */
    __u32 kind;    /* hl_ucall_kind_t */
};

#endif
