/* tracer/ctf_tsdl.h — the TSDL lexer and parser of heapledger's CTF metadata reader
 * (ctf_tsdl.c), and what it hands to the layout builder (ctf_meta.c); internal to the two.
 *
 * hl_tsdl_parse() reads the whole metadata text into shared type descriptions
 * (hl_tsdl_ty_t: typealiases and named structs are referenced, not copied) and the raw
 * trace, clock, stream and event blocks held in the context; ctf_meta.c then instantiates
 * every scope into its node tree (ctf_meta.h). Errors unwind with longjmp to the context's
 * jb (set by the caller) after hl_tsdl_fail() wrote the message; every allocation of both
 * stages lives in the context's arena, which the model keeps (hl_tsdl_arena_free).
 */
#ifndef HL_CTF_TSDL_H
#define HL_CTF_TSDL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "ctf_meta.h"

/* The arena: a list of blocks, each one allocation. */
typedef struct hl_tsdl_block_s {
    struct hl_tsdl_block_s *next;
    max_align_t data[];
} hl_tsdl_block_t;

typedef struct hl_tsdl_ctx_s hl_tsdl_ctx_t;

/* ---- types (shared between scopes) ------------------------------------------------ */

typedef struct hl_tsdl_ty_s hl_tsdl_ty_t;
typedef struct hl_tsdl_field_s {
    char *name;
    hl_tsdl_ty_t *t;
} hl_tsdl_field_t;
typedef struct hl_tsdl_map_s {
    char *label;
    int64_t lo, hi;
} hl_tsdl_map_t;

struct hl_tsdl_ty_s {
    int kind; /* hl_ctf_kind_t */
    unsigned size, align;
    int sgn, clock, text;
    size_t nmap; /* enum mappings (an INT with mappings is an enum) */
    hl_tsdl_map_t *map;
    size_t nf; /* STRUCT members / VARIANT options */
    hl_tsdl_field_t *f;
    char *tag;          /* VARIANT */
    hl_tsdl_ty_t *elem; /* ARRAY / SEQ */
    uint64_t len;
    char *lenref;
};

typedef struct hl_tsdl_named_s {
    char *name;
    hl_tsdl_ty_t *t;
} hl_tsdl_named_t;

struct hl_tsdl_ctx_s {
    const char *s;
    size_t n, pos;
    int tk;        /* the current token's kind (ctf_tsdl.c) */
    char tok[256]; /* identifier, string or punctuation text */
    uint64_t num;  /* a number token's value */
    jmp_buf jb;
    char *err;
    size_t errlen;
    hl_tsdl_block_t *arena;
    hl_tsdl_named_t *names; /* typealias / typedef / struct X / enum X / variant X */
    size_t nnames, capnames;
    hl_ctf_meta_t *m;
    /* raw blocks, instantiated at the end */
    hl_tsdl_ty_t *ph;
    struct {
        uint64_t id;
        int has_id;
        hl_tsdl_ty_t *pc, *eh, *ec;
    } st[64];
    size_t nst;
    struct hl_tsdl_event_s {
        char *name;
        uint64_t id, stream_id;
        int has_stream;
        hl_tsdl_ty_t *ctx, *fields;
    } * ev;
    size_t nev, capev;
    int nclock;
    char clock_name[64];
};

/* The message "metadata line N: …" into c->err, then longjmp(c->jb). */
void hl_tsdl_fail(hl_tsdl_ctx_t *c, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
/* n zeroed bytes from the arena (fails, never returns NULL). */
void *hl_tsdl_alloc(hl_tsdl_ctx_t *c, size_t n);
char *hl_tsdl_strdup(hl_tsdl_ctx_t *c, const char *s);
/* Free every block of an arena (c->arena, or hl_ctf_meta_t.arena). */
void hl_tsdl_arena_free(hl_tsdl_block_t *a);
/* The whole metadata text c->s (c->n bytes) into c's types and raw blocks; c->m receives the
 * trace uuid and the clock. The caller has set c->jb, c->err and c->clock_name. */
void hl_tsdl_parse(hl_tsdl_ctx_t *c);

#endif
