/* tests/harden/test_unwind_fast.c — heapledger's own stack walker (unwind_fast.c) against
 * libunwind, its oracle, on frames of every shape the walker meets: -O2 frames without a
 * frame pointer, -O0 frames with one, recursion, alloca and variable-length arrays (the CFA
 * from rbp), a signal handler that allocates (the walker defers: a signal frame), a thread's
 * own stack and its exit (a key destructor), a forked child. Each test walks with both from
 * the same function and compares every frame above the two calls' own return addresses;
 * and the decoder's rules for known code: a -O0 function, _start (the last frame), the
 * signal trampoline (a fallback).
 */
#include "stack.h"
#include "unwind_fast.h"

#define UNW_LOCAL_ONLY
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXF      96
#define BARRIER() __asm__ volatile("" ::: "memory")

typedef struct {
    int nf, nr;     /* fast (-1: deferred), libunwind */
    int first_diff; /* -1: the same */
    void *fast[MAXF], *ref[MAXF];
} walk_t;

/* Both walks from this one frame: entry 0 is each call's own return address. */
static __attribute__((noinline)) void walk_both(walk_t *w)
{
    w->nf = hl_uwf_backtrace(w->fast, MAXF);
    BARRIER();
    w->nr = unw_backtrace(w->ref, MAXF);
    BARRIER();
    w->first_diff = -1;
    if (w->nf < 0) return;
    for (int i = 1; i < w->nf || i < w->nr; i++)
        if (i >= w->nf || i >= w->nr || w->fast[i] != w->ref[i]) {
            w->first_diff = i;
            return;
        }
}

static void expect_same(const walk_t *w, int min_depth)
{
    cr_assert_geq(w->nf, 0, "the fast walker deferred on ordinary frames");
    cr_assert_eq(w->first_diff, -1, "frame %d differs: fast %p, libunwind %p (depth %d / %d)",
                 w->first_diff, w->first_diff < w->nf ? w->fast[w->first_diff] : NULL,
                 w->first_diff < w->nr ? w->ref[w->first_diff] : NULL, w->nf, w->nr);
    cr_assert_geq(w->nr, min_depth, "libunwind saw only %d frames", w->nr);
}

/* -O2 frames (the test's own flags): CFA from rsp. */
static __attribute__((noinline)) void o2_leaf(walk_t *w, int k)
{
    volatile int pad[7];
    pad[k & 7] = k;
    walk_both(w);
    BARRIER();
    (void)pad[0];
}
static __attribute__((noinline)) void o2_mid(walk_t *w, int k)
{
    o2_leaf(w, k + 1);
    BARRIER();
}

Test(unwind_fast, o2_frames)
{
    walk_t w;
    o2_mid(&w, 1);
    expect_same(&w, 4);
}

/* Recursion: the same return address at many depths. */
static __attribute__((noinline)) void recurse(walk_t *w, int n)
{
    if (n == 0)
        walk_both(w);
    else
        recurse(w, n - 1);
    BARRIER();
}

Test(unwind_fast, recursion)
{
    walk_t w;
    recurse(&w, 40);
    expect_same(&w, 40);
}

/* -O0 frames: rbp-based CFA, rbp saved at CFA-16. */
static __attribute__((noinline, optimize("O0"))) void o0_leaf(walk_t *w)
{
    walk_both(w);
}
static __attribute__((noinline, optimize("O0"))) void o0_mid(walk_t *w)
{
    o0_leaf(w);
}

Test(unwind_fast, o0_frames)
{
    walk_t w;
    o0_mid(&w);
    expect_same(&w, 4);
}

/* alloca and a VLA: the frame's size is known only at run time (CFA from rbp). */
static __attribute__((noinline)) void vla_leaf(walk_t *w, int n)
{
    volatile char v[n];
    v[n - 1] = 1;
    walk_both(w);
    BARRIER();
    (void)v[0];
}
static __attribute__((noinline)) void alloca_mid(walk_t *w, int n)
{
    volatile char *a = __builtin_alloca((size_t)n);
    a[0] = 1;
    vla_leaf(w, n * 3 + 1);
    BARRIER();
    (void)a[0];
}

Test(unwind_fast, alloca_and_vla)
{
    for (int n = 1; n < 5000; n = n * 7 + 3) {
        walk_t w;
        alloca_mid(&w, n);
        expect_same(&w, 4);
    }
}

/* A signal handler that walks and allocates: the stack runs through the kernel's signal
 * frame, which the walker leaves to libunwind; hl_stack_capture then gives libunwind's
 * frames, and unwind=check finds no difference. */
