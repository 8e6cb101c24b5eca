/* analyzer/cmd_report.c — `heapledger report RUN.db [--json | --html OUT.html] [--pid N]
 * [--from T --to T] [--top N]`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "cmd_common.h"
#include "cmd_summary.h"
#include "render.h"
#include "rundb.h"
#include "safetext.h"
#include "suppress.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger report RUN.db [--json | --html OUT.html] [--pid N]\n"
               "                         [--from T] [--to T] [--top N] [--suppressions FILE]...\n"
               "  Utilisation, fragmentation, cycle budgets per path, leaks, sites and errors of\n"
               "  a recorded run. T is a time since the start of the run: 1.5, 1.5s, 200ms,\n"
               "  30us or 1000ns; a window that starts past the end of the run is an error.\n"
               "  --suppressions FILE: leaks that are not the program's, one\n"
               "  rule a line (leak:FUNCTION-GLOB, module:GLOB, file:GLOB; # comments); the C\n"
               "  runtime's own blocks are suppressed without it. See docs/analyze.md and\n"
               "  docs/metrics.md.\n"
               "       heapledger report --summary DIR [--json | --html OUT.html]\n"
               "  One row per run database in DIR (the fleet view, docs/collect.md).\n");
}

static int report(int argc, char **argv, hl_supp_t *supp)
{
    const char *db_path = NULL, *html = NULL, *from_arg = "";
    int json = 0;
    hl_analyze_opts_t ao = {0, -1, -1, NULL};
    hl_render_opts_t ro = {10};
    ao.supp = supp;
    char err[512];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--summary")) return hl_cmd_summary(argc, argv);
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--html") && val) {
            html = val;
            i++;
        } else if (!strcmp(a, "--pid") && val) {
            char *end;
            ao.pid = strtoll(val, &end, 10);
            if (*end || ao.pid <= 0) {
                fprintf(stderr, "heapledger report: bad --pid '%s'\n", val);
                return 2;
            }
            i++;
        } else if ((!strcmp(a, "--from") || !strcmp(a, "--to")) && val) {
            if (hl_cli_time("report", a, val, a[2] == 'f' ? &ao.from_ns : &ao.to_ns)) return 2;
            if (a[2] == 'f') from_arg = val;
            i++;
        } else if (!strcmp(a, "--suppressions") && val) {
            if (hl_supp_load(supp, val, err, sizeof err) < 0) {
                fprintf(stderr, "heapledger report: %s\n", err);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--top") && val) {
            ro.top = atoi(val);
            if (ro.top <= 0) {
                fprintf(stderr, "heapledger report: bad --top '%s'\n", val);
                return 2;
            }
            i++;
        } else if (a[0] == '-') {
            static const char *const known[] = {"--json", "--html", "--pid",     "--from", "--to",
                                                "--top",  "--help", "--summary", NULL};
            hl_cli_bad_option("report", a, known);
            return 2;
        } else if (!db_path) {
            db_path = a;
        } else {
            fprintf(stderr, "heapledger report: one database only ('%s')\n", a);
            return 2;
        }
    }
    if (!db_path) {
        usage(stderr);
        return 2;
    }
    if (json && html) {
        fprintf(stderr, "heapledger report: --json and --html exclude each other\n");
        return 2;
    }
    if (ao.from_ns >= 0 && ao.to_ns >= 0 && ao.to_ns < ao.from_ns) {
        fprintf(stderr, "heapledger report: --to is before --from\n");
        return 2;
    }
    sqlite3 *db = hl_an_open(db_path, err, sizeof err);
    if (!db) {
        fprintf(stderr, "heapledger report: %s\n", hl_safe(err));
        return 1;
    }
    if (hl_cli_window_db("report", db, db_path, ao.pid, ao.from_ns, ao.to_ns, from_arg)) {
        sqlite3_close(db);
        return 2;
    }
    hl_report_t *r = hl_analyze(db, db_path, &ao, err, sizeof err);
    if (!r) {
        fprintf(stderr, "heapledger report: %s\n", hl_safe(err));
        sqlite3_close(db);
        return 1;
    }
    if (r->approximate)
        fprintf(stderr,
                "heapledger report: warning: %lld events were discarded while recording; "
                "metrics are approximate\n",
                (long long)r->run.discarded);
    int rc = 0;
    if (json) {
        hl_render_json(stdout, r, &ro);
    } else if (html) {
        if (hl_render_html(html, r, &ro) < 0) {
            fprintf(stderr, "heapledger report: cannot write %s: %s\n", html, strerror(errno));
            rc = 1;
        } else {
            fprintf(stderr, "heapledger report: wrote %s\n", html);
        }
    } else {
        hl_render_text(stdout, r, &ro);
    }
    hl_report_free(r);
    sqlite3_close(db);
    return rc;
}

int hl_cmd_report(int argc, char **argv)
{
    hl_supp_t *supp = hl_supp_new();
    int rc = report(argc, argv, supp);
    hl_supp_free(supp);
    return rc;
}
