// SPDX-License-Identifier: GPL-2.0
/* tracer/bpf/kernel.bpf.c — kernel events of a followed process tree.
 *
 * Followed processes are the keys of `followed` (tgids). User space inserts the root; a
 * fork of a followed process adds the child (sched_process_fork); the exit of a group leader
 * removes it. Every program first checks the cheapest thing (syscall number, tgid) and
 * returns: they run for every process on the machine.
 *
 * Only BTF-typed attach points (tp_btf) are used: they need neither tracefs nor debugfs.
 * Records go to one ring buffer; a failed reservation increments `drops`. Wake-ups are
 * batched: user space is only woken when a quarter of the ring is full (it also polls on a
 * timer), which keeps the per-event cost at the reservation and copy.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

char LICENSE[] SEC("license") = "GPL";

/* x86-64 syscall numbers of the calls we follow. */
#define NR_MMAP    9
#define NR_MUNMAP  11
#define NR_BRK     12
#define NR_MREMAP  25
#define NR_MADVISE 28

/* mm->rss_stat[] counters (NR_MM_COUNTERS = 4: file, anon, swap entries, shmem) */
#define MM_FILEPAGES  0
#define MM_ANONPAGES  1
#define MM_SHMEMPAGES 3

/* Set by the loader before load. */
const volatile __u64 rss_step = 256 * 1024; /* emit an rss sample every rss_step bytes of change */
const volatile __u64 page_size = 4096;
const volatile __u64 wakeup_bytes = 1 << 20;

struct follow {
    __s64 last_rss; /* bytes, last rss sample sent */
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32); /* tgid */
    __type(value, struct follow);
} followed SEC(".maps");

/* Arguments of a syscall between its entry and exit, per thread. */
struct pending {
    __u64 a0, a1, a2, a3;
    __u64 old_brk;
    __u32 nr;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32); /* tid */
    __type(value, struct pending);
} pending SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4 << 20); /* 4 MiB: its creation is most of the start-up cost */
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} drops SEC(".maps");

static __always_inline void count_drop(void)
{
    __u32 zero = 0;
    __u64 *d = bpf_map_lookup_elem(&drops, &zero);
    if (d) *d += 1;
}

/* Reserve, fill, submit. */
static __always_inline void emit_at(__u64 ts, __u32 pid, __u32 tid, __u32 kind, __u64 addr,
                                    __u64 len, __s64 ret, __u32 arg)
{
    struct hl_kevent *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        count_drop();
        return;
    }
    e->ts = ts;
    e->pid = pid;
    e->tid = tid;
    e->kind = kind;
    e->addr = addr;
    e->len = len;
    e->ret = ret;
    e->arg = arg;
    __u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
                      ? BPF_RB_FORCE_WAKEUP
                      : BPF_RB_NO_WAKEUP;
    bpf_ringbuf_submit(e, flags);
}

/* An event of the current thread, now. */
static __always_inline void emit(__u64 pid_tgid, __u32 kind, __u64 addr, __u64 len, __s64 ret,
                                 __u32 arg)
{
    emit_at(bpf_ktime_get_ns(), pid_tgid >> 32, (__u32)pid_tgid, kind, addr, len, ret, arg);
}

/* Page faults of a thread on consecutive pages (a memset, a first pass over a new block) are
 * one run, sent as one page_fault record (addr = first page, len = pages × page size, ts =
 * first fault) when the thread faults elsewhere, exits, or the session stops (user space
 * then reads what is left in this map). This keeps a sequential touch of 1 GiB at one
 * record instead of 262,144. */
struct fault_run {
    __u64 ts, start, next;
    __s64 error_code;
    __u32 pid, in_heap;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32); /* tid */
    __type(value, struct fault_run);
} fault_runs SEC(".maps");

static __always_inline void send_run(__u32 tid, const struct fault_run *r)
{
    emit_at(r->ts, r->pid, tid, HL_KEV_PAGE_FAULT, r->start, r->next - r->start, r->error_code,
            r->in_heap);
}

static __always_inline int is_followed(__u32 tgid)
{
    return bpf_map_lookup_elem(&followed, &tgid) != NULL;
}

/* The two layouts of mm->rss_stat, declared locally so that this file compiles against the
 * vmlinux.h of either kernel and CO-RE picks the right one at load time:
 *   Linux >= 6.2: struct percpu_counter rss_stat[NR_MM_COUNTERS]
 *   Linux <  6.2: struct mm_rss_stat { atomic_long_t count[NR_MM_COUNTERS]; } rss_stat
 */
struct mm_struct___pcpu {
    struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));

struct mm_rss_stat___atomic {
    atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___atomic {
    struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));

/* Pages of counter i (file + anon + shmem make the RSS; the per-CPU parts not yet folded in
 * are not counted, as in the kernel's own rss_stat tracepoint). i is a constant < 4 at every
 * call (bounded for the verifier). */
static __always_inline __s64 counter_pages(struct mm_struct *mm, int i)
{
    __s64 v;
    if (bpf_core_field_exists(((struct mm_struct___atomic *)0)->rss_stat.count))
        v = BPF_CORE_READ((struct mm_struct___atomic *)mm, rss_stat.count[i].counter);
    else
        v = BPF_CORE_READ((struct mm_struct___pcpu *)mm, rss_stat[i].count);
    return v < 0 ? 0 : v;
}

/* Send an rss sample when the resident set moved by rss_step bytes or more since the last
 * one. Called where RSS changes for the followed process itself: on its page faults (arg 0)
 * and after its memory syscalls (arg 1). A separate tp_btf/rss_stat program would see every
 * counter change of every process on the machine: measured at about 70 ns per page fault,
 * as much as the page-fault program itself (docs/kernel.md). */
