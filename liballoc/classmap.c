/* liballoc/classmap.c — the class map (see classmap.h). */
#include "internal.h"
#include "classmap.h"

#include <sched.h>
#include <sys/mman.h>

static const uint8_t cmap_none[1]; /* before the first allocation: only free(NULL) reads it */
const uint8_t *hl_cmap = cmap_none;
static uint8_t *cmap_real;       /* NULL when not reserved */
static const uint8_t *cmap_zero; /* NULL when not reserved */
static int cmap_state;           /* 0 not started, 1 mapping, 2 done */

/* The preloaded free's switch to its header-byte variant (shim.c); absent without the shim. */
extern void hl_shim_free_without_map(void) __attribute__((weak, visibility("hidden")));

void hl_cmap_init(void)
{
    int st = 0;
    if (!__atomic_compare_exchange_n(&cmap_state, &st, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&cmap_state, __ATOMIC_ACQUIRE) != 2)
            sched_yield();
        return;
    }
    /* Read-only private anonymous memory reads as the shared zero page: no RSS, no commit.
     * Both maps or neither: they cost 4 GiB of address space (no memory), and free can use
     * them only together. Under an address-space limit without that room (ulimit -v), nothing
     * stays reserved and the preloaded free becomes its header-byte variant before the first
     * block is handed out. */
    void *z =
        mmap(NULL, HL_CMAP_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *m = z == MAP_FAILED ? MAP_FAILED
                              : mmap(NULL, HL_CMAP_BYTES, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m != MAP_FAILED) {
        cmap_zero = z;
        cmap_real = m;
        if (hl_cmap == cmap_none) __atomic_store_n(&hl_cmap, cmap_zero, __ATOMIC_RELEASE);
    } else {
        if (z != MAP_FAILED) munmap(z, HL_CMAP_BYTES);
        if (hl_shim_free_without_map) hl_shim_free_without_map();
    }
    __atomic_store_n(&cmap_state, 2, __ATOMIC_RELEASE);
}

int hl_cmap_reserved(void)
{
    hl_cmap_init();
    return cmap_real != NULL;
}

void hl_cmap_gate(int open)
{
    hl_cmap_init();
    if (cmap_real) __atomic_store_n(&hl_cmap, open ? cmap_real : cmap_zero, __ATOMIC_RELEASE);
}

int hl_cmap_open(void)
{
    const uint8_t *m = __atomic_load_n(&hl_cmap, __ATOMIC_ACQUIRE);
    return m != NULL && m == cmap_real;
}

void hl_cmap_set(const void *base, size_t bytes, uint8_t tag)
{
    if (!cmap_real) return;
    uintptr_t w = (uintptr_t)base >> HL_CMAP_SHIFT, n = bytes >> HL_CMAP_SHIFT;
    for (uintptr_t i = 0; i < n; i++)
        __atomic_store_n(&cmap_real[w + i], tag, __ATOMIC_RELEASE);
}

unsigned hl_cmap_get(const void *p)
{
    return cmap_real ? __atomic_load_n(&cmap_real[(uintptr_t)p >> HL_CMAP_SHIFT], __ATOMIC_ACQUIRE)
                     : 0;
}
