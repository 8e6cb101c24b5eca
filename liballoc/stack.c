/* liballoc/stack.c — call-stack capture (libunwind) and the lock-free stack table.
 *
 * Capture uses the nongnu libunwind's unw_backtrace(): it walks with the unwind tables (a
 * frame-pointer walk stops after about two frames in Debian's binaries), does not allocate
 * once warm, and costs 115–190 ns at depth 8–16. Its first call costs ~1 ms and may allocate,
 * hence the warm-up in hl_stack_init() when tracing (untraced, the first deferral of the fast
 * walker makes that call, inside a capture).
 *
 * The table (see stack.h for the layout) is one anonymous mapping reserved with
 * MAP_NORESERVE: untouched pages cost nothing, so a run with 100 stacks uses a few pages.
 *
 * Interning protocol (lock-free, wait-free): a new stack first gets an id (one atomic add)
 * and its slot slots[id] is filled, id stored last with release order; then an empty index
 * entry is claimed for it by CAS (hash tag | id). A reader follows only published index
 * entries, whose slots are complete. A thread that loses the CAS to the same stack returns
 * the winner's id (its own id stays unused); to another stack, it probes on with its id.
 * Nothing is ever removed.
 *
 * "Described" is a per-slot epoch number, separate from interning, so that hardened mode can
 * intern stacks without taking the tracer's "describe it once" away: the slot is described
 * in the current process when it holds the current epoch (0 = never; epochs start at 1 and
 * grow at each fork).
 */
#include "stack.h"
#include "internal.h"
#include "trace.h" /* hl_trace_active: warm the unwinder up when tracing */ /* hl_main_heap's options: unwind= */
#include "unwind_fast.h"
#include "unwind_load.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct hl_stack_slot_s {
    _Atomic uint32_t id;        /* 0 = being filled; published last */
    _Atomic uint32_t described; /* process epoch in which the stack was last described */
    uint32_t off;               /* first frame in the pool */
    uint32_t check;             /* the hash's low 24 bits << 8 | depth (at most 64) */
} hl_stack_slot_t;

/* 16 bytes: the slots are touched in id order, one page per 256 stacks (gcc under harden=1,
 * 24 k stacks: 380 KiB where 32-byte slots took 760). */
_Static_assert(sizeof(hl_stack_slot_t) == 16, "one slot is 16 bytes");
_Static_assert(HL_STACK_MAX_DEPTH < 256, "a depth fits the check's low byte");
_Static_assert((HL_STACK_SLOTS & (HL_STACK_SLOTS - 1)) == 0, "slots: power of two");

/* Index entries: the id in the low STACK_ID_BITS, the top bits of the stack's hash above it
 * (a probe compares them before it reads the slot). Slots are stored by id, so the pages of
 * the slot array are touched in order, as stacks appear; only the 4-byte index is touched at
 * random (1 MiB at most instead of 8: gcc under harden=1, peak RSS -6 MiB). */
#define STACK_ID_BITS 18u
#define STACK_ID_MASK ((1u << STACK_ID_BITS) - 1)
_Static_assert(HL_STACK_SLOTS == 1u << STACK_ID_BITS, "an id fits its index entry");
/* Ids handed out at most: the index stays at most 90% full. */
#define STACK_MAX_IDS (HL_STACK_SLOTS / 10 * 9)

/* Probes before giving up on a stack (the table is then considered full for it). */
#define HL_STACK_MAX_PROBE 256
/* Frames unw_backtrace may return above the ones kept (skip + allocator frames). */
#define HL_STACK_EXTRA 32
/* Frames of our own module hl_stack_capture_user expects above the user's (capture, emit,
 * traced path, malloc entry, aligned helpers): the walk stops at max + this, since every
 * frame walked costs ~10 ns. More allocator frames only shorten the user's stack. */
#define HL_STACK_SELF_SLACK 8

/* The default heap's options (unwind=): weak, so that programs linking this file without the
 * allocator (tests/e2e's tp_emit and record_stack_test) walk with the default. */
