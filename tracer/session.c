/* tracer/session.c — LTTng session control through liblttng-ctl (see session.h). */
#include "session.h"

#include <lttng/lttng.h>
#include <netdb.h>
#include <poll.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 8 × 8 MiB per CPU: blocking mode was lossless with this here (DESIGN.md verified facts;
 * 4 × 64 KiB lost events as wrap-around even when blocking). */
#ifndef HL_SUBBUF_SIZE /* a build may set them (measurements) */
#define HL_SUBBUF_SIZE (8ull << 20)
#endif
#ifndef HL_SUBBUF_COUNT
#define HL_SUBBUF_COUNT 8ull
#endif
/* Per-UID buffers: one set per CPU for every traced process of the user (in record's own
 * session daemon: the processes of this recording), not one per process. Per-PID buffers run
 * the same instructions per event and smaller sub-buffers only add switches; neither took CPU
 * off the program (docs/PERFORMANCE.md, "The traced program's cost per event"), and per-PID
 * would map 8 × 8 MiB per CPU for every process a build or a shell script forks. */
#ifndef HL_BUFFER_TYPE /* a build may set it (measurements) */
#define HL_BUFFER_TYPE LTTNG_BUFFER_PER_UID
#endif
/* How long destroy waits for the consumer to finish writing the trace. */
#define HL_DESTROY_WAIT_MS 60000
/* How long destroy waits for a rotation of hl_session_rotate's to complete first (one takes
 * about 0.5 s: the session daemon's rotation check timer). */
#define HL_ROTATION_WAIT_MS 10000

/* Writers wait at most this long for buffer space, then the event is discarded (and
 * counted): a consumer daemon that died, or stalled for this long, never blocks the traced
 * program forever. Measured lossless in the 10 M-event blocking benchmark with a 100 ms timeout
 * (docs/record.md); 10 s leaves two orders of magnitude of margin. */
#ifndef HL_BLOCKING_TIMEOUT_US /* a build may set it (measurements) */
#define HL_BLOCKING_TIMEOUT_US 10000000
#endif
/* The trace metadata and the meta channel are flushed to disk this often, so that what
 * reached the disk stays decodable when a daemon dies mid-run (the big channel's 8 MiB
 * sub-buffers go to disk as they fill). */
#define HL_METADATA_SWITCH_US 200000
#define HL_META_SWITCH_US     1000000

/* Live sessions (--relay): how often the consumer sends what the buffers hold to the relay
 * daemon, i.e. the latency of collectd's view. */
#define HL_LIVE_TIMER_US 200000

/* The meta channel: rare events (stacks, mappings, errors, config, thread names, module
 * maps); blocking like the main one, smaller. */
#define HL_META_SUBBUF_SIZE  (1ull << 20)
#define HL_META_SUBBUF_COUNT 4ull

/* Events and the channel each goes to. The per-operation events carry vpid/vtid in their
 * payload (schemas/heapledger_tp.h), so their channel has no context; every other event is
 * on the meta channel, which has the vpid and vtid contexts. */
static const struct {
    const char *name;
    const char *channel;
} hl_session_events[] = {
    {"heapledger:alloc", HL_SESSION_CHANNEL},
    {"heapledger:free", HL_SESSION_CHANNEL},
    {"heapledger:realloc", HL_SESSION_CHANNEL},
    {"heapledger:stack", HL_SESSION_META_CHANNEL},
    {"heapledger:os_map", HL_SESSION_META_CHANNEL},
    {"heapledger:os_unmap", HL_SESSION_META_CHANNEL},
    {"heapledger:error", HL_SESSION_META_CHANNEL},
    {"heapledger:config", HL_SESSION_META_CHANNEL},
    {"heapledger:thread", HL_SESSION_META_CHANNEL},
    {"heapledger:leak_blocks", HL_SESSION_META_CHANNEL},
    {"heapledger:leak_scan", HL_SESSION_META_CHANNEL},
    {"lttng_ust_statedump:*", HL_SESSION_META_CHANNEL},
    {"lttng_ust_dl:*", HL_SESSION_META_CHANNEL},
    {"lttng_ust_lib:*", HL_SESSION_META_CHANNEL},
};

static const enum lttng_event_context_type hl_meta_contexts[] = {
    LTTNG_EVENT_CONTEXT_VPID,
    LTTNG_EVENT_CONTEXT_VTID,
};

static int fail(hl_session_t *s, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(s->err, sizeof s->err, "%s: %s", what, lttng_strerror(code));
    return -1;
}

