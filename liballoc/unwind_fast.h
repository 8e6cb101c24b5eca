/* liballoc/unwind_fast.h — heapledger's own x86-64 stack walker (unwind_fast.c).
 *
 * hl_uwf_backtrace() is a drop-in for libunwind's unw_backtrace() on the frames it can walk:
 * called from the same place it returns the same return addresses (buf[0] is the return
 * address of the call itself), or -1 when one of the frames needs more than the compact rule
 * below (the caller then asks libunwind for the whole stack).
 *
 * The rule of a return address, from its module's .eh_frame: the canonical frame address
 * (CFA) is rsp+N or rbp+N, the return address lies at CFA-8, the caller's rbp at CFA-k or in
 * rbp still; or "last frame" (the return address or rbp marked undefined: _start, a thread's
 * start); or "fallback" (anything else: expressions, signal frames, other CFA registers, no
 * FDE). Rules are cached per return address in a fixed lock-free table (MAP_NORESERVE). Stack
 * words are read only inside ranges this thread has checked to be mapped (mincore, once per
 * new page): no read can fault. Nothing here allocates, locks (except dl_iterate_phdr's own
 * lock on a rule miss) or calls stdio. x86-64 only: elsewhere hl_uwf_backtrace returns -1.
 */
#ifndef HL_UNWIND_FAST_H
#define HL_UNWIND_FAST_H

#include <stdint.h>

/* Map the rule cache (hl_stack_init calls it). Until it is mapped, a walk maps it itself, and
 * a walk that meets another thread mapping it defers (-1): it never waits. 0, or -1 when the
 * mapping failed or is being made by another thread. */
int hl_uwf_init(void);

/* Up to n return addresses of the calling thread into buf, innermost first, buf[0] in the
 * caller. Returns the count (0..n) or -1: some frame needs libunwind. */
int hl_uwf_backtrace(void **buf, int n);
/* The same walk from a given frame: ip its return address (buf[0]), sp the stack pointer after
 * that return, rbp the register's value there. Every word read is checked as for a walk from
 * the caller (sp must lie in this thread's mapped pages). */
int hl_uwf_walk(void **buf, int n, uintptr_t ip, uintptr_t sp, uintptr_t rbp);
/* The walk from an interrupted context (a signal handler's ucontext: the stack at a faulting
 * access): pc is the interrupted instruction itself (buf[0]; its unwind row is the one at pc,
 * not at pc - 1), sp and rbp the registers there. Returns the count, or -1 when a frame needs
 * libunwind; *walked is then the number of frames found before it (buf[0..*walked) valid). */
int hl_uwf_walk_interrupted(void **buf, int n, uintptr_t pc, uintptr_t sp, uintptr_t rbp,
                            int *walked);

/* The compact rule of one return address (its FDE row at ra - 1), for tests and for the
 * check mode's messages. */
enum { HL_UWF_EMPTY = 0, HL_UWF_STD = 1, HL_UWF_LAST = 2, HL_UWF_FALLBACK = 3 };
typedef struct hl_uwf_rule_s {
    int kind;        /* HL_UWF_* */
    int cfa_rbp;     /* CFA = rbp + cfa_off (else rsp + cfa_off) */
    int cfa_off;     /* bytes */
    int rbp_saved;   /* caller's rbp at CFA - rbp_off (else unchanged) */
    int rbp_off;     /* bytes below the CFA */
    const char *why; /* for a fallback: what the walker cannot express */
} hl_uwf_rule_t;

/* Decode the rule of return address ra from the unwind tables (no cache). */
void hl_uwf_rule(uintptr_t ra, hl_uwf_rule_t *r);

/* Counters, for tests and benchmarks (relaxed, approximate under threads). */
typedef struct hl_uwf_stats_s {
    uint64_t fallbacks, rule_misses, page_checks;
    uint64_t rule_sets; /* sets of the rule cache now (it grows once); 0 before the first walk */
} hl_uwf_stats_t;
void hl_uwf_stats(hl_uwf_stats_t *s);

#endif
