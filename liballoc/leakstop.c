/* liballoc/leakstop.c — stopping the other threads for the leak scan (leakscan.h).
 *
 * The scan runs in the exit destructor while other threads may still run. Each one is sent a
 * real-time signal (the highest one that has no handler of the program's: SIGRTMAX down to
 * SIGRTMIN + 2) whose handler saves the interrupted context (general registers, stack pointer,
 * thread pointer) into a preallocated slot, tells the scanner, and waits on a futex until the
 * scan is over: the thread's registers and stack are then a stable root. A thread that has
 * the signal blocked (per /proc/self/task/TID/status) is not signalled, and one that does not
 * answer within HL_STOP_WAIT_NS (exiting, in an uninterruptible wait) is left running: both
 * count as not scanned (leak_scan.threads_scanned). LTTng-UST's own "-ust" threads block every
 * signal and hold only the tracer's side-heap blocks: they are neither stopped nor counted.
 * The handler stays installed after the scan (a late signal then returns at once, instead of
 * the default action of a real-time signal, which ends the process).
 *
 * Nothing here allocates or uses stdio: /proc is read with raw syscalls into static buffers.
 */
#include "internal.h"
#include "leakscan.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define HL_STOP_WAIT_NS (2ull * 1000 * 1000 * 1000) /* generous: a loaded 2-core machine */

