/* analyzer/cmd_summary.c — the fleet view: `heapledger report --summary DIR [--json | --html
 * OUT.html]`. One row per run database (*.db) in DIR — what `heapledger collectd` writes, one
 * per traced session — sorted by host and session: host, session, command, ingest status,
 * duration, peak requested bytes, leaked bytes (definitely + indirectly lost, from the leak
 * scan at exit: leakclass.h; "-" when not scanned), bytes live at exit, errors found by the
 * hardened mode, and the worst allocator path (the highest p99 cycles among the paths that
 * serve at least 1% of their operation). Each database is read through the analyzer's own
 * pass (hl_an_open, hl_analyze), as `heapledger report` reads it. Databases that cannot be
 * read are listed with the reason and make the exit status 3.
 */
#include "cmd_summary.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "render.h"
#include "hl_schema.h"
#include "jsonw.h"
#include "leakclass.h"
#include "rundb.h"
#include "safetext.h"

typedef struct fleet_row_s {
    char *file; /* base name in DIR */
    char *host, *session, *command, *status;
    char *error; /* NULL: read; else why not */
    double duration_s;
    uint64_t events, peak, leak_bytes, leak_blocks, errors; /* leak_*: live at exit */
    int scanned; /* the leak scan classified the run's blocks: the lost figures hold */
    uint64_t lost_blocks[4], lost_bytes[4]; /* per class (leakclass.h), [0] unused */
    char *scan;                             /* the scan's status, NULL: no scan */
    char *note;                             /* read but not analysed (no allocation events): why */
    char *error_kinds;                      /* most frequent kinds, "" when none */
    char worst[48];                         /* "op/path", "" when no path was timed */
    double worst_p99;
    uint64_t worst_count;
} fleet_row_t;

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* One text value of a query, "" when NULL or no row. */
static char *query_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = hl_col_strdup(st, 0);
    sqlite3_finalize(st);
    return v ? v : strdup("");
}

/* The worst path: highest p99 among the timed paths with at least 1% of their operation. */
static void worst_path(const hl_report_t *r, fleet_row_t *row)
{
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        if (!p->timed || p->share < 0.01 || (row->worst[0] && p->p99 <= row->worst_p99)) continue;
        char name[32];
        if (p->path < (int)HL_PATH_COUNT)
            snprintf(name, sizeof name, "%s", hl_path_name((unsigned)p->path));
        else
            snprintf(name, sizeof name, "path#%d", p->path);
        snprintf(row->worst, sizeof row->worst, "%s/%s", hl_op_name((unsigned)p->op), name);
        row->worst_p99 = p->p99;
        row->worst_count = p->count;
    }
}

/* The session: meta.session (collectd's completion writes it), else the file name without
 * ".db" and without the "HOST-" collectd puts in front. */
static char *session_name(sqlite3 *db, const char *file, const char *host)
{
    char *s = query_text(db, "SELECT value FROM meta WHERE key = 'session'");
    if (s && s[0]) return s;
    free(s);
    char base[1024];
    snprintf(base, sizeof base, "%s", file);
    size_t n = strlen(base);
    if (n > 3 && !strcmp(base + n - 3, ".db")) base[n - 3] = 0;
    size_t h = strlen(host);
    int same = h > 0 && !strncmp(base, host, h) && base[h] == '-';
    for (size_t i = 0; same && i < h; i++) /* collectd writes the host with '_' for others */
        same = base[i] == host[i];
    return strdup(same ? base + h + 1 : base);
}

/* The columns that come from the run row and the database, not from the analysis. */
static void row_base(sqlite3 *db, fleet_row_t *row, const hl_run_t *run)
{
    row->host = dup_or_empty(run->host);
    row->session = session_name(db, row->file, row->host);
    row->command = dup_or_empty(run->command);
    if (!row->command[0]) { /* a streamed session: the process names stand for the command */
        free(row->command);
        row->command = query_text(db, "SELECT group_concat(procname, ',') FROM (SELECT DISTINCT "
                                      "procname FROM process WHERE procname IS NOT NULL)");
    }
    row->status = query_text(db, "SELECT value FROM meta WHERE key = 'ingest_status'");
    row->error_kinds =
        query_text(db, "SELECT group_concat(kind, ',') FROM (SELECT kind, count(*) "
                       "AS n FROM error GROUP BY kind ORDER BY n DESC, kind LIMIT 3)");
}

