/* liballoc/stack_cache.c — call-site cache for stack capture (hardened mode's allocation and
 * free stacks).
 *
 * A program allocates from few call sites, each at few stack depths, over and over. A full
 * unwind (libunwind, ~600 instructions at shallow depth, far more deep) per malloc and per
 * free was half of a hardened heap's cost. The cache remembers the frames of a full unwind
 * together with the stack words their return addresses were read from; a later capture from
 * the same place reads those words again and compares: when every one still holds the same
 * return address, the call chain is the one unwound before and its interned id is returned
 * without unwinding (a few dozen loads and compares).
 *
 * The key is the stack pointer at the capture, the return address into our caller (both
 * inside heapledger) and the program's three innermost return addresses — the words where
 * the first three frames outside heapledger keep them (three, because programs allocate
 * through wrappers: in gcc every malloc comes from xmalloc, whose caller tells the sites
 * apart). Where those words lie depends only on heapledger's own frames (malloc, calloc,
 * realloc, free… each have theirs) and the wrappers', so a small shape table remembers, per
 * (stack pointer, return address), the offsets at which they were found (two sets).
 *
 * Where the words are: after a full unwind (unw_backtrace), each return address is looked
 * for on the stack, upward from the stack pointer, each after the previous one's word
 * (sc_place). Every return address of a call lives in such a word, so the scan never passes
 * its real slot; it could stop early only at a word inside a frame that holds a copy of the
 * next frame's return address (code that keeps return addresses in locals).
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
 * and that copy names the same frame), and the capture unwinds in full. A stack through a
 * signal frame (the interrupted frame's address comes from the saved context) is never
 * cached.
 *
 * Policy: the first capture from a (stack pointer, return address) with no known shape, and
 * the third miss of a key, unwind and place the words (sc_walk: the scan adds about half an
 * unwind's cost); a key's first misses take the plain unwind and count in a mark, so stacks
 * seen once or twice never pay for the scan; a key whose two entries both hold other chains
 * takes the plain unwind too (one walk in 64 replaces the second entry), so a site reached
 * through many chains costs the plain unwind, not the slow one.
 *
 * Safety of the reads: every word read lies between the current stack pointer and the
 * highest stack word this thread's own scans have reached (kept per thread), i.e. inside
 * this thread's live stack, so no read can fault.
 *
 * The memo (the hit path): each thread remembers, per (stack pointer, return address) slot,
 * the entry of its last hit or walk there. A capture compares that entry's key and words and
 * returns its id: no shape, no program key, no set (about 70 instructions and 5.5 a word on
 * tiny.mixed). A memo that holds another chain (twins at the same stack pointer and return
 * address) fails its compare and the capture takes the sets (sc_slow), which set the memo.
 * Word 0 of an entry, the return address into our caller read from hl_stack_capture_id's own
 * frame, is always equal and never compared.
 *
 * The tables: mapped once (MAP_NORESERVE: pages are touched as call sites appear); the stack
 * table has sets of two entries (a site reached through two chains keeps both), a conflict
 * overwrites. Entries are written under a per-entry sequence number (odd while written; a
 * writer that finds it odd skips the update) and read optimistically: a reader that sees the
 * number change discards what it read. A torn shape only sends a lookup to the wrong key,
 * which then fails its compare. Nothing here allocates, locks or calls stdio.
 */
#include "stack.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define SC_ENTRIES 1024u /* stack entries (512 B each), power of two, sets of two */
#define SC_SHAPES  1024u /* (stack pointer, return address) shapes, power of two */
#define SC_FRAMES  28u   /* stack words verified per entry (default depth 16 + ours) */
/* Frames above the caller of hl_stack_capture_id a walk covers beyond max: as in
 * hl_stack_capture_user (stack.c), so that both return the same stack. */
