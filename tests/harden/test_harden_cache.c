/* tests/harden/test_harden_cache.c — the per-thread buffers of a hardened heap
 * (liballoc/harden_cache.h): every block in a thread's quarantine buffer or reuse cache is
 * still free for every check. A double free of such a block, a write into it after its free
 * (the first word too: the cache never links through the blocks), and thread exit (the
 * buffers go to the shared quarantine and the heap) are tested on heap objects, with
 * abort_on_error=0 so that reports are counted; fork is tested in a child.
 */
#include "harden.h"
#include "harden_test.h"
#include "harden_cache.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OPTS "harden=1,abort_on_error=0,quarantine=4K"

static int saved_err = -1;

/* Reports go to /dev/null while counted. */
static void quiet(void)
{
    int null = open("/dev/null", O_WRONLY);
    saved_err = dup(2);
    dup2(null, 2);
    close(null);
}

static void loud(void)
{
    dup2(saved_err, 2);
    close(saved_err);
}

/* Is p in the calling thread's quarantine buffer (1), its reuse cache (2), or neither (0)? */
static int where(hl_heap_t *h, const void *p)
{
    hl_hcache_t *c = hl_hcache_peek(h);
    if (!c) return 0;
    for (uint32_t i = 0; i < c->nq; i++)
        if (c->q[i] == p) return 1;
    return in_reuse_cache(h, p) ? 2 : 0;
}

/* Free p, then push it through the 4 KiB shared quarantine with frees of other blocks of the
 * same size (n of them, allocated before p) until it lands in the reuse cache. */
static void into_reuse_cache(hl_heap_t *h, char *p, char **others, int n)
{
    hl_heap_free(h, p);
    cr_assert_eq(where(h, p), 1, "a fresh free goes to the thread's quarantine buffer");
    for (int i = 0; i < n && where(h, p) != 2; i++)
        hl_heap_free(h, others[i]);
    cr_assert_eq(where(h, p), 2, "the block left the quarantine into the reuse cache");
}

Test(harden_cache, double_free_from_quarantine_buffer)
{
    hl_heap_t *h = heap_with(OPTS);
    char *p = hl_heap_malloc(h, 40);
    hl_heap_free(h, p);
    cr_assert_eq(where(h, p), 1);
    size_t before = hl_harden_errors();
    quiet();
    hl_heap_free(h, p);
    loud();
    cr_assert_eq(hl_harden_errors() - before, 1, "double free of a buffered block reported");
    hl_heap_destroy(h);
}

Test(harden_cache, double_free_from_reuse_cache)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 40);
    char *p = hl_heap_malloc(h, 40);
    into_reuse_cache(h, p, others, 400);
    size_t before = hl_harden_errors();
    quiet();
    hl_heap_free(h, p);
    loud();
    cr_assert_eq(hl_harden_errors() - before, 1, "double free of a cached block reported");
    /* Handed out once only, and intact. */
    int seen = 0;
    char *got[400];
    for (int i = 0; i < 400; i++) {
        got[i] = hl_heap_malloc(h, 40);
        seen += got[i] == p;
    }
    cr_assert_leq(seen, 1);
    cr_assert_eq(hl_harden_errors() - before, 1, "no other report");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A write after free into the first word, which a slab's free list would overwrite (the
 * slab path checks poison from offset 8): the reuse cache checks from offset 0. */
Test(harden_cache, write_after_free_caught_on_reuse_from_cache)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 40);
    char *p = hl_heap_malloc(h, 40);
    into_reuse_cache(h, p, others, 400);
    memset(p, 0, 8); /* the bug */
    size_t before = hl_harden_errors();
    quiet();
    char *q = NULL;
    for (int i = 0; i < 400 && q != p; i++)
        q = hl_heap_malloc(h, 40);
    loud();
    cr_assert_eq(q, p, "the cached block is handed out again");
    cr_assert_eq(hl_harden_errors() - before, 1, "use-after-free found on reuse");
    hl_heap_destroy(h);
}

/* A class the thread stops using: its cached blocks are still verified (every
 * HL_HCACHE_EPOCH batches the cache is released). */
Test(harden_cache, idle_class_released_and_verified)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 40);
    char *p = hl_heap_malloc(h, 40);
    into_reuse_cache(h, p, others, 400);
    p[20] = 1; /* the bug */
    size_t before = hl_harden_errors();
    quiet();
    for (unsigned i = 0; i < (HL_HCACHE_EPOCH + 1) * HL_HCACHE_QBUF; i++)
        hl_heap_free(h, hl_heap_malloc(h, 2000));
    loud();
    cr_assert_eq(where(h, p), 0, "released");
    cr_assert_eq(hl_harden_errors() - before, 1, "use-after-free found at the release");
    hl_heap_destroy(h);
}

