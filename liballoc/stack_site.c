/* liballoc/stack_site.c — the call-site cache keyed at the program's call into the allocator
 * (hardened mode's allocation and free stacks; stack.h, hl_stack_site_id).
 *
 * A capture under an entry frame (stack_entry.c) walks from the program's call: the return
 * address into the program, ret, with the program's stack pointer fp + 16 (fp the entry's
 * frame, where the caller's rbp was saved). heapledger's own frames are not part of that walk,
 * so every capture of one program call at one stack depth starts from the same state,
 * whichever entry point and whichever path inside heapledger led to it. The cache remembers,
 * per (fp, ret, the program's next return address), the id of the last walk from there
 * and the stack words that walk depended on (the walker reports them: hl_uwf_walk_words); a
 * capture with the same key reads those words again and, when each holds the same value,
 * returns the stack's id without walking on (one rule lookup for the key, then a load and a
 * compare per word, against ~45 instructions per walked frame and the interning).
 *
 * Why equal words give the same stack: the walk is deterministic in its state. It starts at
 * (ret, fp + 16, the rbp saved at fp); each step takes the rule of the frame's return address
 * (the rule cache's generation is part of the key: rules of unloaded modules are not reused),
 * computes the frame address from the stack pointer, or from rbp, whose value came from a
 * stack word (the one at fp at the start, else the one a frame restored it from), and reads
 * the next return address at that address minus 8. The words stored are every return address
 * read (and the word that ended the walk, if one did) and, for each frame addressed by rbp,
 * rbp's word: when they hold the same values, a new walk computes the same addresses and
 * reads the same return addresses step by step, and stops at the same depth (the limit, the
 * same last frame, or the same ending word). A walk that deferred to libunwind, or with more
 * words than an entry holds, is not stored.
 *
 * Safety of the reads: a word is read only inside the range of this thread's stack its own
 * walks checked to be mapped (hl_uwf_lo, hl_uwf_hi), whoever stored the entry.
 *
 * The table: sets of two entries, mapped once (MAP_NORESERVE); written under a per-entry
 * sequence number (odd while written; a writer that finds it odd leaves it) and read
 * optimistically (a reader that sees it change discards what it read). Nothing here
 * allocates, locks or calls stdio.
 */
#include "stack.h"
#include "unwind_fast.h"

#include <stdatomic.h>
#include <sys/mman.h>

#define SS_SETS_LG 11u /* 2 x 2048 entries of 272 bytes: 1.1 MiB, touched as sites appear */
#define SS_SETS    (1u << SS_SETS_LG)
/* Words verified per entry: the return addresses of a default-depth stack (16) but ret, the
 * word that ended it, and the rbp words. */
#define SS_WORDS HL_UWF_WORDS

typedef struct ss_entry_s {
    _Atomic uint32_t seq;   /* 0 = empty, odd = being written */
    uint16_t n;             /* words to compare */
    uint16_t top;           /* highest word's offset from fp, in words, + 1 */
    uint32_t id;            /* the interned stack */
    uint32_t ms;            /* key: max | the rule cache's generation << 8 */
    uint64_t fp, ret;       /* key: the entry's frame, the return address into the program */
    uint16_t off[SS_WORDS]; /* where the words lie: fp + 8 * off */
    uint64_t val[SS_WORDS]; /* what they hold */
} ss_entry_t;

/* A capture's key. next (the program's next return address, 0 when a plain step cannot read
 * it) only chooses the set: the words verify it. */
typedef struct ss_key_s {
    uintptr_t fp, ret, next;
    uint32_t ms;
} ss_key_t;

static struct {
    _Atomic int state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    ss_entry_t *tab;
    uintptr_t self_lo, self_hi; /* heapledger's text (hl_stack_self_range), read once */
} ss;

/* The memo: per (fp, ret) slot, the entry of the thread's last hit or walk there, tried
 * before the key's set (no step for the set's choice). */
#define SS_MEMO 16u
static __thread struct {
    const ss_entry_t *memo[SS_MEMO];
    uint64_t hits, misses;
    uint32_t turn; /* which way a miss overwrites when both are taken */
} ss_t __attribute__((tls_model("initial-exec")));

