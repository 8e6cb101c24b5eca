/* tracer/bpf/elfsym.c — see elfsym.h. Symbols are sorted by address once; lookups binary
 * search. File offsets are turned into link-time addresses through the PT_LOAD segments. */
#include "elfsym.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sym_s {
    uint64_t addr, size;
    char *name;
    int dynamic; /* from .dynsym */
} sym_t;

typedef struct seg_s {
    uint64_t off, vaddr, filesz;
} seg_t;

struct hl_elfsym_s {
    sym_t *syms;
    size_t nsyms;
    seg_t segs[16];
    size_t nsegs;
};

static int by_addr(const void *a, const void *b)
{
    const sym_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_symtab(hl_elfsym_t *e, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, int dynamic)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !sh->sh_entsize) return;
    size_t n = sh->sh_size / sh->sh_entsize;
    sym_t *grown = realloc(e->syms, (e->nsyms + n) * sizeof *grown);
    if (!grown) return;
    e->syms = grown;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
            s.st_shndx == SHN_UNDEF || !s.st_value)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
        if (!name || !*name) continue;
        sym_t *t = &e->syms[e->nsyms];
        t->name = strdup(name);
        if (!t->name) continue;
        t->addr = s.st_value;
        t->size = s.st_size;
        t->dynamic = dynamic;
        e->nsyms++;
    }
}

hl_elfsym_t *hl_elfsym_open(const char *path)
{
    if (elf_version(EV_CURRENT) == EV_NONE) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    hl_elfsym_t *e = NULL;
    if (!elf || elf_kind(elf) != ELF_K_ELF) goto out;
    e = calloc(1, sizeof *e);
    if (!e) goto out;
    size_t nph = 0;
    elf_getphdrnum(elf, &nph);
    for (size_t i = 0; i < nph && e->nsegs < 16; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
            e->segs[e->nsegs++] = (seg_t){ph.p_offset, ph.p_vaddr, ph.p_filesz};
    }
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
            read_symtab(e, elf, scn, &sh, sh.sh_type == SHT_DYNSYM);
    }
    qsort(e->syms, e->nsyms, sizeof *e->syms, by_addr);
out:
    if (elf) elf_end(elf);
    close(fd);
    return e;
}

void hl_elfsym_close(hl_elfsym_t *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->nsyms; i++)
        free(e->syms[i].name);
    free(e->syms);
    free(e);
}

int hl_elfsym_exports(const hl_elfsym_t *e, const char *name)
{
    for (size_t i = 0; e && i < e->nsyms; i++)
        if (e->syms[i].dynamic && !strcmp(e->syms[i].name, name)) return 1;
    return 0;
}

const char *hl_elfsym_lookup(const hl_elfsym_t *e, uint64_t off, uint64_t *delta)
{
    if (!e || !e->nsyms) return NULL;
    uint64_t addr = off;
    for (size_t i = 0; i < e->nsegs; i++)
        if (off >= e->segs[i].off && off < e->segs[i].off + e->segs[i].filesz) {
            addr = off - e->segs[i].off + e->segs[i].vaddr;
            break;
        }
    size_t lo = 0, hi = e->nsyms; /* last symbol with addr <= target */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NULL;
    const sym_t *s = &e->syms[lo - 1];
    if (s->size && addr >= s->addr + s->size) return NULL;
    *delta = addr - s->addr;
    return s->name;
}