void hl_session_init(hl_session_t *s, const char *dir, int lossy)
{
    memset(s, 0, sizeof *s);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(s->name, sizeof s->name, "heapledger-%d-%ld%09ld", (int)getpid(), (long)ts.tv_sec,
             ts.tv_nsec);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->subbuf_size = HL_SUBBUF_SIZE;
    s->subbuf_count = HL_SUBBUF_COUNT;
    s->lossy = lossy;
}

int hl_session_set_relay(hl_session_t *s, const char *url, const char *name)
{
    if (strncmp(url, "net://", 6) && strncmp(url, "net4://", 7) && strncmp(url, "net6://", 7)) {
        snprintf(s->err, sizeof s->err,
                 "--relay %s: expected net://HOST[:PORT] (the relay daemon's control port, "
                 "default 5342; net://HOST:CTRL:DATA gives both ports)",
                 url);
        return -1;
    }
    if (strlen(url) >= sizeof s->relay) {
        snprintf(s->err, sizeof s->err, "--relay: URL too long");
        return -1;
    }
    if (name) {
        size_t n = strlen(name);
        int ok = n > 0 && n < sizeof s->name && name[0] != '.' && name[0] != '-';
        for (const char *c = name; ok && *c; c++)
            ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '-' || *c == '.';
        if (!ok) {
            snprintf(s->err, sizeof s->err,
                     "-o %s: with --relay, -o names the session (letters, digits, '_', '-', "
                     "'.'; at most %zu characters, not starting with '.' or '-')",
                     name, sizeof s->name - 1);
            return -1;
        }
        snprintf(s->name, sizeof s->name, "%s", name);
    }
    snprintf(s->relay, sizeof s->relay, "%s", url);
    return 0;
}

/* Splits s->relay (net[46]://HOST[:CTRL[:DATA]][/PATH], HOST maybe in brackets) into the host
 * and the control port (default 5342). */
static int relay_host_port(const char *url, char *host, size_t hlen, char *port, size_t plen)
{
    const char *h = strstr(url, "://");
    if (!h) return -1;
    h += 3;
    const char *end;
    if (*h == '[') {
        end = strchr(++h, ']');
        if (!end) return -1;
    } else
        end = h + strcspn(h, ":/");
    if (end == h || (size_t)(end - h) >= hlen) return -1;
    snprintf(host, hlen, "%.*s", (int)(end - h), h);
    const char *p = end + (*end == ']');
    if (*p == ':') {
        size_t n = strspn(p + 1, "0123456789");
        if (!n || n >= plen) return -1;
        snprintf(port, plen, "%.*s", (int)n, p + 1);
    } else
        snprintf(port, plen, "5342");
    return 0;
}

int hl_session_relay_reachable(const hl_session_t *s, int timeout_ms)
{
    char host[256], port[16];
    if (!s->relay[0] || relay_host_port(s->relay, host, sizeof host, port, sizeof port)) return -1;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    hints.ai_family = !strncmp(s->relay, "net6://", 7)   ? AF_INET6
                      : !strncmp(s->relay, "net4://", 7) ? AF_INET
                                                         : AF_UNSPEC;
    if (getaddrinfo(host, port, &hints, &res) || !res) return -1;
    int reached = 0;
    for (struct addrinfo *a = res; a && !reached; a = a->ai_next) {
        int fd =
            socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            reached = 1;
        else if (errno == EINPROGRESS) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t len = sizeof err;
            if (poll(&pf, 1, timeout_ms) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
                reached = 1;
        }
        close(fd);
    }
    freeaddrinfo(res);
    return reached;
}

static void session_domain(struct lttng_domain *dom)
{
    memset(dom, 0, sizeof *dom);
    dom->type = LTTNG_DOMAIN_UST;
    dom->buf_type = HL_BUFFER_TYPE;
}

/* One channel: count × size per CPU, discard mode (never overwrite), blocking unless lossy. */
static int session_channel(hl_session_t *s, struct lttng_handle *h, struct lttng_domain *dom,
                           const char *name, uint64_t size, uint64_t count, unsigned switch_us)
{
    struct lttng_channel *ch = lttng_channel_create(dom);
    if (!ch) {
        snprintf(s->err, sizeof s->err, "cannot allocate an LTTng channel");
        return -1;
    }
    snprintf(ch->name, sizeof ch->name, "%s", name);
    ch->enabled = 1;
    ch->attr.overwrite = 0;
    ch->attr.subbuf_size = size;
    ch->attr.num_subbuf = count;
    ch->attr.output = LTTNG_EVENT_MMAP;
    ch->attr.switch_timer_interval = switch_us;
    int rc = lttng_channel_set_blocking_timeout(ch, s->lossy ? 0 : HL_BLOCKING_TIMEOUT_US);
    if (rc >= 0) rc = lttng_enable_channel(h, ch);
    lttng_channel_destroy(ch);
    if (rc < 0)
        return fail(s, rc, "cannot create the channel %s (%llu × %llu B per CPU)", name,
                    (unsigned long long)count, (unsigned long long)size);
    return 0;
}

