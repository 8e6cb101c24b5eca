/* harden=full: a 13-byte block ends 3 bytes before its guard page (pointers stay 16-byte
 * aligned); a write into that gap does not fault: the gap's canary reports it at free. */
#include <stdlib.h>

int main(void)
{
    char *p = malloc(13);
    p[13] = 'g';
    free(p); /* ACCESS */
    return 0;
}
