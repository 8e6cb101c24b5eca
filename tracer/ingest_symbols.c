/* tracer/ingest_symbols.c — frames to function, offset, file:line and module (elfutils libdw).
 *
 * Each traced process has a module map (load base, size, path) built from LTTng's statedump
 * (lttng_ust_statedump:bin_info) and dlopen events (lttng_ust_dl:dlopen/dlclose). A process
 * gets one Dwfl session reporting those modules offline (dwfl_report_elf at the recorded
 * base), built lazily at the first lookup and rebuilt when its map changes. Debug info is
 * found the standard way (the file itself, .gnu_debuglink, /usr/lib/debug/.build-id).
 * A module file that is missing on this machine (trace from another host) still gives the
 * module path and the offset from its base; function and file stay NULL.
 */
#include "ingest_internal.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

typedef struct mod_s {
    uint64_t baddr, memsz;
    char *path;
    int bad; /* dwfl could not open it */
} mod_t;

typedef struct proc_s {
    uint32_t pid;
    mod_t *mods;
    size_t n, cap;
    Dwfl *dwfl; /* NULL: to (re)build */
} proc_t;

struct hl_symbols_s {
    proc_t *procs;
    size_t n, cap;
};

static char *debuginfo_path = NULL;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

hl_symbols_t *hl_symbols_new(void)
{
    return calloc(1, sizeof(hl_symbols_t));
}

void hl_symbols_free(hl_symbols_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        proc_t *p = &s->procs[i];
        if (p->dwfl) dwfl_end(p->dwfl);
        for (size_t k = 0; k < p->n; k++)
            free(p->mods[k].path);
        free(p->mods);
    }
    free(s->procs);
    free(s);
}

static proc_t *proc_of(hl_symbols_t *s, uint32_t pid, int create)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->procs[i].pid == pid) return &s->procs[i];
    if (!create) return NULL;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        proc_t *np = realloc(s->procs, cap * sizeof *np);
        if (!np) return NULL;
        s->procs = np;
        s->cap = cap;
    }
    proc_t *p = &s->procs[s->n++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

static void invalidate(proc_t *p)
{
    if (p->dwfl) {
        dwfl_end(p->dwfl);
        p->dwfl = NULL;
    }
}

void hl_symbols_add_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr, uint64_t memsz,
                           const char *path)
{
    proc_t *p = proc_of(s, pid, 1);
    if (!p) return;
    for (size_t k = 0; k < p->n; k++)
        if (p->mods[k].baddr == baddr) { /* statedump repeated (new session, fork) */
            if (!strcmp(p->mods[k].path, path)) return;
            free(p->mods[k].path);
            p->mods[k] = (mod_t){baddr, memsz, strdup(path), 0};
            invalidate(p);
            return;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        mod_t *nm = realloc(p->mods, cap * sizeof *nm);
        if (!nm) return;
        p->mods = nm;
        p->cap = cap;
    }
    p->mods[p->n++] = (mod_t){baddr, memsz, strdup(path), 0};
    invalidate(p);
}

void hl_symbols_remove_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr)
{
    proc_t *p = proc_of(s, pid, 0);
    if (!p) return;
    for (size_t k = 0; k < p->n; k++)
        if (p->mods[k].baddr == baddr) {
            free(p->mods[k].path);
            p->mods[k] = p->mods[--p->n];
            invalidate(p);
            return;
        }
}

static Dwfl *dwfl_of(proc_t *p)
{
    if (p->dwfl) return p->dwfl;
    Dwfl *d = dwfl_begin(&callbacks);
    if (!d) return NULL;
    dwfl_report_begin(d);
    for (size_t k = 0; k < p->n; k++) {
        mod_t *m = &p->mods[k];
        if (m->bad || !m->path[0] || m->path[0] == '[') continue;
        const char *base = strrchr(m->path, '/');
        if (!dwfl_report_elf(d, base ? base + 1 : m->path, m->path, -1, m->baddr, false))
            m->bad = 1; /* missing or unreadable: module path and offset only */
    }
    dwfl_report_end(d, NULL, NULL);
    p->dwfl = d;
    return d;
}

void hl_symbols_resolve(hl_symbols_t *s, uint32_t pid, uint64_t ip, int caller_frame, hl_sym_t *out)
{
    memset(out, 0, sizeof *out);
    proc_t *p = proc_of(s, pid, 0);
    if (!p) return;
    const mod_t *m = NULL;
    for (size_t k = 0; k < p->n; k++)
        if (ip >= p->mods[k].baddr && ip - p->mods[k].baddr < p->mods[k].memsz) {
            m = &p->mods[k];
            break;
        }
    if (!m) return;
    out->module = m->path;
    out->offset = ip - m->baddr;
    Dwfl *d = dwfl_of(p);
    if (!d || m->bad) return;
    /* A return address points after the call: look up the call instruction itself. */
    Dwarf_Addr look = caller_frame && ip ? ip - 1 : ip;
    Dwfl_Module *dm = dwfl_addrmodule(d, look);
    if (!dm) return;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *fn = dwfl_module_addrinfo(dm, look, &off, &sym, NULL, NULL, NULL);
    if (fn) {
        out->function = fn;
        out->offset = off + (look != ip ? 1 : 0);
    }
    Dwfl_Line *line = dwfl_module_getsrc(dm, look);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file) {
            out->file = file;
            out->line = lineno;
        }
    }
}
