/* tracer/ingest_symbols.c — frames to function, offset, file:line and module (elfutils libdw).
 *
 * Each traced process has a module map (load base, size, path) built from LTTng's statedump
 * (lttng_ust_statedump:bin_info) and dlopen events (lttng_ust_dl:dlopen/dlclose). A frame is
 * first placed in its process's map: module and offset from the module's load base. The
 * rest is a property of the module file, not of the process, and is paid for once:
 *
 *   object   one per distinct module file (path and size), shared by every process that
 *            maps it (a fork, g++ → cc1plus → as, the same libc everywhere). Its Dwfl (one
 *            module reported offline at the base where it was first seen) is built at the
 *            first lookup in it and kept: its symbol and line tables are read once.
 *   functions  the module's function symbols, read once and sorted by address: a lookup
 *            is a binary search. (dwfl_module_addrinfo scans the whole symbol table at
 *            every call: 1 ms per address in cc1plus, 13 s of a 15 s ingest of g++.) The
 *            choice among symbols follows libdw's: the symbol that contains the address,
 *            global, unique and weak ones before local ones, the higher binding at equal
 *            addresses, then the first in the table.
 *   cache    (object, offset, return address?) → function, offset in the function,
 *            file:line. Each distinct address goes to libdw once, however many stacks
 *            and processes it appears in.
 *   names    C++ names demangled once per distinct symbol (hl_demangle).
 *
 * Debug info is found the standard way (the file itself, .gnu_debuglink,
 * /usr/lib/debug/.build-id). A module file that is missing on this machine (trace from
 * another host) still gives the module path and the offset from its base; function and
 * file stay NULL.
 */
#include "ingest_internal.h"

#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

/* A function symbol of a module, at its address in the module's Dwfl. */
typedef struct fsym_s {
    uint64_t addr, size;
    const char *name; /* owned by the Dwfl */
    int rank;         /* binding: 3 global, 2 unique, 1 weak, 0 local */
    int index;        /* in the module's symbol table: the first one wins a tie, as in libdw */
} fsym_t;

/* A module file. */
typedef struct obj_s {
    char *path;
    uint64_t memsz;
    uint64_t bias; /* load base it is reported at in its Dwfl (the first one seen) */
    Dwfl *dwfl;    /* NULL until the first lookup */
    Dwfl_Module *dm;
    int state;        /* 0 not opened yet, 1 open, -1 unusable (missing, unreadable, pseudo) */
    fsym_t *fsyms[2]; /* [0] global, unique and weak, [1] local: sorted by addr, rank */
    size_t nfsyms[2];
} obj_t;

/* A module in one process's address space. */
typedef struct map_s {
    uint64_t baddr, memsz;
    uint32_t obj;
} map_t;

typedef struct proc_s {
    uint32_t pid;
    map_t *maps;
    size_t n, cap;
    size_t last; /* map of the previous lookup (frames of a stack are mostly in one module) */
} proc_t;

/* A resolved address. Strings belong to the object's Dwfl or to the names table. */
typedef struct entry_s {
    const char *function, *file;
    uint64_t offset;
    int line;
} entry_t;

struct hl_symbols_s {
    proc_t *procs;
    size_t nprocs, capprocs;
    obj_t *objs;
    size_t nobjs, capobjs;
    entry_t *ents;
    size_t nents, capents;
    hl_map_t cache; /* key_of() → index in ents */
    hl_map_t names; /* address of a mangled name in a Dwfl → index in dnames + 1, 0: as is */
    char **dnames;
    size_t ndnames, capdnames;
    uint64_t lookups, misses; /* frames resolved / sent to libdw (HEAPLEDGER_STATS) */
};

static char *debuginfo_path = NULL;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* Grow *buf (elements of size sz) to hold n + 1; 0 or -1. */
static int reserve(void **buf, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *nb = realloc(*buf, c * sz);
    if (!nb) return -1;
    *buf = nb;
    *cap = c;
    return 0;
}

hl_symbols_t *hl_symbols_new(void)
{
    hl_symbols_t *s = calloc(1, sizeof(hl_symbols_t));
    if (!s) return NULL;
    if (hl_map_init(&s->cache, 1024) != 0 || hl_map_init(&s->names, 256) != 0) {
        hl_map_destroy(&s->cache);
        free(s);
        return NULL;
    }
    return s;
}

void hl_symbols_free(hl_symbols_t *s)
{
    if (!s) return;
    if (getenv("HEAPLEDGER_STATS"))
        fprintf(stderr,
                "heapledger: symbols: %llu frames, %llu distinct addresses looked up, %zu "
                "module files\n",
                (unsigned long long)s->lookups, (unsigned long long)s->misses, s->nobjs);
    for (size_t i = 0; i < s->nprocs; i++)
        free(s->procs[i].maps);
    free(s->procs);
    for (size_t i = 0; i < s->nobjs; i++) {
        if (s->objs[i].dwfl) dwfl_end(s->objs[i].dwfl);
        free(s->objs[i].path);
        free(s->objs[i].fsyms[0]);
        free(s->objs[i].fsyms[1]);
    }
    free(s->objs);
    free(s->ents);
    for (size_t i = 0; i < s->ndnames; i++)
        free(s->dnames[i]);
    free(s->dnames);
    hl_map_destroy(&s->cache);
    hl_map_destroy(&s->names);
    free(s);
}

