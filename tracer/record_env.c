/* tracer/record_env.c — library lookup and the traced program's environment (record_env.h). */
#include "record_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef HL_LIBDIR
#define HL_LIBDIR "/usr/local/lib"
#endif

static const char *const hl_lttng_preloads[] = {
    "liblttng-ust-fork.so.1", /* fork without exec: the child gets its own vpid and buffers */
    "liblttng-ust-dl.so.1",   /* dlopen/dlclose events with base addresses and build ids */
    "libunwind.so.8",         /* stack capture: loaded with the program, not dlopened through
                                 the wrapper above at the first capture (unwind_load.c) */
};

static int env_try_dir(hl_record_libs_t *libs, const char *dir)
{
    snprintf(libs->alloc, sizeof libs->alloc, "%s/libheapledger.so", dir);
    snprintf(libs->tp, sizeof libs->tp, "%s/libheapledger-tp.so", dir);
    return access(libs->alloc, R_OK) == 0 && access(libs->tp, R_OK) == 0;
}

int hl_record_find_libs(hl_record_libs_t *libs, char *err, size_t errlen)
{
    char exe_lib[PATH_MAX] = "";
    char self[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
            snprintf(exe_lib, sizeof exe_lib, "%s/../lib", self);
        }
    }
    const char *env = getenv("HEAPLEDGER_LIBDIR");
    const char *dirs[] = {env && *env ? env : NULL, exe_lib[0] ? exe_lib : NULL, HL_LIBDIR};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        if (!dirs[i]) continue;
        if (env_try_dir(libs, dirs[i])) {
            char real[PATH_MAX];
            if (realpath(libs->alloc, real)) snprintf(libs->alloc, sizeof libs->alloc, "%s", real);
            if (realpath(libs->tp, real)) snprintf(libs->tp, sizeof libs->tp, "%s", real);
            return 0;
        }
    }
    snprintf(err, errlen,
             "libheapledger.so and libheapledger-tp.so not found (searched %s%s%s%s%s; set "
             "HEAPLEDGER_LIBDIR or run `make` / `make install`)",
             env && *env ? env : "", env && *env ? ", " : "", exe_lib[0] ? exe_lib : "",
             exe_lib[0] ? ", " : "", HL_LIBDIR);
    return -1;
}

void hl_record_options(char *buf, size_t len, const char *options, int stacks)
{
    const char *o = options ? options : getenv("HEAPLEDGER_OPTIONS");
    if (!o) o = "";
    if (stacks >= 0)
        snprintf(buf, len, "%s%sstacks=%d", o, *o ? "," : "", stacks);
    else
        snprintf(buf, len, "%s", o);
}

int hl_record_setenv(const hl_record_libs_t *libs, const char *options, int stacks, int lossy,
                     const char *marker)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = (old ? strlen(old) : 0) + strlen(libs->alloc) + strlen(libs->tp) + 128;
    char *pre = malloc(len);
    if (!pre) return -1;
    int off = snprintf(pre, len, "%s%s%s:%s", old && *old ? old : "", old && *old ? ":" : "",
                       libs->alloc, libs->tp);
    for (size_t i = 0; i < sizeof hl_lttng_preloads / sizeof *hl_lttng_preloads; i++)
        off += snprintf(pre + off, len - (size_t)off, ":%s", hl_lttng_preloads[i]);
    char opts[4096];
    hl_record_options(opts, sizeof opts, options, stacks);
    char timeout[32];
    snprintf(timeout, sizeof timeout, "%d", HL_REGISTER_TIMEOUT_MS);
    int rc = setenv("LD_PRELOAD", pre, 1) | setenv("HEAPLEDGER_OPTIONS", opts, 1) |
             setenv("LTTNG_UST_REGISTER_TIMEOUT", timeout, 1);
    if (marker) rc |= putenv((char *)marker);
    if (lossy)
        unsetenv("LTTNG_UST_ALLOW_BLOCKING");
    else
        rc |= setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 1);
    free(pre);
    return rc ? -1 : 0;
}
