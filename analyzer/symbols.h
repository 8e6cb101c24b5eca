/* analyzer/symbols.h — symbolised call stacks from the stack/frame tables.
 *
 * A frame prints as "function+0xoff (file:line)" when the recorder resolved it, else
 * "module+0xoff" (offset from the module's load base) or the bare address. Depth 0 is the
 * innermost frame. Every stored frame is a return address; the recorder looked up its
 * function and line at address - 1, the call instruction (docs/analyze.md, "Frames").
 */
#ifndef HL_SYMBOLS_H
#define HL_SYMBOLS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* One frame's parts, as stored in the frame table (NULL / -1 when unknown). */
typedef struct hl_frame_s {
    uint64_t ip;
    const char *function; /* owned by the hl_frames_t */
    int64_t offset;       /* from the function's start, else from the module's base; -1 */
    const char *file;
    int line; /* 0 without a file */
    const char *module;
} hl_frame_t;

typedef struct hl_frames_s {
    char **frame;    /* n strings, innermost first */
    char **func;     /* function name alone ("0x…" when unresolved), for flame graphs */
    hl_frame_t *loc; /* n frames' parts, innermost first */
    size_t n;
} hl_frames_t;

/* Load the frames of a stack (-1 or unknown id: n = 0). Returns 0 or -1 on a query error. */
int hl_frames_load(sqlite3 *db, int64_t stack, hl_frames_t *out);
void hl_frames_free(hl_frames_t *f);
/* 1 when fn is one of the allocator's entry points (malloc & co., C++'s operators new and
 * delete, heapledger's own hl_* functions): frames a site is never named after. */
int hl_frame_is_allocator(const char *fn);
/* The first frame outside the allocator (skips heapledger's own malloc/free entry points),
 * or NULL. */
const char *hl_frames_site(const hl_frames_t *f);

#endif