static proc_t *proc_of(hl_symbols_t *s, uint32_t pid, int create)
{
    for (size_t i = 0; i < s->nprocs; i++)
        if (s->procs[i].pid == pid) return &s->procs[i];
    if (!create || reserve((void **)&s->procs, &s->capprocs, s->nprocs, sizeof *s->procs) != 0)
        return NULL;
    proc_t *p = &s->procs[s->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* The object of (path, memsz), created at baddr when new; UINT32_MAX when out of memory. */
static uint32_t obj_of(hl_symbols_t *s, const char *path, uint64_t memsz, uint64_t baddr)
{
    for (size_t i = 0; i < s->nobjs; i++)
        if (s->objs[i].memsz == memsz && !strcmp(s->objs[i].path, path)) return (uint32_t)i;
    if (reserve((void **)&s->objs, &s->capobjs, s->nobjs, sizeof *s->objs) != 0) return UINT32_MAX;
    char *dup = strdup(path);
    if (!dup) return UINT32_MAX;
    s->objs[s->nobjs] = (obj_t){.path = dup, .memsz = memsz, .bias = baddr};
    /* Pseudo modules ("[vdso]") and empty paths have no file to read. */
    if (!path[0] || path[0] == '[') s->objs[s->nobjs].state = -1;
    return (uint32_t)s->nobjs++;
}

void hl_symbols_add_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr, uint64_t memsz,
                           const char *path)
{
    proc_t *p = proc_of(s, pid, 1);
    if (!p) return;
    uint32_t o = obj_of(s, path, memsz, baddr);
    if (o == UINT32_MAX) return;
    for (size_t k = 0; k < p->n; k++)
        if (p->maps[k].baddr == baddr) { /* statedump repeated (new session, fork), or reused */
            p->maps[k] = (map_t){baddr, memsz, o};
            return;
        }
    if (reserve((void **)&p->maps, &p->cap, p->n, sizeof *p->maps) != 0) return;
    p->maps[p->n++] = (map_t){baddr, memsz, o};
}

void hl_symbols_remove_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr)
{
    proc_t *p = proc_of(s, pid, 0);
    if (!p) return;
    for (size_t k = 0; k < p->n; k++)
        if (p->maps[k].baddr == baddr) {
            p->maps[k] = p->maps[--p->n];
            return;
        }
}

static int fsym_cmp(const void *a, const void *b)
{
    const fsym_t *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank) return y->rank - x->rank; /* higher binding first */
    return x->index - y->index;
}

/* Read the module's function symbols once (obj_t.fsyms). */
static void obj_read_symbols(obj_t *o)
{
    int n = dwfl_module_getsymtab(o->dm);
    size_t cap[2] = {0, 0};
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(o->dm, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (!name || !*name || sym.st_size == 0 || shndx == SHN_UNDEF || shndx == (GElf_Word)-1)
            continue;
        if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
        int rank = bind == STB_GLOBAL ? 3 : bind == STB_GNU_UNIQUE ? 2 : bind == STB_WEAK ? 1 : 0;
        int t = rank ? 0 : 1;
        if (reserve((void **)&o->fsyms[t], &cap[t], o->nfsyms[t], sizeof(fsym_t)) != 0) return;
        o->fsyms[t][o->nfsyms[t]++] = (fsym_t){addr, sym.st_size, name, rank, i};
    }
    for (int t = 0; t < 2; t++)
        if (o->nfsyms[t]) qsort(o->fsyms[t], o->nfsyms[t], sizeof(fsym_t), fsym_cmp);
}

/* Longest extent of a function that can contain an address: the search looks back over
 * symbols that start below the address until one is this far below. */
#define FSYM_BACK 64

/* The symbol of table t that contains addr (the highest start, then the higher binding). */
static const fsym_t *fsym_find(const obj_t *o, int t, uint64_t addr)
{
    const fsym_t *v = o->fsyms[t];
    size_t lo = 0, hi = o->nfsyms[t]; /* first index with v[i].addr > addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Candidates at or below addr, highest start first (nested or overlapping symbols: a
     * short one at a higher address may not reach addr while a longer one below does). */
    for (size_t i = lo, k = 0; i-- > 0 && k < FSYM_BACK; k++)
        if (addr - v[i].addr < v[i].size) {
            while (i > 0 && v[i - 1].addr == v[i].addr && addr - v[i - 1].addr < v[i - 1].size)
                i--; /* the first of equal starts: higher binding, then table order */
            return &v[i];
        }
    return NULL;
}

