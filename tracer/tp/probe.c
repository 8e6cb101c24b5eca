/* tracer/tp/probe.c — the probe provider of the "heapledger" tracepoints.
 *
 * Builds libheapledger-tp.so (linked with liblttng-ust) from the event definitions in
 * schemas/heapledger_tp.h. libheapledger.so holds only the call sites and finds these probes
 * at run time (dynamic linkage), so a program runs untraced, without liblttng-ust, unless
 * `heapledger record` (or the user) adds this library to LD_PRELOAD.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "heapledger_tp.h"

/* libheapledger.so's malloc and free skip the tracing test on their fast paths until this
 * library is loaded: close that gate before the probes register (they register in a
 * constructor of default priority, after this one). Weak: the provider also loads without
 * the allocator. */
void hl_trace_gate_close(void) __attribute__((weak));

__attribute__((constructor(101))) static void heapledger_tp_gate(void)
{
    if (hl_trace_gate_close) hl_trace_gate_close();
}
