/* liballoc/stack.h — call stacks: capture with libunwind, intern into a lock-free table.
 *
 * Used by the tracing backend (a `stack` event once per distinct stack, then only its id in
 * alloc/free events) and by hardened mode (allocation and free stacks in error reports).
 *
 * The table is mmap'ed once by hl_stack_init() and never grows or allocates afterwards:
 *
 *   slots[HL_STACK_SLOTS]   one 16-byte slot per distinct stack, by id (touched in order)
 *   ips[HL_STACK_POOL]      all frames of all stacks, appended with one atomic add each
 *   index[HL_STACK_SLOTS]   open-addressing hash table of 4-byte entries (hash tag | id)
 *
 * Ids are 1, 2, 3, … in order of first sight; 0 means "no stack" (stacks off, table full,
 * capture failed). Interning is lock-free and wait-free: a thread that meets a slot another
 * thread is still filling does not wait, it probes on, so in rare races one stack may receive
 * two ids (harmless: both describe the same frames). Nothing here calls malloc, stdio or locks,
 * so every function may run inside the allocator.
 *
 * Describing is per process: the tracer emits a stack's frames once (a `stack` event) before
 * the first event that carries its id. hl_stack_described()/hl_stack_set_described() keep
 * that state apart from interning, so other users of the table (hardened mode) do not
 * interfere; hl_stack_fork_child() makes every stack undescribed again in a forked child
 * (its own pid in the trace) while ids and hl_stack_lookup() stay valid.
 */
#ifndef HL_STACK_H
#define HL_STACK_H

#include <stddef.h>
#include <stdint.h>

/* Deepest stack kept (stacks=N is clamped to this). */
#define HL_STACK_MAX_DEPTH 64
/* Distinct stacks the table holds (power of two); beyond ~90% of it intern returns 0. */
#define HL_STACK_SLOTS (1u << 18)
/* Frames stored over all stacks. */
#define HL_STACK_POOL (1u << 22)

/* Map the table and warm the unwinder up (its first call costs ~1 ms and may allocate, so it
 * must not happen first on a traced path). Idempotent and thread-safe; returns 0, or -1 when
 * the mapping failed (then intern always returns 0). The caller must be protected against
 * reentrancy: the unwinder's warm-up may call malloc. */
int hl_stack_init(void);

/* Capture up to max return addresses of the calling thread, innermost first, skipping the
 * `skip` innermost frames above the caller of hl_stack_capture (skip = 0: ips[0] is in the
 * caller). Returns the depth stored (0..max). ~150 ns at depth 16 once warm. */
size_t hl_stack_capture(uint64_t *ips, size_t max, size_t skip);

/* Like hl_stack_capture, but the stack starts at the first frame outside the module this file
 * is linked into (libheapledger.so): the allocator's own frames (shim, tracing) never appear,
 * however many the compiler inlined. When that module is the main program (static link) the
 * program's frames cannot be told from ours, so only `skip` frames are dropped. Needs
 * hl_stack_init() first (before it, behaves like hl_stack_capture). */
size_t hl_stack_capture_user(uint64_t *ips, size_t max, size_t skip);

/* Text of the module holding this file (empty when it is the main program). */
void hl_stack_self_range(uintptr_t *lo, uintptr_t *hi);

/* The program's call into the allocator (stack_entry.c). Each public entry point of the shim
 * (malloc's and free's slow paths, calloc, realloc, the memalign family, operator new and
 * delete) notes its own frame pointer — __builtin_frame_address(0), under which lie the
 * caller's rbp and the return address into the program — for the length of the call:
 *
 *     uintptr_t saved = hl_stack_enter(__builtin_frame_address(0));
 *     ... the operation (every capture in it starts at the program's frame) ...
 *     hl_stack_leave(saved);
 *
 * hl_stack_capture_user() (and so hl_stack_capture_id()'s walks) then starts its walk at the
 * return address into the program instead of unwinding heapledger's own frames (~8 of them
 * under harden=1: about half of what a capture cost on gcc). The frame is used only when its
 * return address lies outside heapledger's text (the entry was called by the program, not by
 * another function of ours that did not tail-call it) and above the capture's stack pointer;
 * else the capture walks from its own frame as before. Nested entries (a signal handler that
 * allocates during an operation) save and restore the outer one. Two TLS accesses per entry;
 * the fast paths of malloc and free take none. */
