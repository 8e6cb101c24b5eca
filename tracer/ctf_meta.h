/* tracer/ctf_meta.h — heapledger's own reader of CTF 1.8 metadata (TSDL), the part of it
 * LTTng-UST writes: enough to decode the per-CPU stream files of a UST trace without
 * babeltrace2 (tracer/ctf_tsdl.c parses the TSDL text, tracer/ctf_stream.c decodes,
 * tracer/ctf_source.c turns events into records).
 *
 * hl_ctf_meta_parse() reads the `metadata` file of a CTF directory (packetized or plain
 * text) into a trace model: trace uuid and packet header, one clock, stream classes
 * (packet context, event header, event context) and event classes (id, name, context,
 * payload). Every field of every scope is instantiated as a tree of hl_ctf_node_t whose
 * decoded values land in a flat array of hl_ctf_val_t, one slot per node, so that the
 * converter finds a field by its slot, fixed once per event class.
 *
 * What it understands: typealias/typedef, integer (little-endian, 1..64 bits, any bit
 * alignment, mapped to the clock or not), enum over an integer, string, struct (with
 * align()), variant selected by an enum tag of the same struct, static arrays and
 * sequences of byte-aligned 8/16/32/64-bit integers (text arrays are strings),
 * floating_point (skipped), env and callsite blocks (skipped). Anything else (big-endian
 * data, arrays of compound types, tags or lengths outside their struct, a second clock, an
 * unknown block) makes the parse fail with a message: the caller then decodes the trace
 * with babeltrace2 instead.
 */
#ifndef HL_CTF_META_H
#define HL_CTF_META_H

#include <stddef.h>
#include <stdint.h>

typedef enum hl_ctf_kind_e {
    HL_CTF_INT = 1,
    HL_CTF_STRING,
    HL_CTF_STRUCT,
    HL_CTF_VARIANT,
    HL_CTF_ARRAY, /* static: len fixed */
    HL_CTF_SEQ,   /* length from an earlier integer slot */
    HL_CTF_FLOAT,
} hl_ctf_kind_t;

typedef struct hl_ctf_range_s {
    int64_t lo, hi; /* signed view; unsigned tags compare as uint64 when both >= 0 */
    uint32_t child; /* variant option index */
} hl_ctf_range_t;

/* One field instance of a scope. */
typedef struct hl_ctf_node_s {
    uint8_t kind;      /* hl_ctf_kind_t */
    uint8_t is_signed; /* INT; for ARRAY/SEQ: of the elements */
    uint8_t clock;     /* INT mapped to the trace clock */
    uint8_t text;      /* ARRAY/SEQ of 8-bit elements with an encoding: a string */
    uint16_t size;     /* INT/FLOAT: bits; ARRAY/SEQ: element bytes (1, 2, 4 or 8) */
    uint16_t align;    /* bits (1 .. 64) */
    uint32_t slot;     /* index of its value in the scope's value array */
    uint32_t ref;      /* SEQ: slot of the length; VARIANT: slot of the tag */
    uint64_t len;      /* ARRAY: element count */
    const char *name;  /* member name as written (NULL for the root) */
    uint32_t nchild;   /* STRUCT members, VARIANT options */
    struct hl_ctf_node_s *child;
    uint32_t nrange; /* VARIANT: tag ranges → option */
    hl_ctf_range_t *range;
} hl_ctf_node_t;

/* A decoded value. INT: u (sign-extended when signed). STRING: p, n bytes (no NUL needed).
 * ARRAY/SEQ of integers: p, n elements of esize bytes (little-endian). */
typedef struct hl_ctf_val_s {
    uint64_t u;
    const uint8_t *p;
    uint32_t n;
    uint8_t kind, esize, is_signed;
    uint32_t gen; /* the decoder's event generation when it was last decoded */
} hl_ctf_val_t;

/* A scope: a root node (a struct, or NULL when the scope is absent), its slot count, its
 * decoding plan (ctf_plan.h; NULL when the plan cannot express it: the tree is walked) and
 * its position in hl_ctf_meta_t.scopes (a stream keeps one value array per scope). */
