/* tracer/ctf_source.h — the decode side without babeltrace2: heapledger's own CTF reader
 * (ctf_meta.c, ctf_stream.c) over the CTF directories of a trace on disk, merged in
 * babeltrace2's order and turned into the same records as ingest_source.c.
 *
 * Order: events of all stream files by time from the clock's origin; at equal times by
 * trace uuid, stream class id and stream instance id (what babeltrace2's muxer compares),
 * within one stream file in file order. So `seq` numbers and the database match the
 * babeltrace2 path row by row.
 *
 * hl_ctf_source_open() refuses (NULL, with the reason) a trace it does not fully
 * understand: a metadata construct it does not know, a packet that fails its checks, two
 * stream files of the same stream, a layout-3 `words` member of another shape, two CTF
 * directories with the same trace uuid (the chunks of one rotated session: babeltrace2
 * breaks their ties by trace name, which this reader does not reproduce). The
 * decoder child (ingest_decoder.c) then uses babeltrace2 for the whole trace. When an
 * event cannot be decoded later (a lie inside a packet, time going backwards),
 * hl_ctf_source_run() returns 1 after delivering every event before it; the child hands
 * the rest of the trace to babeltrace2, which skips the events already delivered.
 * Runs in the decoder child (its records go down the pipe, ingest_queue.c pipe mode).
 */
#ifndef HL_CTF_SOURCE_H
#define HL_CTF_SOURCE_H

#include "ingest_internal.h"

typedef struct hl_ctf_source_s hl_ctf_source_t;

hl_ctf_source_t *hl_ctf_source_open(char *const *dirs, size_t n, hl_queue_t *q, char *err,
                                    size_t errlen);
/* 0 at the end (a last batch pushed), 1 stopped at an event it cannot decode (err says
 * which; the batches before it pushed, no last batch), -1 the queue was aborted. */
int hl_ctf_source_run(hl_ctf_source_t *s, char *err, size_t errlen);
/* Events delivered (= the seq of the next one). */
uint64_t hl_ctf_source_events(const hl_ctf_source_t *s);
void hl_ctf_source_close(hl_ctf_source_t *s);

#endif
