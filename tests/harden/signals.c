/* Signals the program raises or is sent, and faults that are not heapledger's, under
 * LD_PRELOAD: tests/harden/signals.sh runs each case with and without heapledger and
 * compares exit status and output, which must be identical.
 *
 * usage: signals CASE
 *   raise        raise(SIGSEGV), no handler                      -> killed by SIGSEGV
 *   kill         kill(getpid(), SIGSEGV), no handler             -> killed by SIGSEGV
 *   sigbus       raise(SIGBUS), no handler                       -> killed by SIGBUS
 *   null         a real fault (NULL write), no handler           -> killed by SIGSEGV
 *   handler      a SA_SIGINFO handler installed in main, raise   -> handler runs once, exit 0
 *   signal       a handler set with signal(), raise twice        -> runs twice, exit 0
 *   reraise      handler restores the previous disposition and raises again (CPython's
 *                faulthandler)                                   -> killed by SIGSEGV
 *   fault_handler a real fault; the handler siglongjmps out      -> exit 0
 *   ignored      SIGSEGV ignored by the parent (inherited over exec), raise -> exit 0; then,
 *                hardened, an overflow into a large block's guard page is still reported
 * Each case prints what it saw before the signal, so that lost output shows too.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t calls;
static sigjmp_buf jb;

static void on_info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    calls++;
    printf("handler: signal %d code %d\n", sig, si->si_code);
}

static void on_plain(int sig)
{
    calls++;
    printf("plain handler: signal %d\n", sig);
}

static struct sigaction before;
static void on_reraise(int sig)
{
    printf("reraise handler: restoring and raising again\n");
    fflush(stdout);
    sigaction(sig, &before, NULL);
    raise(sig);
}

static void on_jump(int sig)
{
    (void)sig;
    calls++;
    siglongjmp(jb, 1);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    free(malloc(100)); /* the allocator is set up (and hardened mode's handler installed) */
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "raise")) {
        printf("raising\n");
        raise(SIGSEGV);
    } else if (!strcmp(c, "kill")) {
        printf("killing myself\n");
        kill(getpid(), SIGSEGV);
    } else if (!strcmp(c, "sigbus")) {
        printf("raising SIGBUS\n");
        raise(SIGBUS);
    } else if (!strcmp(c, "null")) {
        printf("writing through NULL\n");
        *(volatile int *)(uintptr_t)(argc * 0) = 1;
    } else if (!strcmp(c, "handler")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_info;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
        raise(SIGSEGV);
        printf("calls %d\n", (int)calls);
        return calls == 1 ? 0 : 1;
    } else if (!strcmp(c, "signal")) {
        signal(SIGSEGV, on_plain);
        raise(SIGSEGV);
        raise(SIGSEGV);
        printf("calls %d\n", (int)calls);
        return calls == 2 ? 0 : 1;
    } else if (!strcmp(c, "reraise")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_reraise;
        sigaction(SIGSEGV, &sa, &before);
        printf("raising\n");
        raise(SIGSEGV);
        printf("not reached\n");
    } else if (!strcmp(c, "fault_handler")) {
        signal(SIGSEGV, on_jump);
        if (!sigsetjmp(jb, 1)) *(volatile int *)(uintptr_t)(argc * 0) = 1;
        printf("jumped out, calls %d\n", (int)calls);
        return calls == 1 ? 0 : 1;
    } else if (!strcmp(c, "ignored")) {
        if (argc < 3) { /* re-exec with SIGSEGV ignored, as a shell's trap '' SEGV does */
            signal(SIGSEGV, SIG_IGN);
            execl(argv[0], argv[0], "ignored", "child", (char *)NULL);
            return 2;
        }
        printf("raising an ignored SIGSEGV\n");
        raise(SIGSEGV);
        printf("still running\n");
        if (getenv("SIGNALS_OVERFLOW")) { /* hardened: the guard page still works */
            char *p = malloc(300000);
            volatile char *q = p;
            for (size_t i = 0; i < 2 * 300000; i++)
                q[i] = 1;
            printf("overflow not caught\n");
        }
        return 0;
    } else {
        fprintf(stderr, "signals: unknown case '%s'\n", c);
        return 2;
    }
    printf("survived\n");
    return 0;
}
