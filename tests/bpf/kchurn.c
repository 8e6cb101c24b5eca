/* tests/bpf/kchurn.c — allocation-heavy load for the kernel-events overhead measurement:
 * ITER (argv[1], default 2,000,000) malloc/free of 16..4096 bytes over 4096 live slots, each
 * block written, and every 1000th iteration a 256 KiB..1 MiB block (mmap/munmap in most
 * allocators) written end to end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long iter = argc > 1 ? atol(argv[1]) : 2000000;
    static char *slot[4096];
    uint64_t x = 88172645463325252ull;
    for (long i = 0; i < iter; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t k = x & 4095, n = 16 + (x >> 20) % 4081;
        free(slot[k]);
        slot[k] = malloc(n);
        memset(slot[k], 1, n < 64 ? n : 64);
        if (i % 1000 == 0) {
            size_t big = (256u << 10) + (x >> 40) % (768u << 10);
            char *b = malloc(big);
            memset(b, 2, big);
            free(b);
        }
    }
    for (int k = 0; k < 4096; k++)
        free(slot[k]);
    return 0;
}
