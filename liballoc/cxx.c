/* liballoc/cxx.c — C++ sized and aligned operator delete, defined in C by their mangled
 * names so that the preloaded library can check them (hardened mode) without a C++ runtime.
 *
 * C++14 sized deallocation passes the size the program believes the object has; C++17
 * aligned deallocation passes the alignment. In hardened mode the size is compared with the
 * block's requested size (size-mismatch-delete), then the block is freed like free() would.
 * libstdc++'s aligned operator new rounds the size up to the alignment before aligned_alloc,
 * so an aligned delete accepts any size that rounds to the block's size.
 *
 * Only the preload library checks: these functions find the default heap through the shim
 * (hl_shim_linked, defined in shim.c); linked into a program without the shim (the core
 * library) they only call free().
 */
#include "harden.h"

#include <stdlib.h>

#define HL_API __attribute__((visibility("default")))

extern const int hl_shim_linked __attribute__((weak));

static void cxx_delete(void *p, size_t size, size_t align, const char *what)
{
    if (p && &hl_shim_linked && hl_main_heap.state == HL_HEAP_READY && hl_main_heap.opt.harden)
        hl_harden_check_delete(&hl_main_heap, p, size, align, what);
    free(p);
}

/* operator delete(void*, std::size_t) and the array form */
HL_API void _ZdlPvm(void *p, size_t n)
{
    cxx_delete(p, n, 0, "operator delete");
}
HL_API void _ZdaPvm(void *p, size_t n)
{
    cxx_delete(p, n, 0, "operator delete[]");
}
/* operator delete(void*, std::size_t, std::align_val_t) and the array form */
HL_API void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    cxx_delete(p, n, al, "operator delete");
}
HL_API void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    cxx_delete(p, n, al, "operator delete[]");
}
