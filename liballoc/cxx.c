/* liballoc/cxx.c — C++ sized and aligned operator delete, defined in C by their mangled
 * names so that the preloaded library can check them (hardened mode) without a C++ runtime.
 *
 * C++14 sized deallocation passes the size the program believes the object has; C++17
 * aligned deallocation passes the alignment. In hardened mode the size is compared with the
 * block's requested size (size-mismatch-delete), then the block is freed like free() would.
 * The check is exact for the aligned forms too: the aligned operator new below asks for the
 * program's own size (libstdc++'s rounds it up to the alignment; it is never used under the
 * preload library), so any other size given to an aligned delete is the program's bug.
 *
 * Only the preload library checks: these functions find the default heap through the shim
 * (hl_shim_linked, defined in shim.c); linked into a program without the shim (the core
 * library) they only call free().
 *
 * Aligned operator new. libstdc++'s own (GCC 12) rounds the size up to the alignment before
 * aligned_alloc without an overflow check: new(SIZE_MAX, align_val_t(64)) wraps to
 * aligned_alloc(64, 0) and returns a usable-looking block, a silent heap overflow in every
 * allocator. The preload library defines the throwing aligned forms itself: a size the heap
 * cannot serve fails like every other entry point, and the failure follows the standard —
 * call the new_handler while there is one, else throw std::bad_alloc (through libstdc++'s
 * own __throw_bad_alloc, so no C++ runtime is linked here; abort() when the program has no
 * libstdc++). The nothrow forms stay libstdc++'s: they call these and catch. The plain
 * (unaligned) forms need nothing: libstdc++ calls malloc, which refuses absurd sizes.
 */
#include "harden.h"
#include "stack.h" /* hl_stack_enter */

#include <stdlib.h>

#define HL_API __attribute__((visibility("default")))

extern const int hl_shim_linked __attribute__((weak));

/* The check runs under the operator's own frame fp (stack.h, hl_stack_enter: a report's
 * stacks start at the program's delete), then free is tail-called (its slow path notes the
 * same frame). */
static inline __attribute__((always_inline)) void cxx_delete(void *fp, void *p, size_t size,
                                                             size_t align, const char *what)
{
    if (p && &hl_shim_linked && hl_main_heap.state == HL_HEAP_READY && hl_main_heap.opt.harden) {
        uintptr_t entry = hl_stack_enter(fp);
        hl_harden_check_delete(&hl_main_heap, p, size, align, what);
        hl_stack_leave(entry);
    }
    free(p);
}

/* operator delete(void*, std::size_t) and the array form */
HL_API void _ZdlPvm(void *p, size_t n)
{
    cxx_delete(__builtin_frame_address(0), p, n, 0, "operator delete");
}
HL_API void _ZdaPvm(void *p, size_t n)
{
    cxx_delete(__builtin_frame_address(0), p, n, 0, "operator delete[]");
}
/* operator delete(void*, std::size_t, std::align_val_t) and the array form */
HL_API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    cxx_delete(__builtin_frame_address(0), p, n, al, "operator delete");
}
HL_API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    cxx_delete(__builtin_frame_address(0), p, n, al, "operator delete[]");
}

/* ---- aligned operator new ------------------------------------------------------------------ */

typedef void (*hl_new_handler_t)(void);
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));
extern hl_new_handler_t _ZSt15get_new_handlerv(void) __attribute__((weak));

static void *cxx_new_aligned(size_t n, size_t al)
{
    if (!hl_is_pow2(al)) _ZSt17__throw_bad_allocv ? _ZSt17__throw_bad_allocv() : abort();
    if (n == 0) n = 1; /* a unique pointer, like new of size 0 */
    for (;;) {
        void *p = NULL;
        if (n <= HL_REQUEST_MAX) /* aligned_alloc refuses the rest; never round it first */
            p = aligned_alloc(al < sizeof(void *) ? sizeof(void *) : al, n);
        if (p) return p;
        hl_new_handler_t handler = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
        if (!handler) {
            if (_ZSt17__throw_bad_allocv) _ZSt17__throw_bad_allocv();
            abort(); /* no C++ runtime to throw with: what a -fno-exceptions new does */
        }
        handler();
    }
}

/* operator new(std::size_t, std::align_val_t) and the array form */
HL_API void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
    return cxx_new_aligned(n, al);
}
HL_API void *_ZnamSt11align_val_t(size_t n, size_t al)
{
    return cxx_new_aligned(n, al);
}
