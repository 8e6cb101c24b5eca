/* liballoc/unwind_load.c — libunwind loaded on first use (unwind_load.h). */
#include "unwind_load.h"

#ifdef HL_UNWIND_LINKED

#define UNW_LOCAL_ONLY
#include <libunwind.h>

hl_unw_backtrace_fn hl_unwind_backtrace_fn(void)
{
    return unw_backtrace;
}

static int linked_init_local2(void *c, void *ctx, int flag)
{
    return unw_init_local2((unw_cursor_t *)c, (unw_context_t *)ctx, flag);
}
static int linked_get_reg(void *c, int reg, unsigned long *val)
{
    unw_word_t w = 0;
    int r = unw_get_reg((unw_cursor_t *)c, reg, &w);
    *val = (unsigned long)w;
    return r;
}
static int linked_step(void *c)
{
    return unw_step((unw_cursor_t *)c);
}
static const hl_unw_cursor_api_t linked_api = {linked_init_local2, linked_get_reg, linked_step};

const hl_unw_cursor_api_t *hl_unwind_cursor_api(void)
{
    return &linked_api;
}

#else

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "internal.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The nongnu libunwind (the one libunwind-dev links), by its soname. */
#define HL_UNWIND_SONAME "libunwind.so.8"

enum { UNW_NOT_LOADED = 0, UNW_LOADING = 1, UNW_LOADED = 2 };

static int unw_state;
static hl_unw_backtrace_fn unw_fn;
static hl_unw_cursor_api_t unw_api; /* complete, or all NULL */

/* The cursor functions' symbol names: libunwind.h maps unw_init_local2 & co. to
 * architecture-prefixed names (_ULx86_64_init_local2 with UNW_LOCAL_ONLY). */
#define HL_UNW_STR2(x)   #x
#define HL_UNW_STR(x)    HL_UNW_STR2(x)

static void api_lookup(void *h)
{
    hl_unw_cursor_api_t a;
    *(void **)&a.init_local2 = dlsym(h, HL_UNW_STR(unw_init_local2));
    *(void **)&a.get_reg = dlsym(h, HL_UNW_STR(unw_get_reg));
    *(void **)&a.step = dlsym(h, HL_UNW_STR(unw_step));
    if (a.init_local2 && a.get_reg && a.step) unw_api = a;
}

static void unw_say(const char *what, const char *err)
{
    static const char pre[] = "heapledger: cannot load " HL_UNWIND_SONAME " (";
    static const char post[] = "): no call stacks will be captured; install libunwind8 (the "
                               "nongnu libunwind) or set stacks=0\n";
    ssize_t r = write(2, pre, sizeof pre - 1);
    r = write(2, what, strlen(what));
    if (err) {
        r = write(2, ": ", 2);
        r = write(2, err, strlen(err));
    }
    r = write(2, post, sizeof post - 1);
    (void)r;
}

static __attribute__((noinline, cold)) hl_unw_backtrace_fn unw_load(void)
{
    int st = UNW_NOT_LOADED;
    /* Never wait: the thread loading may need a lock our caller holds, and dlopen allocates,
     * so the loading thread itself may come back here. Those calls capture no frames. */
    if (!__atomic_compare_exchange_n(&unw_state, &st, UNW_LOADING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return st == UNW_LOADED ? __atomic_load_n(&unw_fn, __ATOMIC_ACQUIRE) : NULL;
    /* Already there (record preloads it; a program may link it): no dlopen at all. */
    hl_unw_backtrace_fn fn = (hl_unw_backtrace_fn)dlsym(RTLD_DEFAULT, "unw_backtrace");
    if (fn) {
        api_lookup(RTLD_DEFAULT);
    } else {
        void *h = dlopen(HL_UNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            unw_say("dlopen", dlerror());
        } else {
            fn = (hl_unw_backtrace_fn)dlsym(h, "unw_backtrace");
            if (!fn) unw_say("unw_backtrace", dlerror());
            api_lookup(h);
        }
    }
    __atomic_store_n(&unw_fn, fn, __ATOMIC_RELEASE);
    __atomic_store_n(&unw_state, UNW_LOADED, __ATOMIC_RELEASE);
    return fn;
}

static __attribute__((noinline, cold)) int main_thread(void)
{
    return syscall(SYS_gettid) == syscall(SYS_getpid);
}

hl_unw_backtrace_fn hl_unwind_backtrace_fn(void)
{
    /* libunwind's thread-local data is dynamic TLS once it is dlopened: a thread's first walk
     * mallocs its block. A thread that has never allocated may be in its teardown (glibc's
     * frees after the key destructors, thread.c), where that malloc would bind a cache that is
     * never unregistered: its walks (up to HL_TLS_BIND_AFTER_FREES unbound frees) capture no
     * frames. The tracer's calls (in_trace) are served by the side heap and bind nothing, and
     * the main thread's teardown is the process's exit (a hardened report of a program whose
     * first call is a bad free keeps its stack). */
    if (hl_tls.state == HL_TLS_FRESH && !hl_tls.in_trace && !main_thread()) return NULL;
    if (__builtin_expect(__atomic_load_n(&unw_state, __ATOMIC_ACQUIRE) == UNW_LOADED, 1))
        return __atomic_load_n(&unw_fn, __ATOMIC_RELAXED);
    return unw_load();
}

const hl_unw_cursor_api_t *hl_unwind_cursor_api(void)
{
    if (__atomic_load_n(&unw_state, __ATOMIC_ACQUIRE) != UNW_LOADED || !unw_api.step) return NULL;
    return &unw_api;
}

#endif
