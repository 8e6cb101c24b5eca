/* liballoc/thread.c — per-thread caches: binding, flushing, thread exit, the thread registry.
 *
 * A thread's state starts as a static empty cache (all caps 0, no heap), so the first
 * allocation of every thread simply misses into the slow path, which binds the cache to the
 * heap; the fast path never asks "initialised?" (STYLE.md habit 3).
 * Thread exit: a pthread key destructor flushes the cache and marks it EXITING (caps 0), so
 * whatever the thread still frees in later destructors goes straight back to the slabs.
 * A thread that never allocated has no key value, so no destructor runs for it; glibc still
 * calls free from its teardown after the destructors (__nptl_free_stacks frees older stacks'
 * thread blocks). Such a thread's first frees do not bind its cache (hl_free_slow, up to
 * HL_TLS_BIND_AFTER_FREES): a cache bound then would never be flushed nor unregistered.
 * Registry: live thread states are listed so that statistics can sum their counters; the
 * registry lock is only taken at bind and exit. The list is a table of slots outside every
 * thread's TLS: adding or removing a thread writes only the table and the thread's own state,
 * never another thread's, so a state that outlived its thread (a cache bound after its
 * destructor ran) cannot make a later registration write into freed memory. A reader checks
 * that the state still names its slot (a reused TLS block starts zeroed) before it reads.
 */
#include "internal.h"
#include "harden.h" /* hardening hook: thread exit empties the buffers */

#include <string.h>

__thread hl_tls_t hl_tls __attribute__((tls_model("initial-exec")));
__thread hl_tls_t hl_tls_x __attribute__((tls_model("initial-exec")));

/* Registry slots: one per live bound cache (two per thread at most). A thread beyond the
 * table is served as well, unlisted: its counters reach the heap's totals at its exit. */
#define REGISTRY_SLOTS 4096u

static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* The registry in one object: its scalars beside the first slots, and the released slots
 * linked through the table itself (a released slot holds (1 + next released) << 1 | 1), so
 * that a process of a few threads touches one page of it, not one for a separate list of
 * free slots and another for the scalars. A slot holds a hl_tls_t * (even), NULL, or such a
 * link (odd). */
static struct {
    hl_lock_t lock;
    uint32_t used;      /* slots [0, used) have been handed out */
    uint32_t free_head; /* 1 + the last released slot, 0 none */
    uintptr_t slot[REGISTRY_SLOTS];
} registry = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_thread_exit(void *arg);

static void make_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

void hl_thread_init_once(void)
{
    pthread_once(&key_once, make_key);
}

/* The cache slot i lists, or NULL (empty or released). */
static hl_tls_t *registry_at(uint32_t i)
{
    uintptr_t v = registry.slot[i];
    return v & 1 ? NULL : (hl_tls_t *)v;
}

static void registry_release_locked(uint32_t i)
{
    registry.slot[i] = (uintptr_t)registry.free_head << 1 | 1;
    registry.free_head = i + 1;
}

/* A slot whose state no longer names it belongs to a thread that is gone (its TLS block was
 * reused and zeroed): take it back. Caller holds the registry's lock; only when it is full. */
static void registry_reclaim_locked(void)
{
    for (uint32_t i = 0; i < registry.used; i++) {
        hl_tls_t *t = registry_at(i);
        if (t && t->reg_slot != i + 1) registry_release_locked(i);
    }
}

static void registry_add(hl_tls_t *t)
{
    hl_lock(&registry.lock);
    if (!registry.free_head && registry.used == REGISTRY_SLOTS) registry_reclaim_locked();
    uint32_t i = REGISTRY_SLOTS;
    if (registry.free_head) {
        i = registry.free_head - 1;
        registry.free_head = (uint32_t)(registry.slot[i] >> 1);
    } else if (registry.used < REGISTRY_SLOTS) {
        i = registry.used++;
    }
    if (i < REGISTRY_SLOTS) {
        registry.slot[i] = (uintptr_t)t;
        t->reg_slot = i + 1;
    } else {
        t->reg_slot = 0;
    }
    hl_unlock(&registry.lock);
}

static void registry_del(hl_tls_t *t)
{
    hl_lock(&registry.lock);
    uint32_t i = t->reg_slot;
    if (i && i <= REGISTRY_SLOTS && registry_at(i - 1) == t) registry_release_locked(i - 1);
    t->reg_slot = 0;
    hl_unlock(&registry.lock);
}

/* Merge t's path counters into its heap's totals and zero them. */
static void merge_paths(hl_tls_t *t)
{
    if (!t->heap) return;
    for (unsigned i = 0; i < HL_PATH_COUNT; i++) {
        if (t->paths[i]) __atomic_add_fetch(&t->heap->paths[i], t->paths[i], __ATOMIC_RELAXED);
        t->paths[i] = 0;
    }
}