typedef struct thr_s {
    hl_heap_t *h;
    char *bad;
} thr_t;

static void *thread_body(void *arg)
{
    thr_t *t = arg;
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(t->h, 40);
    char *p = hl_heap_malloc(t->h, 40);
    into_reuse_cache(t->h, p, others, 400); /* some of the others stay in the buffer */
    t->bad = hl_heap_malloc(t->h, 100);
    hl_heap_free(t->h, t->bad);
    cr_assert_eq(where(t->h, t->bad), 1);
    t->bad[3] = 7; /* the bug: a write after free, while the block is in the buffer */
    return NULL;
}

/* Thread exit hands the thread's buffers to the shared quarantine (and its cached blocks
 * back to the heap): the write after free is then found by a heap check of another thread. */
Test(harden_cache, thread_exit_flushes_buffers)
{
    hl_heap_t *h = heap_with(OPTS);
    thr_t t = {h, NULL};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, thread_body, &t), 0);
    pthread_join(th, NULL);
    size_t before = hl_harden_errors();
    quiet();
    size_t found = hl_heap_check(h, 1);
    loud();
    cr_assert_eq(found, 1, "the exited thread's buffered block is checked");
    cr_assert_eq(hl_harden_errors() - before, 1);
    hl_heap_destroy(h);
}

/* A forked child keeps the forking thread's buffers: a double free of a buffered block and
 * one of a cached block are reported there, and the child's heap stays consistent. */
Test(harden_cache, fork_child_detects_and_stays_consistent)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 40);
    char *cached = hl_heap_malloc(h, 40);
    into_reuse_cache(h, cached, others, 400);
    char *buffered = hl_heap_malloc(h, 100);
    hl_heap_free(h, buffered);
    cr_assert_eq(where(h, buffered), 1);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        quiet();
        size_t before = hl_harden_errors();
        hl_heap_free(h, buffered);
        hl_heap_free(h, cached);
        int ok = hl_harden_errors() - before == 2;
        for (int i = 0; i < 2000; i++) {
            char *q = hl_heap_malloc(h, 16 + (size_t)i % 500);
            memset(q, 0x5a, 16);
            hl_heap_free(h, q);
        }
        ok = ok && hl_heap_check(h, 1) == 0 && hl_harden_errors() - before == 2;
        _exit(ok ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %d", st);
    hl_heap_destroy(h);
}

static void *thread_then_other_heap(void *arg)
{
    thread_body(arg);
    hl_heap_t *plain = heap_with(""); /* the thread's second cache now serves this one */
    hl_heap_free(plain, hl_heap_malloc(plain, 10));
    return NULL; /* exits bound to the plain heap, the hardened heap's buffers still held */
}

/* The same when the thread moved on to another heap before it exited: the buffers it still
 * holds for the hardened heap are handed over too. */
Test(harden_cache, thread_exit_flushes_buffers_of_an_earlier_heap)
{
    hl_heap_t *h = heap_with(OPTS);
    thr_t t = {h, NULL};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, thread_then_other_heap, &t), 0);
    pthread_join(th, NULL);
    quiet();
    size_t found = hl_heap_check(h, 1);
    loud();
    cr_assert_eq(found, 1, "the exited thread's buffered block is checked");
    hl_heap_destroy(h);
}

/* The canary is the poison's byte: a freed block holds one fill from offset 0 up to its
 * trailer (the free poisons the user bytes only; the canary after them stays), so a block
 * handed out again from the reuse cache, its fill verified, needs no canary written. */
Test(harden_cache, freed_block_holds_one_fill)
{
    hl_heap_t *h = heap_with(OPTS);
    unsigned char *p = hl_heap_malloc(h, 40);
    for (int i = 40; i < 48; i++) /* the canary of the live block */
        cr_assert_eq(p[i], HL_POISON_BYTE, "canary byte %d: 0x%02x", i, p[i]);
    memset(p, 0x11, 40);
    hl_heap_free(h, p);
    cr_assert_eq(where(h, p), 1);
    for (int i = 0; i < 48; i++) /* 40 user bytes and at least 8 of canary */
        cr_assert_eq(p[i], HL_POISON_BYTE, "byte %d of the freed block: 0x%02x", i, p[i]);
    hl_heap_destroy(h);
}

/* A smaller request in a block whose last life was bigger: the bytes between the two sizes
 * (poison of the last life) are its canary: a one-byte overflow into them is found, as one at
 * the old size's last byte. */