/* Channels, contexts and events on a created session. */
static int session_setup(hl_session_t *s, struct lttng_handle *h, struct lttng_domain *dom)
{
    /* A channel named "metadata" sets the attributes of the trace's metadata channel; it
     * must come first. */
    if (session_channel(s, h, dom, "metadata", 1u << 20, 2, HL_METADATA_SWITCH_US) != 0 ||
        session_channel(s, h, dom, HL_SESSION_CHANNEL, s->subbuf_size, s->subbuf_count, 0) != 0 ||
        session_channel(s, h, dom, HL_SESSION_META_CHANNEL, HL_META_SUBBUF_SIZE,
                        HL_META_SUBBUF_COUNT, HL_META_SWITCH_US) != 0)
        return -1;
    int rc;
    for (size_t i = 0; i < sizeof hl_meta_contexts / sizeof *hl_meta_contexts; i++) {
        struct lttng_event_context ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.ctx = hl_meta_contexts[i];
        rc = lttng_add_context(h, &ctx, NULL, HL_SESSION_META_CHANNEL);
        if (rc < 0) return fail(s, rc, "cannot add context %d", (int)ctx.ctx);
    }
    for (size_t i = 0; i < sizeof hl_session_events / sizeof *hl_session_events; i++) {
        struct lttng_event ev;
        memset(&ev, 0, sizeof ev);
        ev.type = LTTNG_EVENT_TRACEPOINT;
        ev.loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
        snprintf(ev.name, sizeof ev.name, "%s", hl_session_events[i].name);
        rc =
            lttng_enable_event_with_exclusions(h, &ev, hl_session_events[i].channel, NULL, 0, NULL);
        if (rc < 0) return fail(s, rc, "cannot enable events %s", hl_session_events[i].name);
    }
    return 0;
}

int hl_session_create(hl_session_t *s)
{
    char url[4200];
    snprintf(url, sizeof url, "file://%s", s->dir);
    int rc = s->relay[0] ? lttng_create_session_live(s->name, s->relay, HL_LIVE_TIMER_US)
                         : lttng_create_session(s->name, url);
    if (rc < 0 && s->relay[0])
        return fail(s, rc,
                    "cannot create the live session %s streaming to %s (is an lttng-relayd "
                    "listening there? docs/collect.md)",
                    s->name, s->relay);
    if (rc < 0) return fail(s, rc, "cannot create LTTng session %s in %s", s->name, s->dir);
    s->created = 1;
    struct lttng_domain dom;
    session_domain(&dom);
    struct lttng_handle *h = lttng_create_handle(s->name, &dom);
    if (!h) {
        snprintf(s->err, sizeof s->err, "cannot get a handle on session %s", s->name);
        hl_session_destroy(s);
        return -1;
    }
    rc = session_setup(s, h, &dom);
    lttng_destroy_handle(h);
    if (rc < 0) {
        char keep[sizeof s->err];
        memcpy(keep, s->err, sizeof keep);
        hl_session_destroy(s);
        memcpy(s->err, keep, sizeof keep);
    }
    return rc;
}

int hl_session_rotate_on_size(hl_session_t *s, uint64_t bytes)
{
    struct lttng_rotation_schedule *rs = lttng_rotation_schedule_size_threshold_create();
    if (!rs) {
        snprintf(s->err, sizeof s->err, "cannot allocate an LTTng rotation schedule");
        return -1;
    }
    enum lttng_rotation_status st = lttng_rotation_schedule_size_threshold_set_threshold(rs, bytes);
    if (st == LTTNG_ROTATION_STATUS_OK) st = lttng_session_add_rotation_schedule(s->name, rs);
    lttng_rotation_schedule_destroy(rs);
    if (st != LTTNG_ROTATION_STATUS_OK) {
        snprintf(s->err, sizeof s->err,
                 "cannot make session %s rotate every %llu bytes (lttng rotation status %d)",
                 s->name, (unsigned long long)bytes, (int)st);
        return -1;
    }
    return 0;
}

