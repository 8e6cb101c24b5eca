/* tracer/bpf/attach.c — `heapledger attach --pid N [-o FILE.db] [--duration S]`.
 *
 * Traces a process that was not started under heapledger: uprobes on the malloc family of
 * the object that defines malloc for it (its executable, a preloaded allocator, or libc),
 * filtered on its pid; one consumer loop turns the calls into block lifetimes (attach_model.c)
 * and, at the end, a run database is written (attach_db.c). Optional --kernel adds the
 * kernel events of the process (kernel.h) to the same database.
 */
#include "attach.h"
#include "attach.skel.h"
#include "bpf/kernel.h"
#include "cmd.h"
#include "elfsym.h"
#include "privilege.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 16

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger attach --pid N [-o FILE.db] [--duration S] [options]\n"
            "\n"
            "Trace the malloc family of a running process with uprobes into a run database\n"
            "(blocks, leaks, allocation sites), until it exits, S seconds pass, or Ctrl-C.\n"
            "\n"
            "  -p, --pid N         process to trace (required)\n"
            "  -o, --output FILE   run database to write (default heapledger-attach-N.db)\n"
            "  -d, --duration S    stop after S seconds (decimals allowed)\n"
            "  -f, --force         replace FILE if it exists\n"
            "      --lib PATH      probe this object's malloc family (default: the object\n"
            "                      that defines malloc for the process)\n"
            "      --no-stacks     do not record call stacks beyond the calling address\n"
            "      --kernel        also record the kernel events of the process (mmap,\n"
            "                      page faults, RSS: see docs/kernel.md)\n"
            "  -h, --help          this text\n"
            "\n"
            "Needs root (or CAP_BPF + CAP_PERFMON). Each traced call costs a few microseconds.\n");
}

/* The object whose malloc the process uses: its executable when it defines malloc, else a
 * non-libc object that exports malloc (a preloaded allocator), else libc. */
static int find_library(const hl_attach_t *a, char *out, size_t outlen)
{
    char exe[512] = "", link[64];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)a->pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    const char *best = NULL;
    int best_rank = 0;
    for (size_t i = 0; i < a->nmaps; i++) {
        const char *p = a->maps[i].path;
        int rank = !strcmp(p, exe) ? 3 : strstr(p, "/libc.so") || strstr(p, "/libc-") ? 1 : 2;
        if (rank <= best_rank || strstr(p, "/ld-linux")) continue;
        hl_elfsym_t *e = hl_elfsym_open(p);
        if (hl_elfsym_exports(e, "malloc") && hl_elfsym_exports(e, "free")) {
            best = p;
            best_rank = rank;
        }
        hl_elfsym_close(e);
    }
    if (!best) return -1;
    snprintf(out, outlen, "%s", best);
    return 0;
}

static void read_identity(hl_attach_t *a)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)a->pid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(a->comm, sizeof a->comm, f)) a->comm[strcspn(a->comm, "\n")] = '\0';
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)a->pid);
    f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        for (size_t i = 0; i + 1 < n; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[n] = '\0';
        snprintf(a->cmdline, sizeof a->cmdline, "%s", buf);
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%d/stat", (int)a->pid);
    f = fopen(path, "r");
    if (f) {
        if (fgets(buf, sizeof buf, f)) {
            char *close = strrchr(buf, ')');
            int ppid = 0;
            if (close && sscanf(close + 1, " %*c %d", &ppid) == 1) a->ppid = ppid;
        }
        fclose(f);
    }
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int on_ucall(void *ctx, void *data, size_t size)
{
    if (size >= sizeof(struct hl_ucall)) hl_attach_apply(ctx, data);
    return 0;
}

typedef struct probe_s {
    const char *func;
    int required;
    int ret; /* also a return probe */
} probe_t;

/* Attach entry (and return) probes of every function of the family the object defines. */
static int attach_probes(struct hl_attach_bpf *skel, const hl_attach_t *a, struct bpf_link **links,
                         int *nlinks, char *err, size_t errlen)
{
    static const probe_t probes[] = {
        {"malloc", 1, 1},         {"free", 1, 0},          {"calloc", 0, 1},   {"realloc", 0, 1},
        {"posix_memalign", 0, 1}, {"aligned_alloc", 0, 1}, {"memalign", 0, 1},
    };
    struct bpf_program *entry[] = {skel->progs.hl_malloc,         skel->progs.hl_free,
                                   skel->progs.hl_calloc,         skel->progs.hl_realloc,
                                   skel->progs.hl_posix_memalign, skel->progs.hl_aligned_alloc,
                                   skel->progs.hl_aligned_alloc};
    hl_elfsym_t *e = hl_elfsym_open(a->library);
    int rc = 0;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        if (!hl_elfsym_exports(e, probes[i].func)) {
            if (probes[i].required) {
                snprintf(err, errlen, "%s does not define %s", a->library, probes[i].func);
                rc = -1;
                break;
            }
            continue;
        }
        for (int ret = 0; ret <= probes[i].ret && *nlinks < MAX_LINKS; ret++) {
            LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = probes[i].func, .retprobe = ret);
            struct bpf_program *prog = ret ? skel->progs.hl_alloc_ret : entry[i];
            struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, a->pid, a->library, 0, &o);
            if (!l) {
                char what[640];
                snprintf(what, sizeof what, "attaching a uprobe to %s in %s", probes[i].func,
                         a->library);
                hl_bpf_explain(-errno, what, err, errlen);
                rc = -1;
                break;
            }
            links[(*nlinks)++] = l;
        }
        if (rc) break;
    }
    hl_elfsym_close(e);
    return rc;
}

