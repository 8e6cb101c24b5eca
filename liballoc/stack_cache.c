/* liballoc/stack_cache.c — call-site cache for stack capture (hardened mode's allocation and
 * free stacks).
 *
 * A program allocates from few call sites, each at few stack depths, over and over. A full
 * unwind (libunwind, ~600 instructions at shallow depth, far more deep) per malloc and per
 * free was half of a hardened heap's cost. The cache remembers, per (stack pointer, return
 * address) at the capture, the frames of the last full unwind from there together with the
 * stack words they were read from; a later capture at the same stack pointer and return
 * address reads those words again and compares: when every one still holds the same return
 * address, the call chain is the one unwound before and its interned id is returned without
 * unwinding (a few dozen loads and compares).
 *
 * Why the compare is enough: unwinding is deterministic in (instruction pointer, stack
 * pointer) for frames whose canonical frame address is the stack pointer plus a constant,
 * which is what compilers emit without alloca or variable-length arrays. Starting from the
 * same stack pointer and the same return address, each verified return address fixes the
 * next frame's size, hence where its own return address lies: the words compared are exactly
 * the ones a new unwind would read, so the stack is the same frame for frame. A frame whose
 * frame address is computed from a frame pointer (alloca, VLAs, stack realignment) may move
 * between calls with the same addresses; then the word read is not its return address, the
 * compare fails (it would take a stale copy of the same address at the old place to pass,
 * and that copy names the same frame), and the capture unwinds in full. Signal frames (the
 * address comes from a saved context, not a stack word) make a stack uncacheable.
 *
 * Safety of the reads: every word read lies between the current stack pointer and the
 * highest stack word this thread itself has unwound through (kept per thread), i.e. inside
 * this thread's live stack, so no read can fault.
 *
 * The table: direct-mapped, SC_ENTRIES entries mapped once (MAP_NORESERVE: pages are touched
 * as call sites appear), a conflicting call site overwrites. Entries are written under a
 * per-entry sequence number (odd while written; a writer that finds it odd skips the update)
 * and read optimistically: a reader that sees the number change discards what it read.
 * Nothing here allocates, locks or calls stdio.
 */
#include "stack.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define SC_ENTRIES 8192u /* power of two */
#define SC_FRAMES  28u   /* stack words verified per entry (default depth 16 + ours) */
/* Frames above the caller of hl_stack_capture_id a walk covers beyond max: as in
 * hl_stack_capture_user (stack.c), so that both return the same stack. */
#define SC_SELF_SLACK 8u
#define SC_WALK       (HL_STACK_MAX_DEPTH + 40)

typedef struct sc_entry_s {
    _Atomic uint32_t seq; /* 0 = empty, odd = being written */
    uint32_t n;           /* words to verify */
    uint32_t id;          /* interned stack id */
    uint32_t top;         /* highest word offset (bytes from sp) */
    uint64_t sp, ret;     /* key: stack pointer and return address at the capture */
    uint32_t max, skip;   /* key: the capture's parameters */
    uint32_t off[SC_FRAMES];
    uint64_t ip[SC_FRAMES];
} sc_entry_t;

static struct {
    _Atomic int state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    sc_entry_t *tab;
} sc;

/* Highest stack word this thread has unwound through: reads stay below it. */
static __thread uintptr_t sc_top __attribute__((tls_model("initial-exec")));

