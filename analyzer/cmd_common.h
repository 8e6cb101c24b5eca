/* analyzer/cmd_common.h — what the analyzer's commands (report, diff, history, replay) share
 * when they read their arguments: the message for an option they do not know ("did you
 * mean"), and the check that a --from/--to window lies inside the run. (Named cmd_ like the
 * entry points: it links with them, not into libhl_analyzer.a.)
 */
#ifndef HL_CMD_COMMON_H
#define HL_CMD_COMMON_H

#include <stdint.h>

#include "rundb.h"

/* Print "heapledger CMD: unknown option 'ARG' (did you mean '--X'?)", or "option ARG needs a
 * value" when ARG is one of known (a NULL-terminated list of the command's flags) given last
 * without its value. */
void hl_cli_bad_option(const char *cmd, const char *arg, const char *const *known);

/* Parse the value of --from or --to (hl_parse_time) into *out: 0, or -1 after a message. */
int hl_cli_time(const char *cmd, const char *flag, const char *val, int64_t *out);

/* A window [from_ns, to_ns] (relative to the run's start, -1 = open) must start within the
 * run and not end before it starts: 0, or -1 after a message that says how long the run
 * lasted ("heapledger report: --from 10s is past the end of the run: x.db lasts 0.150000 s"). */
int hl_cli_window(const char *cmd, const hl_run_t *run, int64_t from_ns, int64_t to_ns,
                  const char *from_arg);

/* hl_cli_window() on the run of an open database, read before any analysis (so that a bad
 * window costs no pass over the events). 0 also when the run cannot be read: the analysis
 * then says why. */
int hl_cli_window_db(const char *cmd, sqlite3 *db, const char *path, int64_t pid, int64_t from_ns,
                     int64_t to_ns, const char *from_arg);

#endif
