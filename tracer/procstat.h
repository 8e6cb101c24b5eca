/* tracer/procstat.h — what /proc/PID/stat says of a process (record's daemons and reaper). */
#ifndef HL_PROCSTAT_H
#define HL_PROCSTAT_H

#include <stddef.h>
#include <sys/types.h>

/* Parent pid and state letter ('R', 'S', 'Z'…) of pid, and its command name into comm
 * (len bytes; comm may be NULL). 0 on success, -1 when the process is gone or the file
 * cannot be read. The name is taken between the first '(' and the last ')', so a name holding
 * parentheses or spaces is read whole. */
int hl_proc_stat(pid_t pid, pid_t *ppid, char *state, char *comm, size_t len);

#endif
