/* liballoc/unwind_load.h — libunwind, loaded when the first stack is captured.
 *
 * The shared libraries (libheapledger.so, libheapledger_core.so, libheapledger-notrace.so) do
 * not link libunwind: a program that never captures a stack never maps it (nor liblzma, which
 * it pulls in), which is most of a small program's fixed cost under heapledger. The first
 * capture dlopens libunwind.so.8 and looks up unw_backtrace. The static archives link it as
 * before (built with HL_UNWIND_LINKED: a static program has no dlopen), so their .pc files still
 * name libunwind in Requires.private.
 */
#ifndef HL_UNWIND_LOAD_H
#define HL_UNWIND_LOAD_H

/* unw_backtrace's signature: fills buf with up to n return addresses, returns the count. */
typedef int (*hl_unw_backtrace_fn)(void **buf, int n);

/* unw_backtrace, loading libunwind on the first call. NULL when it cannot be loaded (a message
 * says so once), or while another thread is loading it, or when called again from inside the
 * load on the same thread (dlopen allocates), or on a thread that has never allocated (it may
 * be in its teardown, and libunwind's first walk on a thread mallocs its dynamic TLS block:
 * unwind_load.c): the caller then captures no frames. The caller
 * calls the pointer itself, so that no frame of ours lies between it and the unwinder. */
hl_unw_backtrace_fn hl_unwind_backtrace_fn(void);

/* libunwind's cursor functions, for a walk from a signal context (fault.c: the stack at a
 * faulting access, where heapledger's own walker defers). Found with unw_backtrace; NULL until
 * libunwind is loaded — never loaded from here, since the caller is a signal handler (a
 * hardened process loads it at the first walk that defers to it, if any: fault.c then keeps
 * the frames its own walker found). */
typedef struct {
    int (*init_local2)(void *cursor, void *context, int flag);
    int (*get_reg)(void *cursor, int reg, unsigned long *val);
    int (*step)(void *cursor);
} hl_unw_cursor_api_t;
const hl_unw_cursor_api_t *hl_unwind_cursor_api(void);

#endif
