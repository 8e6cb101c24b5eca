/* liballoc/decay.c — decay passes over the heap's kept memory (see decay.h). */
#include "internal.h"
#include "decay.h"

#include <time.h>

uint32_t hl_decay_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* Slow paths of this thread since it last read the clock: one in HL_DECAY_EVERY reads it. */
static __thread uint32_t ticks __attribute__((tls_model("initial-exec")));

void hl_decay_run(hl_heap_t *h)
{
    if (++ticks % HL_DECAY_EVERY) return;
    uint32_t ops = __atomic_add_fetch(&h->decay_ops, 1, __ATOMIC_RELAXED);
    uint32_t now = hl_decay_now();
    uint32_t next = __atomic_load_n(&h->decay_next, __ATOMIC_RELAXED);
    if ((int32_t)(now - next) < 0 ||
        ops - __atomic_load_n(&h->decay_last_ops, __ATOMIC_RELAXED) < HL_DECAY_MIN_OPS)
        return;
    uint32_t step = h->opt.decay_ms / 4 ? h->opt.decay_ms / 4 : 1;
    if (!__atomic_compare_exchange_n(&h->decay_next, &next, now + step, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return; /* another thread runs this pass */
    __atomic_store_n(&h->decay_last_ops, ops, __ATOMIC_RELAXED);
    /* Cleared first: a cache that keeps something after this point sets it again. */
    __atomic_store_n(&h->decay_pending, 0, __ATOMIC_RELAXED);
    int left = hl_large_decay(h, now);
    left |= hl_mid_decay(h, now);
    if (left) __atomic_store_n(&h->decay_pending, 1, __ATOMIC_RELAXED);
}
