/* liballoc/classmap.c — the class map (see classmap.h). */
#include "internal.h"
#include "classmap.h"

#include <sched.h>
#include <sys/mman.h>

static const uint8_t cmap_none[1]; /* before the first allocation: only free(NULL) reads it */
const uint8_t *hl_cmap = cmap_none;
static uint8_t *cmap_real; /* NULL when not reserved */
static const uint8_t *cmap_zero;
static int cmap_state; /* 0 not started, 1 mapping, 2 done */

void hl_cmap_init(void)
{
    int st = 0;
    if (!__atomic_compare_exchange_n(&cmap_state, &st, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&cmap_state, __ATOMIC_ACQUIRE) != 2)
            sched_yield();
        return;
    }
    /* Read-only private anonymous memory reads as the shared zero page: no RSS, no commit. */
    void *z =
        mmap(NULL, HL_CMAP_BYTES, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (z == MAP_FAILED) /* free could not read a tag for any block: nothing works */
        hl_fatal("init", NULL,
                 "cannot reserve the class map (2 GiB of address space, no memory: "
                 "MAP_NORESERVE); raise the address-space limit (ulimit -v) by at least "
                 "2 GiB, 4 GiB for the fast free path, or run without heapledger");
    /* Without the real map every free reads the header byte (the gate stays on the zero
     * map): slower, the same results. */
    void *m = mmap(NULL, HL_CMAP_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    cmap_zero = z;
    if (m != MAP_FAILED) cmap_real = m;
    if (hl_cmap == cmap_none) __atomic_store_n(&hl_cmap, cmap_zero, __ATOMIC_RELEASE);
    __atomic_store_n(&cmap_state, 2, __ATOMIC_RELEASE);
}

void hl_cmap_gate(int open)
{
    hl_cmap_init();
    __atomic_store_n(&hl_cmap, open && cmap_real ? cmap_real : cmap_zero, __ATOMIC_RELEASE);
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
