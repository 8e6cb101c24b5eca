// tests/ingest/cxx_prog.cc — a C++ program for the symbolisation test
// (tests/ingest/symbols_test.sh): its frames must come out demangled, and its stacks,
// which share their return addresses, must be looked up in libdw once per address.
#include <cstdlib>
#include <vector>

namespace hlt {
struct Shape {
    static void *make(int n);
};

__attribute__((noinline)) void *Shape::make(int n)
{
    void *p = std::malloc(static_cast<size_t>(n)); // HLT_MAKE
    __asm__ volatile("" ::"r"(p) : "memory");
    return p;
}

// Stacks of depth 1 to 8 through the same return addresses.
__attribute__((noinline)) void *nest(int depth, int n)
{
    void *p = depth ? nest(depth - 1, n) : Shape::make(n);
    __asm__ volatile("" ::"r"(p) : "memory"); // no tail call
    return p;
}
} // namespace hlt

int main()
{
    std::vector<void *> v;
    for (int i = 0; i < 200; i++)
        v.push_back(hlt::nest(i % 8, 16 + i % 4));
    for (void *p : v)
        std::free(p);
    return 0;
}