#define SC_SELF_SLACK 9u
#define SC_WALK       (HL_STACK_MAX_DEPTH + 40)
/* Index of our caller's frame in a walk from sc_walk (sc_walk, sc_slow, hl_stack_capture_id). */
#define SC_BASE 3u
/* Word 0 of an entry is the return address into our caller, read from hl_stack_capture_id's
 * own frame at a fixed offset: always equal, never compared. */
#define SC_FIRST 1u

/* A verified word: the return address and where it lies (bytes from the stack pointer). */
typedef struct sc_word_s {
    uint64_t ip, off;
} sc_word_t;
/* Words an entry holds: SC_FRAMES, and one to pad the compared ones (1..n) to pairs. */
#define SC_WORDS (SC_FRAMES + 1)

typedef struct sc_entry_s {
    _Atomic uint32_t seq; /* 0 = empty, odd = being written */
    uint32_t n;           /* words stored (1 + an even count); SC_N_SEEN / SC_N_NOCACHE: a mark */
    uint32_t id;          /* interned stack id */
    uint32_t top;         /* highest word offset (bytes from sp) + 8 */
    uint64_t sp, ret;     /* key: stack pointer and return address at the capture */
    uint64_t uret;        /* key: the program's return address */
    uint64_t ms;          /* key: the capture's parameters, max | skip << 32 */
    sc_word_t w[SC_WORDS];
} sc_entry_t;

/* Offsets (in 8-byte units, 0 = none) of the program's three innermost return addresses,
 * 16 bits each, in two tuples. */
typedef struct sc_shape_s {
    uint64_t sp, ret, offs[2];
    uint32_t misses; /* captures here that found no shape (a walk at SC_SIGHTS) */
    uint32_t pad;
} sc_shape_t;

static struct {
    _Atomic int state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    sc_entry_t *tab;
    sc_shape_t *shapes;
} sc;

/* The thread's state, one TLS block (one address computation for all of it). */
#define SC_MEMO 16u
static __thread struct {
    /* The memo: per (stack pointer, return address) slot, the entry of its last hit or walk.
     * A capture tries it first (the key's compare and the words, nothing else); a memo that
     * holds another chain or was overwritten fails its compare and the capture takes sc_slow. */
    const struct sc_entry_s *memo[SC_MEMO];
    uintptr_t top;      /* highest stack word this thread has unwound through: reads stay below */
    uint64_t memo_hits; /* captures answered from the memo (hl_stack_cache_stats) */
    /* The cache's hit rate on this thread (sc_pays): captures left in the current phase,
     * hits in it, whether it bypasses the cache, whether a phase ever started. */
    int32_t left;
    uint32_t hits;
    uint8_t bypass, started;
    uint32_t crowded; /* keys whose both entries held other chains (every 64th walks) */
} sc_t __attribute__((tls_model("initial-exec")));

/* The memo's set of (sp, ret): two ways, the newer first. */
static inline const sc_entry_t **sc_memo_set(uintptr_t sp, uintptr_t ret)
{
    return &sc_t.memo[((unsigned)((sp ^ ret) >> 4) & (SC_MEMO / 2 - 1)) * 2];
}

static inline void sc_memo_put(uintptr_t sp, uintptr_t ret, const sc_entry_t *e)
{
    const sc_entry_t **m = sc_memo_set(sp, ret);
    if (m[0] != e) {
        m[1] = m[0];
        m[0] = e;
    }
}

/* Since stacks are walked by unwind_fast.c, a miss here (lookup, then the walk anyway, and
 * now and then the scan) costs more than the walk saves on a hit unless most captures hit:
 * on gcc (27 k distinct stacks, most captures miss) the cache made harden=1 slower; on a
 * loop with a few call sites (tiny.mixed) it still halves the price of a stack. So each
 * thread measures its hit rate over SC_WINDOW captures; below one half, the next SC_SKIP
 * captures go straight to the walk, then it measures again. */
#define SC_WINDOW 4096u
#define SC_SKIP   32768u

