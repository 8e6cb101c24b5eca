/* analyzer/suppress.h — leak suppressions: blocks live at exit that are not the program's
 * leaks.
 *
 * Built in: the C runtime's blocks that are never freed by design (stdio buffers, thread
 * DTVs and static TLS, the loader's link maps and search paths, locale and iconv data, NSS
 * modules, time zone data). They match when the block's allocating frame (the first frame
 * outside the allocator) and the frames after it that are still inside the C runtime's
 * modules (libc, the loader, libstdc++, libgcc_s) include one of the built-in functions: a
 * leak of the program's own code called from the runtime (a constructor run by the loader)
 * stays a leak.
 *
 * User files (`report --suppressions FILE`, docs/analyze.md): one rule a line,
 *   leak:GLOB     a frame of the allocation stack whose function matches GLOB
 *   module:GLOB   a frame whose module path, or its base name, matches GLOB
 *   file:GLOB     a frame whose source file matches GLOB
 * GLOB as fnmatch(3) (*, ?, [...]); '#' starts a comment; blank lines are ignored.
 */
#ifndef HL_SUPPRESS_H
#define HL_SUPPRESS_H

#include <sqlite3.h>
#include <stddef.h>

#include "hmap.h"
#include "symbols.h"

typedef enum hl_supp_kind_e {
    HL_SUPP_NONE = 0,
    HL_SUPP_RUNTIME = 1, /* a built-in rule: the C runtime */
    HL_SUPP_USER = 2,    /* a rule of a --suppressions file */
} hl_supp_kind_t;

typedef struct hl_supp_s hl_supp_t;

/* How the reports name each kind's line: "C runtime", "--suppressions". */
extern const char *const hl_supp_labels[3];

/* The built-in rules alone. Aborts on out-of-memory. */
hl_supp_t *hl_supp_new(void);
void hl_supp_free(hl_supp_t *s);
/* Add the rules of a suppressions file. 0, or -1 with "FILE:LINE: what is wrong, what to
 * write" (or "cannot read FILE: reason") in err. */
int hl_supp_load(hl_supp_t *s, const char *path, char *err, size_t errlen);
/* Kind of the stack of frames fr (user rules first). */
hl_supp_kind_t hl_supp_match(const hl_supp_t *s, const hl_frames_t *fr);
/* Classify every stack of the frame table: out gets stack id + 1 → kind for each suppressed
 * stack (one scan of the table). 0, or -1 on a query error. */
int hl_supp_classify(const hl_supp_t *s, sqlite3 *db, hl_hmap_t *out);

#endif
