/* tracer/record_env.h — what `heapledger record` puts in the traced program's environment.
 *
 *   LD_PRELOAD                  <existing>:libheapledger.so:libheapledger-tp.so:
 *                               liblttng-ust-fork.so.1:liblttng-ust-dl.so.1:libunwind.so.8
 *   HEAPLEDGER_OPTIONS          --options, with stacks=N appended for --stacks N
 *   LTTNG_UST_ALLOW_BLOCKING=1  unless --lossy (blocking channels need it in the process)
 *   LTTNG_UST_REGISTER_TIMEOUT  HL_REGISTER_TIMEOUT_MS: liblttng-ust's constructor waits this
 *                               long for the session daemon so the first events are kept
 *   HEAPLEDGER_RECORDING        RECORDPID.REAPERPID: marks the recording's processes for the
 *                               reaper (record_reaper.h)
 *   LTTNG_HOME                  the recording's private LTTng directory (sessiond.h), set in
 *                               record's own environment and inherited
 *
 * libheapledger.so and libheapledger-tp.so are looked up in $HEAPLEDGER_LIBDIR, then
 * <dir of the heapledger executable>/../lib (the build tree and `make install` layout),
 * then HL_LIBDIR (the install prefix's lib directory, set at build time).
 */
#ifndef HL_RECORD_ENV_H
#define HL_RECORD_ENV_H

#include <limits.h>
#include <stddef.h>

#define HL_REGISTER_TIMEOUT_MS 30000

typedef struct hl_record_libs_s {
    char alloc[PATH_MAX]; /* libheapledger.so */
    char tp[PATH_MAX];    /* libheapledger-tp.so */
} hl_record_libs_t;

/* Find both libraries. Returns 0, or -1 with a message naming the places searched. */
int hl_record_find_libs(hl_record_libs_t *libs, char *err, size_t errlen);

/* Set the environment of the traced program (call in the child, before exec).
 * options and marker (a NAME=VALUE string that must stay valid) may be NULL; stacks < 0 means "not
 * given". Returns 0, or -1 (errno) if the environment could not be set. */
int hl_record_setenv(const hl_record_libs_t *libs, const char *options, int stacks, int lossy,
                     const char *marker);

/* HEAPLEDGER_OPTIONS the program will see (for the run table), written into buf. */
void hl_record_options(char *buf, size_t len, const char *options, int stacks);

#endif