extern hl_heap_t hl_main_heap __attribute__((weak));

/* Module statics, gathered. */
static struct {
    _Atomic int state;               /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    hl_stack_slot_t *slots;          /* [HL_STACK_SLOTS], by id */
    uint64_t *pool;                  /* [HL_STACK_POOL] */
    _Atomic uint32_t *index;         /* [HL_STACK_SLOTS], open addressing: hash tag | id, 0 empty */
    _Atomic uint32_t pool_used;      /* frames appended */
    _Atomic uint32_t next_id;        /* ids handed out */
    _Atomic uint32_t epoch;          /* current process epoch, starts at 1 */
    uintptr_t self_lo, self_hi;      /* text of our module; empty when it is the main program */
    int unwind;                      /* HL_UNWIND_FAST, _LIBUNWIND or _CHECK */
    _Atomic uint64_t unwinder_calls; /* libunwind walks (hl_stack_unwinder_calls) */
} hl_stk = {.epoch = 1};

/* Find the executable segment of the module this file is linked into. __ehdr_start is the
 * link-time symbol for our own ELF header: no dl_iterate_phdr (it locks), no allocation. */
static void stack_find_self(void)
{
    extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    if ((uintptr_t)ph == getauxval(AT_PHDR))
        return; /* linked into the main program: cannot tell our frames from the program's */
    uintptr_t base = 0;
    int have_base = 0;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && !have_base) {
            base = (uintptr_t)eh - (ph[i].p_vaddr - ph[i].p_offset);
            have_base = 1;
        }
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            hl_stk.self_lo = base + ph[i].p_vaddr;
            hl_stk.self_hi = base + ph[i].p_vaddr + ph[i].p_memsz;
        }
}

/* libunwind's descriptors. libunwind (1.6) validates memory before it reads it while stepping
 * (its conservative checks: write(2) one byte from the address into a pipe; EFAULT means
 * unreadable), so it opens a pipe when it initialises (pipe2, O_CLOEXEC|O_NONBLOCK) and opens
 * a new one whenever a read of its pipe fails. Left alone, the two descriptors are the lowest
 * free ones — fds 3 and 4 at main — for the whole run: programs that count, list, pass or
 * close their descriptors see them (CPython's test_subprocess). libunwind needs the pipe (a
 * refused pipe2 fails every validation: no stack at all) and keeps it in a static array.
 *
 * So the pipe exists only while one of our unwinder calls runs. heapledger's pipe2 (it
 * interposes the libc symbol, which libunwind calls through its PLT) notes the array it was
 * given when the calling thread is inside such a call: that is libunwind's static. When the
 * last unwinder call in the process ends, the pipe is closed and the array set back to -1,
 * so that libunwind's next validation, finding its read failing, opens a new one. A count of
 * running calls orders this against calls starting in other threads (unwind_enter): no call
 * can be using the numbers when they are closed (a number closed under a running call could
 * be reused by the program, and libunwind would write into the program's file). Outside our
 * calls, every pipe2 is the system call itself. Cost: two atomic operations per capture, and
 * a pipe2 and two closes per capture that needed a validation (libunwind caches four
 * validated pages per thread). */
static __thread int in_unwinder __attribute__((tls_model("initial-exec")));
/* This thread's outermost unwinder call holds unw_pipe.open_lock. */
static __thread int opener __attribute__((tls_model("initial-exec")));
static struct {
    pthread_mutex_t lock; /* serialises closers (and pipe2's bookkeeping) */
    _Atomic int users;    /* unwinder calls running */
    _Atomic int closing;  /* a closer is deciding or closing: starting calls wait */
    _Atomic int opened;   /* a pipe was made since the last close */
    /* Held by an outermost unwinder call that starts while no pipe is open: libunwind opens
     * its pipe without a lock of its own (two threads that both find it closed each make one
     * and the array keeps only the last: the other pair would stay open for good), so only one
     * call at a time may be the one that opens it. Taken before `lock`. */
    pthread_mutex_t open_lock;
    int *fds; /* libunwind's pipe array, as its pipe2 call passed it; NULL until seen */
} unw_pipe = {.lock = PTHREAD_MUTEX_INITIALIZER, .open_lock = PTHREAD_MUTEX_INITIALIZER};

