/* liballoc/report.c — heap error reports, written without allocating (hardened mode).
 *
 *   heapledger: ERROR: heap-overflow on 0x7f3a1c0040 (24-byte block, tiny/2)
 *     bad byte at offset 24 (0 bytes after the 24-byte block): canary overwritten
 *       #0 0x55d0c2a1b2 in main+0x52 (/tmp/overflow)
 *   allocated by thread T4242 here:
 *       #0 …
 *   freed by thread T4242 here:         (only when the block was freed)
 *
 * Symbolisation needs no libc help that could allocate: the module of an address comes from
 * /proc/self/maps (read with raw syscalls into a static buffer), its function from the
 * module's own ELF symbol table (.symtab, else .dynsym) read through a private read-only
 * mmap of the file. Reports are serialised by a spin lock; a report raised while another is
 * being written by the same thread (a fault inside the reporter) aborts at once.
 */
#include "harden.h"
#include "stack.h"

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static char maps_buf[256 << 10];
static size_t maps_len;
static int report_lock;
static __thread int in_report __attribute__((tls_model("initial-exec")));
static size_t error_count;

static void report_lock_take(void)
{
    while (__atomic_exchange_n(&report_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void report_lock_drop(void)
{
    __atomic_store_n(&report_lock, 0, __ATOMIC_RELEASE);
}

size_t hl_harden_errors(void)
{
    return __atomic_load_n(&error_count, __ATOMIC_RELAXED);
}

static void maps_load(void)
{
    maps_len = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t r;
    while (maps_len + 1 < sizeof maps_buf &&
           (r = (ssize_t)syscall(SYS_read, fd, maps_buf + maps_len,
                                 sizeof maps_buf - 1 - maps_len)) > 0)
        maps_len += (size_t)r;
    maps_buf[maps_len] = 0;
    syscall(SYS_close, fd);
}

/* The maps line holding addr: start, file offset, path (copied into path, "" for anonymous). */
static int maps_find(uintptr_t addr, uintptr_t *start, uint64_t *off, char *path, size_t plen)
{
    const char *s = maps_buf;
    while (*s) {
        const char *line = s;
        uintptr_t lo = (uintptr_t)hl_parse_hex(&s);
        s++; /* '-' */
        uintptr_t hi = (uintptr_t)hl_parse_hex(&s);
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (addr >= lo && addr < hi) {
            s += 6; /* " rwxp " */
            uint64_t o = (uintptr_t)hl_parse_hex(&s);
            int fields = 0; /* skip dev and inode */
            while (s < eol && fields < 2) {
                while (s < eol && *s == ' ')
                    s++;
                while (s < eol && *s != ' ')
                    s++;
                fields++;
            }
            while (s < eol && *s == ' ')
                s++;
            size_t n = (size_t)(eol - s);
            if (n >= plen) n = plen - 1;
            memcpy(path, s, n);
            path[n] = 0;
            *start = lo;
            *off = o;
            return 1;
        }
        s = *eol ? eol + 1 : eol;
    }
    return 0;
}

/* Look up the function containing file offset `foff` of the ELF file at path. */
static int elf_symbol(const char *path, uint64_t foff, char *name, size_t nlen, uint64_t *delta)
{
    if (path[0] != '/') return 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int found = 0;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        syscall(SYS_close, fd);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    syscall(SYS_close, fd);
    if (m == MAP_FAILED) return 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto out;
    /* File offset -> link-time address through the PT_LOAD that maps it. */
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + eh->e_phoff);
    uint64_t vaddr = 0;
    int have = 0;
    for (int i = 0; i < eh->e_phnum && !have; i++)
        if (ph[i].p_type == PT_LOAD && foff >= ph[i].p_offset &&
            foff < ph[i].p_offset + ph[i].p_filesz) {
            vaddr = foff - ph[i].p_offset + ph[i].p_vaddr;
            have = 1;
        }
    if (!have) goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    for (int pass = 0; pass < 2 && !found; pass++) {
        uint32_t want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
        for (int i = 0; i < eh->e_shnum && !found; i++) {
            if (sh[i].sh_type != want || sh[i].sh_link >= eh->e_shnum ||
                sh[i].sh_offset + sh[i].sh_size > size)
                continue;
            const Elf64_Shdr *strs = &sh[sh[i].sh_link];
            if (strs->sh_offset + strs->sh_size > size) continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
            size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
            const Elf64_Sym *best = NULL;
            for (size_t k = 0; k < n; k++) {
                if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
                    sym[k].st_value > vaddr || sym[k].st_name >= strs->sh_size)
                    continue;
                if (vaddr < sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1)) {
                    best = &sym[k];
                    break;
                }
            }
            if (best) {
                const char *nm = m + strs->sh_offset + best->st_name;
                size_t j = 0;
                while (nm[j] && j + 1 < nlen && nm + j < m + size) {
                    name[j] = nm[j];
                    j++;
                }
                name[j] = 0;
                *delta = vaddr - best->st_value;
                found = 1;
            }
        }
    }
out:
    munmap((void *)m, size);
    return found;
}

