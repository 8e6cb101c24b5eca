/* tracer/ctf_stream.h — one CTF data stream file (one channel, one CPU) decoded event by
 * event with the model of tracer/ctf_meta.h, without babeltrace2.
 *
 * hl_ctf_stream_open() checks every packet's header and context first (magic, trace uuid,
 * stream class and instance, packet and content sizes against the file), reading only
 * those few bytes of each packet: a file that fails is refused before any event is
 * decoded. hl_ctf_stream_next() then reads one packet at a time into a buffer (bounded by
 * the largest packet, not by the file) and decodes the next event: its class, its clock
 * value (compact timestamps extended across wrap-arounds from the previous value, as CTF
 * specifies; the packet's timestamp_begin starts each packet), the stream event context
 * and the payload. Discarded events are counted as babeltrace2 counts them: the increase
 * of a packet's events_discarded over the previous packet of the same stream file (the
 * first packet's value is not counted). A stream's times must not go backwards (a packet's
 * begin, its events, its end, the next packet's begin), nor leave the int64 range in ns from
 * the clock's origin: babeltrace2's muxer stops there, so this reader stops too.
 */
#ifndef HL_CTF_STREAM_H
#define HL_CTF_STREAM_H

#include "ctf_meta.h"

typedef struct hl_ctf_stream_s {
    const hl_ctf_meta_t *m;
    const hl_ctf_stream_class_t *sc;
    char *path;
    int fd;
    uint64_t fsize;
    uint64_t next_off;    /* file offset of the next packet */
    uint64_t instance_id; /* stream_instance_id of the packet header (0 when absent) */
    int has_instance;
    uint8_t *buf; /* the current packet */
    size_t cap;
    uint64_t pos, end;       /* bit position in buf, content end in bits */
    uint64_t clock;          /* clock value (raw) */
    uint64_t prev_discarded; /* events_discarded of the previous packet */
    int have_prev;
    uint64_t discarded; /* discarded events counted so far (the caller takes them) */
    uint64_t packets;   /* packets in the file (from the check at open) */
    uint32_t gen;       /* event generation: values decoded for the current event */
    uint64_t last_ts;   /* the stream's last time (packet begin, event, packet end) */
    int have_last;
    int has_end; /* the current packet's timestamp_end */
    uint64_t pkt_end;
    hl_ctf_val_t **vals; /* one value array per scope of the model (by scope index) */
    hl_ctf_val_t *ph, *pc, *eh, *sctx, *ectx, *pl; /* the current ones, from vals */
    /* the current event (after hl_ctf_stream_next returned 1) */
    const hl_ctf_event_class_t *ec;
    uint64_t ts;
    int64_t ns; /* ts in ns from the clock's origin (the merge key) */
    char err[300];
} hl_ctf_stream_t;

/* Open and check a stream file. NULL with a message (path, packet and what is wrong). A
 * file of 0 bytes is a stream without packets. */
hl_ctf_stream_t *hl_ctf_stream_open(const hl_ctf_meta_t *m, const char *path, char *err,
                                    size_t errlen);
/* The next event: 1 (s->ec, s->ts, s->sctx, s->pl valid until the next call), 0 at the end,
 * -1 when the data cannot be decoded (s->err says where). */
int hl_ctf_stream_next(hl_ctf_stream_t *s);
void hl_ctf_stream_close(hl_ctf_stream_t *s);

#endif
