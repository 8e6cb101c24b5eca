/* tracer/thread_cpu.h — the calling thread's CPU seconds (user + system), for --stats. */
#ifndef HL_THREAD_CPU_H
#define HL_THREAD_CPU_H

#include <time.h>

static inline double hl_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