/* ---- the frames of one report ------------------------------------------------------------ */

#define MAX_MODS 32

static hl_sym_frame_t frames[HL_SYM_MAX_FRAMES];
static uint64_t frame_ip[HL_SYM_MAX_FRAMES];
static uint8_t frame_adj[HL_SYM_MAX_FRAMES]; /* 1: looked up at ip - 1 (a return address) */
static uint8_t frame_sig[HL_SYM_MAX_FRAMES]; /* the kernel's signal return trampoline */
static size_t nframes;
static char mods[MAX_MODS][256];
static size_t nmods;

typedef struct span_s {
    size_t from, n;
} span_t;

static const char *mod_intern(const char *path)
{
    for (size_t i = 0; i < nmods; i++)
        if (!strcmp(mods[i], path)) return mods[i];
    if (nmods == MAX_MODS) return NULL;
    memcpy(mods[nmods], path, strlen(path) + 1);
    return mods[nmods++];
}

/* ip is the x86-64 rt_sigreturn trampoline (mov $15,%rax; syscall): the frame below it is
 * the interrupted one, whose ip is the faulting instruction itself, not a return address.
 * Read with process_vm_readv on ourselves: an unreadable ip fails instead of faulting. */
static int is_sigreturn(uint64_t ip)
{
    static const unsigned char code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    unsigned char got[sizeof code];
    struct iovec local = {got, sizeof got}, remote = {(void *)(uintptr_t)ip, sizeof got};
    return syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1ul, &remote, 1ul,
                   0ul) == (long)sizeof got &&
           !memcmp(got, code, sizeof code);
}

/* Add a stack's frames. An ip is looked up at ip - 1: a caller's frame holds a return
 * address, which points after the call (and may be the first byte of the next line); the
 * frame interrupted by a signal is looked up at its ip (the first one when `interrupted`: a
 * stack unwound from a signal context). */
static span_t add_stack(const uint64_t *ips, size_t depth, int interrupted)
{
    span_t sp = {nframes, 0};
    for (size_t i = 0; i < depth && nframes < HL_SYM_MAX_FRAMES; i++, sp.n++) {
        hl_sym_frame_t *f = &frames[nframes];
        memset(f, 0, sizeof *f);
        unsigned adj = interrupted ? 0 : 1;
        frame_adj[nframes] = (uint8_t)adj;
        frame_sig[nframes] = (uint8_t)(interrupted = is_sigreturn(ips[i]));
        frame_ip[nframes++] = ips[i];
        uintptr_t start;
        uint64_t off;
        char path[256];
        if (!maps_find((uintptr_t)ips[i] - adj, &start, &off, path, sizeof path)) continue;
        f->foff = (uint64_t)(ips[i] - adj - start) + off;
        f->module = path[0] ? mod_intern(path) : "anonymous";
        if (!f->module) f->module = "?";
    }
    return sp;
}

static span_t add_stack_id(uint32_t id)
{
    size_t depth = 0;
    const uint64_t *ips = id ? hl_stack_lookup(id, &depth) : NULL;
    return add_stack(ips, ips ? depth : 0, 0);
}

/* Name every frame: the helper process (function, file:line from debug information), and
 * the module's own symbol table for the frames it could not name. */
static void name_frames(void)
{
    uintptr_t start;
    uint64_t off;
    char self[256];
    int have_self = maps_find((uintptr_t)&hl_report, &start, &off, self, sizeof self);
    hl_symbolize(frames, nframes, have_self ? self : NULL);
    for (size_t i = 0; i < nframes; i++) {
        hl_sym_frame_t *f = &frames[i];
        if (frame_sig[i]) { /* named by print_frame; what was found at ip - 1 is another's */
            f->has_fn = 0;
            f->file[0] = 0;
            continue;
        }
        if (!f->has_fn && f->module && f->module[0] == '/')
            f->has_fn = elf_symbol(f->module, f->foff, f->fn, sizeof f->fn, &f->fdelta);
    }
}

