/* tests/bpf/kprog.c — a program whose memory syscalls are known exactly.
 *
 * Prints one line per step on stdout: "<step> <addr> <len> <t0> <t1>" with t0/t1 the
 * CLOCK_MONOTONIC ns right before and after the syscall, so the test can check the kernel
 * events' addresses, lengths and that their timestamps fall in [t0, t1].
 *   mmap    64 pages anonymous, then 16 of them written (16 page faults)
 *   madvise MADV_DONTNEED on the first 8 pages
 *   mremap  grow to 96 pages (may move)
 *   munmap  the whole mapping
 *   brk     +1 MiB (sbrk), 5 pages written, -1 MiB
 *   fork    the child mmaps/munmaps 3 pages (child events under its own pid)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void step(const char *name, void *addr, size_t len, uint64_t t0, uint64_t t1)
{
    printf("%s %lu %zu %llu %llu\n", name, (unsigned long)(uintptr_t)addr, len,
           (unsigned long long)t0, (unsigned long long)t1);
}

int main(void)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t t0 = now();
    char *p = mmap(NULL, 64 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t t1 = now();
    if (p == MAP_FAILED) return 1;
    step("mmap", p, 64 * pg, t0, t1);
    t0 = now();
    for (int i = 0; i < 16; i++)
        p[(size_t)i * pg + 7] = 1;
    step("touch", p, 16 * pg, t0, now());
    t0 = now();
    madvise(p, 8 * pg, MADV_DONTNEED);
    step("madvise", p, 8 * pg, t0, now());
    t0 = now();
    char *q = mremap(p, 64 * pg, 96 * pg, MREMAP_MAYMOVE);
    t1 = now();
    if (q == MAP_FAILED) return 1;
    step("mremap", q, 96 * pg, t0, t1);
    t0 = now();
    munmap(q, 96 * pg);
    step("munmap", q, 96 * pg, t0, now());

    char *b0 = sbrk(0);
    t0 = now();
    if (sbrk(1 << 20) == (void *)-1) return 1;
    step("brk_grow", b0, 1 << 20, t0, now());
    t0 = now();
    for (int i = 0; i < 5; i++)
        b0[(size_t)i * pg + 3] = 1;
    step("brk_touch", b0, 5 * pg, t0, now());
    t0 = now();
    sbrk(-(1 << 20));
    step("brk_shrink", b0, 1 << 20, t0, now());
    fflush(stdout);

    pid_t c = fork();
    if (c == 0) {
        t0 = now();
        char *r = mmap(NULL, 3 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(r, 3 * pg);
        printf("child %lu %zu %llu %d\n", (unsigned long)(uintptr_t)r, 3 * pg,
               (unsigned long long)t0, (int)getpid());
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    return 0;
}