__attribute__((visibility("default"))) int pipe2(int fds[2], int flags)
{
    int r = (int)syscall(SYS_pipe2, fds, flags); /* -1 and errno on failure */
    if (r == 0 && in_unwinder) {
        /* The first pipe2 inside an unwinder call is libunwind's initialisation (the
         * warm-up in hl_stack_init, or the first deferred walk), which passes its static
         * array; later ones pass the
         * same array. */
        pthread_mutex_lock(&unw_pipe.lock);
        if (!unw_pipe.fds) unw_pipe.fds = fds;
        if (fds == unw_pipe.fds) atomic_store(&unw_pipe.opened, 1);
        pthread_mutex_unlock(&unw_pipe.lock);
    }
    return r;
}

/* Enter/leave an unwinder call. Lock-free unless a pipe is open when the last call ends: the
 * closer announces itself (closing = 1) and then checks that no call started (users == 0);
 * a starting call counts itself and then checks for a closer, and waits for it. With
 * sequentially consistent order one of the two sees the other, so a call never runs with the
 * numbers being closed. */
static int unwind_enter(void)
{
    int saved = errno; /* the unwinder's validations may leave EAGAIN or EBADF behind */
    atomic_fetch_add(&unw_pipe.users, 1);
    while (atomic_load(&unw_pipe.closing))
        sched_yield();
    if (in_unwinder++ == 0 && !atomic_load(&unw_pipe.opened)) {
        pthread_mutex_lock(&unw_pipe.open_lock);
        opener = 1;
    }
    return saved;
}

/* Caller holds the lock. */
static void close_pipe_locked(void)
{
    atomic_store(&unw_pipe.closing, 1);
    if (atomic_load(&unw_pipe.users) == 0 && atomic_load(&unw_pipe.opened) && unw_pipe.fds) {
        int a = unw_pipe.fds[0], b = unw_pipe.fds[1];
        unw_pipe.fds[0] = unw_pipe.fds[1] = -1; /* libunwind opens a new one when it needs it */
        if (a >= 0) close(a);
        if (b >= 0) close(b);
        atomic_store(&unw_pipe.opened, 0);
    }
    atomic_store(&unw_pipe.closing, 0);
}

static void unwind_leave(int saved_errno)
{
    if (--in_unwinder == 0 && opener) {
        opener = 0;
        pthread_mutex_unlock(&unw_pipe.open_lock);
    }
    if (atomic_fetch_sub(&unw_pipe.users, 1) == 1 && atomic_load(&unw_pipe.opened)) {
        pthread_mutex_lock(&unw_pipe.lock);
        close_pipe_locked();
        pthread_mutex_unlock(&unw_pipe.lock);
    }
    errno = saved_errno;
}

static void unwind_fork_prepare(void)
{
    pthread_mutex_lock(&unw_pipe.open_lock);
    pthread_mutex_lock(&unw_pipe.lock);
}
static void unwind_fork_parent(void)
{
    pthread_mutex_unlock(&unw_pipe.lock);
    pthread_mutex_unlock(&unw_pipe.open_lock);
}
static void unwind_fork_child(void)
{
    pthread_mutex_init(&unw_pipe.lock, NULL);
    pthread_mutex_init(&unw_pipe.open_lock, NULL);
    opener = 0;                       /* the forking thread's hold is gone with the reset lock */
    atomic_store(&unw_pipe.users, 0); /* the threads inside an unwinder call are gone */
    close_pipe_locked();
}