static sc_entry_t *sc_table(void)
{
    int st = atomic_load_explicit(&sc.state, memory_order_acquire);
    if (st == 2) return sc.tab;
    if (st == 0 && atomic_compare_exchange_strong(&sc.state, &st, 1)) {
        void *m = mmap(NULL, SC_ENTRIES * sizeof(sc_entry_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        sc.tab = m == MAP_FAILED ? NULL : m;
        atomic_store_explicit(&sc.state, sc.tab ? 2 : -1, memory_order_release);
        return sc.tab;
    }
    return NULL; /* failed, or another thread is mapping it: capture without the cache */
}

static inline size_t sc_index(uintptr_t sp, uintptr_t ret)
{
    uint64_t x = (uint64_t)sp ^ ((uint64_t)ret * 0x9e3779b97f4a7c15ull);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return (size_t)x & (SC_ENTRIES - 1);
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* The cached id for this call site when its words still hold its frames; 0 otherwise. */
static uint32_t sc_lookup(sc_entry_t *e, uintptr_t sp, uintptr_t ret, size_t max, size_t skip)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (!s1 || (s1 & 1) || LOAD(e->sp) != sp || LOAD(e->ret) != ret || LOAD(e->max) != max ||
        LOAD(e->skip) != skip)
        return 0;
    uint32_t n = LOAD(e->n), top = LOAD(e->top), id = LOAD(e->id);
    if (n > SC_FRAMES || sp + top > sc_top) return 0;
    for (uint32_t k = 0; k < n; k++)
        if (*(const volatile uint64_t *)(sp + LOAD(e->off[k])) != LOAD(e->ip[k])) return 0;
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) == s1 ? id : 0;
}

static void sc_store(sc_entry_t *e, uintptr_t sp, uintptr_t ret, size_t max, size_t skip,
                     const uint64_t *ips, const uintptr_t *slots, size_t from, size_t to,
                     uint32_t id)
{
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong(&e->seq, &s, s + 1))
        return; /* another thread is writing it */
    atomic_thread_fence(memory_order_release);
    uint32_t top = 0;
    for (size_t k = from; k < to; k++) {
        uint32_t off = (uint32_t)(slots[k] - sp);
        __atomic_store_n(&e->off[k - from], off, __ATOMIC_RELAXED);
        __atomic_store_n(&e->ip[k - from], ips[k], __ATOMIC_RELAXED);
        if (off > top) top = off;
    }
    __atomic_store_n(&e->n, (uint32_t)(to - from), __ATOMIC_RELAXED);
    __atomic_store_n(&e->top, top + 8, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&e->sp, (uint64_t)sp, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ret, (uint64_t)ret, __ATOMIC_RELAXED);
    __atomic_store_n(&e->max, (uint32_t)max, __ATOMIC_RELAXED);
    __atomic_store_n(&e->skip, (uint32_t)skip, __ATOMIC_RELAXED);
    atomic_store_explicit(&e->seq, s + 2 ? s + 2 : 2, memory_order_release);
}

__attribute__((noinline)) uint32_t hl_stack_capture_id(size_t max, size_t skip)
{
    if (max == 0) return 0;
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    if (skip > 30) skip = 30;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
#if defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#endif
    uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    sc_entry_t *tab = sc_table();
    sc_entry_t *e = tab ? &tab[sc_index(sp, ret)] : NULL;
    uint32_t id = e ? sc_lookup(e, sp, ret, max, skip) : 0;
    if (id) return id;

    /* Miss: unwind with the words. Frame 0 is the walk, 1 this function (its return address
     * lies below sp), 2 our caller: frame k is hl_stack_capture_user's buf[k]. */
    uint64_t ips[SC_WALK];
    uintptr_t slots[SC_WALK];
    uintptr_t lo, hi;
    hl_stack_self_range(&lo, &hi);
    size_t want = max + (lo < hi ? SC_SELF_SLACK : skip + 2); /* buf[0..want-1] */
    size_t n = hl_stack_walk_slots(ips, slots, want < SC_WALK ? want : SC_WALK);
    if (n <= 2) return 0;
    size_t from = skip + 2;
    if (lo < hi) {
        from = 2;
        while (from < n && ips[from] >= lo && ips[from] < hi)
            from++;
    }
    size_t to = from + max < n ? from + max : n;
    if (from >= to) return 0;
    int is_new;
    id = hl_stack_intern(&ips[from], to - from, &is_new);
    /* Remember it when every word from our caller's up to the last frame kept is a plain
     * return-address slot above sp. */
    int ok = id && e && ips[2] == ret && to - 2 <= SC_FRAMES;
    for (size_t k = 2; k < n; k++) {
        if (slots[k] && slots[k] + 8 > sc_top) sc_top = slots[k] + 8;
        if (k < to && (slots[k] < sp || !slots[k])) ok = 0;
    }
    if (ok) sc_store(e, sp, ret, max, skip, ips, slots, 2, to, id);
    return id;
}