/* The end of a phase: after a window below one half, bypass; else measure (again). */
static __attribute__((noinline, cold)) void sc_phase(void)
{
    int skip = sc_t.started && !sc_t.bypass && sc_t.hits < SC_WINDOW / 2;
    sc_t.started = 1;
    sc_t.bypass = (uint8_t)skip;
    sc_t.left = (int32_t)(skip ? SC_SKIP : SC_WINDOW) - 1;
    sc_t.hits = 0;
}

static inline int sc_pays(void)
{
    if (__builtin_expect(--sc_t.left < 0, 0)) sc_phase();
    return !sc_t.bypass;
}

static int sc_ready(void)
{
    int st = atomic_load_explicit(&sc.state, memory_order_acquire);
    if (st == 2) return 1;
    if (st == 0 && atomic_compare_exchange_strong(&sc.state, &st, 1)) {
        size_t tb = SC_ENTRIES * sizeof(sc_entry_t), sb = SC_SHAPES * sizeof(sc_shape_t);
        char *m = mmap(NULL, tb + sb, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            sc.tab = (sc_entry_t *)m;
            sc.shapes = (sc_shape_t *)(m + tb);
        }
        atomic_store_explicit(&sc.state, m != MAP_FAILED ? 2 : -1, memory_order_release);
        return m != MAP_FAILED;
    }
    return 0; /* failed, or another thread is mapping it: capture without the cache */
}

static inline uint64_t sc_mix(uint64_t x)
{
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return x;
}

static inline sc_shape_t *sc_shape(uintptr_t sp, uintptr_t ret)
{
    return &sc.shapes[sc_mix(sp ^ (ret * 0x9e3779b97f4a7c15ull)) & (SC_SHAPES - 1)];
}

static inline sc_entry_t *sc_set(uintptr_t sp, uintptr_t ret, uintptr_t uret)
{
    uint64_t x = sc_mix(sp ^ (ret * 0x9e3779b97f4a7c15ull) ^ (uret * 0xc2b2ae3d27d4eb4full));
    return &sc.tab[x & (SC_ENTRIES - 2)];
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* What an entry says about a capture with this key. */
enum {
    SC_OTHER,   /* empty, being written, or another key */
    SC_HIT,     /* verified: *id is the stack */
    SC_MARKED,  /* this key missed before, *id times: not yet worth a walk */
    SC_SEEN,    /* this key missed SC_SIGHTS - 1 times before: worth a walk with the words */
    SC_NOCACHE, /* this key's stack cannot be verified (a signal frame, too deep) */
    SC_STALE,   /* this key, another chain (or words this thread has not unwound) */
};
#define SC_N_SEEN    0u
#define SC_SIGHTS    3u /* a key's third miss walks with the words */
#define SC_N_NOCACHE 0xffffffffu

typedef struct sc_key_s {
    uintptr_t sp, ret, uret;
    uint32_t max, skip;
} sc_key_t;

static inline uint64_t sc_ms(const sc_key_t *k)
{
    return (uint64_t)k->max | (uint64_t)k->skip << 32;
}

static int sc_lookup(sc_entry_t *e, const sc_key_t *k, uint32_t *id)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (!s1 || (s1 & 1) || LOAD(e->uret) != k->uret || LOAD(e->sp) != k->sp ||
        LOAD(e->ret) != k->ret || LOAD(e->ms) != sc_ms(k))
        return SC_OTHER;
    uint32_t n = LOAD(e->n), top = LOAD(e->top);
    *id = LOAD(e->id);
    int res = SC_HIT;
    if (n == SC_N_SEEN)
        res = *id + 1 >= SC_SIGHTS ? SC_SEEN : SC_MARKED; /* a mark's id: its misses */
    else if (n > SC_WORDS)
        res = SC_NOCACHE;
    else if (k->sp + top > sc_t.top)
        res = SC_STALE;
    else
        for (uint32_t i = 1; i < n && res == SC_HIT; i++) /* word 0 is ret: SC_FIRST */
            if (*(const volatile uint64_t *)(k->sp + LOAD(e->w[i].off)) != LOAD(e->w[i].ip))
                res = SC_STALE;
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) == s1 ? res : SC_OTHER;
}