static void print_frame(hl_out_t *o, unsigned i, size_t k)
{
    const hl_sym_frame_t *f = &frames[k];
    hl_out_str(o, "    #");
    hl_out_u64(o, i);
    hl_out_str(o, " ");
    hl_out_hex(o, frame_ip[k]);
    if (frame_sig[k]) {
        hl_out_str(o, " in <signal handler called>");
    } else if (f->has_fn) {
        hl_out_str(o, " in ");
        hl_out_str(o, f->fn);
        hl_out_str(o, "+");
        hl_out_hex(o, f->fdelta + frame_adj[k]);
    }
    if (f->file[0] && !frame_sig[k]) {
        hl_out_str(o, " ");
        hl_out_str(o, f->file);
        if (f->line) {
            hl_out_str(o, ":");
            hl_out_u64(o, f->line);
        }
    }
    if (f->module) {
        hl_out_str(o, " (");
        hl_out_str(o, f->module);
        hl_out_str(o, "+");
        hl_out_hex(o, f->foff + frame_adj[k]);
        hl_out_str(o, ")");
    }
    hl_out_str(o, "\n");
}

static void print_span(hl_out_t *o, span_t sp)
{
    if (!sp.n) {
        hl_out_str(o, "    (no stack recorded: stacks=0, or captured during start-up)\n");
        return;
    }
    for (size_t i = 0; i < sp.n; i++)
        print_frame(o, (unsigned)i, sp.from + i);
}

/* heapledger's own frame: only seen when the allocator is linked into the program itself
 * (libheapledger_core.a; the preload library skips its frames at capture). */
static int own_frame(size_t k)
{
    const hl_sym_frame_t *f = &frames[k];
    return frame_sig[k] || strstr(f->file, "liballoc/") || (f->has_fn && !strncmp(f->fn, "hl_", 3));
}

/* SUMMARY: heapledger: <kind> <file:line> in <function> — the first frame of the current
 * stack (past heapledger's own) with a source line, else its first frame. */
static void print_summary(hl_out_t *o, const char *kind, span_t sp)
{
    hl_out_str(o, "SUMMARY: heapledger: ");
    hl_out_str(o, kind);
    /* Past the last of heapledger's frames among the first few (its static functions carry
     * no hl_ prefix, so an unnamed-file frame between two of them counts as its own). */
    size_t skip = 0;
    for (size_t i = 0; i < sp.n && i < 12; i++)
        if (own_frame(sp.from + i)) skip = i + 1;
    if (skip < sp.n) {
        sp.from += skip;
        sp.n -= skip;
    }
    size_t pick = sp.n;
    for (size_t i = 0; i < sp.n && pick == sp.n; i++)
        if (frames[sp.from + i].file[0]) pick = i;
    if (pick == sp.n && sp.n) pick = 0;
    if (pick < sp.n) {
        const hl_sym_frame_t *f = &frames[sp.from + pick];
        if (f->file[0]) {
            hl_out_str(o, " ");
            hl_out_str(o, f->file);
            if (f->line) {
                hl_out_str(o, ":");
                hl_out_u64(o, f->line);
            }
        } else if (f->module) {
            hl_out_str(o, " (");
            hl_out_str(o, f->module);
            hl_out_str(o, "+");
            hl_out_hex(o, f->foff + frame_adj[sp.from + pick]);
            hl_out_str(o, ")");
        }
        if (f->has_fn) {
            hl_out_str(o, " in ");
            hl_out_str(o, f->fn);
        }
    }
    hl_out_str(o, "\n");
}

int hl_report_function(uintptr_t ip, char *name, size_t nlen)
{
    uintptr_t start;
    uint64_t off, delta;
    char path[256];
    if (in_report) return 0; /* a fault inside the reporter */
    report_lock_take();
    maps_load();
    int found = maps_find(ip, &start, &off, path, sizeof path) &&
                elf_symbol(path, (uint64_t)(ip - start) + off, name, nlen, &delta);
    report_lock_drop();
    return found;
}

