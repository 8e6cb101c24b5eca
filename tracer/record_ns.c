/* tracer/record_ns.c — private mount namespace of a root recording (record_ns.h). */
#include "record_ns.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int hl_record_isolate(char *err, size_t errlen)
{
    if (geteuid() != 0) return 0;
    const char *step = "unshare(CLONE_NEWNS)";
    if (unshare(CLONE_NEWNS)) goto fail;
    /* Receive the machine's mounts, never propagate ours (the tmpfs below) back. */
    step = "making / a slave mount";
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) goto fail;
    /* The mount point: the machine's own lttng run directory (created as lttng-sessiond
     * itself would when no daemon ever ran here). */
    step = "creating " HL_RECORD_RUNDIR;
    if (mkdir(HL_RECORD_RUNDIR, 0755) && errno != EEXIST) goto fail;
    step = "mounting a tmpfs on " HL_RECORD_RUNDIR;
    if (mount("heapledger-lttng", HL_RECORD_RUNDIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "mode=0755,size=64m"))
        goto fail;
    return 1;
fail:
    snprintf(err, errlen,
             "cannot isolate the recording (%s: %s); as root, heapledger record needs "
             "CAP_SYS_ADMIN for a private mount namespace, or run it as a normal user",
             step, strerror(errno));
    return -1;
}

int hl_record_private_shm(void)
{
    if (unshare(CLONE_NEWNS)) return -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)) return -1;
    return mount("heapledger-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
}

unsigned long hl_record_mntns(pid_t pid)
{
    char path[64];
    struct stat st;
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/ns/mnt");
    return stat(path, &st) == 0 ? (unsigned long)st.st_ino : 0;
}
