/* tests/leaks/leak_list.c — N nodes reachable from a global list, N/10 nodes of a list whose
 * head pointer was dropped (leaks_test.sh t_lost_list): 1 definitely lost (the head),
 * N/10 - 1 indirectly lost, N still reachable. The allocator's own frames of the last
 * mallocs leave stale pointers into the lost list in the stack below main's frame; the
 * scan must not take them for roots when exit's frames cover them. */
#include <stdlib.h>

struct node {
    struct node *next;
    long v[3];
};
struct node *head; /* a global: the kept list's root */

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    for (long i = 0; i < n; i++) {
        struct node *x = malloc(sizeof *x);
        x->next = head;
        head = x;
    }
    struct node *lost = NULL;
    for (long i = 0; i < n / 10; i++) {
        struct node *x = malloc(sizeof *x);
        x->next = lost;
        lost = x;
    }
    return lost == NULL; /* main returns: the scan runs in exit's destructors */
}
