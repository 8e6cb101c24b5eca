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

/* A walk in steps (the chain cache of stack_cache.c): the frame reached — its return address
 * (already stored by the caller), the stack pointer and rbp in it — this thread's checked
 * pages [lo, hi) after the last step, and whether the walk ended (the last frame, or a return
 * address below 0x4000: nothing lies above). */
typedef struct hl_uwf_cursor_s {
    uintptr_t ip, sp, rbp, lo, hi;
    int end;
} hl_uwf_cursor_t;

/* Start a walk at the caller: c->ip is the return address of this call (the caller stores it
 * as its frame 0). 0, or -1 when the rule cache is not mapped (ask libunwind). */
int hl_uwf_begin(hl_uwf_cursor_t *c);

/* Walk on from the cursor's frame: buf[d..n) receives the next return addresses (as
 * hl_uwf_backtrace would store them there), the cursor moves to the last frame stored.
 * Returns the new count, or -1: some frame needs libunwind (the cursor is then unusable). */
int hl_uwf_continue(hl_uwf_cursor_t *c, void **buf, int d, int n);

/* The same, keeping the rule of each step (appended at t->rule[t->steps]: set steps and lost
 * to 0 before the first call; opaque words: a step from a frame uses the rule
 * of its return address, so the same return addresses give the same rules) and why the walk
 * stopped (HL_UWF_END_*; END_LOW: the word read by the last step was below 0x4000). lost:
 * more than HL_UWF_TRAIL steps. */
#define HL_UWF_TRAIL 26
enum { HL_UWF_END_LIMIT = 0, HL_UWF_END_LAST = 1, HL_UWF_END_LOW = 2 };
typedef struct hl_uwf_trail_s {
    uint32_t rule[HL_UWF_TRAIL];
    int steps, end, lost;
} hl_uwf_trail_t;
int hl_uwf_continue_trail(hl_uwf_cursor_t *c, void **buf, int d, int n, hl_uwf_trail_t *t);

/* Would hl_uwf_continue from cursor c (no further than its checked pages) return exactly
 * want[0..frames) and then stop as `end` says, if its steps used rules[0..steps)? The
 * replay of a trail: each step with its recorded rule, each return address read compared
 * with the next one wanted; while they match, the rules are the ones the walk would look up
 * (they belong to the same return addresses) and the reads are the ones it would make, so a
 * match is the walk's answer. 1 or 0 (a difference, or a step the walk would check pages
 * for or defer at: then walk). Reads stay inside [c->lo, c->hi). */
int hl_uwf_replay(const hl_uwf_cursor_t *c, const uint32_t *rules, int steps, const uint64_t *want,
                  int frames, int end);

/* Replay frames steps from c with rules[0..frames), each return address read equal to
 * want[i]: 1 and the cursor moved to the last of them, as hl_uwf_continue would have moved it
 * (the frames of our own module before the program's, replayed from a memo: stack_cache.c),
 * or 0 and the cursor unchanged. */
int hl_uwf_advance(hl_uwf_cursor_t *c, const uint32_t *rules, const uint64_t *want, int frames);

/* The rule cache's generation (bumped when modules were unloaded: rules found before may
 * describe code that is gone); a walk's rules are those of the generation read before it. */
uint32_t hl_uwf_generation(void);

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
} hl_uwf_stats_t;
void hl_uwf_stats(hl_uwf_stats_t *s);

#endif
