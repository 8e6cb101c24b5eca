/* liballoc/trace_lttng.c — the LTTng-UST tracing backend of liballoc/trace.h.
 *
 * Linkage. This unit holds the tracepoint call sites only (LTTNG_UST_TRACEPOINT_DEFINE with
 * LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE): libheapledger.so needs nothing from LTTng at
 * link time, and its start-up only dlopens the small liblttng-ust-tracepoint.so.1 to register
 * the call sites. The probes (the code that writes events) are in libheapledger-tp.so,
 * linked with liblttng-ust, which `heapledger record` adds to LD_PRELOAD; without it the call
 * sites stay disabled and liblttng-ust (listener threads, sessiond registration) never loads.
 *
 * Registration. hl_trace_init() registers the call sites itself (it dlopens LTTng-UST's
 * tracepoint library), so that the caller can serve that memory from the tracer's heap — in a
 * recorded process only (the probe provider is loaded): an untraced one maps neither LTTng-UST
 * nor libunwind (unwind_load.h).
 *
 * Per-process state. The first traced event of a process (and of every forked child, see
 * trace_atfork_child) first emits `config` (version, options, TSC Hz) and maps the stack
 * table; this is done lazily on the traced path rather than at hl_trace_init() because the
 * allocator starts before liblttng-ust has registered with the session daemon (an event
 * emitted then would be lost), and because untraced runs must not pay for calibration or
 * unwinder warm-up.
 *
 * Stacks. stacks=N (default 16, 0 = off, at most HL_STACK_MAX_DEPTH) frames are captured for
 * every alloc/free/realloc/error, starting at the first frame outside libheapledger.so. Each
 * distinct stack is described once per process by a `stack` event emitted just before the
 * first event that uses its id.
 *
 * Process and thread ids. alloc/free/realloc carry vpid/vtid in their payload from
 * hl_tr_who, a per-thread word (vpid << 32 | vtid) filled at the thread's first traced
 * operation (which also emits the `thread` event naming it) and cleared in a forked child; the
 * session needs no context on their channel (about 14 ns/event less than LTTng's vpid/vtid
 * context callbacks).
 *
 * The per-event path (trace_start, trace_begin, the emitters) is one per-thread test (is
 * hl_tr_who known: it is only after this process has started, see trace_start), the pending
 * stack id, the words built on the stack and one tracepoint call with a pointer to them
 * (schemas/heapledger_tp.h); everything else is in cold functions.
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#define LTTNG_UST_TRACEPOINT_HIDDEN_DEFINITION
#include "heapledger_tp.h"

#include "hl_schema.h"
#include "stack.h"
#include "trace.h"
#include "unwind_load.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#ifndef HL_VERSION
#define HL_VERSION "unknown"
#endif

/* Calibration window for the TSC frequency (ns of CLOCK_MONOTONIC). */
#define HL_TSC_WINDOW_NS  2000000ull
#define HL_OPTIONS_MAX    256
#define HL_STACKS_DEFAULT 16

/* Module statics, gathered. Written by hl_trace_init (once, single-threaded start-up) and by
 * the first traced event of a process (trace_process_start, guarded by `started`). */
static struct {
    char options[HL_OPTIONS_MAX]; /* HEAPLEDGER_OPTIONS as given (truncated) */
    unsigned stacks;              /* frames per stack, 0 = off */
    uint64_t arena_size;          /* arena=SIZE, 0 = none */
    _Atomic uint64_t tsc_hz;      /* 0 until known */
    uint64_t tsc0, ns0;           /* calibration start */
    _Atomic int started;          /* 0 = not yet, 1 = starting, 2 = config emitted, stacks ready */
    uint32_t fork_pid, forked;    /* pid before the last fork; set in a child forked without exec */
    uint64_t fork_ns;             /* CLOCK_MONOTONIC just before that fork */
} hl_tr = {.stacks = HL_STACKS_DEFAULT};

/* This thread's `who` word for the event payloads (HL_TP_WHO); 0 = not known yet: first
 * traced operation of the thread, or the thread that forked, in the child. Set only once the
 * process has started (trace_start_slow), so that a known word implies a started process. */
static __thread uint64_t hl_tr_who __attribute__((tls_model("initial-exec")));
/* Stack id + 1 captured by hl_trace_prepare_alloc for this thread's next event (0 = none). */
static __thread uint32_t hl_tr_pending __attribute__((tls_model("initial-exec")));

