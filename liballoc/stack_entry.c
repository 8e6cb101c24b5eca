/* liballoc/stack_entry.c — stacks that start at the program's call into the allocator
 * (stack.h, hl_stack_enter).
 *
 * A capture used to unwind from its own frame: hl_stack_capture_user, the call-site cache,
 * hardened mode's capture, the hardened path, the heap's slow path, the shim's entry — about
 * eight frames of heapledger's own before the program's first, each a rule lookup and two
 * loads (~49 instructions a frame on gcc), all of them dropped afterwards. The entry point
 * knows where the program's frame begins: its own frame pointer fp, under which the frame's
 * prologue saved the caller's rbp (fp[0]) and the call pushed the return address (fp[1]);
 * the caller's stack pointer after the return is fp + 16. Those three are exactly the state a
 * walk from inside would have reached at that frame (the entry's rule is CFA = rbp + 16 with
 * rbp saved at CFA - 16), so a walk started there returns the same frames, without ours.
 *
 * When the entry's frame is not the program's: the return address lies in heapledger's text
 * when the entry was called by another function of ours that did not tail-call it
 * (reallocarray's realloc, say, if the compiler kept the call): the capture then walks from its
 * own frame as before. A frame at or below the capture's stack pointer is not live (an entry
 * left by a longjmp out of a signal handler that interrupted it): likewise. In a static link
 * (our text is the program's, hl_stack_self_range empty) the frame is taken as it is: the
 * stack then starts at the entry's caller, which may be one of our own functions.
 */
#include "stack.h"
#include "unwind_fast.h"

__thread uintptr_t hl_stack_entry_fp __attribute__((tls_model("initial-exec")));
static __thread uint64_t entry_walks __attribute__((tls_model("initial-exec")));

/* Largest distance from the capture's stack pointer to the entry's frame: a chain of
 * heapledger's own frames is a few KiB (capture buffers); farther is not ours. */
#define ENTRY_MAX_DISTANCE (1u << 20)

int hl_stack_entry_walk(void **buf, int n)
{
    uintptr_t fp = hl_stack_entry_fp, sp;
    if (!fp || n <= 0) return -1;
#if defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#else
    return -1;
#endif
    if (fp <= sp || fp - sp > ENTRY_MAX_DISTANCE || (fp & 7)) return -1;
    const volatile uintptr_t *f = (const volatile uintptr_t *)fp;
    uintptr_t ret = f[1], rbp = f[0], lo, hi;
    hl_stack_self_range(&lo, &hi);
    if (lo < hi && ret >= lo && ret < hi) return -1; /* called by one of our own functions */
    int d = hl_uwf_walk(buf, n, ret, fp + 16, rbp);
    if (d > 0) entry_walks++;
    return d;
}

uint64_t hl_stack_entry_walks(void)
{
    return entry_walks;
}
