/* tests/analyzer/ktouch.c — a program whose page faults are known, for the kernel view of
 * the analyzer (tests/analyzer/kernel_e2e.sh under heapledger record --kernel).
 *
 * touched: a 4 MiB block (large tier, its own mapping) of which exactly TOUCH_PAGES pages
 *          are written, one byte each at ptr + i * 4096 (page 0 also holds the allocator's
 *          header, so the block faults TOUCH_PAGES pages in all);
 * idle:    a 16 MiB block never written by the program: only the allocator's header page.
 * Both are freed at the end, after a pause so RSS is sampled with both live.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOUCH_PAGES 100

int main(void)
{
    volatile char *touched = malloc(4u << 20);
    char *idle = malloc(16u << 20);
    if (!touched || !idle) return 1;
    for (int i = 0; i < TOUCH_PAGES; i++)
        touched[(size_t)i * 4096] = (char)i;
    printf("%p %p\n", (void *)touched, (void *)idle);
    fflush(stdout);
    usleep(1000);
    free((void *)touched);
    free(idle);
    return 0;
}
