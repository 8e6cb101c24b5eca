/* analyzer/symbols.c — see symbols.h. */
#include "symbols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"

int hl_frames_load(sqlite3 *db, int64_t stack, hl_frames_t *out)
{
    memset(out, 0, sizeof *out);
    if (stack < 0) return 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT ip, function, offset, file, line, module FROM frame "
                           "WHERE stack_id = ? ORDER BY depth",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, stack);
    size_t cap = 0, fcap = 0, fn = 0, lcap = 0, ln = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t ip = (uint64_t)sqlite3_column_int64(st, 0);
        const char *fun = (const char *)sqlite3_column_text(st, 1);
        int has_off = sqlite3_column_type(st, 2) != SQLITE_NULL;
        int64_t off = sqlite3_column_int64(st, 2);
        const char *file = (const char *)sqlite3_column_text(st, 3);
        int line = sqlite3_column_int(st, 4);
        const char *mod = (const char *)sqlite3_column_text(st, 5);
        if (fun && !*fun) fun = NULL;
        if (file && !*file) file = NULL;
        if (mod && !*mod) mod = NULL;
        char buf[512], fb[512];
        if (fun) {
            int n = snprintf(buf, sizeof buf, "%s+0x%llx", fun, (unsigned long long)off);
            if (file && n >= 0 && (size_t)n < sizeof buf)
                snprintf(buf + n, sizeof buf - (size_t)n, " (%s:%d)", file, line);
            snprintf(fb, sizeof fb, "%s", fun);
        } else if (mod && has_off) {
            /* The offset from the module's load base: the same in every run of the module. */
            const char *base = strrchr(mod, '/');
            snprintf(buf, sizeof buf, "%s+0x%llx", base ? base + 1 : mod, (unsigned long long)off);
            snprintf(fb, sizeof fb, "%s", buf);
        } else {
            snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)ip);
            snprintf(fb, sizeof fb, "%s", buf);
        }
        *HL_VEC_PUSH(out->frame, out->n, cap) = strdup(buf);
        *HL_VEC_PUSH(out->func, fn, fcap) = strdup(fb);
        *HL_VEC_PUSH(out->loc, ln, lcap) = (hl_frame_t){
            .ip = ip,
            .function = fun ? strdup(fun) : NULL,
            .offset = has_off ? off : -1,
            .file = file ? strdup(file) : NULL,
            .line = file ? line : 0,
            .module = mod ? strdup(mod) : NULL,
        };
    }
    sqlite3_finalize(st);
    return 0;
}

void hl_frames_free(hl_frames_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->frame[i]);
        free(f->func[i]);
        free((char *)f->loc[i].function);
        free((char *)f->loc[i].file);
        free((char *)f->loc[i].module);
    }
    free(f->frame);
    free(f->func);
    free(f->loc);
    memset(f, 0, sizeof *f);
}

int hl_frame_is_allocator(const char *fn)
{
    static const char *const names[] = {
        "malloc",         "free",          "calloc",   "realloc", "reallocarray",
        "posix_memalign", "aligned_alloc", "memalign", "valloc",  "pvalloc",
        "_Znwm",          "_Znam",         "_ZdlPv",   "_ZdaPv",  NULL};
    /* C++'s operators, demangled by the recorder: "operator new(unsigned long)", … */
    static const char *const prefixes[] = {
        "hl_",     "heapledger", "operator new", "operator delete", "_ZnwmSt", "_ZnamSt", "_ZdlPvm",
        "_ZdaPvm", NULL};
    for (int i = 0; prefixes[i]; i++)
        if (!strncmp(fn, prefixes[i], strlen(prefixes[i]))) return 1;
    for (int i = 0; names[i]; i++)
        if (!strcmp(fn, names[i])) return 1;
    return 0;
}

const char *hl_frames_site(const hl_frames_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (!hl_frame_is_allocator(f->func[i])) return f->frame[i];
    return f->n ? f->frame[f->n - 1] : NULL;
}