/* Frames of a captured stack looked at for a caller in the tracer's own modules: a tracer's
 * allocation has its LTTng-UST frame within a few frames of malloc (libc helpers between). */
#define HL_TRACER_FRAMES 8

static uint64_t trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Value of option `key` in a "k=v,k=v" string, as a size with an optional K/M/G suffix.
 * Returns def when absent or malformed. */
static uint64_t trace_option(const char *opts, const char *key, uint64_t def)
{
    size_t kl = strlen(key);
    for (const char *p = opts; p && *p;) {
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            const char *v = p + kl + 1;
            if (*v < '0' || *v > '9') return def;
            uint64_t n = 0;
            while (*v >= '0' && *v <= '9')
                n = n * 10 + (uint64_t)(*v++ - '0');
            switch (*v) {
            case 'k':
            case 'K':
                n <<= 10;
                break;
            case 'm':
            case 'M':
                n <<= 20;
                break;
            case 'g':
            case 'G':
                n <<= 30;
                break;
            default:
                break;
            }
            return n;
        }
        const char *c = strchr(p, ',');
        p = c ? c + 1 : NULL;
    }
    return def;
}

/* One (TSC, CLOCK_MONOTONIC) pair: the TSC at the middle of the tightest of a few brackets
 * around the clock read, so that a preemption inside one read does not skew the pair. */
static void trace_tsc_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t1 = __rdtsc();
        uint64_t n = trace_now_ns();
        uint64_t t2 = __rdtsc();
        if (t2 - t1 < best) {
            best = t2 - t1;
            *tsc = t1 + (t2 - t1) / 2;
            *ns = n;
        }
    }
}

/* TSC Hz from the ticks elapsed over at least HL_TSC_WINDOW_NS since hl_trace_init (spins for
 * the rest of the window when called sooner: at most 2 ms once per traced process, usually
 * nothing because registering with the session daemon takes longer). Two clean pairs 2 ms
 * apart give the frequency to about 25 ppm. */
static uint64_t trace_tsc_hz(void)
{
    uint64_t hz = atomic_load(&hl_tr.tsc_hz);
    if (hz) return hz;
    while (trace_now_ns() - hl_tr.ns0 < HL_TSC_WINDOW_NS)
        ;
    uint64_t tsc, ns;
    trace_tsc_pair(&tsc, &ns);
    hz = (uint64_t)((double)(tsc - hl_tr.tsc0) * 1e9 / (double)(ns - hl_tr.ns0));
    atomic_store(&hl_tr.tsc_hz, hz);
    return hz;
}

/* Parent side of fork, before it: the pid and time a child's `config` names (fork_parent,
 * fork_ts: the child's stack table is this process's as of now). A syscall and a clock read. */
static void trace_atfork_prepare(void)
{
    hl_tr.fork_pid = (uint32_t)syscall(SYS_getpid);
    hl_tr.fork_ns = trace_now_ns();
}

/* Child side of fork: the child is a new process in the trace (own vpid), so it needs its own
 * `config` and `stack` events. Only flags are touched here: LTTng-UST re-registers the child
 * after the fork handlers, so emitting from here would be lost or land in the parent's
 * buffers; the child's first traced event emits them instead. */
static void trace_atfork_child(void)
{
    hl_tr.forked = 1;
    hl_tr_who = 0;
    atomic_store(&hl_tr.started, 0);
    hl_stack_fork_child();
}

void hl_trace_init(const char *options, uint64_t tsc_hz)
{
    if (options) {
        strncpy(hl_tr.options, options, HL_OPTIONS_MAX - 1);
        hl_tr.options[HL_OPTIONS_MAX - 1] = 0;
    }
    uint64_t s = trace_option(hl_tr.options, "stacks", HL_STACKS_DEFAULT);
    hl_tr.stacks = s > HL_STACK_MAX_DEPTH ? HL_STACK_MAX_DEPTH : (unsigned)s;
    hl_tr.arena_size = trace_option(hl_tr.options, "arena", 0);
    trace_tsc_pair(&hl_tr.tsc0, &hl_tr.ns0);
    atomic_store(&hl_tr.tsc_hz, tsc_hz);
    pthread_atfork(trace_atfork_prepare, NULL, trace_atfork_child);
    if (!hl_stack_tracer_scan()) {
        /* Not recorded: without the probe provider no call site can ever be enabled. Mark the
         * registration done, so that the header's constructors do nothing either: neither
         * LTTng-UST's tracepoint library nor libunwind is mapped in an untraced run. */
        lttng_ust_tracepoint_dlopen_ptr = &lttng_ust_tracepoint_dlopen; /* handle stays NULL */
        lttng_ust_tracepoint_registered = 1;
        lttng_ust_tracepoint_ptrs_registered = 1;
        return;
    }
    (void)hl_unwind_backtrace_fn(); /* recorded: libunwind now, in the caller's (tracer's) scope */
    /* Register the call sites now, inside the caller's scope (the malloc shim serves this
     * from the tracer's heap), rather than in the constructors LTTng-UST's header generates:
     * they run later and find the work done (reference counts), and their destructors then
     * leave the registration in place at exit instead of freeing it. */
    lttng_ust__tracepoints__init();
    lttng_ust__tracepoints__ptrs_init();
}

