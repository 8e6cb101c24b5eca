/* liballoc/symbolize.c — function and file:line of a report's frames, named by a helper
 * process (heapledger-symbolize, liballoc/symbolizer.c) so that nothing runs in the reporting
 * process's broken heap and libdw is never loaded into it.
 *
 * At report time the frames (module path, file offset) are written as the helper's argv into
 * a static buffer; a child is made with a raw clone (no atfork handlers, no exit signal, so
 * the program's SIGCHLD handler sees nothing), which only moves the pipe onto its stdout and
 * execs the helper with an empty environment (no LD_PRELOAD: the helper runs without
 * heapledger). The parent reads the helper's lines with a time bound (HL_SYMBOLIZE_MS) and
 * reaps it; on any failure the frames keep what the caller had (its own ELF symbol lookup).
 * Every call is a raw system call into static memory: nothing allocates.
 *
 * The helper is $HEAPLEDGER_SYMBOLIZER when set ("" or "0": never exec one), else
 * heapledger-symbolize in ../bin of the directory holding the module that contains this code
 * (build/lib -> build/bin; PREFIX/lib -> PREFIX/bin).
 */
#include "harden.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HL_SYMBOLIZE_MS   5000
#define HL_SYMBOLIZE_RUNS 64
#define errno_is_eintr()  (errno == EINTR)

static char argbuf[64 << 10];
static char *argv_[2 + 2 * HL_SYM_MAX_FRAMES + 1];
static char outbuf[96 << 10];
static char helper[512];

static size_t put(size_t at, const char *s)
{
    size_t n = strlen(s);
    if (at + n + 1 > sizeof argbuf) return 0;
    memcpy(argbuf + at, s, n + 1);
    return at + n + 1;
}

static int helper_path(const char *self_module)
{
    const char *env = getenv("HEAPLEDGER_SYMBOLIZER");
    if (env) {
        if (!env[0] || !strcmp(env, "0") || strlen(env) >= sizeof helper) return 0;
        memcpy(helper, env, strlen(env) + 1);
        return 1;
    }
    const char *slash = self_module ? strrchr(self_module, '/') : NULL;
    static const char tail[] = "/../bin/heapledger-symbolize";
    if (!slash || (size_t)(slash - self_module) + sizeof tail > sizeof helper) return 0;
    memcpy(helper, self_module, (size_t)(slash - self_module));
    memcpy(helper + (slash - self_module), tail, sizeof tail);
    return 1;
}

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void hexstr(char *s, uint64_t v)
{
    char t[20];
    int i = 0;
    do {
        t[i++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    *s++ = '0';
    *s++ = 'x';
    while (i)
        *s++ = t[--i];
    *s = 0;
}

static uint64_t parse_hex(const char **s, const char *end)
{
    uint64_t v = 0;
    for (; *s < end; (*s)++) {
        char c = **s;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16u;
        if (d == 16) break;
        v = v * 16 + d;
    }
    return v;
}

/* Copy field [s, e) into dst (truncating). */
static void field(char *dst, size_t cap, const char *s, const char *e)
{
    size_t n = (size_t)(e - s);
    if (n >= cap) n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* One helper line for frame f: FUNCTION \t HEXDELTA \t FILE \t LINE. */
static void parse_line(hl_sym_frame_t *f, const char *s, const char *eol)
{
    const char *t[4];
    size_t k = 0;
    for (const char *c = s; c < eol && k < 3; c++)
        if (*c == '\t') t[k++] = c;
    if (k != 3) return;
    t[3] = eol;
    if (t[0] > s) {
        field(f->fn, sizeof f->fn, s, t[0]);
        const char *d = t[0] + 1;
        f->fdelta = parse_hex(&d, t[1]);
        f->has_fn = 1;
    }
    if (t[2] > t[1] + 1) {
        field(f->file, sizeof f->file, t[1] + 1, t[2]);
        uint32_t line = 0;
        for (const char *c = t[2] + 1; c < eol && *c >= '0' && *c <= '9'; c++)
            line = line * 10 + (uint32_t)(*c - '0');
        f->line = line;
    }
}

size_t hl_symbolize(hl_sym_frame_t *f, size_t n, const char *self_module)
{
    /* abort_on_error=0 may report without end: the first HL_SYMBOLIZE_RUNS reports are named
     * by the helper, later ones by the symbol tables only (no 5 s per report). */
    static unsigned runs;
    if (!n || runs >= HL_SYMBOLIZE_RUNS || !helper_path(self_module)) return 0;
    runs++;
    if (n > HL_SYM_MAX_FRAMES) n = HL_SYM_MAX_FRAMES;
    size_t at = 0, argc = 0, asked[HL_SYM_MAX_FRAMES], nasked = 0;
    argv_[argc++] = helper;
    for (size_t i = 0; i < n; i++) {
        if (!f[i].module || f[i].module[0] != '/') continue;
        char off[24];
        hexstr(off, f[i].foff);
        size_t a = put(at, f[i].module), b = a ? put(a, off) : 0;
        if (!b) break;
        argv_[argc++] = argbuf + at;
        argv_[argc++] = argbuf + a;
        at = b;
        asked[nasked++] = i;
    }
    argv_[argc] = NULL;
    if (!nasked) return 0;
    int fds[2];
    if (syscall(SYS_pipe2, fds, O_CLOEXEC) != 0) return 0;
    /* A copy of the address space without atfork handlers and without an exit signal. */
    long pid = syscall(SYS_clone, 0ul, NULL, NULL, NULL, NULL);
    if (pid == 0) {
        static char *const envp[] = {NULL};
        int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
        if (fds[1] == 1)
            syscall(SYS_fcntl, 1, F_SETFD, 0);
        else
            syscall(SYS_dup3, fds[1], 1, 0);
        if (null >= 0) {
            syscall(SYS_dup3, null, 0, 0);
            syscall(SYS_dup3, null, 2, 0);
        }
        syscall(SYS_execve, helper, argv_, envp);
        syscall(SYS_exit_group, 127);
    }
    syscall(SYS_close, fds[1]);
    if (pid < 0) {
        syscall(SYS_close, fds[0]);
        return 0;
    }
    size_t len = 0;
    long deadline = now_ms() + HL_SYMBOLIZE_MS;
    int timed_out = 0;
    for (;;) {
        long left = deadline - now_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        long r = syscall(SYS_poll, &p, 1, (int)left);
        if (r < 0 && errno_is_eintr()) continue;
        if (r < 0) break;
        if (r == 0) continue;
        if (len + 1 >= sizeof outbuf) break;
        ssize_t got = (ssize_t)syscall(SYS_read, fds[0], outbuf + len, sizeof outbuf - 1 - len);
        if (got < 0 && errno_is_eintr()) continue;
        if (got <= 0) break;
        len += (size_t)got;
    }
    syscall(SYS_close, fds[0]);
    if (timed_out) syscall(SYS_kill, (pid_t)pid, SIGKILL);
    int status = 0;
    while (syscall(SYS_wait4, (pid_t)pid, &status, __WALL, NULL) < 0 && errno_is_eintr())
        ;
    if (timed_out) return 0;
    /* One line per frame asked, in order; a partial last line is dropped. */
    size_t k = 0;
    const char *s = outbuf, *end = outbuf + len;
    while (k < nasked && s < end) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol) break;
        parse_line(&f[asked[k++]], s, eol);
        s = eol + 1;
    }
    return k;
}