static walk_t sig_w;
static int sig_depth;
static void on_signal(int sig)
{
    (void)sig;
    walk_both(&sig_w);
    void *p = malloc(100);
    uint64_t ips[32];
    sig_depth = (int)hl_stack_capture(ips, 32, 0);
    free(p);
}

Test(unwind_fast, signal_handler)
{
    hl_stack_init();
    hl_stack_set_unwind(HL_UNWIND_CHECK);
    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    signal(SIGUSR1, SIG_DFL);
    hl_stack_set_unwind(HL_UNWIND_FAST);
    cr_assert_eq(sig_w.nf, -1, "a walk through a signal frame defers to libunwind");
    cr_assert_gt(sig_depth, 3, "the capture in the handler has the interrupted frames");
}

/* A thread: its own stack (new pages to check), its start (clone's frame: the last one), and
 * a key destructor walking during the thread's exit. */
static pthread_key_t key;
static walk_t thr_w, exit_w;
static void on_exit_key(void *arg)
{
    (void)arg;
    walk_both(&exit_w);
}
static void *thread_main(void *arg)
{
    (void)arg;
    pthread_setspecific(key, (void *)1);
    o2_mid(&thr_w, 3);
    return NULL;
}

Test(unwind_fast, thread_and_its_exit)
{
    pthread_key_create(&key, on_exit_key);
    pthread_t t;
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, NULL);
    expect_same(&thr_w, 4);
    expect_same(&exit_w, 3);
}

/* A forked child walks the same stack (a copy) with the parent's cache. */
Test(unwind_fast, fork_child)
{
    walk_t w;
    o2_mid(&w, 1); /* the cache holds these rules now */
    expect_same(&w, 4);
    pid_t pid = fork();
    if (pid == 0) {
        walk_t c;
        o2_mid(&c, 2);
        _exit(c.nf >= 0 && c.first_diff == -1 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's walk differs");
}

/* Many threads walking at once share the rule cache. */
static void *racer(void *arg)
{
    intptr_t bad = 0;
    for (int i = 0; i < 2000; i++) {
        walk_t w;
        if (i & 1)
            recurse(&w, (int)((intptr_t)arg + i) % 23);
        else
            o2_mid(&w, i);
        if (w.nf < 0 || w.first_diff != -1) bad++;
    }
    return (void *)bad;
}

Test(unwind_fast, threads_share_the_cache)
{
    /* Mapped first, as hl_stack_init does (a walk that meets another thread mapping the cache
     * defers to libunwind). */
    cr_assert_eq(hl_uwf_init(), 0);
    pthread_t t[4];
    for (intptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, racer, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        cr_assert_eq((intptr_t)bad, 0, "thread %d: walks differ from libunwind", i);
    }
}

/* The decoder's rules. */
static __attribute__((noinline, optimize("O0"))) uintptr_t o0_ra(void)
{
    return (uintptr_t)__builtin_return_address(0);
}
static __attribute__((noinline, optimize("O0"))) uintptr_t o0_caller(void)
{
    uintptr_t ra = o0_ra(); /* its return address lies in this -O0 function */
    return ra;
}

Test(unwind_fast, rule_of_an_o0_frame)
{
    hl_uwf_rule_t r;
    hl_uwf_rule(o0_caller(), &r);
    cr_assert_eq(r.kind, HL_UWF_STD);
    cr_assert(r.cfa_rbp, "CFA from rbp in a -O0 function");
    cr_assert_eq(r.cfa_off, 16);
    cr_assert(r.rbp_saved);
    cr_assert_eq(r.rbp_off, 16);
}

extern char _start[];

Test(unwind_fast, rule_of_start_is_the_last_frame)
{
    hl_uwf_rule_t r;
    hl_uwf_rule((uintptr_t)_start + 2, &r);
    cr_assert_eq(r.kind, HL_UWF_LAST, "_start marks the return address undefined (kind %d, %s)",
                 r.kind, r.why ? r.why : "");
}

Test(unwind_fast, rule_of_the_signal_trampoline_falls_back)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGUSR2, NULL, &old); /* the kernel gives back the trampoline glibc installed */
    signal(SIGUSR2, SIG_DFL);
    cr_assert_not_null((void *)old.sa_restorer);
    hl_uwf_rule_t r;
    hl_uwf_rule((uintptr_t)old.sa_restorer, &r); /* a handler returns to it */
    cr_assert_eq(r.kind, HL_UWF_FALLBACK, "kind %d", r.kind);
    cr_assert(r.why && strstr(r.why, "signal"), "why: %s", r.why ? r.why : "(none)");
}

