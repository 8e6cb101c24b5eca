/* liballoc/suggest.h — "did you mean": the closest of a list of names to a mistyped one.
 *
 * Shared by the options parser (options.c, on the allocator's initialisation path: it neither
 * allocates nor calls stdio) and the CLI (subcommands and flags). Closeness is the optimal
 * string alignment distance (insertions, deletions, substitutions and transpositions of two
 * adjacent characters, each costing 1): "rotat" -> "rotate", "reprot" -> "report".
 */
#ifndef HL_SUGGEST_H
#define HL_SUGGEST_H

#include <stddef.h>

/* Names longer than this are never compared (the distance is then HL_SUGGEST_FAR). */
#define HL_SUGGEST_MAX 48
#define HL_SUGGEST_FAR ((size_t)-1)

/* Distance between a[0..alen) and b[0..blen). No allocation. */
size_t hl_edit_distance(const char *a, size_t alen, const char *b, size_t blen);

/* The name closest to word[0..len) among n names, or NULL when none is close enough (at most
 * 1 edit for words of up to 4 characters, 2 above, and fewer edits than the word has
 * characters). The names are the first member (a const char *) of n elements stride bytes
 * apart from base: an array of strings (stride sizeof(char *)) or of structs whose first
 * member is the name; a NULL name ends the list early. Ties go to the first. */
const char *hl_suggest(const char *word, size_t len, const void *base, size_t n, size_t stride);

#endif
