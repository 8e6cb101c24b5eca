/* liballoc/leakscan.h — the leak reachability scan at exit (leakscan.c) and the thread stop it
 * needs (leakstop.c).
 *
 * At exit (shim_fini) the preloaded library classifies every live block of the default heap,
 * memcheck/LSan style, without a rebuild of the program:
 *
 *   roots   writable PT_LOAD segments of every loaded module (dl_iterate_phdr) except
 *           libheapledger.so itself; the exiting thread's callee-saved registers and its
 *           stack above the exit machinery's frames (the first frame outside libc, ld.so and
 *           libheapledger.so up: the allocator's own frames of earlier calls leave stale
 *           pointers in the stack below the program's frames, which exit's frames then
 *           cover without overwriting); every other thread's registers (from the
 *           signal frame) and its stack from sp - 128 (the red zone) to the end of the
 *           mapping that holds sp; the mapping that holds a thread's thread pointer when it is
 *           not its stack (the main thread's TCB and static TLS): HL_LEAK_TLS_MAX below the
 *           thread pointer and HL_LEAK_TCB_MAX above it, words inside heap blocks skipped
 *           private anonymous writable mappings that are not the allocator's (page map), the
 *           side heap's, the scan's, a module's or a scanned stack: memory the program or
 *           its runtime mapped itself (an interpreter's object arenas, glibc's cached thread
 *           stacks with their DTV pointers); in those above HL_LEAK_RESIDENT_MIN only the
 *           resident pages (mincore: untouched pages hold zeros)
 *   heap    transitively: a word that points into [ptr, ptr + usable) of a live block marks
 *           it (interior pointers count, as in LSan's default); marked blocks are scanned
 *
 * Classes (memcheck's rules, folded as stated): definitely lost (no pointer from a root or a
 * reachable block, and not reached from another lost block), indirectly lost (reached only
 * from lost blocks), still reachable (reached from a root; memcheck's "possibly lost",
 * reached only through interior pointers, is folded in here). Lost blocks are grouped in
 * address order, as memcheck does: the lowest unvisited lost block is definitely lost and
 * every lost block it reaches is indirectly lost (a block taken as definitely lost earlier
 * becomes indirectly lost when a later group reaches it); so a cycle with no pointer from
 * outside is one definitely lost block (its lowest address) and the others indirectly lost.
 *
 * Memory: nothing is allocated in any heap: the block table, the work list and the
 * /proc/self/maps text live in scratch mappings (hl_os_map_quiet), unmapped at the end.
 * Time: every root word and every word of a reachable block is read once, every word of a
 * lost block at most twice; each word that falls in the heap's address range costs a binary
 * search over the N live blocks: O((R + 2H) / 8 · log N). A work budget of
 * HL_LEAK_BUDGET_WORDS words bounds it; past it the scan stops and classifies nothing
 * (status HL_LEAK_BUDGET). No stdio, no locks waited on: the allocator's locks are only tried
 * (HL_LEAK_BUSY when a stopped thread holds one after HL_LEAK_TRIES attempts).
 */
#ifndef HL_LEAKSCAN_H
#define HL_LEAKSCAN_H

#include <stddef.h>
#include <stdint.h>

struct hl_heap_s;

/* Block classes, as stored in the run database (leak_block.class, docs/schema.md). */
enum { HL_LEAK_DEFINITE = 1, HL_LEAK_INDIRECT = 2, HL_LEAK_REACHABLE = 3 };

/* Scan status (leak_scan.status). */
enum {
    HL_LEAK_COMPLETE = 0,    /* every live block classified, every thread scanned */
    HL_LEAK_PARTIAL = 1,     /* classified, but some threads could not be stopped: their
                                stacks were not scanned (leak_scan.threads - threads_scanned) */
    HL_LEAK_BUDGET = 2,      /* the work budget ran out: nothing classified */
    HL_LEAK_BUSY = 3,        /* an allocator lock stayed held: nothing classified */
    HL_LEAK_UNSUPPORTED = 4, /* hardened mode (quarantine, guard pages): not scanned */
    HL_LEAK_NOMEM = 5,       /* the scratch mapping failed: nothing classified */
};

