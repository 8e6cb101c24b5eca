/* Measuring wrapper (not built by make; issue 14, docs/PERFORMANCE.md):
 * LD_PRELOAD=lineshare.so:ALLOCATOR.so counts mallocs and frees whose block line was last written
 * by another thread. Build: cc -O2 -shared -fPIC -o lineshare.so lineshare_meas.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void *(*rm)(size_t);
static void (*rf)(void *);
static char boot[1 << 16];
static size_t bootn;
static uint8_t owner[1u << 24];
static unsigned long n_m, n_f, x_m, x_f, nid;
static __thread unsigned me;
static __thread unsigned long tm, tf, txm, txf;
#define IDX(a) (((uintptr_t)(a) >> 6) & ((1u << 24) - 1))
static unsigned id(void)
{
    if (!me) me = (unsigned)__atomic_add_fetch(&nid, 1, __ATOMIC_RELAXED) % 250 + 1;
    return me;
}
static inline int mark(const void *a, unsigned t)
{
    uint8_t *o = &owner[IDX(a)];
    int x = *o && *o != t;
    *o = (uint8_t)t;
    return x;
}
static void flush(void)
{
    __atomic_add_fetch(&n_m, tm, 0);
    __atomic_add_fetch(&n_f, tf, 0);
    __atomic_add_fetch(&x_m, txm, 0);
    __atomic_add_fetch(&x_f, txf, 0);
    tm = tf = txm = txf = 0;
}
void *malloc(size_t n)
{
    if (!rm) {
        if (bootn + n + 16 > sizeof boot) return NULL;
        void *p = boot + bootn;
        bootn += (n + 15) & ~15ul;
        return p;
    }
    void *p = rm(n);
    if (p && n <= 1024) {
        unsigned t = id();
        tm++;
        int x = mark(p, t);
        if (IDX((char *)p + n - 1) != IDX(p)) x |= mark((char *)p + n - 1, t);
        txm += x;
        if ((tm & 1023) == 0) flush();
    }
    return p;
}
void free(void *p)
{
    if ((char *)p >= boot && (char *)p < boot + sizeof boot) return;
    if (p) {
        unsigned t = id();
        tf++;
        txf += mark(p, t);
    }
    rf(p);
}
__attribute__((constructor)) static void init(void)
{
    rm = dlsym(RTLD_NEXT, "malloc");
    rf = dlsym(RTLD_NEXT, "free");
}
__attribute__((destructor)) static void fini(void)
{
    flush();
    char b[200];
    int k = snprintf(b, sizeof b,
                     "LINES mallocs=%lu cross_m=%lu (%.2f%%) frees=%lu cross_f=%lu (%.2f%%)\n", n_m,
                     x_m, 100.0 * x_m / (n_m ? n_m : 1), n_f, x_f, 100.0 * x_f / (n_f ? n_f : 1));
    if (write(2, b, k)) {
    }
}
