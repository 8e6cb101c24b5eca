// C++ operator new of sizes no heap can serve, under LD_PRELOAD=libheapledger.so (run by
// tests/preload/absurd_sizes.sh in every mode): the throwing forms throw std::bad_alloc
// after the new_handler had its chance, the nothrow forms return nullptr. libstdc++'s own
// aligned new wraps SIZE_MAX rounded to the alignment to 0 and returns a block: heapledger
// defines the aligned forms itself (liballoc/cxx.c). Exit status 0 when all is as expected.
#include <cstdint>
#include <cstdio>
#include <new>

static int failures;
static volatile size_t sizes[] = {SIZE_MAX,        SIZE_MAX - 1,     SIZE_MAX - 63,
                                  SIZE_MAX - 4095, (size_t)1 << 63,  ((size_t)1 << 63) - 1,
                                  (size_t)1 << 62, (size_t)1 << 48};
static const size_t aligns[] = {16, 32, 64, 4096, 1 << 21};

template <class F> static void expect_throw(const char *what, size_t n, size_t al, F f)
{
    try {
        void *p = f(n, al);
        std::printf("FAIL %s(%#zx, align %zu) returned %p\n", what, n, al, p);
        failures++;
    } catch (const std::bad_alloc &) {
    }
}

template <class F> static void expect_null(const char *what, size_t n, size_t al, F f)
{
    void *p = f(n, al);
    if (p) {
        std::printf("FAIL %s(%#zx, align %zu) returned %p\n", what, n, al, p);
        failures++;
    }
}

static int handler_calls;
static void handler()
{
    handler_calls++;
    std::set_new_handler(nullptr); // the next failure throws
}

int main()
{
    for (size_t n : sizes) {
        expect_throw("new", n, 0, [](size_t n, size_t) { return ::operator new(n); });
        expect_throw("new[]", n, 0, [](size_t n, size_t) { return ::operator new[](n); });
        expect_null("new(nothrow)", n, 0,
                    [](size_t n, size_t) { return ::operator new(n, std::nothrow); });
        expect_null("new[](nothrow)", n, 0,
                    [](size_t n, size_t) { return ::operator new[](n, std::nothrow); });
        for (size_t al : aligns) {
            expect_throw("new(align)", n, al, [](size_t n, size_t al) {
                return ::operator new(n, std::align_val_t(al));
            });
            expect_throw("new[](align)", n, al, [](size_t n, size_t al) {
                return ::operator new[](n, std::align_val_t(al));
            });
            expect_null("new(align, nothrow)", n, al, [](size_t n, size_t al) {
                return ::operator new(n, std::align_val_t(al), std::nothrow);
            });
            expect_null("new[](align, nothrow)", n, al, [](size_t n, size_t al) {
                return ::operator new[](n, std::align_val_t(al), std::nothrow);
            });
        }
    }
    // A bad alignment (not a power of two).
    expect_throw("new(align 3)", 16, 3,
                 [](size_t n, size_t al) { return ::operator new(n, std::align_val_t(al)); });
    // The new_handler runs once per failure while it is installed, then bad_alloc.
    for (int aligned = 0; aligned < 2; aligned++) {
        handler_calls = 0;
        std::set_new_handler(handler);
        expect_throw("new with a handler", sizes[0], 64, [aligned](size_t n, size_t al) {
            return aligned ? ::operator new(n, std::align_val_t(al)) : ::operator new(n);
        });
        if (handler_calls != 1) {
            std::printf("FAIL new_handler called %d times (aligned=%d), want 1\n", handler_calls,
                        aligned);
            failures++;
        }
    }
    // Sane requests still work, aligned as asked.
    for (size_t al : aligns) {
        void *p = ::operator new(100, std::align_val_t(al));
        if ((uintptr_t)p % al) {
            std::printf("FAIL new(100, align %zu) = %p misaligned\n", al, p);
            failures++;
        }
        ::operator delete(p, std::align_val_t(al));
        void *z = ::operator new(0, std::align_val_t(al));
        if (!z) failures++;
        ::operator delete(z, std::align_val_t(al));
    }
    std::printf("absurd_new: %d failures\n", failures);
    return failures != 0;
}
