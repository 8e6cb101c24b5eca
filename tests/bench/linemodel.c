/* Line-sharing model: which cache lines move between threads, counted, not timed (this VM has
 * no hardware counters and a loaded machine hides the traffic by rarely running two threads at
 * once). An interposer over the allocator below it:
 *
 *   make bench-linemodel
 *   LD_PRELOAD=build/bench/lib/linemodel.so:ALLOCATOR.so build/bench/bin/larson 2 200
 *
 * Each thread's accesses to a block that every allocator and larson make are modelled: free(p)
 * writes the link at p, malloc's pop reads it, larson writes p[0] and p[n-1] (requests of
 * 16..1024 bytes; others are not counted). For each 64-byte line the last thread and block that
 * touched it are kept; an access by another thread is a transfer, of the same block (the block
 * moved between threads) or of another (false sharing: neighbours on one line). Printed on
 * stderr at exit. The model takes a spinlock per operation: it counts, it is not fast.
 * (docs/PERFORMANCE.md, "Issue 14, sixth round".)
 *
 * LINEMODEL_LINKS=side models an allocator that keeps its free links outside the blocks (a
 * per-thread array of pointers, in lines no other thread touches): free and malloc's pop touch
 * no block line, the program's writes still do. The blocks reused are the allocator's below,
 * so the two modes compare where the link lives, not which thread reuses a block
 * (docs/PERFORMANCE.md, "Issue 14, seventh round"). LINEMODEL_LINKS=block (the default) is
 * the link in the block's first word. */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { BITS = 22, ENTRIES = 1 << BITS, KINDS = 4 };

typedef struct {
    uintptr_t line, block;
    int tid;
} line_t;

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static line_t *lines; /* open addressing, ENTRIES lines */
static int lock_word, threads;
static __thread int tid;
static int side_links; /* LINEMODEL_LINKS=side: free and pop touch no block line */
static unsigned long accesses[KINDS], same[KINDS], other[KINDS];
static const char *const kind_name[KINDS] = {"free-link", "malloc-pop", "touch-first",
                                             "touch-last"};

static void lock(void)
{
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
        ;
}

static void unlock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

/* Caller holds the lock. */
static void touch(uintptr_t addr, uintptr_t block, int kind)
{
    uintptr_t line = addr >> 6;
    size_t h = (size_t)((line * 0x9E3779B97F4A7C15ull) >> (64 - BITS));
    while (lines[h].line && lines[h].line != line)
        h = (h + 1) & (ENTRIES - 1);
    accesses[kind]++;
    if (lines[h].line && lines[h].tid != tid) {
        if (lines[h].block == block)
            same[kind]++;
        else
            other[kind]++;
    }
    lines[h].line = line;
    lines[h].tid = tid;
    lines[h].block = block;
}

static void resolve(void)
{
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

static void enter(void)
{
    if (!tid) tid = __atomic_add_fetch(&threads, 1, __ATOMIC_RELAXED);
    lock();
}

void *malloc(size_t n)
{
    if (!next_malloc) resolve();
    void *p = next_malloc(n);
    if (p && lines && n >= 16 && n <= 1024) {
        enter();
        if (!side_links) touch((uintptr_t)p, (uintptr_t)p, 1);
        touch((uintptr_t)p, (uintptr_t)p, 2);
        touch((uintptr_t)p + n - 1, (uintptr_t)p, 3);
        unlock();
    }
    return p;
}

void free(void *p)
{
    if (!next_free) resolve();
    if (p && lines && !side_links) {
        enter();
        touch((uintptr_t)p, (uintptr_t)p, 0);
        unlock();
    }
    next_free(p);
}

__attribute__((constructor)) static void start(void)
{
    resolve();
    const char *mode = getenv("LINEMODEL_LINKS");
    if (mode && strcmp(mode, "side") == 0) {
        side_links = 1;
    } else if (mode && *mode && strcmp(mode, "block") != 0) {
        static const char msg[] = "linemodel: LINEMODEL_LINKS must be 'block' (the link in the "
                                  "block's first word, the default) or 'side' (links outside "
                                  "the blocks)\n";
        if (write(2, msg, sizeof msg - 1) < 0) _exit(2);
        _exit(2);
    }
    void *m = mmap(NULL, ENTRIES * sizeof(line_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m != MAP_FAILED) lines = m;
}

__attribute__((destructor)) static void report(void)
{
    unsigned long ta = 0, ts = 0, to = 0;
    for (int k = 0; k < KINDS; k++) {
        fprintf(stderr,
                "LINES %-12s accesses %10lu  from another thread: same block %9lu  "
                "other block %9lu\n",
                kind_name[k], accesses[k], same[k], other[k]);
        ta += accesses[k];
        ts += same[k];
        to += other[k];
    }
    fprintf(stderr,
            "LINES total        accesses %10lu  from another thread: same block %9lu  "
            "other block %9lu\n",
            ta, ts, to);
}
