/* liballoc/symbolizer.c — heapledger-symbolize, the helper a hardened-mode report execs to
 * name its frames (docs/hardening.md, "Reports").
 *
 *   heapledger-symbolize MODULE OFFSET [MODULE OFFSET ...]
 *
 * OFFSET (hex) is a file offset in MODULE (the module-relative offset the report prints: the
 * address minus the start of its mapping plus the mapping's file offset). For each pair, one
 * line on stdout: FUNCTION<TAB>FUNCTION-OFFSET<TAB>FILE<TAB>LINE, an empty field when unknown
 * (no symbol, no debug information, a file that does not open). Debug information is found
 * the standard way (the file, .gnu_debuglink, /usr/lib/debug/.build-id).
 *
 * It is a program of its own, not part of libheapledger.so: the preload library stays free of
 * libdw (no fixed per-process cost), and the reporting process — whose heap is broken — never
 * runs libdw's allocations; the report forks, execs this with an empty environment and reads
 * its output with a time bound (report.c).
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODULES 64

static char *debuginfo_path = NULL;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

typedef struct mod_s {
    const char *path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
} mod_t;

static mod_t mods[MAX_MODULES];
static size_t nmods;

static mod_t *module(const char *path)
{
    for (size_t i = 0; i < nmods; i++)
        if (!strcmp(mods[i].path, path)) return &mods[i];
    if (nmods == MAX_MODULES) return NULL;
    mod_t *m = &mods[nmods++];
    m->path = path;
    m->dwfl = dwfl_begin(&callbacks);
    if (m->dwfl) {
        dwfl_report_begin(m->dwfl);
        m->mod = dwfl_report_offline(m->dwfl, path, path, -1);
        dwfl_report_end(m->dwfl, NULL, NULL);
    }
    return m;
}

/* File offset -> address in the Dwfl session, through the PT_LOAD that maps the offset. */
static int module_addr(Dwfl_Module *mod, uint64_t foff, Dwarf_Addr *addr)
{
    Dwarf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0) return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
        if (foff >= ph.p_offset && foff < ph.p_offset + ph.p_filesz) {
            *addr = foff - ph.p_offset + ph.p_vaddr + bias;
            return 1;
        }
    }
    return 0;
}

static void symbolize(const char *path, uint64_t foff)
{
    const char *fn = "", *file = "";
    int line = 0;
    uint64_t delta = 0;
    mod_t *m = module(path);
    Dwarf_Addr addr;
    if (m && m->mod && module_addr(m->mod, foff, &addr)) {
        GElf_Sym sym;
        GElf_Off off = 0;
        const char *name = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
        if (name) {
            fn = name;
            delta = off;
        }
        Dwfl_Line *l = dwfl_module_getsrc(m->mod, addr);
        const char *src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
        if (src) file = src;
    }
    printf("%s\t%" PRIx64 "\t%s\t%d\n", fn, delta, file, file[0] ? line : 0);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (argc - 1) % 2) {
        fprintf(stderr, "usage: heapledger-symbolize MODULE OFFSET [MODULE OFFSET ...]\n"
                        "  OFFSET: hex file offset in MODULE (as in a heapledger report's "
                        "\"(module+0x…)\")\n");
        return 2;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        char *end;
        uint64_t off = strtoull(argv[i + 1], &end, 16);
        if (*end || end == argv[i + 1]) {
            fprintf(stderr, "heapledger-symbolize: bad offset '%s' (want hex, e.g. 0x1177)\n",
                    argv[i + 1]);
            return 2;
        }
        symbolize(argv[i], off);
    }
    fflush(stdout);
    return 0;
}