void hl_tls_flush(hl_tls_t *t)
{
    hl_heap_t *h = t->heap;
    if (!h) return;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        hl_tbin_t *b = &t->bins[HL_BIN_TINY | c];
        void *chain = b->head;
        b->head = NULL;
        if (!h->opt.harden && b->cap > h->tiny.caps[c]) /* grown: back to the base (tcap.h) */
            b->cap = h->tiny.caps[c];
        b->avail = (int32_t)b->cap;
        if (chain) hl_tiny_return_chain(h, c, chain);
    }
    hl_tcap_reset(t);
}

static void set_caps(hl_tls_t *t, const uint32_t *caps)
{
    for (unsigned c = 0; c < HL_CLASS_MAX; c++) {
        hl_tbin_t *b = &t->bins[HL_BIN_TINY | c];
        b->head = NULL;
        b->cap = caps ? caps[c] : 0;
        b->avail = (int32_t)b->cap;
    }
    hl_tcap_reset(t);
}

hl_tls_t *hl_tls_bind(hl_heap_t *h)
{
    hl_tls_t *t = hl_tls_of(h);
    if (t->state == HL_TLS_EXITING) {
        /* Late calls during thread teardown: serve without caching. */
        if (t->heap != h) {
            merge_paths(t);
            t->heap = h;
        }
        return t;
    }
    if (t->heap && t->heap != h) {
        if (hl_heap_alive(t->heap, t->heap_uid)) {
            hl_tls_flush(t);
            merge_paths(t);
            hl_mid_leave_arena(t->heap, t->arena);
        }
        memset(t->paths, 0, sizeof t->paths);
    }
    if (t->state == HL_TLS_FRESH) {
        hl_thread_init_once();
        registry_add(t);
        t->state = HL_TLS_BOUND;
        /* Any non-NULL value makes the destructor run; it handles both caches. */
        pthread_setspecific(exit_key, &hl_tls);
    }
    set_caps(t, h->tiny.caps);
    t->heap = h;
    t->heap_uid = h->uid;
    t->arena = hl_mid_pick_arena(h); /* left at exit or at the next bind (mid.h) */
    return t;
}

static void cache_exit(hl_tls_t *t)
{
    if (t->state != HL_TLS_BOUND) return;
    /* Hardening hook: the thread's buffers, if any. Called even when t's heap is gone: the
     * buffers may belong to an older heap still alive, whose check walks them (harden.c). */
    if (t->heap) hl_harden_thread_flush(t->heap);
    if (t->heap && hl_heap_alive(t->heap, t->heap_uid)) {
        hl_tls_flush(t);
        merge_paths(t);
        hl_mid_leave_arena(t->heap, t->arena);
    }
    set_caps(t, NULL);
    t->state = HL_TLS_EXITING;
    registry_del(t);
}

static void on_thread_exit(void *arg)
{
    if (arg != &hl_tls) return;
    cache_exit(&hl_tls);
    cache_exit(&hl_tls_x);
}

void hl_thread_sum_paths(hl_heap_t *h, uint64_t *out)
{
    for (unsigned i = 0; i < HL_PATH_COUNT; i++)
        out[i] = __atomic_load_n(&h->paths[i], __ATOMIC_RELAXED);
    hl_lock(&registry.lock);
    for (uint32_t s = 0; s < registry.used; s++) {
        hl_tls_t *t = registry_at(s);
        if (t && t->reg_slot == s + 1 && t->heap == h)
            for (unsigned i = 0; i < HL_PATH_COUNT; i++)
                out[i] += t->paths[i];
    }
    /* Exiting threads are off the registry but may still count; the caller's own state
     * is on it unless it is exiting. */
    hl_tls_t *self = hl_tls_of(h);
    if (self->state == HL_TLS_EXITING && self->heap == h)
        for (unsigned i = 0; i < HL_PATH_COUNT; i++)
            out[i] += self->paths[i];
    hl_unlock(&registry.lock);
}

/* Fork: the registry lock is taken last in prepare (after the heaps' locks) and released
 * first; in the child only the forking thread survives. */
void hl_thread_fork_prepare(void)
{
    hl_lock(&registry.lock);
}
void hl_thread_fork_parent(void)
{
    hl_unlock(&registry.lock);
}
void hl_thread_fork_child(void)
{
    hl_lock_init(&registry.lock);
    memset(registry.slot, 0, registry.used * sizeof registry.slot[0]);
    registry.used = registry.free_head = 0;
    hl_tls_t *selves[2] = {&hl_tls, &hl_tls_x};
    for (int i = 0; i < 2; i++)
        if (selves[i]->state == HL_TLS_BOUND) registry_add(selves[i]);
}

int hl_thread_caches(hl_heap_t *h, hl_tls_t **out, size_t max)
{
    if (pthread_mutex_trylock(&registry.lock) != 0) return -1;
    size_t n = 0;
    for (uint32_t s = 0; s < registry.used && n < max; s++) {
        hl_tls_t *t = registry_at(s);
        if (t && t->reg_slot == s + 1 && t->heap == h) out[n++] = t;
    }
    hl_unlock(&registry.lock);
    hl_tls_t *self = hl_tls_of(h);
    int listed = 0;
    for (size_t i = 0; i < n; i++)
        listed |= out[i] == self;
    if (!listed && self->heap == h && n < max) out[n++] = self;
    return (int)n;
}