/* Copy the frame-pointer stacks out of the stack map, after the caller address. */
static void resolve_stacks(struct hl_attach_bpf *skel, hl_attach_t *a)
{
    uint64_t ips[HL_ASTACK_DEPTH];
    for (size_t i = 0; i < a->nstacks; i++) {
        hl_astack_t *s = &a->stacks[i];
        if (s->bpf_id < 0) continue;
        memset(ips, 0, sizeof ips);
        __u32 id = (__u32)s->bpf_id;
        if (bpf_map__lookup_elem(skel->maps.stacks, &id, sizeof id, ips, sizeof ips, 0)) continue;
        /* ips[0] is the probed function itself; ips[1] is the caller's return address. */
        for (int d = 1; d < HL_ASTACK_DEPTH && ips[d] && s->depth < HL_ASTACK_DEPTH; d++)
            s->ips[s->depth++] = ips[d];
    }
}

static uint64_t read_drops(struct hl_attach_bpf *skel)
{
    int ncpu = libbpf_num_possible_cpus();
    uint64_t sum = 0, *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof *v) : NULL;
    __u32 zero = 0;
    if (v && !bpf_map__lookup_elem(skel->maps.udrops, &zero, sizeof zero, v,
                                   sizeof *v * (size_t)ncpu, 0))
        for (int i = 0; i < ncpu; i++)
            sum += v[i];
    free(v);
    return sum;
}

typedef struct opts_s {
    pid_t pid;
    const char *output, *library;
    double duration;
    int force, stacks, kernel;
} opts_t;

