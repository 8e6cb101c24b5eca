/* tracer/tp/probe.c — the probe provider of the "heapledger" tracepoints.
 *
 * Builds libheapledger-tp.so (linked with liblttng-ust) from the event definitions in
 * schemas/heapledger_tp.h. libheapledger.so holds only the call sites and finds these probes
 * at run time (dynamic linkage), so a program runs untraced, without liblttng-ust, unless
 * `heapledger record` (or the user) adds this library to LD_PRELOAD.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "heapledger_tp.h"
