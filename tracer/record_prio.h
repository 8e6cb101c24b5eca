/* tracer/record_prio.h — the program ahead of the store while it runs.
 *
 * On two cores the traced program, LTTng's consumer daemon and record's store (the store
 * thread, the SQLite thread, the checkpoint thread, the pipe readers and the decoder
 * processes) share the machine. At equal priority the scheduler gives the program a fair
 * share of it against four or five runnable store threads, so the program ran for 5 s of wall
 * time on 2.9 s of CPU (docs/PERFORMANCE.md). The store can catch up once the program has
 * ended; the program cannot get its lost time back. So while the program runs, every thread
 * of record's but the main thread runs at a lower priority (nice HL_PRIO_STORE_NICE;
 * HEAPLEDGER_STORE_NICE=N sets it, 0 turns it off), and the threads and processes they start
 * inherit it; once the program has ended record sets them back to its own nice value (which a
 * user without CAP_SYS_NICE cannot: they stay lower, which on an idle machine changes
 * nothing). The throttle (record_rotate.h) still bounds the backlog the store falls behind by.
 */
#ifndef HL_RECORD_PRIO_H
#define HL_RECORD_PRIO_H

#define HL_PRIO_STORE_NICE 10

typedef struct hl_prio_s {
    int base;                /* record's nice value before */
    int store;               /* the store's nice while the program runs (0: off) */
    unsigned low;            /* threads set lower */
    unsigned restored, kept; /* threads and processes set back, left lower (no permission) */
} hl_prio_t;

/* The nice value the store gets while the program runs: HEAPLEDGER_STORE_NICE (0..19),
 * else HL_PRIO_STORE_NICE. */
int hl_prio_store_nice(void);

/* Lowers every thread of record's but the calling one by p->store (set by the caller, 0:
 * nothing). Returns the threads lowered. */
unsigned hl_prio_lower(hl_prio_t *p);

/* Sets every thread of record's, and every child process of theirs, that runs lower than
 * p->base back to p->base. */
void hl_prio_restore(hl_prio_t *p);

#endif
