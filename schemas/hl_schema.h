/* heapledger shared enums: paths, tiers, operations and size classes.
 *
 * Included by liballoc, the tracer and the analyzer. The values are stored in traces and
 * run databases: they only ever grow (see paths.def, classes.def).
 */
#ifndef HL_SCHEMA_H
#define HL_SCHEMA_H

#include <stdint.h>

/* Operation kinds as stored in traces and databases. */
typedef enum hl_op_e {
    HL_OP_NONE = 0,
    HL_OP_ALLOC = 1,
    HL_OP_FREE = 2,
    HL_OP_REALLOC = 3,
} hl_op_t;

/* Tiers. In fixed-arena mode blocks above the tiny limit are all HL_TIER_MID. */
typedef enum hl_tier_e {
    HL_TIER_NONE = 0,
    HL_TIER_TINY = 1,
    HL_TIER_MID = 2,
    HL_TIER_LARGE = 3,
} hl_tier_t;

typedef enum hl_path_e {
    HL_PATH_NONE = 0,
#define HL_PATH(e, name, op) HL_PATH_##e,
#include "paths.def"
#undef HL_PATH
    HL_PATH_COUNT
} hl_path_t;

enum {
#define HL_CLASS(i, slot) HL_CLASS_SLOT_##i = (slot),
#include "classes.def"
#undef HL_CLASS
    HL_CLASS_COUNT = 0
#define HL_CLASS(i, slot) +1
#include "classes.def"
#undef HL_CLASS
};

/* Largest request served by the tiny tier (slot of the last class minus its header byte,
 * rounded down to what the tier promises). */
#define HL_TINY_MAX 4096

/* Name of a path ("tiny_cache_hit"), or "none". */
static inline const char *hl_path_name(unsigned p)
{
    static const char *const names[] = {
        "none",
#define HL_PATH(e, name, op) name,
#include "paths.def"
#undef HL_PATH
    };
    return p < HL_PATH_COUNT ? names[p] : "unknown";
}

/* Operation a path belongs to. */
static inline hl_op_t hl_path_op(unsigned p)
{
    static const unsigned char ops[] = {
        HL_OP_NONE,
#define HL_PATH(e, name, op) HL_OP_##op,
#include "paths.def"
#undef HL_PATH
    };
    return p < HL_PATH_COUNT ? (hl_op_t)ops[p] : HL_OP_NONE;
}

static inline const char *hl_tier_name(unsigned t)
{
    static const char *const names[] = {"none", "tiny", "mid", "large"};
    return t < 4 ? names[t] : "unknown";
}

static inline const char *hl_op_name(unsigned o)
{
    static const char *const names[] = {"none", "alloc", "free", "realloc"};
    return o < 4 ? names[o] : "unknown";
}

/* Slot size of tiny class c (0 if out of range). */
static inline uint32_t hl_class_slot(unsigned c)
{
    static const uint32_t slots[] = {
#define HL_CLASS(i, slot) slot,
#include "classes.def"
#undef HL_CLASS
    };
    return c < HL_CLASS_COUNT ? slots[c] : 0;
}

#endif
