/* analyzer/cmd_replay.c — `heapledger replay RUN.db [--options STR] [--arena SIZE] [--pid N]
 * [--json]`: what-if replay of a recording on a heap with other options. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd_common.h"
#include "render.h"
#include "render_replay.h"
#include "replay.h"
#include "rundb.h"
#include "safetext.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger replay RUN.db [--options STR] [--arena SIZE] [--pid N] [--json]\n"
               "  Re-run the recorded allocations, reallocs and frees of one process on a heap\n"
               "  with other options (HEAPLEDGER_OPTIONS syntax; default: the recording's) and\n"
               "  report the same metrics, the first allocation that fails (e.g. in a fixed\n"
               "  arena of SIZE bytes, K/M/G suffixes) and whether the live set at the end\n"
               "  matches the recording. See docs/analyze.md.\n"
               "  --fit [--fit-step SIZE]  smallest arena (to SIZE, default 1K) in which the\n"
               "                      whole recording succeeds, for each --options given\n"
               "                      (repeatable; a list with ';' between configurations)\n"
               "  --matrix [--repeat N]  baseline, harden=1, rotate=1, rotate=1,harden=1 in the\n"
               "                      --arena: fits, utilisation, throughput, latency (N runs, 3)\n"
               "  --html OUT.html     the answers as one self-contained page\n");
}

static int64_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v *= 1024;
        end++;
        break;
    case 'm':
    case 'M':
        v *= 1024 * 1024;
        end++;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024 * 1024;
        end++;
        break;
    }
    if (*end == 'B' || *end == 'b') end++;
    return *end ? -1 : (int64_t)v;
}

static void print_replay(FILE *f, const hl_report_t *r)
{
    const hl_replay_info_t *in = r->replay;
    fprintf(f, "replay of pid %" PRId64 " with options: %s\n", in->pid,
            *in->options ? hl_safe(in->options) : "(defaults)");
    fprintf(
        f, "  operations replayed  %" PRIu64 "   skipped (frees of unknown pointers) %" PRIu64 "\n",
        in->operations, in->skipped);
    fprintf(f, "  allocations failing in the replay only: %" PRIu64, in->failures);
    if (in->recorded_failures_ok)
        fprintf(f, "   recorded failures that now succeed: %" PRIu64, in->recorded_failures_ok);
    fprintf(f, "\n");
    if (in->has_failure) {
        fprintf(f,
                "  first failure: block %" PRId64 " (seq %" PRId64 ", %.9f s), %" PRIu64
                " bytes requested with %" PRIu64 " bytes live",
                in->fail_block, in->fail_seq, (double)in->fail_ts / 1e9, in->fail_size, in->fail_R);
        if (in->fail_util >= 0) fprintf(f, " (utilisation %.2f%%)", in->fail_util * 100);
        fprintf(f, "; free %" PRIu64 " bytes, largest free block %" PRIu64 "\n", in->fail_free,
                in->fail_largest);
    } else {
        fprintf(f, "  no allocation failed that succeeded in the recording\n");
    }
    fprintf(f, "  live at the end      %12s %14s %14s\n", "blocks", "requested", "usable");
    fprintf(f, "    recorded           %12" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n", in->rec_blocks,
            in->rec_R, in->rec_U);
    fprintf(f,
            "    replayed           %12" PRIu64 " %14" PRIu64 " %14" PRIu64
            "   (heap's own count: %" PRIu64 " used)\n",
            in->rep_blocks, in->rep_R, in->rep_U, in->heap_used);
    fprintf(f, "  live set: %s", in->live_match ? "identical to the recording" : "DIFFERENT");
    fprintf(f, " (%" PRIu64 " blocks with another usable size", in->usable_mismatch);
    if (in->offsets_compared)
        fprintf(f, ", %" PRIu64 " at another arena offset", in->offset_mismatch);
    fprintf(f, ")\n\n");
}

/* --fit for each configuration and/or --matrix; text on stdout, --html too. */
static int replay_answers(sqlite3 *db, const char *path, const hl_replay_opts_t *o, char **cfg,
                          size_t ncfg, int fit, uint64_t step, int matrix, int repeat,
                          const char *html)
{
    char err[512];
    hl_fit_t fits[HL_MATRIX_ROWS + 16];
    size_t nfits = 0;
    hl_matrix_row_t rows[HL_MATRIX_ROWS];
    int have_rows = 0, rc = 0;
    hl_report_t *r = NULL;
    if (matrix) {
        hl_replay_opts_t m = *o;
        m.options = ncfg ? cfg[0] : NULL;
        if (hl_replay_matrix(db, path, &m, repeat, rows, err, sizeof err) < 0) {
            fprintf(stderr, "heapledger replay: %s\n", err);
            return 1;
        }
        have_rows = 1;
        hl_replay_matrix_text(stdout, rows, (uint64_t)o->arena_size, repeat);
        if (html) r = hl_replay(db, path, &m, err, sizeof err); /* the baseline's failure */
    }
    if (fit) {
        /* Each configuration asked, or the matrix's four, or the recording's options. */
        size_t n = matrix ? HL_MATRIX_ROWS : ncfg ? ncfg : 1;
        static const char *const extra[HL_MATRIX_ROWS] = {NULL, "harden=1", "rotate=1",
                                                          "rotate=1,harden=1"};
        for (size_t k = 0; k < n && rc == 0; k++) {
            hl_replay_opts_t t = *o;
            t.options = matrix ? (ncfg ? cfg[0] : NULL) : ncfg ? cfg[k] : NULL;
            t.extra = matrix ? extra[k] : NULL;
            if (hl_replay_fit(db, path, &t, step, &fits[nfits], err, sizeof err) < 0) {
                fprintf(stderr, "heapledger replay: %s\n", err);
                rc = 1;
            }
            nfits++;
        }
        if (rc == 0) hl_replay_fit_text(stdout, fits, nfits);
    }
    if (rc == 0 && html &&
        hl_replay_html(html, r, fits, nfits, have_rows ? rows : NULL, (uint64_t)o->arena_size,
                       repeat) < 0) {
        fprintf(stderr, "heapledger replay: cannot write '%s': %s\n", html, strerror(errno));
        rc = 1;
    }
    for (size_t k = 0; k < nfits; k++)
        free(fits[k].options);
    if (have_rows) hl_matrix_free(rows);
    hl_report_free(r);
    return rc;
}

