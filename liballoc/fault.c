/* liballoc/fault.c — SIGSEGV/SIGBUS handler of hardened mode.
 *
 * Guard pages after large blocks and freed large blocks kept PROT_NONE make late or
 * out-of-bounds accesses fault. The handler asks hl_harden_on_fault() whether the address
 * is such a page (page map lookup, no pointer chasing outside our own pages); if so the
 * access is reported as heap-overflow or use-after-free and the process aborts. A fault
 * inside free/realloc/malloc_usable_size on the byte before the pointer given (the header
 * byte every free reads first) is a wild pointer into unmapped memory: reported as
 * invalid-free (-realloc, -usable-size). Any other
 * fault is not ours: the previous disposition is restored and the faulting instruction runs
 * again, so the program's own handler or the default action (core dump) sees it unchanged.
 */
#include "harden.h"

#include <signal.h>
#include <string.h>
#include <ucontext.h>

static struct sigaction old_segv, old_bus;
static int installed;

static void on_fault(int sig, siginfo_t *si, void *uc_arg)
{
    int is_write = 0;
    uintptr_t ip = 0;
#if defined(__x86_64__)
    ucontext_t *uc = uc_arg;
    is_write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
    ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#else
    (void)uc_arg;
#endif
    if (hl_harden_on_fault(si->si_addr, is_write)) return; /* not reached: the report aborts */
    if (sig == SIGSEGV && ip && hl_harden_on_wild_fault(si->si_addr, ip)) return; /* idem */
    sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
}

void hl_fault_install(void)
{
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
}
