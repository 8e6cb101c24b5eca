/* tracer/collect.c — `heapledger collect TRACE_DIR -o FILE.db`: ingest a trace recorded by
 * hand with the lttng CLI (see docs/collect.md). */
#include "cmd.h"
#include "ingest.h"
#include "ingest_internal.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger collect TRACE_DIR -o FILE.db [--force] [--command CMD] [--quiet]\n"
            "                          [--stats] [--all]\n"
            "\n"
            "Ingest an LTTng trace of a heapledger-instrumented program into a run database.\n"
            "TRACE_DIR is the session output directory (the one given to `lttng create\n"
            "--output`, or any directory below it); every CTF trace found below it is read.\n"
            "A TRACE_DIR holding the traces of several sessions is refused with their list.\n"
            "\n"
            "  -o, --output FILE.db  database to create (required)\n"
            "  -f, --force           replace FILE.db if it exists\n"
            "  -c, --command CMD     command line to record in the run table\n"
            "  -q, --quiet           no progress bar or summary\n"
            "  -s, --stats           print the time spent per thread and in index creation\n"
            "  -a, --all             merge the traces of all the sessions below TRACE_DIR\n"
            "\n"
            "Exit status: 0 complete, 1 error (nothing written), 2 usage, 3 partial (the trace\n"
            "was truncated or corrupt: FILE.db holds what could be decoded), 130/143 stopped\n"
            "by SIGINT/SIGTERM (FILE.db holds what was stored, marked interrupted).\n"
            "HEAPLEDGER_DECODE_TIMEOUT=SECONDS: how long the decoder may make no progress\n"
            "before it is stopped (default %d).\n",
            HL_DECODE_TIMEOUT);
}

/* A TRACE_DIR holding several sessions' traces (say /tmp): list them, say how to pick.
 * Returns -1 when it did (then nothing is ingested). */
static int list_sessions(const char *dir)
{
    char **roots = NULL, err[512];
    int n = hl_ingest_find_traces(dir, &roots, err, sizeof err);
    if (n < 0) return 0; /* hl_ingest_trace reports the error */
    if (n > 1) {
        fprintf(stderr, "heapledger collect: %s holds the traces of %d sessions:\n", dir, n);
        for (int i = 0; i < n; i++)
            fprintf(stderr, "  %s\n", roots[i]);
        fprintf(stderr,
                "heapledger collect: give one of them as TRACE_DIR, or --all to merge them all "
                "into one database\n");
    }
    for (int i = 0; i < n; i++)
        free(roots[i]);
    free(roots);
    return n > 1 ? -1 : 0;
}

int hl_cmd_collect(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},  {"force", no_argument, NULL, 'f'},
        {"command", required_argument, NULL, 'c'}, {"quiet", no_argument, NULL, 'q'},
        {"stats", no_argument, NULL, 's'},         {"all", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    /* Internal: the decoder child of a trace on disk, exec'd by the ingest (ingest_decoder.c). */
    if (argc >= 5 && !strcmp(argv[1], "--decoder-child")) hl_decoder_fs_child(argc, argv);
    hl_ingest_opts_t o = HL_INGEST_OPTS_INIT;
    const char *out = NULL;
    int quiet = 0, stats = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:fc:qsah", longopts, NULL)) != -1) {
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
        case 'a':
            o.all_traces = 1;
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
    if (!o.all_traces && list_sessions(argv[optind]) != 0) return 1;
    hl_ingest_result_t r;
    int rc = hl_ingest_trace(argv[optind], out, &o, &r);
    if (rc < 0) {
        fprintf(stderr, "heapledger collect: %s\n", r.error);
        return 1;
    }
    if (rc == 1 && r.interrupted) {
        fprintf(stderr, "heapledger collect: %s\n", r.error);
        return 128 + r.interrupted;
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
                "heapledger collect: %.3f s wall, decoder process %.3f s CPU, store thread %.3f s "
                "CPU (of it its SQLite thread %.3f s), final commit + indexes %.3f s wall (%.3f s "
                "CPU)\n",
                r.seconds, r.decode_cpu, r.store_cpu, r.store_sql_cpu, r.index_seconds,
                r.index_cpu);
    return rc == 1 ? 3 : 0;
}