/* Write an entry: n words (or n = SC_N_SEEN / SC_N_NOCACHE: a mark without words). */
static void sc_store(sc_entry_t *e, const sc_key_t *k, const uint64_t *ips, const uintptr_t *slots,
                     uint32_t n, uint32_t id)
{
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong(&e->seq, &s, s + 1))
        return; /* another thread is writing it */
    atomic_thread_fence(memory_order_release);
    uint32_t top = 0;
    for (uint32_t i = 0; n <= SC_FRAMES && i < n; i++) {
        uint32_t off = (uint32_t)(slots[i] - k->sp);
        __atomic_store_n(&e->w[i].off, off, __ATOMIC_RELAXED);
        __atomic_store_n(&e->w[i].ip, ips[i], __ATOMIC_RELAXED);
        if (off > top) top = off;
    }
    if (n && n <= SC_FRAMES && n % 2 == 0) { /* the last word twice: words 1..n in pairs */
        __atomic_store_n(&e->w[n].off, (uint64_t)(slots[n - 1] - k->sp), __ATOMIC_RELAXED);
        __atomic_store_n(&e->w[n].ip, ips[n - 1], __ATOMIC_RELAXED);
        n++;
    }
    __atomic_store_n(&e->n, n, __ATOMIC_RELAXED);
    __atomic_store_n(&e->top, top + 8, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&e->sp, (uint64_t)k->sp, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ret, (uint64_t)k->ret, __ATOMIC_RELAXED);
    __atomic_store_n(&e->uret, (uint64_t)k->uret, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ms, sc_ms(k), __ATOMIC_RELAXED);
    atomic_store_explicit(&e->seq, s + 2 ? s + 2 : 2, memory_order_release);
}

/* The way of set to write: one without a verified stack, else the second. */
static sc_entry_t *sc_victim(sc_entry_t *set)
{
    uint32_t n0 = LOAD(set[0].n);
    return LOAD(set[0].seq) == 0 || n0 == SC_N_SEEN || n0 > SC_WORDS ? &set[0] : &set[1];
}

/* The way a key's miss marks: its own mark, else one holding no verified stack of it. */
static sc_entry_t *sc_mark_way(sc_entry_t *set, int r0, int r1)
{
    if (r0 == SC_MARKED) return &set[0];
    if (r1 == SC_MARKED) return &set[1];
    if (r0 == SC_STALE) return &set[1];
    if (r1 == SC_STALE) return &set[0];
    return sc_victim(set);
}

/* Note that the program's return addresses of captures at (sp, ret) sit at the offsets of
 * tuple t (three 16-bit fields). */
