/* liballoc/fault.c — SIGSEGV/SIGBUS handler of hardened mode.
 *
 * Guard pages after large blocks, freed large blocks kept PROT_NONE and guarded page runs
 * (fullguard.h: harden=full, guard=all|sample:N) make late or out-of-bounds accesses fault.
 * The handler asks hl_fullguard_on_fault() and hl_harden_on_fault() whether the address is
 * such a page (chunk bounds and out-of-line tables, page map: no pointer chasing outside our
 * own pages); if so the access is reported as heap-overflow, heap-underflow or
 * use-after-free — READ or WRITE from the page fault's error code (REG_ERR bit 1), the stack
 * at the access unwound from the signal context (hl_fault_stack: its first frame is the
 * faulting instruction, not the signal trampoline; heapledger's own walker, libunwind only
 * for a frame it cannot step and only when already loaded) — and the process aborts. A fault
 * inside free/realloc/malloc_usable_size on the byte before the pointer given (the header
 * byte every free reads first) is a wild pointer into unmapped memory: reported as
 * invalid-free (-realloc, -usable-size).
 *
 * Everything else reaches the program exactly as it would without heapledger. Only a fault
 * the kernel raised (si_code > 0: SEGV_MAPERR, SEGV_ACCERR, BUS_ADRERR…) is looked at; a
 * signal sent by a process or raised by the program itself (raise, kill, tgkill, sigqueue:
 * si_code <= 0) is never ours. Such a signal, and any fault outside our pages, goes to the
 * disposition that was in place when the handler was installed, emulated faithfully:
 *   a handler       called with the same arguments, under its own sa_mask (plus the signal
 *                   unless SA_NODEFER), once and then SIG_DFL if it had SA_RESETHAND;
 *   SIG_IGN         a sent signal is dropped; a real fault cannot be ignored (the kernel
 *                   would kill the process): handled as SIG_DFL;
 *   SIG_DFL         the default action: the disposition is set to SIG_DFL and the signal
 *                   delivered again — a fault by returning to the faulting instruction, a
 *                   sent signal by raising it again with the same siginfo — so the process
 *                   dies of that signal (with a core where the system dumps one), exit status
 *                   and all, as without heapledger.
 * The handler stays installed (guard-page detection lasts the whole run) except in the
 * SIG_DFL case, where the process is about to die anyway.
 *
 * A program that installs its own handler later replaces ours (sigaction is not interposed:
 * glibc's signal() and sigset() reach the kernel without the PLT, so an interposed sigaction
 * would see only part of the program's changes and could report a disposition that is not
 * the kernel's). The program's handler then sees every fault, ours included, exactly as
 * without heapledger; if it chains to the handler it replaced (as CPython's faulthandler
 * does: restore, then raise again), the re-raised signal comes to us with si_code SI_TKILL
 * and goes on to the disposition before ours. What stays visible: sigaction(SIGSEGV or SIGBUS,
 * NULL, &old) in a hardened process shows heapledger's handler instead of SIG_DFL
 * (docs/hardening.md).
 */
#include "fullguard.h"
#include "harden.h"
#include "stack.h" /* hl_stack_enter, hl_stack_unwind_mode */
#include "unwind_fast.h"
#include "unwind_load.h"

#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction old_segv, old_bus;
static int installed;
/* The interrupted context while this thread examines a fault (hl_fault_stack). */
static __thread void *fault_uc __attribute__((tls_model("initial-exec")));

