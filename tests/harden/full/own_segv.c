/* Faults that are not heapledger's reach the program as without it, under harden=full:
 *   own_segv handler    the program's own handler gets its SIGSEGV (exit 7);
 *   own_segv            no handler: the process dies of SIGSEGV (status 139), no report. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    static const char msg[] = "own handler: SIGSEGV\n";
    write(1, msg, sizeof msg - 1);
    _exit(7);
}

int main(int argc, char **argv)
{
    char *keep = malloc(100); /* guarded blocks exist, and heapledger's handler */
    if (argc > 1) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
    }
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    free(keep);
    return page[10]; /* the program's own fault */
}