/* First traced event of this process: map the stack table, emit config. Threads that come
 * while another one starts wait for it (at most the calibration window plus the unwinder
 * warm-up, once per process), so that every event carries its stack id. */
static __attribute__((noinline, cold)) void trace_process_start(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&hl_tr.started, &expected, 1)) {
        while (atomic_load(&hl_tr.started) == 1)
            sched_yield();
        return;
    }
    if (hl_tr.stacks) hl_stack_init();
    lttng_ust_tracepoint(heapledger, config, HL_VERSION, hl_tr.options, trace_tsc_hz(),
                         hl_tr.arena_size, hl_tr.forked ? hl_tr.fork_pid : 0,
                         hl_tr.forked ? hl_tr.fork_ns : 0);
    atomic_store(&hl_tr.started, 2);
}

/* First traced operation of this thread (or of the forking thread in a child): cache its ids
 * and name it with a `thread` event. Raw syscalls: nothing here allocates. */
static void trace_thread_start(void)
{
    char name[17] = {0};
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0) name[0] = 0;
    struct hl_tp_who w = {(uint32_t)syscall(SYS_getpid), (uint32_t)syscall(SYS_gettid)};
    hl_tr_who = HL_TP_WHO(&w);
    lttng_ust_tracepoint(heapledger, thread, name);
}

/* First traced operation of this thread: the process's start-up first if it has not run (or
 * is running in another thread: then it waits), then the thread's. */
static __attribute__((noinline, cold)) void trace_start_slow(void)
{
    if (atomic_load_explicit(&hl_tr.started, memory_order_acquire) != 2) trace_process_start();
    trace_thread_start();
}

/* Per-event prologue: one per-thread test. hl_tr_who is known only after this process has
 * started (trace_start_slow) and is cleared with `started` in a forked child
 * (trace_atfork_child), so a known word means both are done. */
static inline void trace_start(void)
{
    if (__builtin_expect(hl_tr_who == 0, 0)) trace_start_slow();
}

/* Intern the stack ips[0..depth) and describe it if this process has not yet. */
static uint32_t trace_stack_id(const uint64_t *ips, size_t depth);

/* Capture the caller's stack and return its id (stacks on, nothing pending). */
static __attribute__((noinline)) uint32_t trace_capture_id(void)
{
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t depth = hl_stack_capture_user(ips, hl_tr.stacks, 2);
    return trace_stack_id(ips, depth);
}

/* The caller's stack id (0 when off): the one hl_trace_prepare_alloc captured, or a new
 * capture. A stack not yet described in this process gets a `stack` event before the event
 * using it (also when hardened mode interned it first). */
static inline uint32_t trace_begin(void)
{
    trace_start();
    uint32_t pending = hl_tr_pending;
    if (pending) {
        hl_tr_pending = 0;
        return pending - 1;
    }
    return hl_tr.stacks ? trace_capture_id() : 0;
}

int hl_trace_prepare_alloc(void)
{
    trace_start();
    if (!hl_tr.stacks) return 0;
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t depth = hl_stack_capture_user(ips, hl_tr.stacks, 2);
    if (hl_stack_in_tracer(ips, depth < HL_TRACER_FRAMES ? depth : HL_TRACER_FRAMES)) return 1;
    hl_tr_pending = trace_stack_id(ips, depth) + 1;
    return 0;
}

static uint32_t trace_stack_id(const uint64_t *ips, size_t depth)
{
    int is_new;
    uint32_t id = hl_stack_intern(ips, depth, &is_new);
    /* Described before first use: the `stack` event is emitted, then marked, so any thread
     * that sees the mark emits its own event after the description. */
    if (!hl_stack_described(id)) {
        lttng_ust_tracepoint(heapledger, stack, id, ips, (uint8_t)depth);
        hl_stack_set_described(id);
    }
    return id;
}

