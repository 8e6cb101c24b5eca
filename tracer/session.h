/* tracer/session.h — one LTTng recording session for `heapledger record`, via liblttng-ctl.
 *
 * Layout of what it sets up (user-space domain, per-UID buffers):
 *   session  <name>, output <dir> (local files; the UST trace lands in <dir>/ust/uid/…),
 *            or, with relay[] set, a live session streaming to that relay daemon URL
 *   channel  "heapledger": subbuf_count × subbuf_size per CPU, no context;
 *            events heapledger:alloc, free, realloc (vpid/vtid are in their payload)
 *   channel  "heapledger_meta": 4 × 1 MiB per CPU, contexts vpid, vtid; events the other
 *            heapledger:* (stack, os_map, os_unmap, error, config, thread),
 *            lttng_ust_statedump:*, lttng_ust_dl:*, lttng_ust_lib:* (module base addresses
 *            and build ids for offline symbolisation)
 *   both     discard mode (never overwrite), blocking timeout infinite unless lossy
 * Blocking mode also needs LTTNG_UST_ALLOW_BLOCKING=1 in the traced process (record.c).
 * Every function returns 0, or -1 with a one-line message in s->err.
 */
#ifndef HL_SESSION_H
#define HL_SESSION_H

#include <stdint.h>

#define HL_SESSION_CHANNEL      "heapledger"
#define HL_SESSION_META_CHANNEL "heapledger_meta"

/* How often hl_session_stop looks whether the consumer daemon still writes (ms). */
#define HL_STOP_POLL_MS 10

typedef struct hl_session_s {
    char name[64];         /* unique: heapledger-<pid>-<ns> */
    char dir[4096];        /* output directory */
    uint64_t subbuf_size;  /* bytes, power of two (default 8 MiB) */
    uint64_t subbuf_count; /* power of two (default 8) */
    int lossy;             /* 1: discard when buffers are full instead of blocking */
    char relay[512];       /* net://HOST[:CTRL[:DATA]]: live session to a relay daemon ("" =
                              local files in dir); set with hl_session_set_relay */
    int created;           /* the daemon knows the session (destroy needed) */
    void *rotation;        /* the rotation hl_session_rotate asked for, until it completed
                              (struct lttng_rotation_handle *) */
    unsigned stop_polls;   /* hl_session_stop: looks at a consumer still writing, HL_STOP_POLL_MS
                              apart */
    char err[512];
} hl_session_t;

/* Fill defaults and a unique name; dir must be set by the caller before create. */
void hl_session_init(hl_session_t *s, const char *dir, int lossy);
/* Stream to a relay daemon instead of dir, as session name (NULL: keep the unique one).
 * Returns 0, or -1 with a message (bad URL or name). */
int hl_session_set_relay(hl_session_t *s, const char *url, const char *name);

/* --relay: does the relay daemon still accept connections on its control port? (a TCP connect,
 * closed at once, within timeout_ms). 1 yes, 0 no, -1 when the URL's host does not resolve.
 * After the session's end, 0 means the daemon went away while the program ran: the consumer's
 * relay sockets fail without an error lttng-ctl reports. */
int hl_session_relay_reachable(const hl_session_t *s, int timeout_ms);
/* Create the session, channel, contexts and events. On error the partial session is
 * destroyed. */
int hl_session_create(hl_session_t *s);
int hl_session_start(hl_session_t *s);
/* Stop tracing and wait until all data is on disk (looked at every HL_STOP_POLL_MS); then read the
 * channel's discarded event and lost packet counts (bit 63 masked) into *discarded / *lost (either
 * may be NULL). */
int hl_session_stop(hl_session_t *s, uint64_t *discarded, uint64_t *lost);
/* Rotate the trace on size (local sessions only; call after create, before start): the
 * session daemon closes the current trace chunk each time about `bytes` were written since
 * the last rotation, into <dir>/archives/BEGIN-END-INDEX/ (a complete CTF trace of its own,
 * never written again), and the next chunk fills meanwhile. The last chunk is archived there
 * too when the session is destroyed. */
int hl_session_rotate_on_size(hl_session_t *s, uint64_t bytes);
/* Close the current trace chunk now (local sessions, once started): the session daemon
 * flushes every buffer, renames the chunk into <dir>/archives/BEGIN-END-INDEX/ once it is
 * complete (about 0.5 s later: its rotation check timer) and fills the next meanwhile.
 * Returns 0 when asked, 1 when the rotation asked for before is still in progress (nothing
 * asked), -1 with s->err. Not thread-safe with the other calls (liblttng-ctl is not): the
 * caller serialises them. */
int hl_session_rotate(hl_session_t *s);
/* Is the rotation asked for by hl_session_rotate still in progress? 1 yes, 0 no (completed,
 * failed or none asked; the handle is then released). */
int hl_session_rotating(hl_session_t *s);
/* Destroy the session (waits for the trace to be complete; first, up to 10 s, for a rotation of
 * hl_session_rotate's still in progress). Safe to call when not created. */
int hl_session_destroy(hl_session_t *s);

#endif