Test(harden_cache, smaller_request_in_a_reused_block_keeps_its_canary)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 100);
    char *p = hl_heap_malloc(h, 100);
    into_reuse_cache(h, p, others, 400); /* blocks of 100 bytes in the cache, p among them */
    for (int off = 97; off <= 99; off += 2) {
        char *q = hl_heap_malloc(h, 97); /* the same class: one of the cached 100-byte blocks */
        size_t before = hl_harden_errors();
        q[off] = 1;
        quiet();
        hl_heap_free(h, q);
        loud();
        cr_assert_eq(hl_harden_errors() - before, 1, "overflow at %d of a 97-byte block", off);
    }
    hl_heap_destroy(h);
}

/* A write after free that hits only a cached block's trailer (the poison before it intact):
 * the block is not handed out again unchecked but reported (use-after-free, found on reuse)
 * and leaked. */
Test(harden_cache, trailer_written_after_free_is_reported_on_reuse)
{
    hl_heap_t *h = heap_with(OPTS);
    char *others[400];
    for (int i = 0; i < 400; i++)
        others[i] = hl_heap_malloc(h, 40);
    unsigned char *p = (unsigned char *)hl_heap_malloc(h, 40);
    into_reuse_cache(h, (char *)p, others, 400);
    int k = 0;
    while (k < 256 && p[k] == HL_POISON_BYTE)
        k++;
    cr_assert_lt(k, 256, "the trailer follows the poison");
    p[k] ^= 0xff; /* the trailer's first byte (the requested size's low byte) */
    size_t before = hl_harden_errors();
    char *got[400];
    int handed = 0;
    quiet();
    for (int i = 0; i < 400; i++) { /* until the cache is empty: p is in it somewhere */
        got[i] = hl_heap_malloc(h, 40);
        handed += got[i] == (char *)p;
    }
    loud();
    cr_assert_eq(hl_harden_errors() - before, 1, "the overwritten trailer is reported");
    cr_assert_eq(handed, 0, "the block with the broken trailer is not handed out");
    for (int i = 0; i < 400; i++)
        hl_heap_free(h, got[i]);
    hl_heap_destroy(h);
}

typedef struct peer_s {
    hl_heap_t *h;
    char *blocks[200];
    pthread_barrier_t go;
} peer_t;

static void *peer_frees_then_waits(void *arg)
{
    peer_t *t = arg;
    for (int i = 0; i < 200; i++)
        t->blocks[i] = hl_heap_malloc(t->h, 40);
    for (int i = 0; i < 200; i++)
        hl_heap_free(t->h, t->blocks[i]);
    pthread_barrier_wait(&t->go); /* freed: the main thread frees its own now */
    pthread_barrier_wait(&t->go); /* and looks; then this thread exits */
    return NULL;
}

/* Each thread's frees wait in its own quarantine, and the blocks pushed out come back to the
 * thread that freed them (poisoned and verified on the same core): the frees of one thread
 * never push another live thread's blocks into its reuse cache, as one shared FIFO did. The
 * other thread's blocks are still found by a heap check once it exits. */
Test(harden_cache, blocks_come_back_to_the_thread_that_freed_them)
{
    hl_heap_t *h = heap_with(OPTS);
    peer_t t = {.h = h};
    pthread_barrier_init(&t.go, NULL, 2);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, peer_frees_then_waits, &t), 0);
    pthread_barrier_wait(&t.go);
    char *mine[200];
    for (int i = 0; i < 200; i++)
        mine[i] = hl_heap_malloc(h, 40);
    for (int i = 0; i < 200; i++)
        hl_heap_free(h, mine[i]);
    int foreign = 0, own = 0;
    for (int i = 0; i < 200; i++) {
        foreign += in_reuse_cache(h, t.blocks[i]);
        own += in_reuse_cache(h, mine[i]);
    }
    cr_assert_gt(own, 0, "this thread's oldest frees left its quarantine into its reuse cache");
    cr_assert_eq(foreign, 0, "%d blocks of the other thread came to this thread", foreign);
    /* A write after free into a block waiting in the other thread's own quarantine (one of its
     * last full buffer's: 160..191; 192..199 wait in its buffer) while that
     * thread lives: a heap check walks every listed thread's ring, not only the caller's. */
    t.blocks[185][20] = 1;
    quiet();
    size_t live_found = hl_heap_check(h, 1);
    loud();
    cr_assert_eq(live_found, 1, "the live thread's quarantine was walked");
    t.blocks[185][20] = (char)HL_POISON_BYTE;
    pthread_barrier_wait(&t.go);
    pthread_join(th, NULL);
    t.blocks[199][20] = 1; /* a write after free into the exited thread's last free */
    quiet();
    size_t found = hl_heap_check(h, 1);
    loud();
    cr_assert_eq(found, 1, "the exited thread's quarantine was handed to the shared one");
    pthread_barrier_destroy(&t.go);
    hl_heap_destroy(h);
}

