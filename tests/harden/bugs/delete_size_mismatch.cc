// A base class without a virtual destructor deleted through a base pointer.
// EXPECT: heapledger: ERROR: size-mismatch-delete on 0x* (104-byte block, tiny/*)
struct Base {
    int id;
    ~Base() {}
};
struct Derived : Base {
    char payload[100];
};
int main()
{
    Base *b = new Derived();
    delete b; // sized delete with sizeof(Base)
    return 0;
}
