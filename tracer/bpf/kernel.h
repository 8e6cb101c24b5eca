/* tracer/bpf/kernel.h — the kernel's view of a traced process tree (libbpf).
 *
 * While a recording runs, BPF programs follow one process and every process it forks
 * (fork/clone/vfork children and their own children) and report, from the kernel:
 *   mmap munmap mremap brk madvise   entry arguments and result of each syscall
 *   page_fault                       every user-mode page fault (address, error code)
 *   rss                              resident-set samples (every 256 KiB of change)
 * A consumer thread drains the BPF ring buffer during the run into a spool file, so the
 * ring never has to hold a whole run; records the kernel could not reserve are counted,
 * never dropped silently. hl_kernel_store() writes them to the `kernel_event` table of a
 * run database (schemas/heapledger.sql); docs/kernel.md describes every column per kind.
 *
 * Clock: kernel_event.ts is bpf_ktime_get_ns(), i.e. CLOCK_MONOTONIC in nanoseconds, the
 * clock LTTng-UST stamps its events with by default (see docs/kernel.md).
 *
 * Protocol for `heapledger record --kernel`:
 *   1. fork(); the child waits (e.g. blocks reading a pipe) before it execs the program;
 *   2. the parent calls hl_kernel_start(child_pid, …): on NULL, print the message
 *      (it names what is missing: root/capabilities, lockdown, BTF) and record on without
 *      kernel events;
 *   3. the parent releases the child (closes/writes the pipe) and waits for it to exit;
 *   4. hl_kernel_stop(k): detaches the programs, drains the ring buffer, joins the thread;
 *   5. hl_kernel_store(k, db, …) once the database exists (any time after stop);
 *   6. hl_kernel_free(k).
 * Everything the followed tree does from step 3 on is seen; nothing from other processes.
 *
 * Threads: all functions are called from one thread (the recorder's); the consumer thread
 * is internal. Not async-signal-safe.
 */
#ifndef HL_KERNEL_H
#define HL_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hl_kernel_s hl_kernel_t;

/* Counters of one session, valid after hl_kernel_stop(). */
typedef struct hl_kernel_stats_s {
    uint64_t events;     /* records received from the kernel and spooled */
    uint64_t dropped;    /* records lost because the ring buffer was full (reservation failed) */
    uint64_t by_kind[8]; /* events per hl_kevent_kind_t (see events.h) */
} hl_kernel_stats_t;

/* Load and attach the programs, start following `pid` (a process id, i.e. a tgid) and its
 * future descendants, and start the consumer thread. Returns NULL and a one-line message in
 * err when this is not possible; the message says what is missing (not root and no
 * CAP_BPF+CAP_PERFMON, kernel lockdown, no BTF, BPF support not built, …). */
hl_kernel_t *hl_kernel_start(pid_t pid, char *err, size_t errlen);

/* Detach, drain the ring buffer completely and stop the consumer thread. Idempotent.
 * Returns 0, or -1 when the spool could not be written (events are then incomplete). */
int hl_kernel_stop(hl_kernel_t *k);

/* Counters (call after hl_kernel_stop for final values). */
void hl_kernel_stats(const hl_kernel_t *k, hl_kernel_stats_t *out);

/* Insert the spooled events into `kernel_event` of the run database at db_path, which must
 * already hold the schema (hl_db_create), in one transaction, with the kernel views
 * (schemas/kernel_views.sql) and meta kernel_events / kernel_dropped. Stops first if needed.
 * Returns the number of rows inserted, or -1 with a message in err. */
long hl_kernel_store(hl_kernel_t *k, const char *db_path, char *err, size_t errlen);

/* Release everything (stops first if needed). NULL is accepted. */
void hl_kernel_free(hl_kernel_t *k);

/* 1 when this build has BPF support (the build machine had BTF, clang and bpftool). */
int hl_kernel_available(void);

#endif