size_t hl_fault_stack(uint64_t *ips, size_t max)
{
    if (!fault_uc || !max) return 0;
    int walked = 0;
#if defined(__x86_64__)
    /* heapledger's own walker from the interrupted context first: a hardened process that
     * never deferred a walk has not loaded libunwind, and a signal handler cannot load it. */
    if (hl_stack_unwind_mode() != HL_UNWIND_LIBUNWIND) {
        const greg_t *g = ((const ucontext_t *)fault_uc)->uc_mcontext.gregs;
        _Static_assert(sizeof(void *) == sizeof(uint64_t), "frames are pointers");
        int n = hl_uwf_walk_interrupted((void **)ips, (int)(max > 1024 ? 1024 : max),
                                        (uintptr_t)g[REG_RIP], (uintptr_t)g[REG_RSP],
                                        (uintptr_t)g[REG_RBP], &walked);
        if (n >= 0) return (size_t)n;
    }
#endif
    /* A frame the fast walk cannot step: libunwind through unwind_load.c (the shared libraries
     * do not link it), if some earlier walk loaded it; else what the fast walk reached. */
    const hl_unw_cursor_api_t *u = hl_unwind_cursor_api();
    if (!u) return (size_t)walked;
    unw_cursor_t cur;
    if (u->init_local2(&cur, fault_uc, UNW_INIT_SIGNAL_FRAME) != 0) return 0;
    size_t n = 0;
    do {
        unsigned long ip = 0;
        if (u->get_reg(&cur, UNW_REG_IP, &ip) != 0 || !ip) break;
        ips[n++] = ip;
    } while (n < max && u->step(&cur) > 0);
    return n;
}

static struct sigaction *old_of(int sig)
{
    return sig == SIGSEGV ? &old_segv : &old_bus;
}

/* Default action for sig: SIG_DFL, then the signal again (a sent one re-raised with its
 * siginfo; a fault re-executes when the handler returns). */
static void deliver_default(int sig, siginfo_t *si)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0) {
        /* Sent: deliver it again to this thread, unblocked on return from the handler. */
        siginfo_t again = *si;
        syscall(SYS_rt_tgsigqueueinfo, getpid(), hl_os_tid(), sig, &again);
    }
}

/* Run the disposition that was in place before ours. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction *old = old_of(sig);
    if (old->sa_handler == SIG_IGN && si->si_code <= 0)
        return; /* a sent signal the program ignores */
    if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
        deliver_default(sig, si);
        return;
    }
    struct sigaction h = *old;
    if (h.sa_flags & SA_RESETHAND) { /* once: the kernel would have reset it on delivery */
        old->sa_handler = SIG_DFL;
        old->sa_flags &= ~(unsigned)SA_SIGINFO;
    }
    sigset_t mask = h.sa_mask, prev;
    if (!(h.sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, &prev);
    if (h.sa_flags & SA_SIGINFO)
        h.sa_sigaction(sig, si, uc);
    else
        h.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
}

static void on_fault(int sig, siginfo_t *si, void *uc_arg)
{
    int saved = errno;
    /* Captures in the handler walk from its own frame, through the signal frame: the fault
     * may have interrupted an allocator call whose entry frame is noted (stack.h). */
    uintptr_t entry = hl_stack_enter(NULL);
    if (si->si_code > 0) { /* raised by the kernel for an access: perhaps one of ours */
        int is_write = 0;
        uintptr_t ip = 0;
#if defined(__x86_64__)
        ucontext_t *uc = uc_arg;
        is_write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
        ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#endif
        fault_uc = uc_arg;
        if (hl_fullguard_on_fault(si->si_addr, is_write)) return; /* not reached: it aborts */
        if (hl_harden_on_fault(si->si_addr, is_write)) return;    /* idem */
        fault_uc = NULL; /* a wild pointer in free: the stack from the handler names it */
        if (sig == SIGSEGV && ip && hl_harden_on_wild_fault(si->si_addr, ip)) return; /* idem */
    }
    hl_stack_leave(entry);
    chain(sig, si, uc_arg);
    errno = saved;
}

void hl_fault_install(void)
{
    if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL)) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    /* SA_ONSTACK: a program's alternate signal stack serves a stack overflow as before.
     * SA_NODEFER: a fault inside a chained handler reaches it again, as it would. */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
}
