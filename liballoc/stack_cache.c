/* liballoc/stack_cache.c — the chain cache: stack ids of hardened mode's allocation and free
 * stacks without a full walk.
 *
 * A program allocates from few call sites through a limited set of call chains, over and
 * over (gcc compiling a file: ~670 k captures, ~27 k distinct stacks), but at many stack
 * depths: the same chain of return addresses sits at a different stack pointer whenever the
 * program's own recursion above it is deeper or shallower. So the cache keys a chain by what
 * a walk sees, not by where: the walk (unwind_fast.c) runs through heapledger's own frames and
 * the program's first SC_PRE frames, then the chain's remaining frames are looked up by those
 * return addresses and replayed instead of walked.
 *
 * Why a replay is the walk. A step of the walk from a frame uses the unwind rule of the
 * frame's return address (CFA = rsp + N or rbp + N, the return address at CFA - 8, rbp
 * restored from CFA - k or kept) and reads the next return address and perhaps rbp. An entry
 * keeps, for a chain walked once, the rule of each step (hl_uwf_continue_trail) and the
 * interned id, whose frames the stack table keeps. A replay (hl_uwf_replay) from the same
 * return address makes the same steps with those rules instead of looking them up, and
 * compares each return address read with the id's next frame: by induction, while every one
 * matches, every rule is the one the walk would look up and every read the one it would
 * make, so a verified chain is exactly what the walk returns (same frames, same depth, same
 * end: the depth limit, the last frame, or a return address below 0x4000, which the replay
 * reads too). This holds for frames whose size is known only at run time (CFA from rbp:
 * alloca, VLAs, realigned stacks; cc1 has one in nearly every stack): the replay follows
 * rbp as the walk does. Reads stay inside the pages the walk has checked for this thread (the
 * cursor's [lo, hi)): a step that would leave them, or one the walk would defer at, ends the
 * replay as a miss and the walk goes on (it checks pages, or asks libunwind). A chain through
 * a signal frame (the walk defers) or of more than SC_STEPS steps is never cached.
 *
 * Cost, measured on cc1 (docs/PERFORMANCE.md, "The chain cache"): a hit walks the prefix (our
 * frames and SC_PRE of the program's), hashes its return addresses, compares one or more ways
 * and replays ~17 instructions a frame instead of ~40; a miss walks on from the prefix (no
 * frame is walked twice), interns and writes the entry.
 *
 * The table: SC_SETS sets of SC_WAYS 128-byte entries, mapped once with MAP_NORESERVE (pages
 * are touched as chains appear), shared by all threads (a chain verified against the
 * reader's own stack is valid in any thread). Entries are written under a per-entry sequence
 * number (odd while written; a writer that finds it odd skips the update) and read
 * optimistically: a reader that sees the number change discards what it read; a torn entry
 * can only fail its compare, since its frames come from the stack table (immutable once
 * published) and its reads are bounded by the reader's own checked pages. Nothing here
 * allocates, locks or calls stdio.
 */
#include "stack.h"
#include "unwind_fast.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SC_SETS  4096u /* power of two */
#define SC_WAYS  4u
#define SC_PRE   3  /* the program's frames walked before the lookup (part of the key) */
#define SC_STEPS 26 /* steps an entry replays */
/* Frames our walk stores: heapledger's own, then the program's (at most HL_STACK_MAX_DEPTH),
 * as in hl_stack_capture_user. */
#define SC_WALK (HL_STACK_MAX_DEPTH + 40)

typedef struct sc_entry_s {
    _Atomic uint32_t seq; /* 0 = empty, odd = being written */
    uint32_t id;          /* interned stack: the prefix's frames, then the replayed ones */
    uint64_t hash;        /* of the key: from, pre, generation, the prefix's return addresses */
    uint8_t from, pre;    /* key: frames of ours before the program's; the program's walked */
    uint8_t frames, end;  /* frames the replay adds; why the walk stopped (HL_UWF_END_*) */
    uint16_t gen;         /* the rule cache's generation when walked */
    uint8_t steps, pad;   /* rules kept */
    uint32_t rule[SC_STEPS];
} sc_entry_t;

_Static_assert(sizeof(sc_entry_t) == 128, "an entry is two cache lines");
_Static_assert(SC_STEPS <= HL_UWF_TRAIL, "a trail holds an entry's rules");

static struct {
    _Atomic int state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    sc_entry_t *tab;   /* [SC_SETS * SC_WAYS] */
} sc;

/* Where this thread's own frames usually end (the walk's first guess), the next way to
 * replace, and this thread's counters (hl_stack_cache_stats). */
static __thread uint32_t sc_from_hint __attribute__((tls_model("initial-exec")));
static __thread uint32_t sc_tick __attribute__((tls_model("initial-exec")));
static __thread hl_stack_cache_stats_t sc_count __attribute__((tls_model("initial-exec")));

