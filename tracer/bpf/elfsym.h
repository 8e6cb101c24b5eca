/* tracer/bpf/elfsym.h — the function symbols of one ELF file (libelf), for attach mode:
 * which object defines malloc, and which function a sampled address falls in. */
#ifndef HL_ELFSYM_H
#define HL_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_elfsym_s hl_elfsym_t;

/* Load the defined function symbols (.symtab, else .dynsym) and the PT_LOAD headers of an
 * ELF file. NULL when the file cannot be read or is not ELF. */
hl_elfsym_t *hl_elfsym_open(const char *path);
void hl_elfsym_close(hl_elfsym_t *e);

/* 1 when the file defines (not imports) a function named `name` in its dynamic symbols,
 * i.e. a uprobe by name can be placed on it and other objects may bind to it. */
int hl_elfsym_exports(const hl_elfsym_t *e, const char *name);

/* Function containing the byte at file offset `off` (as in /proc/PID/maps), with the offset
 * of the address in the function in *delta. NULL when unknown. */
const char *hl_elfsym_lookup(const hl_elfsym_t *e, uint64_t off, uint64_t *delta);

#endif