static void row_read(const char *dir, fleet_row_t *row)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, row->file);
    sqlite3 *db = hl_an_open(path, err, sizeof err);
    if (!db) {
        row->error = strdup(err);
        return;
    }
    hl_analyze_opts_t ao = {0, -1, -1,
                            NULL}; /* the built-in suppressions: leaked = the program's */
    hl_report_t *r = hl_analyze(db, path, &ao, err, sizeof err);
    hl_run_t run;
    char err2[512];
    if (!r && hl_run_load(db, path, 0, &run, err2, sizeof err2) == 0) {
        /* A run without allocations (a streamed session cut short): a row with its note. */
        row_base(db, row, &run);
        row->note = strdup(err);
        row->events = (uint64_t)(run.events > 0 ? run.events : 0);
        row->errors = (uint64_t)(run.errors > 0 ? run.errors : 0);
        hl_run_free(&run);
        sqlite3_close(db);
        return;
    }
    if (!r) {
        row->error = strdup(err);
        sqlite3_close(db);
        return;
    }
    row_base(db, row, &r->run);
    row->duration_s = r->duration_s;
    row->events = r->events;
    row->peak = r->peak_R;
    row->leak_bytes = r->leak_bytes;
    row->leak_blocks = r->leak_blocks;
    row->errors = r->nerrors;
    const hl_leakclass_report_t *lc = r->leakclass;
    if (lc) {
        row->scan = strdup(hl_leakclass_status(lc->status));
        row->scanned = lc->status <= 1;
        for (int k = 1; k < 4 && row->scanned; k++) {
            row->lost_blocks[k] = lc->blocks[k];
            row->lost_bytes[k] = lc->bytes[k];
        }
    }
    worst_path(r, row);
    hl_report_free(r);
    sqlite3_close(db);
}

static void bytes_text(char *buf, size_t len, uint64_t b);

static void row_free(fleet_row_t *row)
{
    free(row->file);
    free(row->host);
    free(row->session);
    free(row->command);
    free(row->status);
    free(row->error);
    free(row->note);
    free(row->error_kinds);
    free(row->scan);
}

/* The leaked column: definitely + indirectly lost when the run was scanned. */
static void leaked_text(char *buf, size_t len, const fleet_row_t *r)
{
    if (r->scanned)
        bytes_text(buf, len, r->lost_bytes[1] + r->lost_bytes[2]);
    else
        snprintf(buf, len, "-");
}

static int row_cmp(const void *a, const void *b)
{
    const fleet_row_t *x = a, *y = b;
    if (!!x->error != !!y->error) return x->error ? 1 : -1;
    if (x->error) return strcmp(x->file, y->file);
    int c = strcmp(x->host, y->host);
    if (!c) c = strcmp(x->session, y->session);
    return c ? c : strcmp(x->file, y->file);
}

/* The *.db files of dir (regular files), sorted. Returns their count, or -1 (errno). */
static int list_dbs(const char *dir, fleet_row_t **rows)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    size_t n = 0, cap = 0;
    fleet_row_t *v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".db")) continue;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            fleet_row_t *nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        memset(&v[n], 0, sizeof v[n]);
        v[n++].file = strdup(e->d_name);
    }
    closedir(d);
    *rows = v;
    return (int)n;
}

static void bytes_text(char *buf, size_t len, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", b);
    else
        snprintf(buf, len, "%.1f %s", v, unit[u]);
}

static void render_text(FILE *f, const char *dir, const fleet_row_t *rows, size_t n)
{
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += !rows[i].error;
    fprintf(f, "fleet: %zu run database%s in %s\n", ok, ok == 1 ? "" : "s", hl_safe(dir));
    fprintf(f, "%-16s %-24s %-24s %-11s %9s %11s %11s %12s %7s  %s\n", "host", "session", "command",
            "status", "duration", "peak", "leaked", "live at exit", "errors",
            "worst path (p99 cycles)");
    for (size_t i = 0; i < n; i++) {
        const fleet_row_t *r = &rows[i];
        if (r->error) continue;
        char peak[32], leak[32], live[32], dur[32], worst[96];
        bytes_text(peak, sizeof peak, r->peak);
        leaked_text(leak, sizeof leak, r);
        bytes_text(live, sizeof live, r->leak_bytes);
        snprintf(dur, sizeof dur, "%.2f s", r->duration_s);
        if (r->worst[0])
            snprintf(worst, sizeof worst, "%s %.0f", r->worst, r->worst_p99);
        else
            snprintf(worst, sizeof worst, "-");
        /* The program without its directory: the JSON and HTML views have the whole line. */
        const char *cmd = r->command, *sp = strchr(cmd, ' '), *sl = NULL;
        for (const char *c = cmd; *c && (!sp || c < sp); c++)
            if (*c == '/') sl = c;
        if (sl) cmd = sl + 1;
        fprintf(f, "%-16s %-24s %-24.24s %-11s %9s %11s %11s %12s %7" PRIu64 "  %s\n",
                hl_safe(r->host), hl_safe(r->session), hl_safe(cmd),
                r->status[0] ? hl_safe(r->status) : "-", dur, peak, leak, live, r->errors, worst);
        if (r->scan && !r->scanned) fprintf(f, "%-16s   leak scan: %s\n", "", r->scan);
        if (r->errors) fprintf(f, "%-16s   errors: %s\n", "", hl_safe(r->error_kinds));
        if (r->note) fprintf(f, "%-16s   note: %s\n", "", hl_safe(r->note));
    }
    fprintf(f, "leaked: definitely + indirectly lost (reachability scan at exit), - when the "
               "run was not scanned; live at exit: all blocks not freed at the end\n");
    for (size_t i = 0; i < n; i++)
        if (rows[i].error)
            fprintf(f, "not read: %s: %s\n", hl_safe(rows[i].file), hl_safe(rows[i].error));
}