/* A corrupted frame: corrupt_walk(buf, n, rbp) keeps its frame address in rbp (CFI: CFA =
 * rbp + 16) and calls the walker with rbp replaced by a bogus value: a frame address below
 * the stack pointer, or far above it, is not followed (the walker defers to libunwind
 * instead of reading there). */
int corrupt_walk(void **buf, int n, uintptr_t rbp);
__asm__(".text\n"
        ".globl corrupt_walk\n"
        ".type corrupt_walk, @function\n"
        "corrupt_walk:\n"
        ".cfi_startproc\n"
        "push %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "mov %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "push %rbx\n"
        "push %r12\n"
        "mov %rsp, %r12\n"
        "mov %rdx, %rbp\n"
        "call hl_uwf_backtrace\n"
        "lea 16(%r12), %rbp\n"
        "pop %r12\n"
        "pop %rbx\n"
        "pop %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size corrupt_walk, .-corrupt_walk\n");

Test(unwind_fast, corrupted_frame_pointer_defers)
{
    void *buf[MAXF];
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    cr_assert_eq(corrupt_walk(buf, MAXF, 0x10000), -1, "a frame address below the stack");
    cr_assert_eq(corrupt_walk(buf, MAXF, here + (64u << 20)), -1, "a frame address 64 MiB up");
    /* A well-formed frame (saved rbp, then a return address that ends the walk) in the heap,
     * below the stack: readable, but not a frame of this stack. */
    uintptr_t *fake = malloc(64);
    fake[0] = 0;
    fake[1] = 0x1000;
    cr_assert_eq(corrupt_walk(buf, MAXF, (uintptr_t)fake), -1, "a frame in the heap");
    free(fake);
}

/* A rule the walk's unchecked step must not take: CFA = rsp + 0 (unwind tables that are
 * wrong, or a frame caught mid-prologue by a bad table) would put the return address below
 * the stack pointer. Only rules with CFA = rsp + N, N >= 8, and rbp saved inside the frame
 * take the unchecked step; this one takes the checked step, whose frame address does not
 * grow: the walker defers to libunwind instead of reading below the stack. */
int zero_cfa_walk(void **buf, int n);
__asm__(".text\n"
        ".globl zero_cfa_walk\n"
        ".type zero_cfa_walk, @function\n"
        "zero_cfa_walk:\n"
        ".cfi_startproc\n"
        "sub $8, %rsp\n"
        ".cfi_def_cfa_offset 0\n"
        "call hl_uwf_backtrace\n"
        "add $8, %rsp\n"
        ".cfi_def_cfa_offset 8\n"
        "ret\n"
        ".cfi_endproc\n"
        ".size zero_cfa_walk, .-zero_cfa_walk\n");

Test(unwind_fast, frame_address_below_the_stack_pointer_defers)
{
    void *buf[MAXF];
    cr_assert_eq(zero_cfa_walk(buf, MAXF), -1, "a CFA of rsp + 0 was walked");
}

/* The rule cache starts at 1024 sets (a small program touches at most 32 KiB of it, where
 * 8192 sets hashed its few hundred return addresses over all 64 pages) and grows once to
 * 8192 when rules keep missing; walks stay exact before, across and after the switch. A
 * module unloaded makes every cached rule stale, so each walk after a dlclose misses on
 * every frame: that is the many-rules program here. */
Test(unwind_fast, rule_cache_starts_small_and_grows)
{
    walk_t w;
    o2_mid(&w, 1);
    expect_same(&w, 4);
    hl_uwf_stats_t s;
    hl_uwf_stats(&s);
    cr_assert_eq(s.rule_sets, 1024, "the rule cache starts with %llu sets",
                 (unsigned long long)s.rule_sets);
    for (int i = 0; i < 20000 && s.rule_sets == 1024; i++) {
        void *h = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
        cr_assert_not_null(h, "dlopen: %s", dlerror());
        dlclose(h);
        o2_mid(&w, i);
        expect_same(&w, 4);
        hl_uwf_stats(&s);
    }
    cr_assert_eq(s.rule_sets, 8192, "after %llu rule misses: %llu sets",
                 (unsigned long long)s.rule_misses, (unsigned long long)s.rule_sets);
    for (int i = 0; i < 10; i++) {
        o2_mid(&w, i);
        expect_same(&w, 4);
    }
}