int hl_stack_init(void)
{
    int st = atomic_load_explicit(&hl_stk.state, memory_order_acquire);
    if (st == 2) return 0;
    if (st != 0 || !atomic_compare_exchange_strong(&hl_stk.state, &st, 1))
        return st == -1 ? -1 : 0; /* failed, or another thread is mapping: it will finish */
    size_t slots = (size_t)HL_STACK_SLOTS * sizeof(hl_stack_slot_t);
    size_t pool = (size_t)HL_STACK_POOL * sizeof(uint64_t);
    size_t ids = (size_t)HL_STACK_SLOTS * sizeof(uint32_t);
    char *m = mmap(NULL, slots + pool + ids, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        atomic_store(&hl_stk.state, -1);
        return -1;
    }
    hl_stk.slots = (hl_stack_slot_t *)m;
    hl_stk.pool = (uint64_t *)(m + slots);
    hl_stk.index = (_Atomic uint32_t *)(m + slots + pool);
    stack_find_self();
    hl_uwf_init();
    if (&hl_main_heap && __atomic_load_n(&hl_main_heap.state, __ATOMIC_ACQUIRE) == HL_HEAP_READY)
        hl_stk.unwind = (int)hl_main_heap.opt.unwind;
    void *warm[HL_STACK_MAX_DEPTH];
    pthread_atfork(unwind_fork_prepare, unwind_fork_parent, unwind_fork_child);
    /* libunwind is loaded (dlopen, unwind_load.h) and its first walk made, which loads its
     * tables and allocates (~370 KiB resident on a small program), by the first walk that needs
     * it: a deferral of the fast walker, unwind=libunwind or check. The tracer loads and warms
     * it up here, outside its traced paths; a hardened process whose walks never defer never
     * maps it (nor liblzma): the fault handler walks with the fast walker (fault.c). */
    hl_unw_backtrace_fn bt = hl_trace_active() ? hl_unwind_backtrace_fn() : NULL;
    if (bt) {
        atomic_fetch_add_explicit(&hl_stk.unwinder_calls, 1, memory_order_relaxed);
        int saved = unwind_enter();
        bt(warm, HL_STACK_MAX_DEPTH); /* first call: loads tables, may allocate */
        unwind_leave(saved);
    }
    atomic_store_explicit(&hl_stk.state, 2, memory_order_release);
    return 0;
}

void hl_stack_set_unwind(int mode)
{
    hl_stk.unwind = mode;
}

int hl_stack_unwind_mode(void)
{
    return hl_stk.unwind;
}

uint64_t hl_stack_unwinder_calls(void)
{
    return atomic_load_explicit(&hl_stk.unwinder_calls, memory_order_relaxed);
}