static void render_json(FILE *f, const char *dir, const fleet_row_t *rows, size_t n)
{
    hl_json_t j;
    hl_json_init(&j, f);
    hl_json_obj(&j);
    hl_json_key(&j, "directory");
    hl_json_str(&j, dir);
    hl_json_key(&j, "runs");
    hl_json_arr(&j);
    for (size_t i = 0; i < n; i++) {
        const fleet_row_t *r = &rows[i];
        if (r->error) continue;
        hl_json_obj(&j);
        const char *strs[][2] = {{"file", r->file},
                                 {"host", r->host},
                                 {"session", r->session},
                                 {"command", r->command},
                                 {"status", r->status}};
        for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) {
            hl_json_key(&j, strs[k][0]);
            hl_json_str(&j, strs[k][1]);
        }
        hl_json_key(&j, "duration_s");
        hl_json_num(&j, r->duration_s);
        hl_json_key(&j, "events");
        hl_json_u64(&j, r->events);
        hl_json_key(&j, "peak_requested_bytes");
        hl_json_u64(&j, r->peak);
        /* leaked_*: definitely + indirectly lost when scanned, else live at exit (leaked_from
         * says which); live_at_exit_*: every block not freed at the end. */
        hl_json_key(&j, "leaked_bytes");
        hl_json_u64(&j, r->scanned ? r->lost_bytes[1] + r->lost_bytes[2] : r->leak_bytes);
        hl_json_key(&j, "leaked_blocks");
        hl_json_u64(&j, r->scanned ? r->lost_blocks[1] + r->lost_blocks[2] : r->leak_blocks);
        hl_json_key(&j, "leaked_from");
        hl_json_str(&j, r->scanned ? "leak scan" : "live at exit");
        hl_json_key(&j, "live_at_exit_bytes");
        hl_json_u64(&j, r->leak_bytes);
        hl_json_key(&j, "live_at_exit_blocks");
        hl_json_u64(&j, r->leak_blocks);
        hl_json_key(&j, "leak_scan");
        if (r->scan)
            hl_json_str(&j, r->scan);
        else
            hl_json_null(&j);
        hl_json_key(&j, "leak_classes");
        if (r->scanned) {
            hl_leakclass_json_totals(&j, r->lost_blocks, r->lost_bytes);
        } else {
            hl_json_null(&j);
        }
        hl_json_key(&j, "errors");
        hl_json_u64(&j, r->errors);
        hl_json_key(&j, "error_kinds");
        hl_json_str(&j, r->error_kinds);
        hl_json_key(&j, "note");
        if (r->note)
            hl_json_str(&j, r->note);
        else
            hl_json_null(&j);
        hl_json_key(&j, "worst_path");
        if (r->worst[0]) {
            hl_json_obj(&j);
            hl_json_key(&j, "path");
            hl_json_str(&j, r->worst);
            hl_json_key(&j, "p99_cycles");
            hl_json_num(&j, r->worst_p99);
            hl_json_key(&j, "count");
            hl_json_u64(&j, r->worst_count);
            hl_json_obj_end(&j);
        } else {
            hl_json_null(&j);
        }
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_key(&j, "not_read");
    hl_json_arr(&j);
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].error) continue;
        hl_json_obj(&j);
        hl_json_key(&j, "file");
        hl_json_str(&j, rows[i].file);
        hl_json_key(&j, "error");
        hl_json_str(&j, rows[i].error);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_obj_end(&j);
    fputc('\n', f);
}

/* Text made safe (hl_safe) and then HTML-escaped. */
static void html_text(FILE *f, const char *s)
{
    hl_html_esc(f, hl_safe(s ? s : ""));
}