static __attribute__((noinline, cold)) int ss_map(void)
{
    int st = 0;
    if (!atomic_compare_exchange_strong(&ss.state, &st, 1)) return st == 2;
    void *m = mmap(NULL, (size_t)SS_SETS * 2 * sizeof(ss_entry_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m != MAP_FAILED) ss.tab = m;
    hl_stack_self_range(&ss.self_lo, &ss.self_hi);
    atomic_store_explicit(&ss.state, m != MAP_FAILED ? 2 : -1, memory_order_release);
    return m != MAP_FAILED;
}

static inline int ss_ready(void)
{
    int st = atomic_load_explicit(&ss.state, memory_order_acquire);
    return st == 2 ? 1 : st == 0 ? ss_map() : 0;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline ss_entry_t *ss_set(const ss_key_t *k)
{
    uint64_t x = ((uint64_t)k->fp + k->ms) ^ ((uint64_t)k->ret * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)k->next * 0xc2b2ae3d27d4eb4full);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 32;
    return &ss.tab[(x & (SS_SETS - 1)) * 2];
}

static inline const ss_entry_t **ss_memo(uintptr_t fp, uintptr_t ret)
{
    return &ss_t.memo[((fp ^ ret) >> 4) & (SS_MEMO - 1)];
}

/* The entry's id when it holds this key and its words still hold their values, else 0.
 * Reads stay in [lo, hi): this thread's checked stack. */
static inline uint32_t ss_probe(const ss_entry_t *e, const ss_key_t *k, uintptr_t lo, uintptr_t hi)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    uintptr_t fp = k->fp;
    if (!s1 || (s1 & 1) || LOAD(e->fp) != fp || LOAD(e->ret) != k->ret || LOAD(e->ms) != k->ms)
        return 0;
    uint32_t n = LOAD(e->n), top = LOAD(e->top);
    if (fp < lo || fp + 8 * (uintptr_t)top > hi || n > SS_WORDS) return 0;
    /* The first differing word ends it (another chain). Each offset is checked against the
     * top read above: a writer's new offsets, read torn, stay inside the checked pages. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t o = LOAD(e->off[i]);
        if (o >= top || *(const volatile uint64_t *)(fp + 8 * (uintptr_t)o) != LOAD(e->val[i]))
            return 0;
    }
    uint32_t id = LOAD(e->id);
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) != s1 ? 0 : id;
}

static void ss_store(ss_entry_t *e, const ss_key_t *k, uint32_t id, uint32_t top,
                     const hl_uwf_words_t *ws)
{
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong(&e->seq, &s, s + 1))
        return; /* another thread is writing it */
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < ws->n; i++) {
        __atomic_store_n(&e->off[i], (uint16_t)((ws->w[i].slot - k->fp) / 8), __ATOMIC_RELAXED);
        __atomic_store_n(&e->val[i], ws->w[i].val, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&e->n, (uint16_t)ws->n, __ATOMIC_RELAXED);
    __atomic_store_n(&e->top, (uint16_t)top, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ms, k->ms, __ATOMIC_RELAXED);
    __atomic_store_n(&e->fp, (uint64_t)k->fp, __ATOMIC_RELAXED);
    __atomic_store_n(&e->ret, (uint64_t)k->ret, __ATOMIC_RELAXED);
    uint32_t next = s + 2;
    atomic_store_explicit(&e->seq, next ? next : 2, memory_order_release);
}

/* Not in the memo: the key's set, else the walk with its words, the id, and the entry when
 * the walk can be verified. */
static __attribute__((noinline)) int ss_slow(ss_key_t *k, uintptr_t rbp, size_t max,
                                             const ss_entry_t **memo, uint32_t *id)
{
    ss_entry_t *set = NULL;
    if (ss_ready()) {
        uintptr_t lo = hl_uwf_lo, hi = hl_uwf_hi;
        if (!hl_uwf_next(k->ret, k->fp + 16, &k->next)) k->next = 0;
        set = ss_set(k);
        for (int w = 0; w < 2; w++) {
            uint32_t got = ss_probe(&set[w], k, lo, hi);
            if (got) {
                ss_t.hits++;
                *memo = &set[w];
                *id = got;
                return 1;
            }
        }
    }
    void *buf[HL_STACK_MAX_DEPTH];
    hl_uwf_words_t ws;
    int d = hl_uwf_walk_words(buf, (int)max, k->ret, k->fp + 16, rbp, k->fp, &ws);
    if (d <= 0) return 0; /* deferred: the caller's capture asks libunwind */
    int is_new;
    _Static_assert(sizeof(void *) == sizeof(uint64_t), "frames are pointers");
    *id = hl_stack_intern((const uint64_t *)buf, (size_t)d, &is_new);
    ss_t.misses++;
    if (!*id || !set || ws.over) return 1;
    uint32_t top = 0;
    for (int i = 0; i < ws.n; i++) {
        uintptr_t a = ws.w[i].slot;
        if (a < k->fp || (a & 7) || (a - k->fp) / 8 >= 0xffff) return 1; /* not verifiable */
        uint32_t t = (uint32_t)((a - k->fp) / 8) + 1;
        if (t > top) top = t;
    }
    ss_entry_t *e = !LOAD(set[0].seq)   ? &set[0]
                    : !LOAD(set[1].seq) ? &set[1]
                                        : &set[ss_t.turn++ & 1];
    ss_store(e, k, *id, top, &ws);
    *memo = e;
    return 1;
}

/* Largest distance from the capture's stack pointer to the entry's frame (as
 * stack_entry.c's). */
#define SS_ENTRY_MAX_DISTANCE (1u << 20)

uint64_t hl_stack_site_id(size_t max)
{
    /* The entry's frame, as hl_stack_entry_frame decides (inline: the text range cached). */
    uintptr_t fp = hl_stack_entry_fp, sp;
#if defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#else
    return 0;
#endif
    if (!fp || fp <= sp || fp - sp > SS_ENTRY_MAX_DISTANCE || (fp & 7)) return 0;
    if (__builtin_expect(atomic_load_explicit(&ss.state, memory_order_acquire) != 2, 0) &&
        !ss_ready())
        return 0;
    const volatile uintptr_t *f = (const volatile uintptr_t *)fp;
    uintptr_t ret = f[1], rbp = f[0];
    if (ss.self_lo < ss.self_hi && ret >= ss.self_lo && ret < ss.self_hi) return 0;
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    ss_key_t k = {fp, ret, 0,
                  (uint32_t)max | (uint32_t)atomic_load_explicit(&hl_uwf_gen, memory_order_relaxed)
                                      << 8};
    const ss_entry_t **memo = ss_memo(fp, ret);
    if (*memo) {
        uint32_t got = ss_probe(*memo, &k, hl_uwf_lo, hl_uwf_hi);
        if (got) {
            ss_t.hits++;
            return HL_STACK_SITE_DONE | got;
        }
    }
    uint32_t id = 0;
    return ss_slow(&k, rbp, max, memo, &id) ? HL_STACK_SITE_DONE | id : 0;
}

void hl_stack_site_stats(uint64_t *hits, uint64_t *misses)
{
    *hits = ss_t.hits;
    *misses = ss_t.misses;
}