static void sc_shape_add(uintptr_t sp, uintptr_t ret, uint64_t t)
{
    sc_shape_t *s = sc_shape(sp, ret);
    uint64_t o0 = 0, o1 = 0;
    if (LOAD(s->sp) == sp && LOAD(s->ret) == ret) {
        o0 = LOAD(s->offs[0]);
        o1 = LOAD(s->offs[1]);
    }
    if (o0 == t || o1 == t) return;
    __atomic_store_n(&s->offs[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->offs[1], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sp, (uint64_t)sp, __ATOMIC_RELAXED);
    __atomic_store_n(&s->ret, (uint64_t)ret, __ATOMIC_RELAXED);
    __atomic_store_n(&s->offs[1], o0, __ATOMIC_RELAXED); /* the older of two goes */
    __atomic_store_n(&s->offs[0], t, __ATOMIC_RELEASE);
}

/* The key's program part: the words at tuple t's offsets; 0 when one is out of reach. */
static inline uint64_t sc_uret(uintptr_t sp, uint64_t t)
{
    uint64_t x = 0;
    for (int i = 0; i < 3; i++) {
        uintptr_t off = ((t >> (16 * i)) & 0xffff) * 8;
        if (!off) break;
        if (sp + off + 8 > sc_t.top) return 0; /* not reached by this thread's scans yet */
        x = (x ^ *(const volatile uint64_t *)(sp + off)) * 0x9e3779b97f4a7c15ull;
    }
    return x | 1;
}

/* The signal trampoline (rt_sigreturn: mov $15, %rax; syscall): frames past it were
 * interrupted, their addresses come from the saved context, not from return-address words. */
static int sc_is_sigreturn(uint64_t ip)
{
#if defined(__x86_64__)
    static const uint8_t code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    if ((ip & 4095) > 4096 - sizeof code) return 1; /* the bytes could cross into no page */
    return memcmp((const void *)(uintptr_t)ip, code, sizeof code) == 0;
#else
    (void)ip;
    return 1; /* elsewhere: never cache */
#endif
}

/* Where the return addresses ips[0..n) lie: scan upward from sp for each in turn (each word
 * after the previous one's). The scan stops at the first word equal to the address, which is
 * at or below its real slot: every word read lies in the live stack. A word inside a frame
 * that held the next frame's return address (code that stores return addresses in locals)
 * would be taken for its slot; the compare on later captures then reads that word. Returns
 * the number of frames placed (stops at a signal frame or after 1 MiB of stack). */
static size_t sc_place(uintptr_t sp, const uint64_t *ips, size_t n, uintptr_t *slots)
{
    const uint64_t *w = (const uint64_t *)(sp & ~(uintptr_t)7);
    const uint64_t *end = w + (1u << 17);
    size_t k = 0;
    for (; k < n; k++) {
        if (sc_is_sigreturn(ips[k])) break;
        while (w < end && *(const volatile uint64_t *)w != ips[k])
            w++;
        if (w == end) break;
        slots[k] = (uintptr_t)w++;
    }
    return k;
}

/* The capture with the words: the id; the entry (into `into`, or the key's set) and the
 * shape. */
static __attribute__((noinline)) uint32_t sc_walk(sc_key_t *k, sc_entry_t *into)
{
    /* ips[0] is in sc_walk, 1 in sc_slow, 2 in hl_stack_capture_id, SC_BASE in its caller. */
    uint64_t ips[HL_STACK_MAX_DEPTH + 2 * SC_SELF_SLACK + 34];
    uintptr_t slots[HL_STACK_MAX_DEPTH + 2 * SC_SELF_SLACK + 34];
    uintptr_t lo, hi;
    hl_stack_self_range(&lo, &hi);
    size_t want = k->max + (lo < hi ? SC_SELF_SLACK : k->skip + SC_BASE);
    size_t n = hl_stack_capture(ips, want, 0);
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame is frame 0 */
    if (n <= SC_BASE) return 0;
    size_t from = k->skip + SC_BASE;
    if (lo < hi) {
        from = SC_BASE;
        while (from < n && ips[from] >= lo && ips[from] < hi)
            from++;
    }
    size_t to = from + k->max < n ? from + k->max : n;
    if (from >= to) return 0;
    int is_new;
    uint32_t id = hl_stack_intern(&ips[from], to - from, &is_new);
    if (!id || ips[SC_BASE] != k->ret) return id;
    /* Verifiable when every frame from our caller's to the last one kept has its word. */
    size_t placed = sc_place(k->sp, ips + SC_BASE, to - SC_BASE, slots + SC_BASE);
    if (placed && slots[SC_BASE - 1 + placed] + 8 > sc_t.top)
        sc_t.top = slots[SC_BASE - 1 + placed] + 8;
    int ok = placed == to - SC_BASE && to - SC_BASE <= SC_FRAMES;
    uint64_t t = 0;
    for (size_t i = 0; i < 3 && from + i < SC_BASE + placed; i++) {
        uintptr_t off = slots[from + i] - k->sp;
        if (off / 8 > 0xffff) break;
        t |= (uint64_t)(off / 8) << (16 * i);
    }
    if (!t) return id; /* no key for it */
    k->uret = sc_uret(k->sp, t);
    if (!k->uret) return id;
    sc_shape_add(k->sp, k->ret, t);
    if (!into) into = sc_victim(sc_set(k->sp, k->ret, k->uret));
    sc_store(into, k, ips + SC_BASE, slots + SC_BASE, ok ? (uint32_t)(to - SC_BASE) : SC_N_NOCACHE,
             id);
    if (ok) sc_memo_put(k->sp, k->ret, into);
    return id;
}

/* Everything but a memo hit: the key's sets, the walks, the plain unwind. Frame 1 of a walk
 * (between sc_walk and hl_stack_capture_id). */
static __attribute__((noinline)) uint32_t sc_slow(uintptr_t sp, uintptr_t ret, size_t max,
                                                  size_t skip)
{
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    if (skip > 30) skip = 30;
    sc_key_t k = {sp, ret, 0, (uint32_t)max, (uint32_t)skip};
    uint32_t id = 0;
    if (sc_ready()) {
        sc_shape_t *shape = sc_shape(sp, k.ret);
        uint64_t offs[2] = {0, 0};
        if (LOAD(shape->sp) == sp && LOAD(shape->ret) == k.ret) {
            offs[0] = __atomic_load_n(&shape->offs[0], __ATOMIC_ACQUIRE);
            offs[1] = LOAD(shape->offs[1]);
        }
        sc_entry_t *walk_into = NULL, *mark = NULL;
        uint32_t misses = 0;
        int known = 0, nocache = 0;
        sc_key_t mk = k;
        for (int i = 0; i < 2 && offs[i]; i++) {
            k.uret = sc_uret(sp, offs[i]);
            if (!k.uret) continue;
            known = 1;
            sc_entry_t *set = sc_set(sp, k.ret, k.uret);
            uint32_t id0 = 0, id1 = 0;
            int r0 = sc_lookup(&set[0], &k, &id0);
            if (r0 == SC_HIT) {
                sc_t.hits++;
                sc_memo_put(sp, ret, &set[0]);
                return id0;
            }
            int r1 = sc_lookup(&set[1], &k, &id1);
            if (r1 == SC_HIT) {
                sc_t.hits++;
                sc_memo_put(sp, ret, &set[1]);
                return id1;
            }
            nocache |= r0 == SC_NOCACHE || r1 == SC_NOCACHE;
            if (walk_into || mark || nocache) continue;
            /* A key missed SC_SIGHTS - 1 times: walk with the words into its mark; earlier
             * misses count in the mark (beside a chain the set holds, in the other way);
             * both ways holding other chains: one miss in 64 walks over the second. */
            if (r0 == SC_SEEN || r1 == SC_SEEN)
                walk_into = r0 == SC_SEEN ? &set[0] : &set[1];
            else if (r0 == SC_STALE && r1 == SC_STALE) {
                if ((++sc_t.crowded & 63) == 0) walk_into = &set[1];
            } else {
                mark = sc_mark_way(set, r0, r1);
                misses = mark == &set[0] && r0 == SC_MARKED   ? id0 + 1
                         : mark == &set[1] && r1 == SC_MARKED ? id1 + 1
                                                              : 1;
                mk = k;
            }
        }
        if (!known && !walk_into) {
            /* No shape here yet: the plain unwind, until the site proves frequent. */
            if (LOAD(shape->sp) != sp || LOAD(shape->ret) != k.ret) {
                __atomic_store_n(&shape->offs[0], 0, __ATOMIC_RELAXED);
                __atomic_store_n(&shape->offs[1], 0, __ATOMIC_RELAXED);
                __atomic_store_n(&shape->misses, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&shape->sp, (uint64_t)sp, __ATOMIC_RELAXED);
                __atomic_store_n(&shape->ret, (uint64_t)k.ret, __ATOMIC_RELAXED);
            }
            uint32_t m = LOAD(shape->misses) + 1;
            __atomic_store_n(&shape->misses, m, __ATOMIC_RELAXED);
            if (m < SC_SIGHTS) nocache = 1; /* below: the plain unwind */
        }
        if (walk_into || (!known && !nocache)) {
            id = sc_walk(&k, walk_into);
            __asm__ volatile("" ::: "memory"); /* no tail call: this frame is frame 1 */
            return id;
        }
        if (!nocache && mark) {
            /* A key's first miss: the plain unwind, and a mark. */
            uint64_t ips[HL_STACK_MAX_DEPTH];
            size_t d = hl_stack_capture_user(ips, max, skip + 2);
            int is_new;
            id = hl_stack_intern(ips, d, &is_new);
            if (id) sc_store(mark, &mk, NULL, NULL, SC_N_SEEN, misses);
            return id;
        }
    }
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t d = hl_stack_capture_user(ips, max, skip + 2);
    int is_new;
    id = hl_stack_intern(ips, d, &is_new);
    return id;
}

/* A memo hit: the thread's entry for (sp, ret) holds this chain. Its id, else 0. The words
 * 1..n are compared in pairs without an early exit (a stale memo is rare: it falls to
 * sc_slow). */
static inline uint32_t sc_fast(const sc_entry_t *e, uintptr_t sp, uintptr_t ret, uint64_t ms)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if ((s1 & 1) || LOAD(e->sp) != sp || LOAD(e->ret) != ret || LOAD(e->ms) != ms) return 0;
    uint32_t n = LOAD(e->n);
    if (n - 1 >= SC_WORDS || sp + LOAD(e->top) > sc_t.top) return 0; /* a mark, no cache */
    /* Plain loads (folded into the compares): a word torn by a writer fails the sequence
     * check below, and every stack word read lies below sc_t.top. */
    uint64_t d = 0;
    for (const sc_word_t *w = e->w + n - 2; w >= e->w + SC_FIRST; w -= 2)
        d |= (*(const uint64_t *)(sp + w[0].off) ^ w[0].ip) |
             (*(const uint64_t *)(sp + w[1].off) ^ w[1].ip);
    uint32_t id = LOAD(e->id); /* not 0: entries with words hold an interned stack */
    atomic_thread_fence(memory_order_acquire);
    return d || atomic_load_explicit(&e->seq, memory_order_relaxed) != s1 ? 0 : id;
}