/* Text for unwind=check's message. */
static void say(const char *s)
{
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}
static void say_hex(uint64_t v)
{
    char b[19];
    int k = (int)sizeof b;
    do {
        b[--k] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    b[--k] = 'x';
    b[--k] = '0';
    ssize_t r = write(2, b + k, sizeof b - (size_t)k);
    (void)r;
}
static void say_dec(uint64_t v)
{
    char b[21];
    int k = (int)sizeof b;
    do {
        b[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    ssize_t r = write(2, b + k, sizeof b - (size_t)k);
    (void)r;
}

/* unwind=check: the fast walk (fast[0..nf), -1: it deferred) against libunwind's
 * (ref[0..nr)). Entry 0 is each walk's own call site in stack_walk: not compared. */
static void stack_check(void *const *ref, int nr, void *const *fast, int nf)
{
    if (nf < 0) return; /* deferred: libunwind's answer is the one used anyway */
    int i = 1;
    while (i < nr && i < nf && ref[i] == fast[i])
        i++;
    if (i >= nr && i >= nf) return;
    say("heapledger: unwind=check: the fast stack walk differs from libunwind at frame ");
    say_dec((uint64_t)i);
    say(": fast ");
    if (i < nf)
        say_hex((uint64_t)(uintptr_t)fast[i]);
    else
        say("(end)");
    say(", libunwind ");
    if (i < nr)
        say_hex((uint64_t)(uintptr_t)ref[i]);
    else
        say("(end)");
    say(" (depth ");
    say_dec((uint64_t)nf);
    say(" against ");
    say_dec((uint64_t)nr);
    say(")");
    if (i > 0) {
        hl_uwf_rule_t r;
        hl_uwf_rule((uintptr_t)ref[i - 1], &r);
        say("; rule of ");
        say_hex((uint64_t)(uintptr_t)ref[i - 1]);
        say(": ");
        if (r.kind == HL_UWF_STD) {
            say(r.cfa_rbp ? "CFA=rbp+" : "CFA=rsp+");
            say_dec((uint64_t)r.cfa_off);
            if (r.rbp_saved) {
                say(", rbp at CFA-");
                say_dec((uint64_t)r.rbp_off);
            }
        } else {
            say(r.kind == HL_UWF_LAST ? "last frame" : r.why ? r.why : "fallback");
        }
    }
    say("\nheapledger: please report this with the program; unwind=libunwind avoids the fast "
        "walk\n");
    abort();
}

/* Walk the stack into buf (innermost first, buf[0] in this function: the return address of
 * the unwinder's call) and return the frame count. The fast walker (unwind_fast.c) first;
 * libunwind when it defers, with unwind=libunwind, and beside it with unwind=check. */
static __attribute__((noinline)) int stack_walk(void **buf, int n)
{
    int mode = hl_stk.unwind;
    if (mode == HL_UNWIND_FAST) {
        int r = hl_uwf_backtrace(buf, n);
        __asm__ volatile("" ::: "memory");
        if (r >= 0) return r;
    }
    hl_unw_backtrace_fn bt = hl_unwind_backtrace_fn();
    if (!bt) return 0;
    atomic_fetch_add_explicit(&hl_stk.unwinder_calls, 1, memory_order_relaxed);
    int saved = unwind_enter();
    int r = bt(buf, n);
    unwind_leave(saved);
    if (mode == HL_UNWIND_CHECK && r > 0) {
        void *fast[HL_STACK_MAX_DEPTH + HL_STACK_EXTRA + 2];
        int nf = hl_uwf_backtrace(
            fast, n < (int)(sizeof fast / sizeof *fast) ? n : (int)(sizeof fast / sizeof *fast));
        stack_check(buf, r, fast, nf);
    }
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame must stay buf[0] */
    return r;
}

/* unwind=check for a walk from the entry's frame (stack_entry.c): libunwind's walk from here
 * must reach the entry's return address, after frames of ours only (when our text is known),
 * and go on with the same frames. */
static __attribute__((noinline)) void entry_check(void *const *got, int e, size_t max)
{
    void *ref[HL_STACK_MAX_DEPTH + HL_STACK_EXTRA];
    hl_unw_backtrace_fn bt = hl_unwind_backtrace_fn();
    if (!bt) return;
    atomic_fetch_add_explicit(&hl_stk.unwinder_calls, 1, memory_order_relaxed);
    int saved = unwind_enter();
    int nr = bt(ref, (int)(max + HL_STACK_EXTRA));
    unwind_leave(saved);
    uintptr_t lo = hl_stk.self_lo, hi = hl_stk.self_hi;
    int k = 0;
    while (k < nr && ref[k] != got[0] &&
           (lo >= hi || ((uintptr_t)ref[k] >= lo && (uintptr_t)ref[k] < hi)))
        k++;
    int want = nr - k < (int)max ? nr - k : (int)max;
    int i = 0;
    if (k < nr && ref[k] == got[0]) {
        while (i < want && i < e && ref[k + i] == got[i])
            i++;
        if (i == want && i == e) return;
    }
    say("heapledger: unwind=check: the stack walked from the allocator's entry differs from "
        "libunwind's at frame ");
    say_dec((uint64_t)i);
    say(": entry ");
    if (i < e)
        say_hex((uint64_t)(uintptr_t)got[i]);
    else
        say("(end)");
    say(", libunwind ");
    if (k + i < nr)
        say_hex((uint64_t)(uintptr_t)ref[k + i]);
    else
        say("(end)");
    say(" (");
    say_dec((uint64_t)k);
    say(" frames of heapledger's before it)\nheapledger: please report this with the program; "
        "unwind=libunwind avoids the fast walk\n");
    abort();
}

static size_t stack_copy(uint64_t *ips, size_t max, void *const *buf, size_t n, size_t from)
{
    size_t d = 0;
    for (size_t i = from; i < n && d < max; i++)
        ips[d++] = (uint64_t)(uintptr_t)buf[i];
    return d;
}

__attribute__((noinline)) size_t hl_stack_capture(uint64_t *ips, size_t max, size_t skip)
{
    void *buf[HL_STACK_MAX_DEPTH + HL_STACK_EXTRA];
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    if (skip > HL_STACK_EXTRA - 2) skip = HL_STACK_EXTRA - 2;
    /* buf[0] is in hl_stack_capture (return from stack_walk), buf[1] in our caller. */
    int n = stack_walk(buf, (int)(max + skip + 2));
    if (n <= 0) return 0;
    return stack_copy(ips, max, buf, (size_t)n, skip + 2);
}

__attribute__((noinline)) size_t hl_stack_capture_user(uint64_t *ips, size_t max, size_t skip)
{
    void *buf[HL_STACK_MAX_DEPTH + HL_STACK_EXTRA];
    if (max > HL_STACK_MAX_DEPTH) max = HL_STACK_MAX_DEPTH;
    if (skip > HL_STACK_EXTRA - 2) skip = HL_STACK_EXTRA - 2;
    uintptr_t lo = hl_stk.self_lo, hi = hl_stk.self_hi;
    if (hl_stack_entry_fp && hl_stk.unwind != HL_UNWIND_LIBUNWIND) {
        /* From the program's call into the allocator (stack_entry.c): none of our frames, and
         * straight into ips (a return address is a pointer's 8 bytes either way; the walk is
         * in another translation unit). A deferred walk wrote nothing that counts. */
        _Static_assert(sizeof(void *) == sizeof(uint64_t), "frames are pointers");
        int e = hl_stack_entry_walk((void **)ips, (int)max);
        if (e >= 0) {
            if (hl_stk.unwind == HL_UNWIND_CHECK) entry_check((void *const *)ips, e, max);
            return (size_t)e;
        }
    }
    int n = stack_walk(buf, (int)(max + (lo < hi ? HL_STACK_SELF_SLACK : skip + 2)));
    if (n <= 0) return 0;
    size_t from = skip + 2;
    if (lo < hi) {
        from = 0;
        while (from < (size_t)n && (uintptr_t)buf[from] >= lo && (uintptr_t)buf[from] < hi)
            from++;
    }
    return stack_copy(ips, max, buf, (size_t)n, from);
}

void hl_stack_self_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = hl_stk.self_lo;
    *hi = hl_stk.self_hi;
}

/* Two independent multiply chains over the even and the odd frames (two instructions a frame
 * and half the latency of one chain), mixed at the end. Only where a stack's index entry goes
 * depends on it: stacks are told apart by their frames. */
static uint64_t stack_hash(const uint64_t *ips, size_t depth)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ depth, g = 0x2545f4914f6cdd1dull;
    size_t i = 0;
    for (; i + 2 <= depth; i += 2) {
        h = (h + ips[i]) * 0xff51afd7ed558ccdull;
        g = (g + ips[i + 1]) * 0xc4ceb9fe1a85ec53ull;
    }
    if (i < depth) h = (h + ips[i]) * 0xff51afd7ed558ccdull;
    h ^= (g << 31 | g >> 33) ^ (h >> 29);
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    return h | 1;
}

static inline uint32_t stack_check_of(uint64_t h, size_t depth)
{
    return (uint32_t)h << 8 | (uint32_t)depth;
}

/* A new id for the stack: its frames in the pool, its slot filled and published (id last);
 * 0 when the pool or the ids are exhausted. Not yet in the index. */
static uint32_t stack_fill(uint64_t h, const uint64_t *ips, size_t depth)
{
    uint32_t off =
        atomic_fetch_add_explicit(&hl_stk.pool_used, (uint32_t)depth, memory_order_relaxed);
    if ((size_t)off + depth > HL_STACK_POOL) return 0; /* pool exhausted */
    uint32_t id = atomic_fetch_add_explicit(&hl_stk.next_id, 1, memory_order_relaxed) + 1;
    if (id >= STACK_MAX_IDS) return 0;
    hl_stack_slot_t *s = &hl_stk.slots[id];
    memcpy(&hl_stk.pool[off], ips, depth * sizeof(uint64_t));
    s->off = off;
    s->check = stack_check_of(h, depth);
    atomic_store_explicit(&s->id, id, memory_order_release);
    return id;
}

uint32_t hl_stack_intern(const uint64_t *ips, size_t depth, int *is_new)
{
    *is_new = 0;
    if (depth == 0 || atomic_load_explicit(&hl_stk.state, memory_order_acquire) != 2) return 0;
    if (depth > HL_STACK_MAX_DEPTH) depth = HL_STACK_MAX_DEPTH;
    uint64_t h = stack_hash(ips, depth);
    uint32_t tag = (uint32_t)(h >> (64 - (32 - STACK_ID_BITS))) << STACK_ID_BITS;
    uint32_t check = stack_check_of(h, depth);
    uint32_t mine = 0; /* our new id, once filled */
    for (size_t probe = 0; probe < HL_STACK_MAX_PROBE; probe++) {
        size_t idx = (h + probe) & (HL_STACK_SLOTS - 1);
        uint32_t e = atomic_load_explicit(&hl_stk.index[idx], memory_order_acquire);
        if (e == 0) {
            if (!mine && !(mine = stack_fill(h, ips, depth))) return 0;
            if (atomic_compare_exchange_strong(&hl_stk.index[idx], &e, tag | mine)) {
                *is_new = 1;
                return mine;
            }
            /* lost the race: e now holds the winner's entry, examine it below */
        }
        if ((e & ~STACK_ID_MASK) != tag) continue;
        hl_stack_slot_t *s = &hl_stk.slots[e & STACK_ID_MASK];
        if (s->check != check || memcmp(&hl_stk.pool[s->off], ips, depth * sizeof(uint64_t)) != 0)
            continue;
        return e & STACK_ID_MASK; /* (a racing twin's id of ours, if any, stays unused) */
    }
    return 0;
}

/* Published slot of id, or NULL. */
static hl_stack_slot_t *stack_slot(uint32_t id)
{
    if (id == 0 || id >= STACK_MAX_IDS ||
        atomic_load_explicit(&hl_stk.state, memory_order_acquire) != 2)
        return NULL;
    hl_stack_slot_t *s = &hl_stk.slots[id];
    return atomic_load_explicit(&s->id, memory_order_acquire) == id ? s : NULL;
}

const uint64_t *hl_stack_lookup(uint32_t id, size_t *depth)
{
    hl_stack_slot_t *s = stack_slot(id);
    if (!s) return NULL;
    *depth = s->check & 0xff;
    return &hl_stk.pool[s->off];
}

int hl_stack_described(uint32_t id)
{
    hl_stack_slot_t *s = stack_slot(id);
    return !s || atomic_load_explicit(&s->described, memory_order_acquire) ==
                     atomic_load_explicit(&hl_stk.epoch, memory_order_relaxed);
}

void hl_stack_set_described(uint32_t id)
{
    hl_stack_slot_t *s = stack_slot(id);
    if (s) atomic_store_explicit(&s->described, atomic_load(&hl_stk.epoch), memory_order_release);
}

void hl_stack_fork_child(void)
{
    atomic_fetch_add(&hl_stk.epoch, 1);
}

/* ---- the tracer's own modules ---------------------------------------------------------- */

#define HL_TRACER_RANGES 16

/* Objects whose code is the tracer's, by file name prefix (kind 1). The other LTTng-UST
 * libraries are wrappers it preloads (liblttng-ust-fork, -dl, -libc-wrapper, …: kind 2): they
 * run the program's own code inside them (atfork handlers, the loader's work for the
 * program's dlopen and the constructors it calls), so a frame of theirs makes a call the
 * tracer's only when nothing but libc (kind 3) and libheapledger.so lies between it and the
 * allocator: its own work, e.g. the build-id reading of liblttng-ust-dl. */
static const char *const hl_tracer_names[] = {
    "liblttng-ust.so",     "liblttng-ust-common.so", "liblttng-ust-tracepoint.so",
    "liblttng-ust-ctl.so", "libheapledger-tp.so",    "libnuma.so",
};

static struct {
    _Atomic int state; /* 0 = not scanned, 1 = scanning, 2 = done */
    int n;
    int provider; /* libheapledger-tp.so is loaded */
    uintptr_t lo[HL_TRACER_RANGES], hi[HL_TRACER_RANGES];
    uint8_t kind[HL_TRACER_RANGES]; /* 1 = the tracer's code, 2 = a wrapper, 3 = libc */
} hl_trc;

static int tracer_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof hl_tracer_names / sizeof *hl_tracer_names; i++)
        if (!strncmp(base, hl_tracer_names[i], strlen(hl_tracer_names[i]))) return 1;
    if (!strncmp(base, "liblttng-ust-", 13)) return 2;
    return strncmp(base, "libc.so.", 8) ? 0 : 3;
}

