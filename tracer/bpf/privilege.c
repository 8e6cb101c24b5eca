/* tracer/bpf/privilege.c — privilege and platform checks for the BPF part, with messages
 * that say what is missing rather than "Operation not permitted". */
#include "privilege.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT   38
#define CAP_BPF_BIT       39

static char last_libbpf_msg[256];

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    static int debug = -1;
    if (debug < 0) debug = getenv("HEAPLEDGER_BPF_DEBUG") != NULL;
    if (debug) return vfprintf(stderr, fmt, ap);
    if (level == LIBBPF_WARN) {
        vsnprintf(last_libbpf_msg, sizeof last_libbpf_msg, fmt, ap);
        size_t n = strlen(last_libbpf_msg);
        while (n && last_libbpf_msg[n - 1] == '\n')
            last_libbpf_msg[--n] = '\0';
    }
    return 0;
}

void hl_bpf_setup_logging(void)
{
    libbpf_set_print(libbpf_log);
}

/* Effective capability mask from /proc/self/status, or 0 when unreadable. */
static unsigned long long effective_caps(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long caps = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1) break;
    fclose(f);
    return caps;
}

/* "none", "integrity", "confidentiality", or NULL when the LSM is absent. */
static const char *lockdown_mode(char *buf, size_t len)
{
    FILE *f = fopen("/sys/kernel/security/lockdown", "r");
    if (!f) return NULL;
    char line[128] = "";
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (!open || !close) return NULL;
    snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
    return buf;
}

int hl_bpf_check_privileges(char *err, size_t errlen)
{
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
        snprintf(err, errlen,
                 "the kernel has no BTF (/sys/kernel/btf/vmlinux missing: needs "
                 "CONFIG_DEBUG_INFO_BTF=y)");
        return -1;
    }
    unsigned long long caps = effective_caps();
    int admin = (caps >> CAP_SYS_ADMIN_BIT) & 1;
    int bpf = (caps >> CAP_BPF_BIT) & 1, perfmon = (caps >> CAP_PERFMON_BIT) & 1;
    if (!admin && !(bpf && perfmon)) {
        snprintf(err, errlen, "%s: missing %s (run as root, or grant CAP_BPF and CAP_PERFMON)",
                 geteuid() ? "not root" : "root without the needed capabilities",
                 !bpf && !perfmon ? "CAP_BPF and CAP_PERFMON"
                 : !bpf           ? "CAP_BPF"
                                  : "CAP_PERFMON");
        return -1;
    }
    char mode[32];
    const char *ld = lockdown_mode(mode, sizeof mode);
    if (ld && !strcmp(ld, "confidentiality")) {
        snprintf(err, errlen,
                 "the kernel is locked down (lockdown=confidentiality): BPF tracing is "
                 "forbidden");
        return -1;
    }
    return 0;
}

void hl_bpf_explain(int error, const char *what, char *err, size_t errlen)
{
    if (error < 0) error = -error;
    const char *hint = "";
    if (error == EPERM || error == EACCES) {
        char buf[256];
        if (hl_bpf_check_privileges(buf, sizeof buf) == 0)
            hint = " (privileges look sufficient: a security module or "
                   "kernel.unprivileged_bpf_disabled may forbid it)";
    }
    snprintf(err, errlen, "%s failed: %s%s%s%s", what, strerror(error), hint,
             last_libbpf_msg[0] ? "; libbpf: " : "", last_libbpf_msg);
}