/* The memo's key takes max and skip as given: an entry holds them clamped (sc_slow), so a
 * capture beyond the limits never hits the memo, and takes sc_slow. */
__attribute__((noinline)) uint32_t hl_stack_capture_id(size_t max, size_t skip)
{
    if (max == 0) return 0;
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#else
    sp = (uintptr_t)__builtin_frame_address(0);
#endif
    uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    if (__builtin_expect(!sc_pays(), 0)) {
        /* Bypassed (a thread whose captures mostly miss): the plain unwind, from this frame
         * (through sc_slow, every walk would take one frame more). */
        if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
        if (skip > 30) skip = 30;
        uint64_t ips[HL_STACK_MAX_DEPTH];
        size_t d = hl_stack_capture_user(ips, max, skip + 1);
        int is_new;
        return hl_stack_intern(ips, d, &is_new);
    }
    const sc_entry_t **m = sc_memo_set(sp, ret), *e = m[0];
    if (e && (LOAD(e->sp) != sp || LOAD(e->ret) != ret)) e = m[1];
    uint32_t id = e ? sc_fast(e, sp, ret, (uint64_t)max | (uint64_t)skip << 32) : 0;
    if (id) {
        sc_t.hits++;
        sc_t.memo_hits++;
        return id;
    }
    id = sc_slow(sp, ret, max, skip);
    __asm__ volatile("" ::: "memory"); /* no tail call: sc_slow is frame 1 of its walks */
    return id;
}

void hl_stack_cache_stats(uint64_t *memo_hits)
{
    *memo_hits = sc_t.memo_hits;
}
