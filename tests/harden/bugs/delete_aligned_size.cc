// C++17 aligned sized delete with a size other than the object's (checked exactly).
// EXPECT: heapledger: ERROR: size-mismatch-delete on 0x* (100-byte block, *)
#include <new>
int main()
{
    void *p = ::operator new(100, std::align_val_t(64));
    ::operator delete(p, 65, std::align_val_t(64));
    return 0;
}
