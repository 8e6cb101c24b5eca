// harden=full: operator new and its array, nothrow and aligned forms hand out guarded blocks;
// reading one byte past the end faults. argv[1] names the form. (read_at is extern "C": report
// frames name functions as the symbol table does, mangled for C++.)
#include <cstdio>
#include <cstring>
#include <new>

struct alignas(64) wide {
    char c[64];
};

extern "C" __attribute__((noinline)) int read_at(const char *p, size_t i)
{
    return p[i]; // ACCESS
}

int main(int argc, char **argv)
{
    const char *e = argc > 1 ? argv[1] : "new";
    char *p = nullptr;
    if (!strcmp(e, "new")) p = reinterpret_cast<char *>(new long[6]);
    if (!strcmp(e, "nothrow")) p = new (std::nothrow) char[48];
    if (!strcmp(e, "aligned")) p = reinterpret_cast<char *>(new wide[1]) + 16;
    if (!p) return 2;
    std::printf("%d\n", read_at(p, 48));
    return 0;
}
