/* tracer/collectd_prefix.h — a finished session's database completed from the relay
 * daemon's on-disk copy of the trace (collectd --relay-dir; collectd_prefix.c). */
#ifndef HL_COLLECTD_PREFIX_H
#define HL_COLLECTD_PREFIX_H

#include <stddef.h>

/* The newest directory relay_dir/host/session-YYYYMMDD-HHMMSS into out. Returns 0, or -1
 * when there is none (or host/session are not plain names). */
int hl_prefix_find(const char *relay_dir, const char *host, const char *session, char *out,
                   size_t len);

/* Ingest that copy (heapledger collect, a child process) and replace db by the result when it
 * holds at least the events of db; run.host is set to host, meta completed_from, live_events
 * and session say what happened. lost: NULL when the session ended, else why the relay's
 * copy stops early (the database is then marked 'partial' with lost as its warning). *stop
 * (collectd's signal flag) ends the child. Returns 0 (db replaced) or -1 (db unchanged); msg
 * gets a log line either way. */
int hl_prefix_complete(const char *relay_dir, const char *host, const char *session, const char *db,
                       const char *lost, const volatile int *stop, char *msg, size_t len);

/* Was db left 'interrupted' by a collectd that stopped (so that a new collectd following the
 * same session may replace it rather than start HOST-SESSION-2.db)? */
int hl_prefix_resumable(const char *db);

/* Mark db 'interrupted' (the live reader failed while its session goes on), so that the next
 * follower of the session takes it over. 0 or -1. */
int hl_prefix_mark_interrupted(const char *db);

#endif