static int render_html(const char *out, const char *dir, const fleet_row_t *rows, size_t n)
{
    FILE *f = fopen(out, "w");
    if (!f) return -1;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>heapledger fleet: ", f);
    html_text(f, dir);
    fputs("</title>\n<style>body{font-family:sans-serif}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:2px 6px}td.n{text-align:right}"
          "tr.err td{color:#a00}</style></head><body>\n<h1>heapledger fleet: ",
          f);
    html_text(f, dir);
    fputs("</h1>\n<table>\n<tr><th>host</th><th>session</th><th>command</th><th>status</th>"
          "<th>duration (s)</th><th>peak</th><th title=\"definitely + indirectly lost "
          "(reachability scan at exit)\">leaked</th><th>live at exit</th><th>errors</th>"
          "<th>worst path</th><th>p99 cycles</th><th>file</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const fleet_row_t *r = &rows[i];
        if (r->error) continue;
        char peak[32], leak[32], live[32];
        bytes_text(peak, sizeof peak, r->peak);
        leaked_text(leak, sizeof leak, r);
        bytes_text(live, sizeof live, r->leak_bytes);
        fprintf(f, "<tr%s><td>", r->errors ? " class=\"err\"" : "");
        html_text(f, r->host);
        fputs("</td><td>", f);
        html_text(f, r->session);
        fputs("</td><td>", f);
        html_text(f, r->command);
        fputs("</td><td>", f);
        html_text(f, r->status);
        fprintf(f, "</td><td class=\"n\">%.2f</td><td class=\"n\">%s</td><td class=\"n\" title=\"",
                r->duration_s, peak);
        if (r->scanned)
            fprintf(f,
                    "definitely lost %" PRIu64 " B in %" PRIu64 " blocks, indirectly lost %" PRIu64
                    " B in %" PRIu64 " blocks",
                    r->lost_bytes[1], r->lost_blocks[1], r->lost_bytes[2], r->lost_blocks[2]);
        else
            html_text(f, r->scan ? r->scan : "no reachability scan at exit");
        fprintf(f, "\">%s</td><td class=\"n\">%s</td>", leak, live);
        fputs("<td class=\"n\" title=\"", f);
        html_text(f, r->error_kinds);
        fprintf(f, "\">%" PRIu64 "</td><td>", r->errors);
        html_text(f, r->worst[0] ? r->worst : "-");
        if (r->worst[0])
            fprintf(f, "</td><td class=\"n\">%.0f</td><td>", r->worst_p99);
        else
            fputs("</td><td class=\"n\">-</td><td>", f);
        html_text(f, r->file);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p>leaked: definitely + indirectly lost (reachability scan at exit), - when "
          "the run was not scanned; live at exit: all blocks not freed at the end.</p>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].error) continue;
        fputs("<p class=\"notread\">not read: ", f);
        html_text(f, rows[i].file);
        fputs(": ", f);
        html_text(f, rows[i].error);
        fputs("</p>\n", f);
    }
    fputs("</body></html>\n", f);
    return fclose(f) ? -1 : 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger report --summary DIR [--json | --html OUT.html]\n"
               "  One row per run database in DIR (e.g. heapledger collectd's --dir): host,\n"
               "  session, command, status, duration, peak, leaked bytes (definitely +\n"
               "  indirectly lost, from the leak scan at exit), bytes live at exit,\n"
               "  hardened-mode errors, worst allocator path. See docs/collect.md.\n");
}

int hl_cmd_summary(int argc, char **argv)
{
    const char *dir = NULL, *html = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--summary") && val && !dir) {
            dir = val;
            i++;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--html") && val) {
            html = val;
            i++;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr,
                    "heapledger report: --summary DIR takes only --json or --html OUT.html, not "
                    "'%s'\n",
                    hl_safe(a));
            usage(stderr);
            return 2;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (json && html) {
        fprintf(stderr, "heapledger report: --json and --html exclude each other\n");
        return 2;
    }
    fleet_row_t *rows = NULL;
    int n = list_dbs(dir, &rows);
    if (n < 0) {
        fprintf(stderr, "heapledger report: --summary %s: %s (give collectd's --dir)\n",
                hl_safe(dir), strerror(errno));
        return 1;
    }
    if (n == 0) {
        fprintf(stderr, "heapledger report: --summary %s: no run database (*.db) in it\n",
                hl_safe(dir));
        free(rows);
        return 1;
    }
    size_t bad = 0;
    for (int i = 0; i < n; i++) {
        row_read(dir, &rows[i]);
        bad += rows[i].error != NULL;
    }
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    int rc = bad ? 3 : 0;
    if (json) {
        render_json(stdout, dir, rows, (size_t)n);
    } else if (html) {
        if (render_html(html, dir, rows, (size_t)n)) {
            fprintf(stderr, "heapledger report: cannot write %s: %s\n", hl_safe(html),
                    strerror(errno));
            rc = 1;
        } else {
            fprintf(stderr, "heapledger report: wrote %s\n", hl_safe(html));
        }
    } else {
        render_text(stdout, dir, rows, (size_t)n);
    }
    if (bad)
        fprintf(stderr, "heapledger report: %zu of %d databases in %s could not be read\n", bad, n,
                hl_safe(dir));
    for (int i = 0; i < n; i++)
        row_free(&rows[i]);
    free(rows);
    return rc;
}
