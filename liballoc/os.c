/* liballoc/os.c — mappings from the OS, reported to the tracer. */
#include "internal.h"
#include "pagemap.h" /* ownership map, kept by purpose (hardened mode reads it) */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

size_t hl_page_size = 4096;

void hl_os_init(void)
{
    long p = sysconf(_SC_PAGESIZE);
    if (p > 0) hl_page_size = (size_t)p;
}

/* Map, register the region in the ownership map, and emit os_map when `trace`. */
static void *os_map(size_t len, size_t align, const char *purpose, int trace)
{
    int saved = errno;
    char *p;
    if (align <= hl_page_size) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            errno = saved;
            return NULL;
        }
    } else {
        /* Over-map by the alignment and trim both ends. */
        size_t span = len + align;
        if (span < len) return NULL;
        char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw == MAP_FAILED) {
            errno = saved;
            return NULL;
        }
        p = (char *)hl_align_up((uintptr_t)raw, align);
        size_t head = (size_t)(p - raw), tail = span - head - len;
        if (head) munmap(raw, head);
        if (tail) munmap(p + len, tail);
    }
    if (trace) hl_trace_emit_os(1, p, len, purpose);
    hl_pagemap_register(p, len, purpose); /* after the event: may map a page-map leaf */
    return p;
}

static void os_unmap(void *addr, size_t len, const char *purpose, int trace)
{
    int saved = errno;
    if (trace) hl_trace_emit_os(0, addr, len, purpose);
    hl_pagemap_unregister(addr, len);
    munmap(addr, len);
    errno = saved;
}

void *hl_os_map(size_t len, size_t align, const char *purpose)
{
    return os_map(len, align, purpose, 1);
}

void hl_os_unmap(void *addr, size_t len, const char *purpose)
{
    os_unmap(addr, len, purpose, 1);
}

void *hl_os_map_quiet(size_t len, size_t align, const char *purpose)
{
    return os_map(len, align, purpose, 0);
}

void hl_os_unmap_quiet(void *addr, size_t len, const char *purpose)
{
    os_unmap(addr, len, purpose, 0);
}

void hl_region_report(void *addr, size_t len, const char *purpose, uint32_t *reported)
{
    if (!*reported && hl_trace_active()) {
        hl_trace_emit_os(1, addr, len, purpose);
        *reported = 1;
    }
}

void hl_region_unreport(void *addr, size_t len, const char *purpose, uint32_t *reported)
{
    if (*reported) {
        hl_trace_emit_os(0, addr, len, purpose);
        *reported = 0;
    }
}

void hl_os_decommit(void *addr, size_t len)
{
    uintptr_t a = hl_align_up((uintptr_t)addr, hl_page_size);
    uintptr_t e = ((uintptr_t)addr + len) & ~(uintptr_t)(hl_page_size - 1);
    if (e > a) {
        int saved = errno;
        madvise((void *)a, e - a, MADV_DONTNEED);
        errno = saved;
    }
}

void *hl_os_remap(void *addr, size_t old_len, size_t new_len, const char *purpose)
{
    int saved = errno;
    void *p = mremap(addr, old_len, new_len, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
        errno = saved;
        return NULL;
    }
    hl_trace_emit_os(0, addr, old_len, purpose);
    hl_trace_emit_os(1, p, new_len, purpose);
    hl_pagemap_unregister(addr, old_len);
    hl_pagemap_register(p, new_len, purpose); /* after the events: may map a leaf */
    return p;
}

int hl_os_move(void *src, size_t len, void *dst)
{
    int saved = errno;
    void *p = mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    errno = saved;
    if (p != dst) return -1;
    hl_pagemap_unregister(src, len);
    return 0;
}

size_t hl_os_map_count(void)
{
    int saved = errno;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    size_t lines = 0;
    if (fd >= 0) {
        char buf[4096];
        long n;
        while ((n = syscall(SYS_read, fd, buf, sizeof buf)) > 0)
            for (long i = 0; i < n; i++)
                lines += buf[i] == '\n';
        syscall(SYS_close, fd);
    }
    errno = saved;
    return lines;
}

unsigned hl_os_ncpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return (unsigned)n;
    }
    return 1;
}

unsigned hl_os_tid(void)
{
    return (unsigned)syscall(SYS_gettid);
}