static inline uint32_t trace_sat32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void hl_trace_emit_alloc(const void *ptr, size_t size, const hl_opinfo_t *info, uint64_t cycles)
{
    uint32_t stack = trace_begin();
    const uint64_t w[HL_TP_ALLOC_WORDS] = {hl_tr_who,
                                           (uint64_t)(uintptr_t)ptr,
                                           size,
                                           info->usable,
                                           HL_TP_OP(info->tier, info->cls, info->path, stack),
                                           trace_sat32(cycles)};
    lttng_ust_tracepoint(heapledger, alloc, w);
}

void hl_trace_emit_free(const void *ptr, const hl_opinfo_t *info, uint64_t cycles)
{
    uint32_t stack = trace_begin();
    const uint64_t w[HL_TP_FREE_WORDS] = {hl_tr_who, (uint64_t)(uintptr_t)ptr, info->usable,
                                          HL_TP_OP(info->tier, info->cls, info->path, stack),
                                          trace_sat32(cycles)};
    lttng_ust_tracepoint(heapledger, free, w);
}

void hl_trace_emit_realloc(const void *old, const void *ptr, size_t size, const hl_opinfo_t *info,
                           uint64_t cycles)
{
    uint32_t stack = trace_begin();
    const uint64_t w[HL_TP_REALLOC_WORDS] = {hl_tr_who,
                                             (uint64_t)(uintptr_t)old,
                                             (uint64_t)(uintptr_t)ptr,
                                             size,
                                             info->usable,
                                             HL_TP_OP(info->tier, info->cls, info->path, stack),
                                             trace_sat32(cycles)};
    lttng_ust_tracepoint(heapledger, realloc, w);
}

/* Called from the OS layer, possibly with heap locks held and outside the shim's traced
 * path: it checks the gate itself and never starts the process (no stack table, no unwinder,
 * which may allocate); the process's next alloc/free emits config. */
void hl_trace_emit_os(int map, const void *addr, size_t len, const char *purpose)
{
    if (!hl_trace_active()) return;
    if (map)
        lttng_ust_tracepoint(heapledger, os_map, (uint64_t)(uintptr_t)addr, len,
                             purpose ? purpose : "");
    else
        lttng_ust_tracepoint(heapledger, os_unmap, (uint64_t)(uintptr_t)addr, len,
                             purpose ? purpose : "");
}

/* Describe stack id (interned elsewhere, e.g. by hardened mode) if this process has not yet:
 * its frames come from the table. */
static void trace_describe(uint32_t id)
{
    size_t depth;
    const uint64_t *ips;
    if (hl_stack_described(id) || !(ips = hl_stack_lookup(id, &depth))) return;
    lttng_ust_tracepoint(heapledger, stack, id, ips, (uint8_t)depth);
    hl_stack_set_described(id);
}

/* Called from error reports (the heap may be corrupt, locks may be held): checks the gate
 * itself, and captures a stack only when the process has already started tracing. */
void hl_trace_emit_error_stacks(const char *kind, const void *addr, size_t size,
                                const char *details, uint32_t alloc_stack, uint32_t free_stack)
{
    if (!hl_trace_active()) return;
    uint32_t stack = 0;
    if (atomic_load_explicit(&hl_tr.started, memory_order_acquire) == 2) {
        stack = trace_begin();
        trace_describe(alloc_stack);
        trace_describe(free_stack);
    } else {
        alloc_stack = free_stack = 0; /* no table yet in this process: nothing to refer to */
    }
    lttng_ust_tracepoint(heapledger, error, kind ? kind : "", (uint64_t)(uintptr_t)addr, size,
                         details ? details : "", stack, alloc_stack, free_stack);
}

void hl_trace_emit_error(const char *kind, const void *addr, const char *details)
{
    hl_trace_emit_error_stacks(kind, addr, 0, details, 0, 0);
}

void hl_trace_emit_leak_blocks(const uint64_t *words, unsigned n)
{
    if (!hl_trace_active()) return;
    lttng_ust_tracepoint(heapledger, leak_blocks, words, (uint16_t)n);
}

void hl_trace_emit_leak_scan(const uint64_t *summary, unsigned n)
{
    if (!hl_trace_active() || n < 13) return;
    lttng_ust_tracepoint(heapledger, leak_scan, summary);
}