/* Module statics, gathered. */
static struct {
    hl_leak_thread_t slots[HL_LEAK_THREADS];
    size_t nslots;
    int sig;          /* the stop signal, 0 until installed */
    int active;       /* handlers look for their slot only while 1 */
    uint32_t stopped; /* futex words: threads stopped, the go signal, threads resumed */
    uint32_t go;
    uint32_t resumed;
    char dents[8192];
    char text[2048];
} stop;

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void stop_handler(int sig, siginfo_t *si, void *ctx)
{
    (void)sig, (void)si;
    if (!__atomic_load_n(&stop.active, __ATOMIC_ACQUIRE)) return;
    int saved = errno;
    int tid = (int)syscall(SYS_gettid);
    hl_leak_thread_t *t = NULL;
    for (size_t i = 0; i < stop.nslots; i++)
        if (stop.slots[i].tid == tid &&
            __atomic_load_n(&stop.slots[i].state, __ATOMIC_ACQUIRE) == 0)
            t = &stop.slots[i];
    if (t) {
        ucontext_t *uc = ctx;
        for (int r = 0; r < 23 && r < NGREG; r++)
            t->regs[r] = (uint64_t)uc->uc_mcontext.gregs[r];
        t->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
        t->tp = (uintptr_t)__builtin_thread_pointer();
        __atomic_store_n(&t->state, 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&stop.stopped, 1, __ATOMIC_RELEASE);
        futex(&stop.stopped, FUTEX_WAKE_PRIVATE, 1, NULL);
        while (!__atomic_load_n(&stop.go, __ATOMIC_ACQUIRE))
            futex(&stop.go, FUTEX_WAIT_PRIVATE, 0, NULL);
        __atomic_store_n(&t->state, 2, __ATOMIC_RELEASE);
        __atomic_add_fetch(&stop.resumed, 1, __ATOMIC_RELEASE);
        futex(&stop.resumed, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    errno = saved;
}

/* The stop signal: our handler, installed once on a real-time signal the program leaves at
 * its default action. 0 when there is none. */
static int stop_signal(void)
{
    if (stop.sig) return stop.sig;
    for (int s = SIGRTMAX; s >= SIGRTMIN + 2; s--) {
        struct sigaction old;
        if (sigaction(s, NULL, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = stop_handler;
            sa.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&sa.sa_mask);
            if (sigaction(s, &sa, NULL) != 0) continue;
            stop.sig = s;
            return s;
        }
    }
    return 0;
}

/* Read a small /proc file into stop.text (NUL-terminated); its length, 0 on error. */
static size_t read_text(const char *path)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t r = (ssize_t)syscall(SYS_read, fd, stop.text, sizeof stop.text - 1);
    syscall(SYS_close, fd);
    if (r <= 0) return 0;
    stop.text[r] = 0;
    return (size_t)r;
}

/* "/proc/self/task/TID/FILE" into buf. */
static void task_path(char *buf, size_t cap, int tid, const char *file)
{
    hl_out_t o; /* only its formatting: the buffer is copied, nothing is written */
    hl_out_init(&o, -1);
    hl_out_str(&o, "/proc/self/task/");
    hl_out_u64(&o, (uint64_t)tid);
    hl_out_str(&o, "/");
    hl_out_str(&o, file);
    size_t n = o.len < cap - 1 ? o.len : cap - 1;
    memcpy(buf, o.buf, n);
    buf[n] = 0;
}

/* The tracer's thread (name ending in "-ust"), or one with sig blocked: not signalled. */
static int task_skip(int tid, int sig, int *blocked)
{
    char path[64];
    task_path(path, sizeof path, tid, "comm");
    size_t n = read_text(path);
    while (n && (stop.text[n - 1] == '\n'))
        stop.text[--n] = 0;
    if (n >= 4 && !memcmp(stop.text + n - 4, "-ust", 4)) return 1;
    task_path(path, sizeof path, tid, "status");
    *blocked = 0;
    if (!read_text(path)) return 0;
    const char *p = strstr(stop.text, "SigBlk:");
    if (!p) return 0;
    p += 7;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t mask = 0;
    for (;; p++) {
        unsigned d = *p >= '0' && *p <= '9'   ? (unsigned)(*p - '0')
                     : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                                              : 16u;
        if (d == 16) break;
        mask = mask << 4 | d;
    }
    *blocked = (mask >> (sig - 1)) & 1;
    return 0;
}

hl_leak_thread_t *hl_leak_stop(size_t *n, size_t *others)
{
    *n = *others = 0;
    stop.nslots = 0;
    __atomic_store_n(&stop.stopped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stop.resumed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stop.go, 0, __ATOMIC_RELAXED);
    int sig = stop_signal();
    int self = (int)syscall(SYS_gettid), pid = (int)syscall(SYS_getpid);
    int fd =
        (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return stop.slots;
    /* Slots are filled before any signal is sent: a handler reads the table unlocked. */
    long r;
    while ((r = syscall(SYS_getdents64, fd, stop.dents, sizeof stop.dents)) > 0) {
        for (long off = 0; off < r;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *d = (void *)(stop.dents + off);
            off += d->reclen;
            int tid = 0;
            for (const char *c = d->name; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            if (tid <= 0 || tid == self) continue;
            int blocked = 0;
            if (task_skip(tid, sig ? sig : SIGRTMAX, &blocked)) continue;
            (*others)++;
            if (stop.nslots == HL_LEAK_THREADS) continue;
            hl_leak_thread_t *t = &stop.slots[stop.nslots++];
            memset(t, 0, sizeof *t);
            t->tid = blocked || !sig ? -tid : tid; /* negative: not signalled */
        }
    }
    syscall(SYS_close, fd);
    __atomic_store_n(&stop.active, 1, __ATOMIC_RELEASE);
    uint32_t sent = 0;
    for (size_t i = 0; i < stop.nslots; i++)
        if (stop.slots[i].tid > 0 && syscall(SYS_tgkill, pid, stop.slots[i].tid, sig) == 0) sent++;
    uint64_t deadline = now_ns() + HL_STOP_WAIT_NS;
    uint32_t got;
    while ((got = __atomic_load_n(&stop.stopped, __ATOMIC_ACQUIRE)) < sent) {
        uint64_t t = now_ns();
        if (t >= deadline) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        futex(&stop.stopped, FUTEX_WAIT_PRIVATE, got, &ts);
    }
    *n = stop.nslots;
    return stop.slots;
}

void hl_leak_resume(void)
{
    __atomic_store_n(&stop.go, 1, __ATOMIC_RELEASE);
    futex(&stop.go, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
    /* Wait for the stopped ones to leave the handler, so that the next scan (a forked
     * child's) starts with an empty table. */
    uint64_t deadline = now_ns() + HL_STOP_WAIT_NS;
    uint32_t got;
    while ((got = __atomic_load_n(&stop.resumed, __ATOMIC_ACQUIRE)) <
           __atomic_load_n(&stop.stopped, __ATOMIC_ACQUIRE)) {
        if (now_ns() >= deadline) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        futex(&stop.resumed, FUTEX_WAIT_PRIVATE, got, &ts);
    }
    __atomic_store_n(&stop.active, 0, __ATOMIC_RELEASE);
}

size_t hl_leak_read_maps(char *buf, size_t cap)
{
    size_t len = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t r;
    while (len + 1 < cap && (r = (ssize_t)syscall(SYS_read, fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = 0;
    syscall(SYS_close, fd);
    return len;
}

int hl_leak_mapping(const char *maps, size_t len, uintptr_t addr, uintptr_t *start, uintptr_t *end,
                    int *anon)
{
    const char *path;
    size_t plen;
    int r = hl_leak_mapping_path(maps, len, addr, start, end, &path, &plen);
    if (r) *anon = plen == 0;
    return r;
}

int hl_leak_mapping_path(const char *maps, size_t len, uintptr_t addr, uintptr_t *start,
                         uintptr_t *end, const char **path, size_t *plen)
{
    const char *p = maps, *e = maps + len;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        if (!nl) nl = e;
        const char *s = p;
        uintptr_t a = (uintptr_t)hl_parse_hex(&s);
        if (*s == '-') {
            s++;
            uintptr_t b = (uintptr_t)hl_parse_hex(&s);
            if (addr >= a && addr < b) {
                /* "start-end perms offset dev inode [path]": anonymous when no path. */
                int fields = 0;
                const char *q = s;
                while (q < nl && fields < 4) {
                    while (q < nl && *q == ' ')
                        q++;
                    if (q < nl) fields++;
                    while (q < nl && *q != ' ')
                        q++;
                }
                while (q < nl && *q == ' ')
                    q++;
                *start = a;
                *end = b;
                *path = q;
                *plen = (size_t)(nl - q);
                return 1;
            }
        }
        p = nl + 1;
    }
    return 0;
}

int hl_leak_maps_next(const char **cur, const char *end, hl_leak_map_t *m)
{
    while (*cur < end) {
        const char *p = *cur, *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        *cur = nl + 1;
        m->start = (uintptr_t)hl_parse_hex(&p);
        if (*p != '-') continue;
        p++;
        m->end = (uintptr_t)hl_parse_hex(&p);
        while (p < nl && *p == ' ')
            p++;
        for (int i = 0; i < 4; i++)
            m->perms[i] = p + i < nl ? p[i] : '-';
        m->perms[4] = 0;
        int fields = 0; /* perms offset dev inode, then the path */
        while (p < nl && fields < 4) {
            while (p < nl && *p == ' ')
                p++;
            if (p < nl) fields++;
            while (p < nl && *p != ' ')
                p++;
        }
        while (p < nl && *p == ' ')
            p++;
        m->path = p;
        m->plen = (size_t)(nl - p);
        return 1;
    }
    return 0;
}