#define HL_LEAK_BUDGET_WORDS (1ull << 28) /* 2 GiB of roots and blocks read */
#define HL_LEAK_TLS_MAX      (1u << 20)   /* static TLS below a thread pointer, scanned at most */
#define HL_LEAK_TCB_MAX      (64u << 10)  /* TCB above it */
#define HL_LEAK_TRIES        50
#define HL_LEAK_THREADS      512        /* threads stopped at most; more are left unscanned */
#define HL_LEAK_PAGE_SHIFT   12         /* the page index's granule (find) */
#define HL_LEAK_PAGES_MAX    (1u << 24) /* pages of heap address range indexed at most */
#define HL_LEAK_RESIDENT_MIN (1u << 20) /* anonymous mappings above: only resident pages */
#define HL_LEAK_BATCH        64         /* blocks per leak_blocks event */

/* Summary of one scan (the leak_scan event; words in this order). */
typedef struct hl_leak_summary_s {
    uint64_t status;
    uint64_t threads;         /* threads of the process other than the tracer's "-ust" ones */
    uint64_t threads_scanned; /* of those, stacks and registers scanned */
    uint64_t root_bytes;      /* bytes of roots read */
    uint64_t heap_bytes;      /* bytes of blocks read */
    uint64_t blocks;          /* live blocks found */
    uint64_t definite_blocks, definite_bytes; /* usable bytes */
    uint64_t indirect_blocks, indirect_bytes;
    uint64_t reachable_blocks, reachable_bytes;
    uint64_t ns; /* duration of the scan */
} hl_leak_summary_t;

#define HL_LEAK_SUMMARY_WORDS (sizeof(hl_leak_summary_t) / sizeof(uint64_t))

/* The scan at exit: mode is the leaks= option (1: scan and print the summary on stderr;
 * 2: scan only when the process is traced), traced whether a tracing session listens (then
 * the classes and the summary are emitted). Called from the exit destructor. */
void hl_leakscan_at_exit(struct hl_heap_s *h, unsigned mode, int traced);

/* ---- thread stop (leakstop.c) ----------------------------------------------------------- */

/* A stopped thread: what its signal handler saved. */
typedef struct hl_leak_thread_s {
    int tid;
    int state;         /* 0 signalled, 1 stopped (fields valid), 2 resumed */
    uintptr_t sp, tp;  /* stack pointer, thread pointer */
    uint64_t regs[23]; /* general registers of the interrupted context (gregset_t) */
} hl_leak_thread_t;

/* Stop every other thread of the process (not LTTng-UST's "-ust" threads) with a signal
 * whose handler saves its context and waits; returns the slots (*n of them), *others the
 * threads found (without the tracer's), of which those not stopped in time (signal blocked,
 * exiting) have state 0. Call hl_leak_resume() afterwards, in every case. */
hl_leak_thread_t *hl_leak_stop(size_t *n, size_t *others);
void hl_leak_resume(void);

/* The same with the mapping's path (not NUL-terminated, *plen 0 for an anonymous one). */
int hl_leak_mapping_path(const char *maps, size_t len, uintptr_t addr, uintptr_t *start,
                         uintptr_t *end, const char **path, size_t *plen);

/* One line of the maps text. */
typedef struct hl_leak_map_s {
    uintptr_t start, end;
    char perms[5];    /* "rw-p" */
    const char *path; /* not NUL-terminated; plen 0: anonymous */
    size_t plen;
} hl_leak_map_t;
/* The next line at *cur (advanced); 0 at the end. */
int hl_leak_maps_next(const char **cur, const char *end, hl_leak_map_t *m);

/* Read /proc/self/maps into buf (raw syscalls); returns its length. */
size_t hl_leak_read_maps(char *buf, size_t cap);
/* The mapping of the maps text holding addr: [*start, *end), *anon set for an anonymous one.
 * 0 when none. */
int hl_leak_mapping(const char *maps, size_t len, uintptr_t addr, uintptr_t *start, uintptr_t *end,
                    int *anon);

#endif
