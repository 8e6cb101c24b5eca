/* analyzer/suppress.c — see suppress.h. */
#include "suppress.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hl_supp_labels[3] = {"", "C runtime", "--suppressions"};

typedef enum { R_FUNCTION, R_MODULE, R_FILE } rule_on_t;

typedef struct rule_s {
    rule_on_t on;
    char *glob;
} rule_t;

struct hl_supp_s {
    rule_t *rules;
    size_t n, cap;
};

/* The C runtime's modules, by base name. */
static const char *const runtime_modules[] = {
    "libc.so*",   "libc-*.so",     "ld-linux*.so*", "ld-*.so*", "libpthread*.so*",
    "libdl*.so*", "libstdc++.so*", "libgcc_s.so*",  "libm.so*", NULL};

/* Functions of the C runtime whose blocks live until the process ends by design. */
static const char *const runtime_functions[] = {
    /* stdio: the buffers of stdin, stdout, stderr and of streams never closed at exit */
    "_IO_file_doallocate", "_IO_wfile_doallocate",
    /* threads: DTVs, static TLS blocks, dynamic TLS slot info */
    "allocate_dtv", "_dl_allocate_tls*", "_dl_resize_dtv", "_dl_update_slotinfo",
    "_dl_add_to_slotinfo", "update_get_addr", "tls_get_addr_tail", "__tls_get_addr",
    /* the loader: link maps, search paths, scopes, versions, dlopen */
    "_dl_*", "dl_open_worker*", "dl_main", "_dl_start_final", "add_to_global*", "_dlerror_run",
    "__libc_dlopen_mode", "fillin_rpath*", "decompose_rpath", "expand_dynamic_string_token",
    "open_path", "_dl_important_hwcaps",
    /* locale, gettext and iconv data, cached for the process's lifetime */
    "setlocale", "newlocale", "_nl_*", "__gconv_*", "__wcsmbs_load_conv", "read_alias_file",
    "new_composite_name", "textdomain", "bindtextdomain", "set_binding_values", "__dcigettext",
    "__bindtextdomain", "__textdomain",
    /* the environment: setenv's strings cannot be freed (a getenv pointer may be held) */
    "__add_to_environ",
    /* NSS modules and the time zone */
    "__nss_*", "nss_*", "__tzfile_read", "tzset_internal", "__tzset", "__tz_convert",
    /* exit handlers beyond the static table */
    "__new_exitfn", "__cxa_atexit", "__internal_atexit",
    /* libstdc++'s emergency exception pool and locale init */
    "(anonymous namespace)::pool::pool*", "std::locale::*", "__gnu_cxx::__freeres", NULL};

hl_supp_t *hl_supp_new(void)
{
    hl_supp_t *s = calloc(1, sizeof *s);
    if (!s) abort();
    return s;
}

void hl_supp_free(hl_supp_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        free(s->rules[i].glob);
    free(s->rules);
    free(s);
}

static int any_match(const char *const *globs, const char *name)
{
    for (size_t i = 0; globs[i]; i++)
        if (fnmatch(globs[i], name, 0) == 0) return 1;
    return 0;
}

static const char *base_of(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static char *trim(char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    char *e = p + strlen(p);
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
    return p;
}

int hl_supp_load(hl_supp_t *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read suppressions file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno,
                     sizeof line - 2);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *p = trim(line);
        if (!*p) continue;
        char *colon = strchr(p, ':');
        rule_on_t on;
        if (colon && colon - p == 4 && !strncmp(p, "leak", 4))
            on = R_FUNCTION;
        else if (colon && colon - p == 6 && !strncmp(p, "module", 6))
            on = R_MODULE;
        else if (colon && colon - p == 4 && !strncmp(p, "file", 4))
            on = R_FILE;
        else {
            snprintf(err, errlen,
                     "%s:%d: '%.60s' is not a rule: write leak:FUNCTION-GLOB, "
                     "module:MODULE-GLOB or file:FILE-GLOB (see heapledger-report(1))",
                     path, lineno, p);
            rc = -1;
            break;
        }
        char *glob = trim(colon + 1);
        if (!*glob) {
            snprintf(err, errlen, "%s:%d: empty pattern after '%.*s:'", path, lineno,
                     (int)(colon - p), p);
            rc = -1;
            break;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 16;
            rule_t *nr = realloc(s->rules, cap * sizeof *nr);
            if (!nr) abort();
            s->rules = nr;
            s->cap = cap;
        }
        s->rules[s->n].on = on;
        s->rules[s->n].glob = strdup(glob);
        if (!s->rules[s->n].glob) abort();
        s->n++;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "cannot read suppressions file %s: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

static int user_match(const hl_supp_t *s, const hl_frames_t *fr)
{
    for (size_t r = 0; r < s->n; r++)
        for (size_t i = 0; i < fr->n; i++) {
            const hl_frame_t *l = &fr->loc[i];
            const char *v = s->rules[r].on == R_FUNCTION ? l->function
                            : s->rules[r].on == R_FILE   ? l->file
                                                         : l->module;
            if (!v) continue;
            if (fnmatch(s->rules[r].glob, v, 0) == 0) return 1;
            if (s->rules[r].on == R_MODULE && fnmatch(s->rules[r].glob, base_of(v), 0) == 0)
                return 1;
        }
    return 0;
}

static int runtime_match(const hl_frames_t *fr)
{
    size_t i = 0;
    while (i < fr->n && fr->loc[i].function && hl_frame_is_allocator(fr->loc[i].function))
        i++;
    for (; i < fr->n; i++) {
        const hl_frame_t *l = &fr->loc[i];
        if (!l->module || !any_match(runtime_modules, base_of(l->module))) return 0;
        if (l->function && any_match(runtime_functions, l->function)) return 1;
    }
    return 0;
}

hl_supp_kind_t hl_supp_match(const hl_supp_t *s, const hl_frames_t *fr)
{
    if (fr->n == 0) return HL_SUPP_NONE;
    if (s && user_match(s, fr)) return HL_SUPP_USER;
    return runtime_match(fr) ? HL_SUPP_RUNTIME : HL_SUPP_NONE;
}

static void frames_clear(hl_frames_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free((char *)f->loc[i].function);
        free((char *)f->loc[i].file);
        free((char *)f->loc[i].module);
    }
    f->n = 0;
}

static void classify_one(const hl_supp_t *s, int64_t stack, hl_frames_t *f, hl_hmap_t *out)
{
    hl_supp_kind_t k = hl_supp_match(s, f);
    if (k != HL_SUPP_NONE) *hl_hmap_put(out, (uint64_t)stack + 1, 0, NULL) = (uint64_t)k;
    frames_clear(f);
}

static char *dup_col(sqlite3_stmt *st, int c)
{
    const char *v = (const char *)sqlite3_column_text(st, c);
    if (!v || !*v) return NULL;
    char *d = strdup(v);
    if (!d) abort();
    return d;
}

int hl_supp_classify(const hl_supp_t *s, sqlite3 *db, hl_hmap_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT stack_id, function, file, module FROM frame "
                           "ORDER BY stack_id, depth",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    hl_frames_t f = {0};
    size_t cap = 0;
    int64_t cur = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id != cur && f.n) classify_one(s, cur, &f, out);
        cur = id;
        hl_frame_t *l = HL_VEC_PUSH(f.loc, f.n, cap);
        *l = (hl_frame_t){
            .function = dup_col(st, 1), .file = dup_col(st, 2), .module = dup_col(st, 3)};
    }
    if (f.n) classify_one(s, cur, &f, out);
    free(f.loc);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