static __always_inline void sample_rss(__u64 pid_tgid, struct follow *f, __u32 why)
{
    struct task_struct *t = (struct task_struct *)bpf_get_current_task_btf();
    struct mm_struct *mm = BPF_CORE_READ(t, mm);
    if (!mm) return;
    __s64 anon = counter_pages(mm, MM_ANONPAGES) * page_size;
    __s64 rss =
        anon + (counter_pages(mm, MM_FILEPAGES) + counter_pages(mm, MM_SHMEMPAGES)) * page_size;
    __s64 d = rss - f->last_rss;
    if (d < 0) d = -d;
    if ((__u64)d < rss_step) return;
    f->last_rss = rss;
    emit(pid_tgid, HL_KEV_RSS, 0, rss, anon, why);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(hl_sys_enter, struct pt_regs *regs, long id)
{
    if (id != NR_MMAP && id != NR_MUNMAP && id != NR_BRK && id != NR_MREMAP && id != NR_MADVISE)
        return 0;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    if (!is_followed(pid_tgid >> 32)) return 0;
    struct pending p = {};
    p.nr = id;
    p.a0 = BPF_CORE_READ(regs, di);
    p.a1 = BPF_CORE_READ(regs, si);
    p.a2 = BPF_CORE_READ(regs, dx);
    p.a3 = BPF_CORE_READ(regs, r10);
    if (id == NR_BRK) {
        struct task_struct *t = (struct task_struct *)bpf_get_current_task_btf();
        p.old_brk = BPF_CORE_READ(t, mm, brk);
    }
    __u32 tid = (__u32)pid_tgid;
    bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
    return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(hl_sys_exit, struct pt_regs *regs, long ret)
{
    long id = BPF_CORE_READ(regs, orig_ax);
    if (id != NR_MMAP && id != NR_MUNMAP && id != NR_BRK && id != NR_MREMAP && id != NR_MADVISE)
        return 0;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)pid_tgid;
    struct pending *p = bpf_map_lookup_elem(&pending, &tid);
    if (!p) return 0;
    struct pending a = *p;
    bpf_map_delete_elem(&pending, &tid);
    if (a.nr != id) return 0;
    switch (id) {
    case NR_MMAP: /* mmap(addr, len, prot, flags, …) */
        emit(pid_tgid, HL_KEV_MMAP, ret >= 0 ? (__u64)ret : a.a0, a.a1, ret,
             (__u32)(a.a2 & 0xff) | (__u32)(a.a3 << 8));
        break;
    case NR_MUNMAP: /* munmap(addr, len) */
        emit(pid_tgid, HL_KEV_MUNMAP, a.a0, a.a1, ret, 0);
        break;
    case NR_MREMAP: /* mremap(old, old_len, new_len, flags): len = new_len, arg = old pages */
        emit(pid_tgid, HL_KEV_MREMAP, a.a0, a.a2, ret, (__u32)(a.a1 / page_size));
        break;
    case NR_BRK: /* brk(addr): addr = request, len = new break - old break */
        emit(pid_tgid, HL_KEV_BRK, a.a0, (__u64)(ret - (long)a.old_brk), ret, 0);
        break;
    case NR_MADVISE: /* madvise(addr, len, advice) */
        emit(pid_tgid, HL_KEV_MADVISE, a.a0, a.a1, ret, (__u32)a.a2);
        break;
    }
    __u32 tgid = pid_tgid >> 32;
    struct follow *f = bpf_map_lookup_elem(&followed, &tgid);
    if (f) sample_rss(pid_tgid, f, 1);
    return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(hl_page_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u32 tgid = pid_tgid >> 32;
    struct follow *f = bpf_map_lookup_elem(&followed, &tgid);
    if (!f) return 0;
    /* in_heap: the address lies in the brk heap [start_brk, brk). */
    struct task_struct *t = (struct task_struct *)bpf_get_current_task_btf();
    struct mm_struct *mm = BPF_CORE_READ(t, mm);
    __u64 start_brk = BPF_CORE_READ(mm, start_brk), brk = BPF_CORE_READ(mm, brk);
    __u32 in_heap = address >= start_brk && address < brk;
    __u64 page = address & ~(page_size - 1);
    __u32 tid = (__u32)pid_tgid;
    struct fault_run *r = bpf_map_lookup_elem(&fault_runs, &tid);
    if (r && r->next == page && r->error_code == (__s64)error_code && r->in_heap == in_heap) {
        r->next += page_size;
    } else {
        if (r) send_run(tid, r);
        struct fault_run n = {.ts = bpf_ktime_get_ns(),
                              .start = page,
                              .next = page + page_size,
                              .error_code = error_code,
                              .pid = tgid,
                              .in_heap = in_heap};
        bpf_map_update_elem(&fault_runs, &tid, &n, BPF_ANY);
    }
    sample_rss(pid_tgid, f, 0);
    return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(hl_fork, struct task_struct *parent, struct task_struct *child)
{
    __u32 ptgid = BPF_CORE_READ(parent, tgid);
    __u32 ctgid = BPF_CORE_READ(child, tgid);
    if (ptgid == ctgid || !is_followed(ptgid)) return 0;
    struct follow f = {};
    bpf_map_update_elem(&followed, &ctgid, &f, BPF_NOEXIST);
    return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(hl_exit, struct task_struct *task)
{
    __u32 pid = BPF_CORE_READ(task, pid), tgid = BPF_CORE_READ(task, tgid);
    struct fault_run *r = bpf_map_lookup_elem(&fault_runs, &pid);
    if (r) {
        send_run(pid, r);
        bpf_map_delete_elem(&fault_runs, &pid);
    }
    if (pid == tgid) bpf_map_delete_elem(&followed, &tgid);
    return 0;
}