/* The object's Dwfl, opened at the first call; NULL when the file cannot be used. */
static Dwfl *obj_dwfl(obj_t *o)
{
    if (o->state == 1) return o->dwfl;
    if (o->state < 0) return NULL;
    o->state = -1;
    Dwfl *d = dwfl_begin(&callbacks);
    if (!d) return NULL;
    dwfl_report_begin(d);
    const char *base = strrchr(o->path, '/');
    Dwfl_Module *m = dwfl_report_elf(d, base ? base + 1 : o->path, o->path, -1, o->bias, false);
    dwfl_report_end(d, NULL, NULL);
    if (!m) { /* missing or unreadable: module path and offset only */
        dwfl_end(d);
        return NULL;
    }
    o->dwfl = d;
    o->dm = m;
    o->state = 1;
    obj_read_symbols(o);
    return d;
}

/* The name to show for a symbol name owned by a Dwfl: demangled once per symbol. */
static const char *display_name(hl_symbols_t *s, const char *fn)
{
    if (strncmp(fn, "_Z", 2) != 0) return fn;
    uint64_t key = (uint64_t)(uintptr_t)fn;
    uint64_t *v = hl_map_find(&s->names, key);
    if (v) return *v ? s->dnames[*v - 1] : fn;
    char *d = hl_demangle(fn);
    uint64_t idx = 0;
    if (d && reserve((void **)&s->dnames, &s->capdnames, s->ndnames, sizeof *s->dnames) == 0) {
        s->dnames[s->ndnames++] = d;
        idx = s->ndnames;
    } else {
        free(d);
    }
    hl_map_put(&s->names, key, idx);
    return idx ? s->dnames[idx - 1] : fn;
}

/* Look up module offset off of object o in libdw (ret: off is a return address). */
static void lookup(hl_symbols_t *s, obj_t *o, uint64_t off, int ret, entry_t *e)
{
    memset(e, 0, sizeof *e);
    e->offset = off;
    Dwfl *d = obj_dwfl(o);
    if (!d) return;
    /* A return address points after the call: look up the call instruction itself. */
    Dwarf_Addr addr = o->bias + off, look = ret && addr ? addr - 1 : addr;
    Dwfl_Module *dm = dwfl_addrmodule(d, look);
    if (!dm) return;
    const fsym_t *f = fsym_find(o, 0, look);
    if (!f) f = fsym_find(o, 1, look);
    if (f) {
        e->function = display_name(s, f->name);
        e->offset = look - f->addr + (look != addr ? 1 : 0);
    }
    Dwfl_Line *line = dwfl_module_getsrc(dm, look);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file) {
            e->file = file;
            e->line = lineno;
        }
    }
}

/* Cache key of (object, module offset, return address?): 24 + 1 + 39 bits. */
#define OFF_BITS 39
static int key_of(uint32_t obj, uint64_t off, int ret, uint64_t *key)
{
    if (obj >= (1u << 24) || off >= (1ull << OFF_BITS)) return -1;
    *key = (uint64_t)obj << (OFF_BITS + 1) | (uint64_t)(ret != 0) << OFF_BITS | off;
    return 0;
}

static const map_t *map_of(proc_t *p, uint64_t ip)
{
    if (p->last < p->n && ip - p->maps[p->last].baddr < p->maps[p->last].memsz &&
        ip >= p->maps[p->last].baddr)
        return &p->maps[p->last];
    for (size_t k = 0; k < p->n; k++)
        if (ip >= p->maps[k].baddr && ip - p->maps[k].baddr < p->maps[k].memsz) {
            p->last = k;
            return &p->maps[k];
        }
    return NULL;
}

void hl_symbols_resolve(hl_symbols_t *s, uint32_t pid, uint64_t ip, int caller_frame, hl_sym_t *out)
{
    memset(out, 0, sizeof *out);
    proc_t *p = proc_of(s, pid, 0);
    if (!p) return;
    const map_t *m = map_of(p, ip);
    if (!m) return;
    obj_t *o = &s->objs[m->obj];
    uint64_t off = ip - m->baddr, key;
    out->module = o->path;
    out->offset = off;
    s->lookups++;
    entry_t e;
    if (key_of(m->obj, off, caller_frame, &key) != 0) {
        s->misses++;
        lookup(s, o, off, caller_frame, &e);
    } else {
        uint64_t *v = hl_map_find(&s->cache, key);
        if (v) {
            e = s->ents[*v];
        } else {
            s->misses++;
            lookup(s, o, off, caller_frame, &e);
            if (reserve((void **)&s->ents, &s->capents, s->nents, sizeof *s->ents) == 0 &&
                hl_map_put(&s->cache, key, s->nents) == 0)
                s->ents[s->nents++] = e;
        }
    }
    out->function = e.function;
    out->offset = e.offset;
    out->file = e.file;
    out->line = e.line;
}
