/* analyzer/symbols.h — symbolised call stacks from the stack/frame tables.
 *
 * A frame prints as "function+0xoff (file:line)" when the recorder resolved it, else
 * "module+0xip" or the bare address. Depth 0 is the innermost frame.
 */
#ifndef HL_SYMBOLS_H
#define HL_SYMBOLS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hl_frames_s {
    char **frame; /* n strings, innermost first */
    char **func;  /* function name alone ("0x…" when unresolved), for flame graphs */
    size_t n;
} hl_frames_t;

/* Load the frames of a stack (-1 or unknown id: n = 0). Returns 0 or -1 on a query error. */
int hl_frames_load(sqlite3 *db, int64_t stack, hl_frames_t *out);
void hl_frames_free(hl_frames_t *f);
/* The first frame outside the allocator (skips heapledger's own malloc/free entry points),
 * or NULL. */
const char *hl_frames_site(const hl_frames_t *f);

#endif
