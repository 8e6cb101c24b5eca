/* tracer/collect.c — `heapledger collect TRACE_DIR -o FILE.db`: ingest a trace recorded by
 * hand with the lttng CLI (see docs/collect.md). */
#include "cmd.h"
#include "ingest.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger collect TRACE_DIR -o FILE.db [--force] [--command CMD] [--quiet]\n"
            "                          [--stats]\n"
            "\n"
            "Ingest an LTTng trace of a heapledger-instrumented program into a run database.\n"
            "TRACE_DIR is the session output directory (the one given to `lttng create\n"
            "--output`, or any directory below it); every CTF trace found below it is read.\n"
            "\n"
            "  -o, --output FILE.db  database to create (required)\n"
            "  -f, --force           replace FILE.db if it exists\n"
            "  -c, --command CMD     command line to record in the run table\n"
            "  -q, --quiet           no progress bar or summary\n"
            "  -s, --stats           print the time spent per thread and in index creation\n"
            "\n"
            "Exit status: 0 complete, 1 error (nothing written), 2 usage, 3 partial (the trace\n"
            "was truncated or corrupt: FILE.db holds what could be decoded).\n");
}

int hl_cmd_collect(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"command", required_argument, NULL, 'c'},
        {"quiet", no_argument, NULL, 'q'},
        {"stats", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    hl_ingest_opts_t o = HL_INGEST_OPTS_INIT;
    const char *out = NULL;
    int quiet = 0, stats = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:fc:qsh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'f':
            o.force = 1;
            break;
        case 'c':
            o.command = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 's':
            stats = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || !out) {
        fprintf(stderr, "heapledger collect: %s\n\n",
                optind >= argc ? "missing TRACE_DIR"
                : !out         ? "missing -o FILE.db"
                               : "too many arguments");
        usage(stderr);
        return 2;
    }
    o.progress = !quiet;
    hl_ingest_result_t r;
    int rc = hl_ingest_trace(argv[optind], out, &o, &r);
    if (rc < 0) {
        fprintf(stderr, "heapledger collect: %s\n", r.error);
        return 1;
    }
    if (rc == 1) fprintf(stderr, "heapledger collect: warning: %s\n", r.error);
    if (!quiet)
        fprintf(stderr,
                "heapledger collect: %s: %llu events (%llu discarded by the tracer), %llu "
                "blocks, %llu orphan frees, %llu stacks in %.2f s (%.0f events/s)%s\n",
                out, (unsigned long long)r.events, (unsigned long long)r.discarded,
                (unsigned long long)r.blocks, (unsigned long long)r.orphan_frees,
                (unsigned long long)r.stacks, r.seconds,
                r.seconds > 0 ? (double)r.events / r.seconds : 0.0, rc == 1 ? " [partial]" : "");
    if (stats)
        fprintf(stderr,
                "heapledger collect: %.3f s wall, decode thread %.3f s CPU, store thread %.3f s "
                "CPU, final commit + indexes %.3f s wall (%.3f s CPU)\n",
                r.seconds, r.decode_cpu, r.store_cpu, r.index_seconds, r.index_cpu);
    return rc == 1 ? 3 : 0;
}
