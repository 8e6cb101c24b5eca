/* tracer/bpf/kernel.c — loader and consumer of the kernel-event programs (kernel.bpf.c).
 *
 * hl_kernel_start() loads the skeleton, seeds `followed` with the root pid, attaches, and
 * starts one consumer thread. The thread consumes the ring buffer when the kernel wakes it
 * (wakeup_bytes waiting), every POLL_MS otherwise, and at once when hl_kernel_stop() signals
 * its eventfd; it appends each record to an unlinked temporary spool file, so memory stays
 * bounded however long the run is.
 * hl_kernel_stop() detaches first (no new records), then lets the thread drain what is left
 * and joins it. hl_kernel_store() replays the spool into SQLite (kernel_store.c).
 */
#include "kernel.h"

#include "events.h"
#include "kernel.skel.h"
#include "kernel_priv.h"
#include "privilege.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define POLL_MS 100

struct hl_kernel_s {
    struct hl_kernel_bpf *skel;
    struct ring_buffer *rb;
    pthread_t thread;
    int thread_started;
    atomic_int stopping;
    int stopped;
    int spool_error;
    FILE *spool;
    int wake; /* eventfd: hl_kernel_stop wakes the consumer */
    hl_kernel_stats_t stats;
};

int hl_kernel_available(void)
{
    return 1;
}

static int on_record(void *ctx, void *data, size_t size)
{
    hl_kernel_t *k = ctx;
    const struct hl_kevent *e = data;
    if (size < sizeof *e) return 0;
    if (fwrite(e, sizeof *e, 1, k->spool) != 1) k->spool_error = 1;
    k->stats.events++;
    if (e->kind < HL_KEV_COUNT) k->stats.by_kind[e->kind]++;
    return 0;
}

/* Waits on the ring's epoll fd (readable when the kernel woke it: 1 MiB waiting) and on
 * `wake` (hl_kernel_stop), consuming at least every POLL_MS. */
static void *consumer(void *arg)
{
    hl_kernel_t *k = arg;
    struct pollfd fds[2] = {{.fd = ring_buffer__epoll_fd(k->rb), .events = POLLIN},
                            {.fd = k->wake, .events = POLLIN}};
    while (!atomic_load(&k->stopping)) {
        if (poll(fds, 2, POLL_MS) < 0 && errno != EINTR) break;
        if (ring_buffer__consume(k->rb) < 0) break;
    }
    /* Programs are detached by now: what is in the ring is all there will be. */
    while (ring_buffer__consume(k->rb) > 0)
        ;
    return NULL;
}

hl_kernel_t *hl_kernel_start(pid_t pid, char *err, size_t errlen)
{
    if (pid <= 0) {
        snprintf(err, errlen, "invalid pid %d", (int)pid);
        return NULL;
    }
    if (hl_bpf_check_privileges(err, errlen) < 0) return NULL;
    hl_bpf_setup_logging();
    hl_kernel_t *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    k->wake = eventfd(0, EFD_CLOEXEC);
    if (k->wake < 0) {
        snprintf(err, errlen, "cannot create an eventfd: %s", strerror(errno));
        goto fail;
    }
    k->spool = tmpfile();
    if (!k->spool) {
        snprintf(err, errlen, "cannot create the kernel-event spool file: %s", strerror(errno));
        goto fail;
    }
    k->skel = hl_kernel_bpf__open();
    if (!k->skel) {
        hl_bpf_explain(-errno, "opening the kernel-event programs", err, errlen);
        goto fail;
    }
    long page = sysconf(_SC_PAGESIZE);
    k->skel->rodata->page_size = page > 0 ? (unsigned long)page : 4096;
    k->skel->rodata->wakeup_bytes = 1 << 20;
    int rc = hl_kernel_bpf__load(k->skel);
    if (rc) {
        hl_bpf_explain(rc, "loading the kernel-event programs", err, errlen);
        goto fail;
    }
    __u32 key = (__u32)pid;
    struct {
        __s64 last_rss;
    } zero = {0};
    rc =
        bpf_map__update_elem(k->skel->maps.followed, &key, sizeof key, &zero, sizeof zero, BPF_ANY);
    if (rc) {
        hl_bpf_explain(rc, "adding the pid to the followed set", err, errlen);
        goto fail;
    }
    rc = hl_kernel_bpf__attach(k->skel);
    if (rc) {
        hl_bpf_explain(rc, "attaching the kernel-event programs", err, errlen);
        goto fail;
    }
    k->rb = ring_buffer__new(bpf_map__fd(k->skel->maps.events), on_record, k, NULL);
    if (!k->rb) {
        hl_bpf_explain(-errno, "opening the ring buffer", err, errlen);
        goto fail;
    }
    rc = pthread_create(&k->thread, NULL, consumer, k);
    if (rc) {
        snprintf(err, errlen, "cannot start the kernel-event thread: %s", strerror(rc));
        goto fail;
    }
    k->thread_started = 1;
    return k;
fail:
    hl_kernel_free(k);
    return NULL;
}