static int parse(int argc, char **argv, opts_t *o)
{
    enum { OPT_LIB = 256, OPT_NO_STACKS, OPT_KERNEL, OPT_RELAY };
    static const struct option longs[] = {
        {"pid", required_argument, NULL, 'p'},      {"output", required_argument, NULL, 'o'},
        {"duration", required_argument, NULL, 'd'}, {"force", no_argument, NULL, 'f'},
        {"lib", required_argument, NULL, OPT_LIB},  {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
        {"kernel", no_argument, NULL, OPT_KERNEL},  {"relay", required_argument, NULL, OPT_RELAY},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    *o = (opts_t){.stacks = 1, .duration = -1};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "p:o:d:fh", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'p': {
            long v = strtol(optarg, &end, 10);
            if (*end || v <= 0 || v > 0x7fffffff) {
                fprintf(stderr, "heapledger attach: --pid wants a process id, not '%s'\n", optarg);
                return 2;
            }
            o->pid = (pid_t)v;
            break;
        }
        case 'o':
            o->output = optarg;
            break;
        case 'd':
            o->duration = strtod(optarg, &end);
            if (*end || !(o->duration > 0)) {
                fprintf(stderr, "heapledger attach: --duration wants seconds > 0, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'f':
            o->force = 1;
            break;
        case OPT_LIB:
            o->library = optarg;
            break;
        case OPT_NO_STACKS:
            o->stacks = 0;
            break;
        case OPT_KERNEL:
            o->kernel = 1;
            break;
        case OPT_RELAY:
            /* attach reads the process through uprobes, not LTTng: there is no trace to stream.
             * Say so and how the database joins a fleet, rather than ignore the option. */
            fprintf(stderr,
                    "heapledger attach: --relay does not apply: attach reads the process through "
                    "uprobes (BPF), not LTTng, so nothing streams to a relay daemon; write the "
                    "database here (-o HOST-NAME.db) and copy it into collectd's --dir, where "
                    "heapledger report --summary DIR lists it with the streamed ones\n");
            return 2;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "heapledger attach: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!o->pid) {
        fprintf(stderr, "heapledger attach: --pid is required\n\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* The tracing loop: until the process is gone, the time is up, or a signal. */
static void trace(struct ring_buffer *rb, const opts_t *o)
{
    uint64_t deadline = o->duration > 0 ? monotonic_ns() + (uint64_t)(o->duration * 1e9) : 0;
    while (!interrupted) {
        int n = ring_buffer__poll(rb, 100);
        if (n < 0 && n != -EINTR) break;
        if (deadline && monotonic_ns() >= deadline) break;
        if (kill(o->pid, 0) < 0 && errno == ESRCH) break;
    }
    while (ring_buffer__consume(rb) > 0)
        ;
}

int hl_cmd_attach(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    char err[1024], outbuf[64];
    if (!o.output) {
        snprintf(outbuf, sizeof outbuf, "heapledger-attach-%d.db", (int)o.pid);
        o.output = outbuf;
    }
    if (!o.force && access(o.output, F_OK) == 0) {
        fprintf(stderr, "heapledger attach: %s: output file exists (use --force to replace it)\n",
                o.output);
        return 1;
    }
    if (kill(o.pid, 0) < 0 && errno == ESRCH) {
        fprintf(stderr, "heapledger attach: no process %d\n", (int)o.pid);
        return 1;
    }
    if (hl_bpf_check_privileges(err, sizeof err) < 0) {
        fprintf(stderr, "heapledger attach: cannot trace: %s\n", err);
        return 1;
    }
    hl_attach_t a = {.pid = o.pid};
    read_identity(&a);
    if (hl_attach_read_maps(&a) < 0) {
        fprintf(stderr, "heapledger attach: cannot read /proc/%d/maps: %s\n", (int)o.pid,
                strerror(errno));
        return 1;
    }
    if (o.library)
        snprintf(a.library, sizeof a.library, "%s", o.library);
    else if (find_library(&a, a.library, sizeof a.library) < 0) {
        fprintf(stderr,
                "heapledger attach: no object mapped in process %d defines malloc and free "
                "(use --lib PATH)\n",
                (int)o.pid);
        hl_attach_fini(&a);
        return 1;
    }

    hl_bpf_setup_logging();
    struct bpf_link *links[MAX_LINKS];
    int nlinks = 0;
    struct ring_buffer *rb = NULL;
    hl_kernel_t *k = NULL;
    struct hl_attach_bpf *skel = hl_attach_bpf__open();
    rc = 1;
    if (!skel) {
        hl_bpf_explain(-errno, "opening the attach programs", err, sizeof err);
        goto fail;
    }
    skel->rodata->want_stacks = (__u32)o.stacks;
    int lrc = hl_attach_bpf__load(skel);
    if (lrc) {
        hl_bpf_explain(lrc, "loading the attach programs", err, sizeof err);
        goto fail;
    }
    rb = ring_buffer__new(bpf_map__fd(skel->maps.ucalls), on_ucall, &a, NULL);
    if (!rb) {
        hl_bpf_explain(-errno, "opening the ring buffer", err, sizeof err);
        goto fail;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    a.start_ts = monotonic_ns();
    if (attach_probes(skel, &a, links, &nlinks, err, sizeof err) < 0) goto fail;
    if (o.kernel && !(k = hl_kernel_start(o.pid, err, sizeof err)))
        fprintf(stderr, "heapledger attach: no kernel events: %s\n", err);
    fprintf(stderr, "heapledger attach: attached to pid %d (%s) through %s; writing %s\n",
            (int)o.pid, a.comm, a.library, o.output);

    trace(rb, &o);
    for (int i = 0; i < nlinks; i++)
        bpf_link__destroy(links[i]);
    nlinks = 0;
    while (ring_buffer__consume(rb) > 0)
        ;
    a.end_ts = monotonic_ns();
    a.dropped = read_drops(skel);
    resolve_stacks(skel, &a);
    hl_attach_read_maps(&a); /* refresh for libraries loaded meanwhile (keeps old if gone) */
    if (k) hl_kernel_stop(k);

    if (a.oom) fprintf(stderr, "heapledger attach: out of memory: some calls were not recorded\n");
    if (hl_attach_write_db(&a, o.output, o.force, err, sizeof err) < 0) goto fail;
    if (k && hl_kernel_store(k, o.output, err, sizeof err) < 0)
        fprintf(stderr, "heapledger attach: kernel events not stored: %s\n", err);
    size_t live = a.live.count;
    fprintf(stderr,
            "heapledger attach: %llu calls, %zu blocks (%zu live at the end), %zu frees of "
            "older blocks, %llu lost%s\n",
            (unsigned long long)a.events, a.nblocks, live, a.norphans,
            (unsigned long long)a.dropped, interrupted ? " (interrupted)" : "");
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "heapledger attach: %s\n", err);
out:
    for (int i = 0; i < nlinks; i++)
        bpf_link__destroy(links[i]);
    hl_kernel_free(k);
    ring_buffer__free(rb);
    hl_attach_bpf__destroy(skel);
    hl_attach_fini(&a);
    return rc;
}
