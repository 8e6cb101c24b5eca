/* liballoc/midcache.c — the per-thread cache of freed mid blocks (midcache.h). */
#include "internal.h"
#include "midcache.h"

typedef struct hl_mc_s {
    void *blk[HL_MC_BANDS][HL_MC_SLOTS]; /* per band, oldest first */
    uint8_t n[HL_MC_BANDS];
    uint32_t count; /* blocks held */
    size_t bytes;   /* their usable bytes */
    uint32_t hits;  /* requests served since the last decay check on this thread */
    uint32_t stamp; /* hl_decay_now() of that check */
} hl_mc_t;

static __thread hl_mc_t mc __attribute__((tls_model("initial-exec")));

_Static_assert(HL_MC_SLOTS <= 255, "band counts are bytes");

/* Band of a block of `usable` bytes (its lower bound <= usable), or -1 outside the bands. */
static inline int band_of(size_t usable)
{
    if (usable < ((size_t)1 << HL_MC_MIN_LOG2)) return -1;
    unsigned f = 63u - (unsigned)__builtin_clzll(usable);
    if (f > HL_MC_MAX_LOG2) return -1;
    return (int)((f - HL_MC_MIN_LOG2) * 4 + ((usable >> (f - 2)) & 3));
}

static inline size_t band_low(unsigned b)
{
    return (size_t)(4 + (b & 3)) << (HL_MC_MIN_LOG2 + b / 4 - 2);
}

/* Is this thread's cache usable for h now (see midcache.h, "Thread safety")? */
static inline int mc_ready(const hl_heap_t *h)
{
    return h->mid.cache_on && hl_tls.state == HL_TLS_BOUND && hl_tls.heap == h;
}

int hl_mc_enabled(const hl_heap_t *h)
{
    return h->mid.cache_on != 0;
}

void *hl_mc_get(hl_heap_t *h, size_t n)
{
    if (!mc_ready(h) || !mc.count) return NULL;
    int b = band_of(n);
    if (b < 0) return NULL;
    if (band_low((unsigned)b) < n) b++; /* the first band whose every block holds n */
    for (int k = b; k < b + 2 && k < (int)HL_MC_BANDS; k++) {
        if (!mc.n[k]) continue;
        void *p = mc.blk[k][--mc.n[k]]; /* the newest: its pages are the warmest */
        mc.count--;
        mc.bytes -= hl_tlsf_usable(p);
        mc.hits++;
        return p;
    }
    return NULL;
}

/* Take the oldest block of band b out of the cache. */
static void *band_pop_oldest(unsigned b)
{
    void *p = mc.blk[b][0];
    for (unsigned i = 1; i < mc.n[b]; i++)
        mc.blk[b][i - 1] = mc.blk[b][i];
    mc.n[b]--;
    mc.count--;
    mc.bytes -= hl_tlsf_usable(p);
    return p;
}

int hl_mc_put(hl_heap_t *h, void *p, size_t usable)
{
    if (!mc_ready(h) || usable > HL_MC_BYTES) return 0;
    int b = band_of(usable);
    if (b < 0) return 0;
    /* Make room first; each block leaves the cache before it goes back to its arena, so a
     * call nested in that release (the tracer's) finds the cache consistent. */
    while (mc.n[b] == HL_MC_SLOTS || mc.bytes + usable > HL_MC_BYTES) {
        unsigned v = (unsigned)b;
        if (mc.n[b] < HL_MC_SLOTS) /* over the byte budget: the biggest blocks go first */
            for (v = HL_MC_BANDS - 1; v > 0 && !mc.n[v]; v--)
                ;
        hl_mid_release(h, band_pop_oldest(v));
    }
    mc.blk[b][mc.n[b]++] = p;
    if (mc.count++ == 0) /* something is kept: decay passes look at it (decay.h) */
        __atomic_store_n(&h->decay_pending, 1, __ATOMIC_RELAXED);
    mc.bytes += usable;
    return 1;
}

size_t hl_mc_flush(hl_heap_t *h)
{
    size_t bytes = 0;
    if (h != &hl_main_heap) return 0;
    for (unsigned b = 0; b < HL_MC_BANDS && mc.count; b++)
        while (mc.n[b]) {
            void *p = band_pop_oldest(b);
            bytes += hl_tlsf_usable(p);
            hl_mid_release(h, p);
        }
    return bytes;
}

void hl_mc_decay(hl_heap_t *h, uint32_t now)
{
    if (h != &hl_main_heap || (uint32_t)(now - mc.stamp) < h->opt.decay_ms) return;
    if (mc.count && !mc.hits) hl_mc_flush(h);
    mc.hits = 0;
    mc.stamp = now;
}
