/* tests/analyzer/frames_prog.c — a -O2 -g program whose call lines are known, for the frame
 * test (tests/analyzer/frames_test.sh). After each call below the next instruction belongs
 * to the next source line (or to the loop header), so a frame symbolised at its return
 * address instead of the call names the wrong line. The test finds the lines by their
 * FRAMES_* markers. */
#include <stdlib.h>

void *volatile frames_sink;

__attribute__((noinline)) void *frames_alloc(size_t n)
{
    void *p = malloc(n); /* FRAMES_ALLOC */
    frames_sink = p;
    return p;
}

__attribute__((noinline)) void frames_loop(int n)
{
    for (int i = 0; i < n; i++) {
        char *p = frames_alloc(32 + (size_t)i); /* FRAMES_CALL */
        p[0] = 1;
        free(p); /* FRAMES_FREE */
    }
}

int main(void)
{
    frames_loop(4);
    void *leak = frames_alloc(100); /* FRAMES_LEAK */
    frames_sink = leak;
    return 0;
}