typedef struct hl_ctf_scope_s {
    hl_ctf_node_t *root;
    uint32_t nslots;
    uint32_t index;
    const struct hl_ctf_plan_s *plan;
} hl_ctf_scope_t;

typedef struct hl_ctf_event_class_s {
    uint32_t index; /* position in hl_ctf_meta_t.events */
    uint64_t id;
    uint64_t stream_id;
    char *name;
    hl_ctf_scope_t context, payload;
} hl_ctf_event_class_t;

typedef struct hl_ctf_stream_class_s {
    uint64_t id;
    hl_ctf_scope_t packet_context, event_header, event_context;
    /* slots of the packet context's known members, UINT32_MAX when absent */
    uint32_t pc_content_size, pc_packet_size, pc_ts_begin, pc_ts_end, pc_discarded;
    /* event header: slots named "id" (event class id) in decoding order */
    uint32_t nid;
    uint32_t id_slot[4];
    const struct hl_ctf_hdr_s *hdr; /* the header's LTTng shape (ctf_plan.h), NULL: another */
    hl_ctf_event_class_t **events;  /* by id, NULL where none: ids < nevents */
    uint64_t nevents;
} hl_ctf_stream_class_t;

typedef struct hl_ctf_meta_s {
    uint8_t uuid[16];
    int has_uuid;
    hl_ctf_scope_t packet_header;
    uint32_t ph_magic, ph_uuid, ph_stream_id, ph_instance_id; /* slots, UINT32_MAX absent */
    uint64_t clock_freq;                                      /* Hz (1e9 when no clock) */
    int64_t clock_offset_s, clock_offset;                     /* from the clock block */
    /* hl_ctf_ns_from_origin's shortcut: with a 1 GHz clock whose origin fits in an int64,
     * ns = ns_base + value for every value <= ns_max (ns_fast set). */
    int ns_fast;
    int64_t ns_base;
    uint64_t ns_max;
    hl_ctf_stream_class_t **streams;
    size_t nstreams;
    hl_ctf_event_class_t **events; /* all, in declaration order */
    size_t nevents;
    hl_ctf_scope_t **scopes; /* every scope of the model, by index */
    size_t nscopes;
    void *arena; /* every allocation of the model */
} hl_ctf_meta_t;

#define HL_CTF_NOSLOT UINT32_MAX

/* Parse the metadata file of a CTF directory. NULL with a message when it cannot be read
 * or uses something this reader does not understand. */
hl_ctf_meta_t *hl_ctf_meta_load(const char *dir, char *err, size_t errlen);
/* Parse metadata text (already without packet headers). */
hl_ctf_meta_t *hl_ctf_meta_parse(const char *text, size_t len, char *err, size_t errlen);
/* The TSDL text of a metadata file's bytes: packetized metadata is unpacked; plain text is
 * copied. Malloc'ed, NUL-terminated (length in *len); NULL with a message. */
char *hl_ctf_meta_text(const uint8_t *buf, size_t n, size_t *len, char *err, size_t errlen);
void hl_ctf_meta_free(hl_ctf_meta_t *m);

const hl_ctf_stream_class_t *hl_ctf_meta_stream(const hl_ctf_meta_t *m, uint64_t id);
/* The direct member of a struct node named name (a leading '_' of the TSDL name is ignored,
 * as babeltrace2 does); NULL when absent. */
const hl_ctf_node_t *hl_ctf_member(const hl_ctf_node_t *st, const char *name);
/* ns from the clock's origin of a raw clock value into *ns; -1 when it does not fit in an
 * int64 (babeltrace2 refuses such a clock snapshot too). */
int hl_ctf_ns_from_origin(const hl_ctf_meta_t *m, uint64_t value, int64_t *ns);

/* The same, inline: one addition on a 1 GHz clock. */
static inline int hl_ctf_ns_of(const hl_ctf_meta_t *m, uint64_t value, int64_t *ns)
{
    if (m->ns_fast && value <= m->ns_max) {
        *ns = (int64_t)((uint64_t)m->ns_base + value);
        return 0;
    }
    return hl_ctf_ns_from_origin(m, value, ns);
}

#endif
