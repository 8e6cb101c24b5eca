/* analyzer/cmd_common.c — see cmd_common.h. */
#include "cmd_common.h"

#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "safetext.h"
#include "suggest.h"

void hl_cli_bad_option(const char *cmd, const char *arg, const char *const *known)
{
    size_t n = 0;
    while (known[n])
        n++;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(arg, known[i])) {
            fprintf(stderr, "heapledger %s: option %s needs a value\n", cmd, arg);
            return;
        }
    const char *near = hl_suggest(arg, strlen(arg), known, n, sizeof *known);
    if (near)
        fprintf(stderr, "heapledger %s: unknown option '%s' (did you mean '%s'?)\n", cmd,
                hl_safe(arg), near);
    else
        fprintf(stderr, "heapledger %s: unknown option '%s' ('heapledger %s --help' lists them)\n",
                cmd, hl_safe(arg), cmd);
}

int hl_cli_time(const char *cmd, const char *flag, const char *val, int64_t *out)
{
    int64_t t = hl_parse_time(val);
    if (t < 0) {
        fprintf(stderr, "heapledger %s: bad time '%s' for %s (e.g. 1.5s, 200ms, 30us, 1000ns)\n",
                cmd, hl_safe(val), flag);
        return -1;
    }
    *out = t;
    return 0;
}

int hl_cli_window(const char *cmd, const hl_run_t *run, int64_t from_ns, int64_t to_ns,
                  const char *from_arg)
{
    int64_t len = run->end_ts - run->start_ts;
    if (from_ns >= 0 && to_ns >= 0 && to_ns < from_ns) {
        fprintf(stderr, "heapledger %s: --to is before --from\n", cmd);
        return -1;
    }
    if (from_ns > len) {
        fprintf(stderr,
                "heapledger %s: --from %s is past the end of the run: %s lasts %.9f s (windows "
                "are times since its start)\n",
                cmd, hl_safe(from_arg), hl_safe(run->path), (double)len / 1e9);
        return -1;
    }
    return 0;
}

int hl_cli_window_db(const char *cmd, sqlite3 *db, const char *path, int64_t pid, int64_t from_ns,
                     int64_t to_ns, const char *from_arg)
{
    if (from_ns <= 0 && to_ns < 0) return 0;
    hl_run_t run;
    char err[256];
    if (hl_run_load(db, path, pid, &run, err, sizeof err) < 0) return 0;
    int rc = hl_cli_window(cmd, &run, from_ns, to_ns, from_arg);
    hl_run_free(&run);
    return rc;
}