int hl_session_rotating(hl_session_t *s)
{
    if (!s->rotation) return 0;
    enum lttng_rotation_state state = LTTNG_ROTATION_STATE_ERROR;
    if (lttng_rotation_handle_get_state(s->rotation, &state) == LTTNG_ROTATION_STATUS_OK &&
        state == LTTNG_ROTATION_STATE_ONGOING)
        return 1;
    lttng_rotation_handle_destroy(s->rotation);
    s->rotation = NULL;
    return 0;
}

int hl_session_rotate(hl_session_t *s)
{
    if (hl_session_rotating(s)) return 1;
    struct lttng_rotation_handle *h = NULL;
    int rc = lttng_rotate_session(s->name, NULL, &h);
    if (rc == -LTTNG_ERR_ROTATION_PENDING) return 1; /* one of LTTng's own */
    if (rc < 0) return fail(s, rc, "cannot rotate session %s", s->name);
    s->rotation = h;
    return 0;
}

int hl_session_start(hl_session_t *s)
{
    int rc = lttng_start_tracing(s->name);
    return rc < 0 ? fail(s, rc, "cannot start session %s", s->name) : 0;
}

/* Discarded events and lost packets of our channels, added (bit 63 masked: lttng may report the
 * counters with it set). */
static void session_counts(hl_session_t *s, uint64_t *discarded, uint64_t *lost)
{
    struct lttng_domain dom;
    session_domain(&dom);
    struct lttng_handle *h = lttng_create_handle(s->name, &dom);
    if (!h) return;
    struct lttng_channel *chans = NULL;
    int n = lttng_list_channels(h, &chans);
    for (int i = 0; i < n; i++) {
        if (strcmp(chans[i].name, HL_SESSION_CHANNEL) &&
            strcmp(chans[i].name, HL_SESSION_META_CHANNEL))
            continue;
        uint64_t v = 0;
        if (discarded && lttng_channel_get_discarded_event_count(&chans[i], &v) == 0)
            *discarded += v & ~(1ull << 63);
        v = 0;
        if (lost && lttng_channel_get_lost_packet_count(&chans[i], &v) == 0)
            *lost += v & ~(1ull << 63);
    }
    free(chans);
    lttng_destroy_handle(h);
}

int hl_session_stop(hl_session_t *s, uint64_t *discarded, uint64_t *lost)
{
    if (discarded) *discarded = 0;
    if (lost) *lost = 0;
    /* lttng_stop_tracing would look whether the consumer daemon still writes every 200 ms:
     * 0.2-0.4 s after every recording. The same stop, looked at every HL_STOP_POLL_MS. */
    int rc = lttng_stop_tracing_no_wait(s->name);
    if (rc < 0 && rc != -LTTNG_ERR_TRACE_ALREADY_STOPPED)
        return fail(s, rc, "cannot stop session %s", s->name);
    const struct timespec step = {0, HL_STOP_POLL_MS * 1000000L};
    s->stop_polls = 0;
    while ((rc = lttng_data_pending(s->name)) > 0) {
        s->stop_polls++;
        nanosleep(&step, NULL);
    }
    if (rc < 0) return fail(s, rc, "cannot stop session %s", s->name);
    session_counts(s, discarded, lost);
    return 0;
}

int hl_session_destroy(hl_session_t *s)
{
    /* A rotation asked for and still in progress ends first: the destroy's own rotation (the
     * last chunk into archives/) cannot start meanwhile. */
    const struct timespec step = {0, 50 * 1000 * 1000};
    for (int i = 0; i < HL_ROTATION_WAIT_MS / 50 && s->created && hl_session_rotating(s); i++)
        nanosleep(&step, NULL);
    if (s->rotation) lttng_rotation_handle_destroy(s->rotation);
    s->rotation = NULL;
    if (!s->created) return 0;
    struct lttng_destruction_handle *dh = NULL;
    enum lttng_error_code rc = lttng_destroy_session_ext(s->name, &dh);
    if (rc != LTTNG_OK) return fail(s, -(int)rc, "cannot destroy session %s", s->name);
    s->created = 0;
    enum lttng_destruction_handle_status st =
        lttng_destruction_handle_wait_for_completion(dh, HL_DESTROY_WAIT_MS);
    lttng_destruction_handle_destroy(dh);
    if (st != LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED) {
        snprintf(s->err, sizeof s->err, "session %s: the trace was not complete after %d s",
                 s->name, HL_DESTROY_WAIT_MS / 1000);
        return -1;
    }
    return 0;
}
