/* tracer/bpf/kernel_none.c — kernel.h when the build machine could not build BPF programs
 * (no BTF, clang, bpftool or libbpf): every start fails with a message saying so. */
#include "kernel.h"

#include <stdio.h>
#include <string.h>

int hl_kernel_available(void)
{
    return 0;
}

hl_kernel_t *hl_kernel_start(pid_t pid, char *err, size_t errlen)
{
    (void)pid;
    snprintf(err, errlen,
             "this heapledger was built without kernel events (the build machine had no "
             "kernel BTF, clang, bpftool or libbpf-dev)");
    return NULL;
}

int hl_kernel_stop(hl_kernel_t *k)
{
    (void)k;
    return 0;
}

void hl_kernel_stats(const hl_kernel_t *k, hl_kernel_stats_t *out)
{
    (void)k;
    memset(out, 0, sizeof *out);
}

long hl_kernel_store(hl_kernel_t *k, const char *db_path, char *err, size_t errlen)
{
    (void)k;
    (void)db_path;
    snprintf(err, errlen, "no kernel events in this build");
    return -1;
}

void hl_kernel_free(hl_kernel_t *k)
{
    (void)k;
}