static const char *where_locked(const void *addr)
{
    uintptr_t a = (uintptr_t)addr, sp = (uintptr_t)__builtin_frame_address(0);
    if (a >= sp - 4096 && a < sp + (8u << 20)) return "stack";
    maps_load();
    uintptr_t start;
    uint64_t off;
    char path[256];
    if (maps_find(a, &start, &off, path, sizeof path)) {
        if (!strcmp(path, "[stack]")) return "stack";
        if (path[0] == '/') return "global";
        /* A module's .bss continues its last file-backed mapping anonymously. */
        if (!path[0] && start && maps_find(start - 1, &start, &off, path, sizeof path) &&
            path[0] == '/')
            return "global";
    }
    return "wild";
}

/* The maps buffer is shared: classify under the report lock. */
const char *hl_report_where(const void *addr)
{
    if (in_report) return where_locked(addr);
    report_lock_take();
    const char *w = where_locked(addr);
    report_lock_drop();
    return w;
}

void hl_report(const hl_hreport_t *r)
{
    if (in_report) abort(); /* a fault while reporting */
    in_report = 1;
    report_lock_take();
    __atomic_add_fetch(&error_count, 1, __ATOMIC_RELAXED);
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t depth = hl_fault_stack(ips, 16); /* a faulting access: the stack at the access */
    int at_fault = depth != 0;
    if (!at_fault) depth = hl_stack_capture_user(ips, 16, 1);
    maps_load();
    nframes = 0;
    nmods = 0;
    span_t cur = add_stack(ips, depth, at_fault), alloc = {0, 0}, freed = {0, 0};
    int show_free = r->meta && r->meta->state == HL_META_FREED && r->meta->ftid;
    if (r->meta) alloc = add_stack_id(r->meta->astack);
    if (show_free) freed = add_stack_id(r->meta->fstack);
    name_frames();
    hl_out_t o;
    hl_out_init(&o, 2);
    hl_out_str(&o, "heapledger: ERROR: ");
    hl_out_str(&o, r->kind);
    hl_out_str(&o, " on ");
    hl_out_hex(&o, (uintptr_t)r->addr);
    hl_out_str(&o, " (");
    hl_out_u64(&o, r->size);
    hl_out_str(&o, "-byte block, ");
    hl_out_str(&o, r->tier);
    hl_out_str(&o, "/");
    hl_out_str(&o, r->cls);
    hl_out_str(&o, ")\n");
    if (r->has_offset) {
        hl_out_str(&o, "  bad byte at offset ");
        if (r->offset < 0) hl_out_str(&o, "-");
        hl_out_u64(&o, (uint64_t)(r->offset < 0 ? -r->offset : r->offset));
        hl_out_str(&o, " (");
        hl_out_hex(&o, (uintptr_t)r->addr + (uintptr_t)r->offset);
        hl_out_str(&o, "): ");
        if (r->offset < 0) {
            hl_out_u64(&o, (uint64_t)-r->offset);
            hl_out_str(&o, r->offset == -1 ? " byte before the " : " bytes before the ");
        } else if ((size_t)r->offset >= r->size) {
            hl_out_u64(&o, (uint64_t)r->offset - r->size);
            hl_out_str(&o, (uint64_t)r->offset - r->size == 1 ? " byte after the "
                                                              : " bytes after the ");
        } else {
            hl_out_str(&o, "inside the ");
        }
        hl_out_u64(&o, r->size);
        hl_out_str(&o, "-byte block\n");
    }
    if (r->details) {
        hl_out_str(&o, "  ");
        hl_out_str(&o, r->details);
        hl_out_str(&o, "\n");
    }
    print_span(&o, cur);
    if (r->meta) {
        hl_out_str(&o, "allocated by thread T");
        hl_out_u64(&o, r->meta->atid);
        hl_out_str(&o, " here:\n");
        print_span(&o, alloc);
        if (show_free) {
            hl_out_str(&o, "freed by thread T");
            hl_out_u64(&o, r->meta->ftid);
            hl_out_str(&o, " here:\n");
            print_span(&o, freed);
        }
    }
    print_summary(&o, r->kind, cur);
    hl_out_str(&o, r->abort_on_error ? "heapledger: aborting (abort_on_error=1)\n"
                                     : "heapledger: continuing (abort_on_error=0)\n");
    hl_out_flush(&o);
    hl_trace_emit_error_stacks(r->kind, r->addr, r->size, r->details ? r->details : "",
                               r->meta ? r->meta->astack : 0,
                               r->meta && r->meta->state == HL_META_FREED ? r->meta->fstack : 0);
    report_lock_drop();
    in_report = 0;
    if (r->abort_on_error) abort();
}
