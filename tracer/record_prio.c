/* tracer/record_prio.c — the program ahead of the store while it runs (record_prio.h). */
#include "record_prio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int hl_prio_store_nice(void)
{
    const char *v = getenv("HEAPLEDGER_STORE_NICE");
    if (!v || !*v) return HL_PRIO_STORE_NICE;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0) return 0;
    return n > 19 ? 19 : (int)n;
}

static int nice_of(pid_t id, int *out)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)id);
    if (n == -1 && errno) return -1;
    *out = n;
    return 0;
}

/* Calls fn for each thread of this process (tid) and, with children, each child process of
 * each thread. */
static void each_task(void (*fn)(hl_prio_t *, pid_t, int), hl_prio_t *p, int children)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        fn(p, tid, 0);
        if (!children) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)tid);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int c;
        while (fscanf(f, "%d", &c) == 1)
            fn(p, (pid_t)c, 1);
        fclose(f);
    }
    closedir(d);
}

static void lower_one(hl_prio_t *p, pid_t tid, int child)
{
    (void)child;
    if (tid == gettid()) return;
    if (setpriority(PRIO_PROCESS, (id_t)tid, p->base + p->store) == 0) p->low++;
}

unsigned hl_prio_lower(hl_prio_t *p)
{
    p->low = p->restored = p->kept = 0;
    if (nice_of(0, &p->base) != 0) p->store = 0;
    if (p->base + p->store > 19) p->store = 19 - p->base;
    if (p->store <= 0) return 0;
    each_task(lower_one, p, 0);
    return p->low;
}

static void restore_one(hl_prio_t *p, pid_t id, int child)
{
    int n;
    /* a child at record's nice or above (the program, the daemons) is not the store's */
    if (nice_of(id, &n) != 0 || n <= p->base || (child && n != p->base + p->store)) return;
    if (setpriority(PRIO_PROCESS, (id_t)id, p->base) == 0)
        p->restored++;
    else
        p->kept++;
}

void hl_prio_restore(hl_prio_t *p)
{
    if (p->store <= 0) return;
    /* Twice: a thread or a decoder started during the first walk by a thread not yet set
     * back inherited the lower priority. */
    each_task(restore_one, p, 1);
    p->kept = 0;
    each_task(restore_one, p, 1);
}