int hl_cmd_replay(int argc, char **argv)
{
    const char *db_path = NULL;
    hl_replay_opts_t o = {NULL, 0, 0, NULL, 0};
    int json = 0;
    /* --fit / --matrix / --html (render_replay.h) */
    int fit = 0, matrix = 0, repeat = 3;
    int64_t fit_step = 1024;
    const char *html = NULL;
    char *cfg[16];
    size_t ncfg = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--options") && val) {
            o.options = val;
            /* Items between ';', empty ones kept: an empty item is the recording's options
             * (so "--options '' --options harden=1" compares the recording with harden=1). */
            for (const char *t = val;; t++) {
                size_t len = strcspn(t, ";");
                if (ncfg == sizeof cfg / sizeof *cfg) {
                    fprintf(stderr, "heapledger replay: at most 16 configurations\n");
                    return 2;
                }
                cfg[ncfg++] = len ? strndup(t, len) : NULL;
                t += len;
                if (!*t) break;
            }
            i++;
        } else if (!strcmp(a, "--fit")) {
            fit = 1;
        } else if (!strcmp(a, "--fit-step") && val) {
            fit_step = parse_size(val);
            if (fit_step <= 0 || fit_step % 16) {
                fprintf(stderr,
                        "heapledger replay: bad --fit-step '%s' (a multiple of 16 bytes, e.g. "
                        "1K or 4K)\n",
                        val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--matrix")) {
            matrix = 1;
        } else if (!strcmp(a, "--repeat") && val) {
            repeat = atoi(val);
            if (repeat < 1 || repeat > 64) {
                fprintf(stderr, "heapledger replay: bad --repeat '%s' (1 to 64)\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--html") && val) {
            html = val;
            i++;
        } else if (!strcmp(a, "--arena") && val) {
            o.arena_size = parse_size(val);
            if (o.arena_size <= 0) {
                fprintf(stderr, "heapledger replay: bad --arena '%s' (e.g. 64K, 4M)\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--pid") && val) {
            o.pid = strtoll(val, NULL, 10);
            if (o.pid <= 0) {
                fprintf(stderr, "heapledger replay: bad --pid '%s'\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-') {
            static const char *const known[] = {"--options", "--arena", "--pid",
                                                "--json",    "--help",  NULL};
            hl_cli_bad_option("replay", a, known);
            return 2;
        } else if (!db_path) {
            db_path = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!db_path) {
        usage(stderr);
        return 2;
    }
    if (matrix && o.arena_size <= 0) {
        fprintf(stderr, "heapledger replay: --matrix needs --arena SIZE (e.g. --arena 256K)\n");
        return 2;
    }
    if (json && (fit || matrix)) {
        fprintf(stderr, "heapledger replay: --json does not go with --fit or --matrix\n");
        return 2;
    }
    char err[512];
    sqlite3 *db = hl_an_open(db_path, err, sizeof err);
    if (!db) {
        fprintf(stderr, "heapledger replay: %s\n", hl_safe(err));
        return 1;
    }
    if (fit || matrix) {
        int rc = replay_answers(db, db_path, &o, cfg, ncfg, fit, (uint64_t)fit_step, matrix, repeat,
                                html);
        for (size_t k = 0; k < ncfg; k++)
            free(cfg[k]);
        sqlite3_close(db);
        return rc;
    }
    for (size_t k = 0; k < ncfg; k++)
        free(cfg[k]);
    if (ncfg > 1) o.options = NULL; /* a list: only --fit and --matrix take one */
    hl_report_t *r = hl_replay(db, db_path, &o, err, sizeof err);
    if (!r) {
        fprintf(stderr, "heapledger replay: %s\n", hl_safe(err));
        sqlite3_close(db);
        return 1;
    }
    hl_render_opts_t ro = {10};
    if (json) {
        hl_render_json(stdout, r, &ro);
    } else {
        print_replay(stdout, r);
        hl_replay_failure_text(stdout, r);
        hl_render_text(stdout, r, &ro);
    }
    if (html && hl_replay_html(html, r, NULL, 0, NULL, 0, 0) < 0) {
        fprintf(stderr, "heapledger replay: cannot write '%s': %s\n", html, strerror(errno));
        hl_report_free(r);
        sqlite3_close(db);
        return 1;
    }
    hl_report_free(r);
    sqlite3_close(db);
    return 0;
}
