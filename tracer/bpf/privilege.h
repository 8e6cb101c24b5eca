/* tracer/bpf/privilege.h — can this process load BPF programs? Which piece is missing? */
#ifndef HL_BPF_PRIVILEGE_H
#define HL_BPF_PRIVILEGE_H

#include <stddef.h>

/* Check, before loading anything, what BPF tracing needs: BTF of the running kernel,
 * CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set, and no lockdown in
 * "confidentiality" mode. Returns 0, or -1 with a one-line message naming what is missing. */
int hl_bpf_check_privileges(char *err, size_t errlen);

/* Explain a load/attach failure (negative errno from libbpf) in the same terms; `what` names
 * the step ("loading the kernel-event programs"). Always writes a message. */
void hl_bpf_explain(int error, const char *what, char *err, size_t errlen);

/* Route libbpf's own messages: silent unless HEAPLEDGER_BPF_DEBUG is set in the environment;
 * the last warning is kept and appended by hl_bpf_explain(). Call once before opening. */
void hl_bpf_setup_logging(void);

#endif