static int tracer_scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    int kind = info->dlpi_name ? tracer_name(info->dlpi_name) : 0;
    if (!kind) return 0;
    if (strstr(info->dlpi_name, "libheapledger-tp.so")) hl_trc.provider = 1;
    for (int i = 0; i < info->dlpi_phnum && hl_trc.n < HL_TRACER_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            hl_trc.lo[hl_trc.n] = info->dlpi_addr + ph->p_vaddr;
            hl_trc.hi[hl_trc.n] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            hl_trc.kind[hl_trc.n] = (uint8_t)kind;
            hl_trc.n++;
        }
    }
    return 0;
}

int hl_stack_tracer_scan(void)
{
    int st = 0;
    if (atomic_compare_exchange_strong(&hl_trc.state, &st, 1)) {
        if (hl_stk.self_hi == 0) stack_find_self();
        dl_iterate_phdr(tracer_scan_one, NULL);
        atomic_store_explicit(&hl_trc.state, 2, memory_order_release);
    } else {
        while (atomic_load_explicit(&hl_trc.state, memory_order_acquire) != 2)
            ;
    }
    return hl_trc.provider;
}

/* Range index holding ip, or -1. */
static int tracer_range(uint64_t ip)
{
    for (int r = 0; r < hl_trc.n; r++)
        if (ip >= hl_trc.lo[r] && ip < hl_trc.hi[r]) return r;
    return -1;
}

int hl_stack_in_tracer(const uint64_t *ips, size_t n)
{
    if (atomic_load_explicit(&hl_trc.state, memory_order_acquire) != 2) return 0;
    int opaque = 0; /* a frame of the program (or the loader) lies below */
    for (size_t i = 0; i < n; i++) {
        int r = tracer_range(ips[i]);
        int kind = r < 0 ? 0 : hl_trc.kind[r];
        if (kind == 1 || (kind == 2 && !opaque)) return 1;
        if (kind == 0 && !(ips[i] >= hl_stk.self_lo && ips[i] < hl_stk.self_hi)) opaque = 1;
    }
    return 0;
}

uint32_t hl_stack_count(void)
{
    uint32_t n = atomic_load(&hl_stk.next_id);
    return n < STACK_MAX_IDS ? n : STACK_MAX_IDS - 1;
}
