/* tracer/record_ns.h — the private mount namespace of a root `heapledger record`.
 *
 * hl_record_isolate() (root only) moves the calling process into a new mount namespace whose
 * mounts receive the machine's mount events but never send any back (MS_SLAVE), and mounts a
 * fresh tmpfs on /var/run/lttng there. Everything record starts afterwards (the private
 * session daemon of sessiond.h, the traced program and all its descendants) sees only that
 * tmpfs: the only LTTng "global" daemon they can reach is the private one. The machine's
 * /var/run/lttng (and its shared daemon) is untouched; the tmpfs disappears with the last
 * process of the namespace, so nothing of it can be left behind.
 *
 * The namespace is also how the reaper (record_reaper.h) finds every process of the
 * recording: the processes whose /proc/PID/ns/mnt is this namespace.
 */
#ifndef HL_RECORD_NS_H
#define HL_RECORD_NS_H

#include <stddef.h>
#include <sys/types.h>

#define HL_RECORD_RUNDIR "/var/run/lttng"

/* Returns 1 when the caller is now isolated, 0 when it is not root (nothing done), or -1
 * with a message saying what failed and what to do. */
int hl_record_isolate(char *err, size_t errlen);

/* Make the calling process's mount namespace a private copy with a fresh tmpfs on
 * /dev/shm (the private session daemon's child, before exec). Returns 0 or -1 (errno). */
int hl_record_private_shm(void);

/* Inode of a process's mount namespace (pid 0: the caller), 0 if unknown. */
unsigned long hl_record_mntns(pid_t pid);

#endif
