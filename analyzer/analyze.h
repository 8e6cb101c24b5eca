/* analyzer/analyze.h — one pass over a run database: stream → metrics → report, plus the
 * errors table.
 */
#ifndef HL_ANALYZE_H
#define HL_ANALYZE_H

#include <sqlite3.h>

#include "report.h"

typedef struct hl_supp_s hl_supp_t;

typedef struct hl_analyze_opts_s {
    int64_t pid;            /* 0 = all processes */
    int64_t from_ns, to_ns; /* window relative to the run's start, -1 = open */
    const hl_supp_t *supp;  /* leak suppressions (suppress.h); NULL: the built-in ones */
} hl_analyze_opts_t;

/* Analyse an open database (hl_an_open). NULL with a message on error. An empty run (no
 * allocation or free events) is an error with a message saying so. */
hl_report_t *hl_analyze(sqlite3 *db, const char *path, const hl_analyze_opts_t *o, char *err,
                        size_t errlen);

/* Parse a time for --from/--to: a number with an optional unit ns, us, ms, s (default s),
 * relative to the start of the run. -1 on a syntax error. */
int64_t hl_parse_time(const char *s);

#endif