extern __thread uintptr_t hl_stack_entry_fp __attribute__((tls_model("initial-exec")));
static inline __attribute__((always_inline)) uintptr_t hl_stack_enter(void *fp)
{
    uintptr_t saved = hl_stack_entry_fp;
    hl_stack_entry_fp = (uintptr_t)fp;
    __asm__ volatile("" ::: "memory"); /* noted before the operation's first capture */
    return saved;
}
static inline __attribute__((always_inline)) void hl_stack_leave(uintptr_t saved)
{
    __asm__ volatile("" ::: "memory");
    hl_stack_entry_fp = saved;
}
/* The fast walk (unwind_fast.h) from the entry's frame into buf: up to n return addresses,
 * buf[0] the return address into the program. -1 when there is no usable entry frame or a
 * frame needs libunwind (the caller then walks from its own frame). */
int hl_stack_entry_walk(void **buf, int n);
/* Captures of the calling thread that walked from the entry's frame (tests). */
uint64_t hl_stack_entry_walks(void);

/* Id of the calling thread's stack as hl_stack_capture_user(.., max, skip) would capture and
 * hl_stack_intern would intern it, through a cache of verified call sites (stack_cache.c):
 * ~10x cheaper when the call site and stack depth were seen before. 0: none. Needs
 * hl_stack_init(); the caller guards reentrancy as for capture. */
uint32_t hl_stack_capture_id(size_t max, size_t skip);
/* Captures of the calling thread that hl_stack_capture_id answered from its memo (the last
 * verified chain of the same stack pointer and return address). */
void hl_stack_cache_stats(uint64_t *memo_hits);

/* Id of the stack ips[0..depth) (1..), interning it on first sight. *is_new is set to 1 when
 * this call inserted the stack, 0 when it was known. Returns 0 (and *is_new = 0) when depth
 * is 0, the table is full or was never mapped. */
uint32_t hl_stack_intern(const uint64_t *ips, size_t depth, int *is_new);

/* Has stack id been described in this process (since the last hl_stack_fork_child)? 1 for
 * unknown ids (nothing to describe). Two threads may both see 0 for a new stack and both
 * describe it: the protocol tolerates duplicate descriptions, never a missing one. */
int hl_stack_described(uint32_t id);
/* Mark id described; call after the description was emitted. */
void hl_stack_set_described(uint32_t id);

/* Frames of stack id: returns a pointer to its ips (innermost first) and sets *depth, or
 * NULL for an unknown id. The frames never change once published. */
const uint64_t *hl_stack_lookup(uint32_t id, size_t *depth);

/* Call in a forked child (pthread_atfork child handler): every stack is undescribed again. */
void hl_stack_fork_child(void);

/* The tracer's own modules: LTTng-UST's libraries and heapledger's probe provider, and
 * LTTng-UST's wrappers of fork, dlopen and the like, whose frames count only for their own
 * internal work (their entry points run the program's code: atfork handlers, the loader).
 * hl_stack_tracer_scan() finds the loaded ones (once, with dl_iterate_phdr: call it outside
 * any allocator lock) and returns 1 if the probe provider is among them (the process is
 * being recorded); hl_stack_in_tracer() tells whether one of ips[0..n) lies in their text (a
 * few compares per frame, no lock; 0 before the scan). */
int hl_stack_tracer_scan(void);
int hl_stack_in_tracer(const uint64_t *ips, size_t n);

/* How stacks are walked (option unwind=, docs/options.md): heapledger's own walker with
 * libunwind where it defers (0, the default), libunwind only (1), or both, aborting with a
 * message at the first difference (2). hl_stack_init() takes the default heap's option;
 * this sets it (tests). */
enum { HL_UNWIND_FAST = 0, HL_UNWIND_LIBUNWIND = 1, HL_UNWIND_CHECK = 2 };
void hl_stack_set_unwind(int mode);
int hl_stack_unwind_mode(void);
/* Walks libunwind made for captures so far (its deferred frames, unwind=libunwind/check; the
 * tracer's warm-up in hl_stack_init). Untraced, libunwind's first walk (which allocates and
 * keeps ~370 KiB) waits for the first of them. */
uint64_t hl_stack_unwinder_calls(void);

/* Distinct stacks interned so far. */
uint32_t hl_stack_count(void);

#endif
