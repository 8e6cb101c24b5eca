/* tracer/procstat.c — /proc/PID/stat read once for a process (see procstat.h). */
#include "procstat.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hl_proc_stat(pid_t pid, pid_t *ppid, char *state, char *comm, size_t len)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r || r < l) return -1;
    if (comm) snprintf(comm, len, "%.*s", (int)(r - l - 1), l + 1);
    char st = 0;
    int pp = 0;
    if (sscanf(r + 2, "%c %d", &st, &pp) != 2) return -1;
    if (ppid) *ppid = pp;
    if (state) *state = st;
    return 0;
}
