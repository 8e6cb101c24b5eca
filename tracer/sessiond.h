/* tracer/sessiond.h — making sure an lttng-sessiond serves us.
 *
 * liblttng-ctl talks to the root session daemon when run as root, else to the user's own
 * (under $LTTNG_HOME or $HOME). hl_sessiond_ensure() checks that daemon and, when none is
 * alive, starts one in the background (`lttng-sessiond --daemonize`) and waits until it
 * answers. The daemon is left running afterwards, like `lttng create` does.
 *
 * The binary is $HEAPLEDGER_LTTNG_SESSIOND if set (tests use it to simulate a missing or
 * broken daemon), else `lttng-sessiond` from PATH.
 */
#ifndef HL_SESSIOND_H
#define HL_SESSIOND_H

#include <stddef.h>

/* Returns 1 if a daemon was already alive, 2 if this call started one, or -1 with a
 * one-line message (no newline) in err[errlen] saying what failed and what to do. */
int hl_sessiond_ensure(char *err, size_t errlen);

#endif