static int sc_ready(void)
{
    int st = atomic_load_explicit(&sc.state, memory_order_acquire);
    if (st == 2) return 1;
    if (st == 0 && atomic_compare_exchange_strong(&sc.state, &st, 1)) {
        void *m = mmap(NULL, (size_t)SC_SETS * SC_WAYS * sizeof(sc_entry_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) sc.tab = m;
        atomic_store_explicit(&sc.state, m != MAP_FAILED ? 2 : -1, memory_order_release);
        return m != MAP_FAILED;
    }
    return 0; /* failed, or another thread is mapping it: capture without the cache */
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline uint64_t sc_key(void *const *ips, uint32_t from, uint32_t pre, uint32_t gen)
{
    uint64_t h =
        ((uint64_t)from | (uint64_t)pre << 8 | (uint64_t)gen << 16) + 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < pre; i++) {
        h = (h ^ (uint64_t)(uintptr_t)ips[from + i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h | 1;
}

/* The id of entry e if it replays from the cursor: the prefix ips[from, from + pre) equals
 * the id's first frames, the replay reads its next frames and ends the same way under the
 * walk's limit n; else 0. */
static uint32_t sc_replay(const sc_entry_t *e, uint64_t h, const hl_uwf_cursor_t *c,
                          void *const *ips, uint32_t from, uint32_t pre, int n, uint32_t gen)
{
    uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (!s1 || (s1 & 1) || LOAD(e->hash) != h) return 0;
    uint32_t frames = LOAD(e->frames), end = LOAD(e->end), steps = LOAD(e->steps);
    uint32_t id = LOAD(e->id);
    if (LOAD(e->from) != from || LOAD(e->pre) != pre || LOAD(e->gen) != (uint16_t)gen) return 0;
    /* The walk stops at its limit n, or before it at the last frame or a low word. */
    uint32_t d = from + pre + frames;
    if (end == HL_UWF_END_LIMIT ? d != (uint32_t)n : d >= (uint32_t)n) return 0;
    size_t depth;
    const uint64_t *want = hl_stack_lookup(id, &depth);
    if (!want || depth != pre + frames || steps > SC_STEPS) return 0;
    for (uint32_t i = 0; i < pre; i++)
        if (want[i] != (uint64_t)(uintptr_t)ips[from + i]) return 0;
    /* The rules as they are: a torn entry only fails the compare (its reads stay inside the
     * checked pages), and a changed sequence number discards the answer. */
    int ok = hl_uwf_replay(c, e->rule, (int)steps, want + pre, (int)frames, (int)end);
    atomic_thread_fence(memory_order_acquire);
    return ok && atomic_load_explicit(&e->seq, memory_order_relaxed) == s1 ? id : 0;
}

/* Keep the walked chain of id in set (at most SC_STEPS steps). */
static void sc_store(sc_entry_t *set, uint64_t h, uint32_t id, uint32_t from, uint32_t pre,
                     uint32_t frames, const hl_uwf_trail_t *t, uint32_t gen)
{
    if (t->lost || t->steps > SC_STEPS) return;
    sc_entry_t *e = NULL;
    for (uint32_t w = 0; w < SC_WAYS && !e; w++)
        if (atomic_load_explicit(&set[w].seq, memory_order_relaxed) == 0) e = &set[w];
    if (!e) e = &set[sc_tick++ & (SC_WAYS - 1)];
    uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if ((s & 1) || !atomic_compare_exchange_strong(&e->seq, &s, s + 1))
        return; /* another thread is writing it */
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < t->steps; i++)
        __atomic_store_n(&e->rule[i], t->rule[i], __ATOMIC_RELAXED);
    __atomic_store_n(&e->hash, h, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&e->from, (uint8_t)from, __ATOMIC_RELAXED);
    __atomic_store_n(&e->pre, (uint8_t)pre, __ATOMIC_RELAXED);
    __atomic_store_n(&e->frames, (uint8_t)frames, __ATOMIC_RELAXED);
    __atomic_store_n(&e->end, (uint8_t)t->end, __ATOMIC_RELAXED);
    __atomic_store_n(&e->steps, (uint8_t)t->steps, __ATOMIC_RELAXED);
    __atomic_store_n(&e->gen, (uint16_t)gen, __ATOMIC_RELAXED);
    atomic_store_explicit(&e->seq, s + 2 ? s + 2 : 2, memory_order_release);
}

/* The stack as hl_stack_capture_user(.., max, skip + 1) from here would capture it, interned. */
static __attribute__((noinline)) uint32_t sc_plain(size_t max, size_t skip)
{
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t d = hl_stack_capture_user(ips, max, skip + 2);
    int is_new;
    return hl_stack_intern(ips, d, &is_new);
}

/* The chain cache's capture (hl_stack_capture_id with unwind=fast): 0 when the walk deferred
 * (*deferred = 1: libunwind must answer) or the stack is empty. */
static __attribute__((noinline)) uint32_t sc_capture(size_t max, size_t skip, int *deferred)
{
    void *buf[SC_WALK];
    hl_uwf_cursor_t c;
    *deferred = 1;
    uint32_t gen = hl_uwf_generation(); /* before the walk: its rules are this generation's */
    if (hl_uwf_begin(&c) != 0) return 0;
    /* buf[0] is in sc_capture, buf[1] in hl_stack_capture_id, buf[2] in its caller: the
     * frames of hl_stack_capture_user's walk from there, two further in (stack_walk's). */
    buf[0] = (void *)c.ip;
    uintptr_t lo, hi;
    hl_stack_self_range(&lo, &hi);
    int self = lo < hi;
    /* sc_plain's walk (stack_walk, hl_stack_capture_user, sc_plain, hl_stack_capture_id, its
     * caller) stores two frames more before our caller's: its limit, max + HL_STACK_SELF_SLACK
     * with our module known, else max + (skip + 2) + 2, is two less here, and its first frame
     * kept without our module, buf[skip + 4] there, is buf[skip + 2]. */
    int cap = self ? (int)(max + HL_STACK_SELF_SLACK - 2) : (int)(max + skip + 2);
    int from = self ? -1 : (int)skip + 2;
    int d = 1;
    /* First to where our frames ended last time on this thread (plus the first of the
     * program's), then on to SC_PRE frames of the program's. */
    int guess = self ? (int)(sc_from_hint ? sc_from_hint : 5) + 1 : from + SC_PRE;
    while (from < 0 || d < from + SC_PRE) {
        int want = from < 0 ? guess : from + SC_PRE;
        if (want > cap) want = cap;
        if (want <= d) break;
        d = hl_uwf_continue(&c, buf, d, want);
        if (d < 0) return 0;
        if (from < 0) {
            for (int i = 0; i < d; i++)
                if ((uintptr_t)buf[i] < lo || (uintptr_t)buf[i] >= hi) {
                    from = i;
                    break;
                }
            guess = d + 8;
        }
        if (c.end) break;
    }
    *deferred = 0;
    if (from < 0) return 0; /* only our frames within the limit */
    if (self) sc_from_hint = (uint32_t)from;
    int n = from + (int)max < cap ? from + (int)max : cap; /* the walk's limit */
    if (d > n) d = n;
    int is_new;
    if (d <= from) return 0;
    uint32_t pre = (uint32_t)(d - from);
    if (c.end || d == n) { /* the walk is complete: nothing to replay */
        sc_count.uncached++;
        return hl_stack_intern((const uint64_t *)&buf[from], (size_t)(d - from), &is_new);
    }
    uint64_t h = sc_key(buf, (uint32_t)from, pre, gen);
    sc_entry_t *set = &sc.tab[(h >> 20) & (SC_SETS - 1)];
    for (uint32_t w = 0; w < SC_WAYS; w++) {
        uint32_t id = sc_replay(&set[w], h, &c, buf, (uint32_t)from, pre, n, gen);
        if (id) {
            sc_count.hits++;
            return id;
        }
    }
    hl_uwf_trail_t t;
    t.steps = t.lost = 0;
    int d2 = hl_uwf_continue_trail(&c, buf, d, n, &t);
    if (d2 < 0) {
        *deferred = 1;
        return 0;
    }
    uint32_t id = hl_stack_intern((const uint64_t *)&buf[from], (size_t)(d2 - from), &is_new);
    sc_count.misses++;
    if (id && hl_uwf_generation() == gen)
        sc_store(set, h, id, (uint32_t)from, pre, (uint32_t)(d2 - d), &t, gen);
    return id;
}

/* unwind=check: the chain cache's id against a full capture's. */
static void sc_check(uint32_t cached, uint32_t full)
{
    if (cached == full) return;
    static const char msg[] = "heapledger: unwind=check: the chain cache's stack differs from a "
                              "full walk's (please report this with the program; unwind=libunwind "
                              "avoids the cache)\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    abort();
}

__attribute__((noinline)) uint32_t hl_stack_capture_id(size_t max, size_t skip)
{
    if (max == 0) return 0;
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    if (skip > 30) skip = 30;
    int mode = hl_stack_unwind_mode();
    uint32_t id = 0;
    int deferred = 1;
    if (mode != HL_UNWIND_LIBUNWIND && sc_ready()) id = sc_capture(max, skip, &deferred);
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame is frame 1 */
    if (deferred || mode == HL_UNWIND_CHECK) {
        uint32_t full = sc_plain(max, skip);
        if (!deferred) sc_check(id, full);
        id = full;
    }
    __asm__ volatile("" ::: "memory");
    return id;
}

void hl_stack_cache_stats(hl_stack_cache_stats_t *s)
{
    *s = sc_count;
}