/* A thread that used hardened heap a, then plain heap b, exits after b was destroyed: its
 * buffers still belong to a and leave a's list (else a's check walks an exited thread's
 * TLS, and a new thread reusing that TLS is listed twice). */
typedef struct two_heaps_s {
    hl_heap_t *a, *b;
    pthread_barrier_t used, destroyed;
} two_heaps_t;

static void *use_a_then_b(void *arg)
{
    two_heaps_t *t = arg;
    void *v[300];
    for (int i = 0; i < 300; i++)
        v[i] = hl_heap_malloc(t->a, 48);
    for (int i = 0; i < 300; i++)
        hl_heap_free(t->a, v[i]); /* full buffers go to this thread's own quarantine */
    hl_heap_free(t->b, hl_heap_malloc(t->b, 48)); /* the thread's other-heap cache: b now */
    pthread_barrier_wait(&t->used);
    pthread_barrier_wait(&t->destroyed);
    return NULL;
}

Test(harden_cache, a_thread_leaves_a_live_heaps_list_when_its_last_heap_is_gone)
{
    two_heaps_t t = {heap_with("harden=1"), heap_with("harden=0"), {{0}}, {{0}}};
    pthread_barrier_init(&t.used, NULL, 2);
    pthread_barrier_init(&t.destroyed, NULL, 2);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, use_a_then_b, &t), 0);
    pthread_barrier_wait(&t.used);
    cr_assert_eq(hl_harden_owner_count(t.a), 1, "the thread's own quarantine is listed");
    hl_heap_destroy(t.b);
    pthread_barrier_wait(&t.destroyed);
    pthread_join(th, NULL);
    cr_assert_eq(hl_harden_owner_count(t.a), 0, "the exited thread left a's list");
    cr_assert_eq(hl_heap_check(t.a, 0), 0);
    pthread_barrier_destroy(&t.used);
    pthread_barrier_destroy(&t.destroyed);
    hl_heap_destroy(t.a);
}

typedef struct first_use_s {
    hl_heap_t *h;
    size_t live;       /* hl_hcache_live() after the thread's operation */
    hl_hcache_t *mine; /* the thread's buffers of h then */
} first_use_t;

static void *one_operation(void *arg)
{
    first_use_t *t = arg;
    hl_heap_free(t->h, hl_heap_malloc(t->h, 40));
    t->live = hl_hcache_live();
    t->mine = hl_hcache_peek(t->h);
    return NULL;
}

static int tls_of_program(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0]) return 0; /* the program: liballoc is linked in */
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) *(size_t *)arg = info->dlpi_phdr[i].p_memsz;
    return 1;
}

/* A thread's buffers are a page of their own, mapped at its first operation on a hardened
 * heap and released at its exit, not static TLS: glibc clears every module's static TLS in
 * each new thread's stack, so buffers there cost every thread of every program two pages. A
 * thread that uses only a plain heap maps none; the next hardened thread takes the page the
 * last one released instead of mapping one. */
Test(harden_cache, buffers_mapped_at_first_use_unmapped_at_exit)
{
    size_t tls = 0;
    dl_iterate_phdr(tls_of_program, &tls);
    cr_assert_gt(tls, 0);
    cr_assert_lt(tls, 4096, "the allocator's static TLS is %zu bytes (the buffers in it?)", tls);
    hl_heap_t *h = heap_with(OPTS), *plain = heap_with("");
    size_t before = hl_hcache_live();
    first_use_t t = {plain, 0, NULL};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, one_operation, &t), 0);
    pthread_join(th, NULL);
    cr_assert_eq(t.live, before, "a thread on a plain heap mapped buffers");
    cr_assert_null(t.mine);
    t = (first_use_t){h, 0, NULL};
    cr_assert_eq(pthread_create(&th, NULL, one_operation, &t), 0);
    pthread_join(th, NULL);
    cr_assert_not_null(t.mine, "the hardened heap's operation found no buffers");
    cr_assert_eq(t.live, before + 1, "one page of buffers for the thread");
    cr_assert_eq(hl_hcache_live(), before, "thread exit released them");
    hl_hcache_t *first = t.mine;
    size_t mapped = hl_hcache_mapped();
    t = (first_use_t){h, 0, NULL};
    cr_assert_eq(pthread_create(&th, NULL, one_operation, &t), 0);
    pthread_join(th, NULL);
    cr_assert_eq(t.mine, first, "the next thread reuses the released page");
    cr_assert_eq(hl_hcache_mapped(), mapped, "and maps none");
    cr_assert_eq(hl_hcache_live(), before);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(plain);
    hl_heap_destroy(h);
}
