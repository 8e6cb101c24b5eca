/* tracer/bpf/kernel_priv.h — what kernel.c shares with kernel_store.c (not for the recorder). */
#ifndef HL_KERNEL_PRIV_H
#define HL_KERNEL_PRIV_H

#include "kernel.h"

#include <stdio.h>

/* The spool: a sequence of struct hl_kevent records, complete after hl_kernel_stop(). */
FILE *hl_kernel_spool(hl_kernel_t *k);

/* kernel_event.kind for a hl_kevent_kind_t, "unknown" out of range. */
const char *hl_kevent_kind_name(unsigned kind);

#endif