/* Sum of the per-CPU drop counters. */
static uint64_t read_drops(hl_kernel_t *k)
{
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return 0;
    uint64_t *v = calloc((size_t)ncpu, sizeof *v), sum = 0;
    __u32 zero = 0;
    if (v && !bpf_map__lookup_elem(k->skel->maps.drops, &zero, sizeof zero, v,
                                   sizeof *v * (size_t)ncpu, 0))
        for (int i = 0; i < ncpu; i++)
            sum += v[i];
    free(v);
    return sum;
}

/* Fault runs still open when the programs were detached (threads alive at the stop): the
 * kernel side never sent them; write them to the spool as it would have. */
static void flush_fault_runs(hl_kernel_t *k)
{
    struct {
        __u64 ts, start, next;
        __s64 error_code;
        __u32 pid, in_heap;
    } r;
    __u32 key, next;
    int fd = bpf_map__fd(k->skel->maps.fault_runs);
    for (int rc = bpf_map_get_next_key(fd, NULL, &next); rc == 0;
         rc = bpf_map_get_next_key(fd, &key, &next)) {
        key = next;
        if (bpf_map_lookup_elem(fd, &key, &r)) continue;
        struct hl_kevent e = {.ts = r.ts,
                              .pid = r.pid,
                              .tid = key,
                              .addr = r.start,
                              .len = r.next - r.start,
                              .ret = r.error_code,
                              .kind = HL_KEV_PAGE_FAULT,
                              .arg = r.in_heap};
        on_record(k, &e, sizeof e);
    }
}

int hl_kernel_stop(hl_kernel_t *k)
{
    if (!k || k->stopped) return k && k->spool_error ? -1 : 0;
    k->stopped = 1;
    if (k->skel) hl_kernel_bpf__detach(k->skel);
    atomic_store(&k->stopping, 1);
    uint64_t one = 1;
    ssize_t woke = k->wake >= 0 ? write(k->wake, &one, sizeof one) : -1;
    (void)woke; /* on failure the consumer still ends within POLL_MS */
    if (k->thread_started) pthread_join(k->thread, NULL);
    k->thread_started = 0;
    if (k->skel) {
        flush_fault_runs(k);
        k->stats.dropped = read_drops(k);
    }
    if (k->spool && fflush(k->spool) != 0) k->spool_error = 1;
    return k->spool_error ? -1 : 0;
}

void hl_kernel_stats(const hl_kernel_t *k, hl_kernel_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (k) *out = k->stats;
}

FILE *hl_kernel_spool(hl_kernel_t *k)
{
    return k->spool;
}

void hl_kernel_free(hl_kernel_t *k)
{
    if (!k) return;
    hl_kernel_stop(k);
    ring_buffer__free(k->rb);
    hl_kernel_bpf__destroy(k->skel);
    if (k->spool) fclose(k->spool);
    if (k->wake >= 0) close(k->wake);
    free(k);
}
