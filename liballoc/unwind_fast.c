/* liballoc/unwind_fast.c — heapledger's own x86-64 stack walker (unwind_fast.h).
 *
 * Why: under harden=1 gcc spent more than half its time capturing stacks with libunwind
 * (unw_backtrace: a DWARF step per frame on a miss of its per-thread trace cache, a
 * dl_iterate_phdr under a signal-mask guard per miss of its unwind-info cache). Almost every
 * frame of a compiled program needs only: CFA = rsp+N or rbp+N, the return address at CFA-8,
 * the caller's rbp at CFA-k or still in rbp. That rule is found once per return address and
 * kept; a walk is then one table lookup and two loads per frame.
 *
 * Same frames as libunwind. libunwind's unw_backtrace (its "trace" fast path) records, after
 * the return address of its own call, for each frame: the row of the frame's FDE at
 * return address - 1 gives the CFA (rsp- or rbp-based), the return address is read at CFA-8
 * and rbp at CFA+offset when saved; it stops at a frame whose return address or rbp is
 * undefined (the outermost frame: _start, a thread's start) and at a return address below
 * 0x4000. Any other frame (signal frames, expressions, no unwind info) makes it start over
 * with its slow DWARF walk. This walker does the same for the same frames and returns -1 for
 * every other one, so that its caller asks libunwind for the whole stack: on any stack it
 * either gives libunwind's answer or defers to libunwind. `unwind=check` (stack.c) walks
 * both and aborts at the first difference.
 *
 * Rules: found through the module's PT_GNU_EH_FRAME (.eh_frame_hdr's sorted table, binary
 * search), then the CIE's and the FDE's CFA programs are run up to the address. The search
 * runs inside dl_iterate_phdr's callback, under the loader's lock: a module cannot be
 * unloaded while its tables are read, and every read is checked to lie in one of the
 * module's loaded segments. dl_iterate_phdr also tells how many modules were ever unloaded
 * (dlpi_subs): when that changes, every cached rule is dropped (the generation in the key),
 * so a module loaded where another was cannot inherit its rules past the next miss.
 *
 * The rule cache: 2-way sets of 16-byte entries (key = return address | generation << 48;
 * the rule with 32 bits of a hash of the key beside it), mapped once with MAP_NORESERVE. Two
 * relaxed loads on a hit, no lock: a reader that meets an entry being rewritten (the key of
 * one write, the rule of another) finds the check wrong and treats it as a miss (a wrong rule
 * would take a collision of 32 bits of hash during that race, and its reads stay as safe as
 * any: see below).
 *
 * Safe reads: a walk reads stack words only inside an interval of this thread's address
 * space that it has checked to be mapped (mincore on the pages it did not know yet: a few
 * calls per thread, as its stack deepens and as walks reach its outer frames). A CFA outside
 * every mapped page means the rule or the stack is not what we think: -1 (libunwind decides).
 * Each frame address must also lie above the previous one and at most 1 MiB away. mincore
 * cannot tell a PROT_NONE page (a guard) from a readable one, so what is left is a stack
 * corrupted so that a frame address points at most 1 MiB above the previous one into a
 * guard page (e.g. above the top of a thread's stack, into the next thread's guard), or a
 * program that unmaps a stack this thread ran on (coroutines): the same exposure as
 * libunwind's own trace, which reads those words unchecked.
 *
 * Signal handlers: a handler that allocates walks through the kernel's signal frame, whose
 * return address (__restore_rt) has an 'S' FDE: -1, libunwind. fork: the child keeps the
 * parent's cache and its thread's interval (its stack is a copy). Threads in their TLS
 * teardown: the interval is initial-exec TLS of this module, nothing is allocated.
 */
#include "unwind_fast.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- rules ------------------------------------------------------------------------------ */

/* Packed rule (32 bits): kind (2), CFA from rbp (1), rbp saved (1), CFA offset in bytes (16),
 * rbp's offset below the CFA in bytes (12). Kind P_FAST is the rule of almost every frame,
 * whose step needs no check but the top of the checked pages: the CFA is rsp + N with N >= 8
 * (it grows, by less than 64 KiB: the step check holds by construction) and a saved rbp lies
 * inside the frame (CFA - rbp_off >= rsp), so every word the step reads lies in [rsp, CFA),
 * above pages already checked. P_STD (CFA from rbp, odd offsets) takes the checked step. A
 * fast rule is never 0 (its offset is not): 0 is "not cached". */
enum { P_FAST = 0, P_STD = 1, P_LAST = 2, P_FALLBACK = 3 };
#define R_KIND(r)    ((r)&3u)
#define R_CFA_RBP    (1u << 2)
#define R_RBP_SAVED  (1u << 3)
#define R_CFA_OFF(r) (((r) >> 4) & 0xffffu)
#define R_RBP_OFF(r) ((r) >> 20)

static uint32_t rule_pack(const hl_uwf_rule_t *r)
{
    if (r->kind == HL_UWF_LAST) return P_LAST;
    if (r->kind != HL_UWF_STD) return P_FALLBACK;
    int fast = !r->cfa_rbp && r->cfa_off >= 8 && (!r->rbp_saved || r->rbp_off <= r->cfa_off);
    return (fast ? P_FAST : P_STD) | (r->cfa_rbp ? R_CFA_RBP : 0) |
           (r->rbp_saved ? R_RBP_SAVED : 0) | ((uint32_t)r->cfa_off << 4) |
           ((uint32_t)r->rbp_off << 20);
}

static void rule_fallback(hl_uwf_rule_t *r, const char *why)
{
    memset(r, 0, sizeof *r);
    r->kind = HL_UWF_FALLBACK;
    r->why = why;
}

/* ---- reading the unwind tables ---------------------------------------------------------- */

/* The module being searched: its readable loaded segments. */
#define UWF_SEGS 16
typedef struct uwf_mod_s {
    uintptr_t lo[UWF_SEGS], hi[UWF_SEGS];
    int n;
} uwf_mod_t;

/* [p, p + len) lies in one readable segment. */
static int mod_has(const uwf_mod_t *m, uintptr_t p, size_t len)
{
    for (int i = 0; i < m->n; i++)
        if (p >= m->lo[i] && p <= m->hi[i] && len <= m->hi[i] - p) return 1;
    return 0;
}

/* A bounded reader over [p, end). */
typedef struct rd_s {
    const uint8_t *p, *end;
    int bad;
} rd_t;

static uint8_t rd_u8(rd_t *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

static uint64_t rd_fixed(rd_t *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, n); /* little-endian */
    r->p += n;
    return v;
}

static uint64_t rd_uleb(rd_t *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = rd_u8(r);
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80) || r->bad) return v;
    }
}

static int64_t rd_sleb(rd_t *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = rd_u8(r);
        if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while ((b & 0x80) && !r->bad);
    if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A pointer in DWARF exception-header encoding enc (pcrel and datarel applied; indirect not
 * followed: only personality pointers use it, and those are skipped). */
static uintptr_t rd_ptr(rd_t *r, uint8_t enc, uintptr_t datarel)
{
    uintptr_t at = (uintptr_t)r->p, v;
    if (enc == 0xff) return 0; /* DW_EH_PE_omit */
    switch (enc & 0x0f) {
    case 0x00:
        v = (uintptr_t)rd_fixed(r, 8);
        break; /* absptr */
    case 0x01:
        v = (uintptr_t)rd_uleb(r);
        break;
    case 0x02:
        v = (uintptr_t)rd_fixed(r, 2);
        break;
    case 0x03:
        v = (uintptr_t)rd_fixed(r, 4);
        break;
    case 0x04:
        v = (uintptr_t)rd_fixed(r, 8);
        break;
    case 0x09:
        v = (uintptr_t)rd_sleb(r);
        break;
    case 0x0a:
        v = (uintptr_t)(int64_t)(int16_t)rd_fixed(r, 2);
        break;
    case 0x0b:
        v = (uintptr_t)(int64_t)(int32_t)rd_fixed(r, 4);
        break;
    case 0x0c:
        v = (uintptr_t)rd_fixed(r, 8);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        v += at;
        break; /* pcrel */
    case 0x30:
        v += datarel;
        break; /* datarel (.eh_frame_hdr) */
    default:
        r->bad = 1;
        return 0;
    }
    return v;
}

/* The registers a rule needs, by DWARF number: rbp 6, rsp 7, the return address 16. */
enum { REG_RBP, REG_RSP, REG_RA, NREGS };
enum { LOC_SAME, LOC_UNDEF, LOC_OFFSET, LOC_OTHER };

typedef struct row_s {
    int cfa_reg;     /* DWARF register number; -1 = an expression */
    int64_t cfa_off; /* bytes */
    uint8_t loc[NREGS];
    int64_t off[NREGS]; /* LOC_OFFSET: saved at CFA + off */
} row_t;

#define UWF_STATE_DEPTH 8 /* remember_state nesting kept */

typedef struct cie_s {
    uint64_t caf;
    int64_t daf;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int aug_z, signal;
    const uint8_t *insns, *end;
} cie_t;

static int reg_slot(uint64_t reg, uint64_t ra_reg)
{
    if (reg == 6) return REG_RBP;
    if (reg == 7) return REG_RSP;
    if (reg == ra_reg) return REG_RA;
    return -1;
}

/* Run a CFA program until the row that covers pc (the CIE's: all of it). Returns NULL, or why
 * the row cannot be expressed (a sticky reason: the rule falls back). */
static const char *run_cfa(rd_t *r, const cie_t *c, uintptr_t loc, uintptr_t pc, row_t *row,
                           const row_t *initial)
{
    row_t stack[UWF_STATE_DEPTH];
    int depth = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = rd_u8(r);
        uint64_t reg, delta;
        int64_t off;
        int s;
        switch (op >> 6) {
        case 1: /* advance_loc */
            loc += (op & 0x3f) * c->caf;
            if (loc > pc) return NULL;
            continue;
        case 2: /* offset */
            off = (int64_t)rd_uleb(r) * c->daf;
            if ((s = reg_slot(op & 0x3f, c->ra_reg)) >= 0) {
                row->loc[s] = LOC_OFFSET;
                row->off[s] = off;
            }
            continue;
        case 3: /* restore */
            if ((s = reg_slot(op & 0x3f, c->ra_reg)) >= 0) {
                if (!initial) return "DW_CFA_restore in a CIE";
                row->loc[s] = initial->loc[s];
                row->off[s] = initial->off[s];
            }
            continue;
        default:
            break;
        }
        switch (op) {
        case 0x00:
            break; /* nop */
        case 0x01: /* set_loc */
            loc = rd_ptr(r, c->fde_enc, 0);
            if (loc > pc) return NULL;
            break;
        case 0x02: /* advance_loc1, 2, 4 */
        case 0x03:
        case 0x04:
            delta = rd_fixed(r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
            loc += delta * c->caf;
            if (loc > pc) return NULL;
            break;
        case 0x05: /* offset_extended */
        case 0x2f: /* GNU_negative_offset_extended */
            reg = rd_uleb(r);
            off = (int64_t)rd_uleb(r) * c->daf;
            if (op == 0x2f) off = -off;
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) {
                row->loc[s] = LOC_OFFSET;
                row->off[s] = off;
            }
            break;
        case 0x11: /* offset_extended_sf */
            reg = rd_uleb(r);
            off = rd_sleb(r) * c->daf;
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) {
                row->loc[s] = LOC_OFFSET;
                row->off[s] = off;
            }
            break;
        case 0x06: /* restore_extended */
            reg = rd_uleb(r);
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) {
                if (!initial) return "DW_CFA_restore_extended in a CIE";
                row->loc[s] = initial->loc[s];
                row->off[s] = initial->off[s];
            }
            break;
        case 0x07: /* undefined */
        case 0x08: /* same_value */
            reg = rd_uleb(r);
            if ((s = reg_slot(reg, c->ra_reg)) >= 0)
                row->loc[s] = op == 0x07 ? LOC_UNDEF : LOC_SAME;
            break;
        case 0x09: /* register */
            reg = rd_uleb(r);
            (void)rd_uleb(r);
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) row->loc[s] = LOC_OTHER;
            break;
        case 0x0a: /* remember_state */
            if (depth == UWF_STATE_DEPTH) return "remember_state nested too deep";
            stack[depth++] = *row;
            break;
        case 0x0b: /* restore_state: the CFA too (what compilers' epilogues expect) */
            if (!depth) return "restore_state without remember_state";
            *row = stack[--depth];
            break;
        case 0x0c: /* def_cfa */
            row->cfa_reg = (int)rd_uleb(r);
            row->cfa_off = (int64_t)rd_uleb(r);
            break;
        case 0x12: /* def_cfa_sf */
            row->cfa_reg = (int)rd_uleb(r);
            row->cfa_off = rd_sleb(r) * c->daf;
            break;
        case 0x0d: /* def_cfa_register */
            if (row->cfa_reg < 0) return "def_cfa_register after an expression";
            row->cfa_reg = (int)rd_uleb(r);
            break;
        case 0x0e: /* def_cfa_offset */
            if (row->cfa_reg < 0) return "def_cfa_offset after an expression";
            row->cfa_off = (int64_t)rd_uleb(r);
            break;
        case 0x13: /* def_cfa_offset_sf */
            if (row->cfa_reg < 0) return "def_cfa_offset after an expression";
            row->cfa_off = rd_sleb(r) * c->daf;
            break;
        case 0x0f: /* def_cfa_expression */
            delta = rd_uleb(r);
            if (delta > (uint64_t)(r->end - r->p)) return "truncated expression";
            r->p += delta;
            row->cfa_reg = -1;
            break;
        case 0x10: /* expression */
        case 0x16: /* val_expression */
            reg = rd_uleb(r);
            delta = rd_uleb(r);
            if (delta > (uint64_t)(r->end - r->p)) return "truncated expression";
            r->p += delta;
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) row->loc[s] = LOC_OTHER;
            break;
        case 0x14: /* val_offset */
            reg = rd_uleb(r);
            (void)rd_uleb(r);
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) row->loc[s] = LOC_OTHER;
            break;
        case 0x15: /* val_offset_sf */
            reg = rd_uleb(r);
            (void)rd_sleb(r);
            if ((s = reg_slot(reg, c->ra_reg)) >= 0) row->loc[s] = LOC_OTHER;
            break;
        case 0x2e: /* GNU_args_size */
            (void)rd_uleb(r);
            break;
        default:
            return "unknown CFA instruction";
        }
    }
    return r->bad ? "truncated CFA program" : NULL;
}

/* Parse the CIE at p (its length word). NULL, or why not. */
static const char *parse_cie(const uwf_mod_t *m, uintptr_t p, cie_t *c)
{
    if (!mod_has(m, p, 4)) return "CIE outside the module";
    uint32_t len;
    memcpy(&len, (const void *)p, 4);
    if (len == 0xffffffffu) return "64-bit CIE";
    if (!mod_has(m, p, 4 + (size_t)len) || len < 5) return "CIE outside the module";
    rd_t r = {(const uint8_t *)p + 4, (const uint8_t *)p + 4 + len, 0};
    if (rd_fixed(&r, 4) != 0) return "not a CIE";
    uint8_t version = rd_u8(&r);
    if (version != 1 && version != 3) return "CIE version";
    const char *aug = (const char *)r.p;
    size_t alen = strnlen(aug, (size_t)(r.end - r.p));
    if (alen == (size_t)(r.end - r.p)) return "CIE augmentation";
    r.p += alen + 1;
    memset(c, 0, sizeof *c);
    c->fde_enc = 0; /* absptr unless 'R' */
    c->caf = rd_uleb(&r);
    c->daf = rd_sleb(&r);
    c->ra_reg = version == 1 ? rd_u8(&r) : rd_uleb(&r);
    const uint8_t *aug_end = NULL;
    for (size_t i = 0; i < alen; i++) {
        switch (aug[i]) {
        case 'z':
            if (i != 0) return "CIE augmentation";
            c->aug_z = 1;
            {
                uint64_t n = rd_uleb(&r);
                if (n > (uint64_t)(r.end - r.p)) return "CIE augmentation";
                aug_end = r.p + n;
            }
            break;
        case 'R':
            c->fde_enc = rd_u8(&r);
            break;
        case 'L':
            (void)rd_u8(&r);
            break;
        case 'P':
            (void)rd_ptr(&r, rd_u8(&r) & 0x7f, 0);
            break; /* personality: skipped */
        case 'S':
            c->signal = 1;
            break;
        default:
            return "unknown CIE augmentation";
        }
    }
    if (r.bad) return "truncated CIE";
    if (aug_end) r.p = aug_end;
    c->insns = r.p;
    c->end = r.end;
    return NULL;
}

/* Turn the final row into a rule (the same classification as libunwind's trace). */
static void row_rule(const row_t *row, hl_uwf_rule_t *out)
{
    if (row->loc[REG_RA] == LOC_UNDEF || row->loc[REG_RBP] == LOC_UNDEF) {
        memset(out, 0, sizeof *out);
        out->kind = HL_UWF_LAST;
        return;
    }
    if (row->cfa_reg != 6 && row->cfa_reg != 7) {
        rule_fallback(out, row->cfa_reg < 0 ? "CFA is an expression"
                                            : "CFA is based on a register other than rsp or rbp");
        return;
    }
    if (row->cfa_off < 0 || row->cfa_off > 0xffff) {
        rule_fallback(out, "CFA offset out of range");
        return;
    }
    if (row->loc[REG_RA] != LOC_OFFSET || row->off[REG_RA] != -8) {
        rule_fallback(out, "return address not at CFA-8");
        return;
    }
    if (row->loc[REG_RSP] == LOC_OTHER) {
        rule_fallback(out, "rsp saved by an unusual rule");
        return;
    }
    memset(out, 0, sizeof *out);
    out->kind = HL_UWF_STD;
    out->cfa_rbp = row->cfa_reg == 6;
    out->cfa_off = (int)row->cfa_off;
    if (row->loc[REG_RBP] == LOC_OFFSET) {
        if (row->off[REG_RBP] >= 0 || row->off[REG_RBP] < -0xfff) {
            rule_fallback(out, "rbp saved out of range");
            return;
        }
        out->rbp_saved = 1;
        out->rbp_off = (int)-row->off[REG_RBP];
    } else if (row->loc[REG_RBP] != LOC_SAME) {
        rule_fallback(out, "rbp saved by an unusual rule");
    }
}

/* The rule at pc from the module's .eh_frame_hdr at hdr (len bytes). */
static void decode_at(const uwf_mod_t *m, uintptr_t hdr, size_t len, uintptr_t pc,
                      hl_uwf_rule_t *out)
{
    if (!mod_has(m, hdr, len) || len < 12) return rule_fallback(out, "no .eh_frame_hdr");
    const uint8_t *h = (const uint8_t *)hdr;
    if (h[0] != 1) return rule_fallback(out, ".eh_frame_hdr version");
    rd_t r = {h + 4, h + len, 0};
    (void)rd_ptr(&r, h[1], hdr); /* eh_frame_ptr */
    uint64_t count = rd_ptr(&r, h[2], hdr);
    if (r.bad || h[3] != 0x3b) return rule_fallback(out, "no sorted .eh_frame_hdr table");
    const int32_t *tab = (const int32_t *)r.p;
    if (count == 0 || count > (uint64_t)(r.end - r.p) / 8)
        return rule_fallback(out, "no FDE for this address");
    /* Last entry whose initial location is <= pc. */
    size_t lo = 0, hi = (size_t)count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (hdr + (intptr_t)tab[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    if (hdr + (intptr_t)tab[2 * lo] > pc) return rule_fallback(out, "no FDE for this address");
    uintptr_t fde = hdr + (intptr_t)tab[2 * lo + 1];
    if (!mod_has(m, fde, 8)) return rule_fallback(out, "FDE outside the module");
    uint32_t flen, cptr;
    memcpy(&flen, (const void *)fde, 4);
    memcpy(&cptr, (const void *)(fde + 4), 4);
    if (flen == 0xffffffffu) return rule_fallback(out, "64-bit FDE");
    if (flen < 8 || !mod_has(m, fde, 4 + (size_t)flen) || cptr == 0)
        return rule_fallback(out, "bad FDE");
    cie_t c;
    const char *why = parse_cie(m, fde + 4 - cptr, &c);
    if (why) return rule_fallback(out, why);
    if (c.signal) return rule_fallback(out, "signal frame");
    rd_t f = {(const uint8_t *)fde + 8, (const uint8_t *)fde + 4 + flen, 0};
    uintptr_t start = rd_ptr(&f, c.fde_enc, 0);
    uintptr_t range = rd_ptr(&f, c.fde_enc & 0x0f, 0);
    if (f.bad) return rule_fallback(out, "bad FDE");
    if (pc < start || pc - start >= range) return rule_fallback(out, "no FDE for this address");
    if (c.aug_z) {
        uint64_t n = rd_uleb(&f);
        if (n > (uint64_t)(f.end - f.p)) return rule_fallback(out, "bad FDE");
        f.p += n;
    }
    row_t row = {.cfa_reg = 7, .cfa_off = 8}; /* overwritten by the CIE's program */
    rd_t ci = {c.insns, c.end, 0};
    if ((why = run_cfa(&ci, &c, 0, ~(uintptr_t)0, &row, NULL))) return rule_fallback(out, why);
    row_t initial = row;
    if ((why = run_cfa(&f, &c, start, pc, &row, &initial))) return rule_fallback(out, why);
    row_rule(&row, out);
}

typedef struct find_s {
    uintptr_t pc;
    hl_uwf_rule_t *rule;
    int found;
    unsigned long long subs;
} find_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    find_t *f = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        f->subs = info->dlpi_subs;
    uwf_mod_t m = {.n = 0};
    const ElfW(Phdr) *eh = NULL;
    int in = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME) eh = ph;
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if ((ph->p_flags & PF_X) && f->pc >= lo && f->pc < hi) in = 1;
        if ((ph->p_flags & PF_R) && m.n < UWF_SEGS) {
            m.lo[m.n] = lo;
            m.hi[m.n] = lo + ph->p_filesz; /* past the file's bytes: .bss, not tables */
            m.n++;
        }
    }
    if (!in) return 0;
    f->found = 1;
    if (!eh)
        rule_fallback(f->rule, "module without .eh_frame_hdr");
    else
        decode_at(&m, info->dlpi_addr + eh->p_vaddr, eh->p_memsz, f->pc, f->rule);
    return 1;
}

static unsigned long long uwf_search(uintptr_t ra, hl_uwf_rule_t *r)
{
    find_t f = {ra - 1, r, 0, 0};
    rule_fallback(r, "address in no module");
    dl_iterate_phdr(find_cb, &f);
    if (!f.found) rule_fallback(r, "address in no module");
    return f.found ? f.subs + 1 : 0; /* 0: do not cache */
}

void hl_uwf_rule(uintptr_t ra, hl_uwf_rule_t *r)
{
    (void)uwf_search(ra, r);
}

/* ---- the rule cache --------------------------------------------------------------------- */

/* 2-way sets of 16-byte entries, a power of two of them: 1024 (32 KiB) to start; the misses
 * of a program with many return addresses grow it once to 8192 (256 KiB). A small program's
 * return addresses hashed over the large table touched all of its 64 pages. */
#define UWF_SETS_LG_MIN 10u
#define UWF_SETS_LG_MAX 13u
/* Misses at which it grows: as many as the small table has entries. */
#define UWF_GROW_MISSES (2u << UWF_SETS_LG_MIN)
typedef struct uwf_entry_s {
    _Atomic uint64_t key;  /* return address | generation << 48; 0 = empty */
    _Atomic uint64_t rule; /* the packed rule << 32 | a check of the key */
} uwf_entry_t;

static struct {
    _Atomic int state;               /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */
    _Atomic uintptr_t tab;           /* the table | log2 of its sets (the table is page-aligned) */
    _Atomic int grown;               /* 0, then 1 while and after growing */
    _Atomic uint64_t gen;            /* bumped when modules were unloaded */
    _Atomic unsigned long long subs; /* dlpi_subs + 1 as last seen; 0 = never */
    _Atomic uint64_t fallbacks, misses, checks;
} uwf;

static void *uwf_map(unsigned lg)
{
    void *m = mmap(NULL, ((size_t)2 << lg) * sizeof(uwf_entry_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static int uwf_ready(void)
{
    int st = atomic_load_explicit(&uwf.state, memory_order_acquire);
    if (st == 2) return 1;
    if (st == 0 && atomic_compare_exchange_strong(&uwf.state, &st, 1)) {
        void *m = uwf_map(UWF_SETS_LG_MIN);
        if (m)
            atomic_store_explicit(&uwf.tab, (uintptr_t)m | UWF_SETS_LG_MIN, memory_order_relaxed);
        atomic_store_explicit(&uwf.state, m ? 2 : -1, memory_order_release);
        return m != NULL;
    }
    return 0;
}

int hl_uwf_init(void)
{
    return uwf_ready() ? 0 : -1;
}

/* The larger table, once: filled with the small one's rules (a program with that many
 * misses is one whose walks go on: each rule dropped would cost a search again), then
 * published, the small one's pages given back. A walk still holding the small table reads
 * zeros there (misses: a key is never 0) or writes a rule into it (a page back, harmless);
 * rules stored into the small table during the copy are searched again. */
static uwf_entry_t *uwf_set_of(uwf_entry_t *tab, uint64_t mask, uintptr_t ra);
static uint32_t uwf_check(uint64_t key);

static void uwf_grow(void)
{
    int no = 0;
    if (!atomic_compare_exchange_strong(&uwf.grown, &no, 1)) return;
    uwf_entry_t *m = uwf_map(UWF_SETS_LG_MAX);
    if (!m) return; /* stays small */
    uintptr_t old = atomic_load(&uwf.tab);
    uwf_entry_t *o = (uwf_entry_t *)(old & ~(uintptr_t)63);
    size_t n = (size_t)2 << (old & 63);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = atomic_load_explicit(&o[i].key, memory_order_relaxed);
        uint64_t r = atomic_load_explicit(&o[i].rule, memory_order_relaxed);
        if (!k || (uint32_t)r != uwf_check(k)) continue;
        uwf_entry_t *set = uwf_set_of(m, ((uint64_t)1 << UWF_SETS_LG_MAX) - 1,
                                      (uintptr_t)(k & (((uint64_t)1 << 48) - 1)));
        uwf_entry_t *e = !atomic_load_explicit(&set[0].key, memory_order_relaxed)   ? &set[0]
                         : !atomic_load_explicit(&set[1].key, memory_order_relaxed) ? &set[1]
                                                                                    : NULL;
        if (!e) continue;
        atomic_store_explicit(&e->rule, r, memory_order_relaxed);
        atomic_store_explicit(&e->key, k, memory_order_relaxed);
    }
    atomic_store(&uwf.tab, (uintptr_t)m | UWF_SETS_LG_MAX);
    madvise(o, n * sizeof(uwf_entry_t), MADV_DONTNEED);
}

/* The table of a walk: read once per walk (uwf_set). */
typedef struct uwf_tab_s {
    uwf_entry_t *e;
    uint64_t mask;
} uwf_tab_t;

static inline uwf_tab_t uwf_tab(void)
{
    uintptr_t w = atomic_load_explicit(&uwf.tab, memory_order_acquire);
    return (uwf_tab_t){(uwf_entry_t *)(w & ~(uintptr_t)63), ((uint64_t)1 << (w & 63)) - 1};
}

static uwf_entry_t *uwf_set_of(uwf_entry_t *tab, uint64_t mask, uintptr_t ra)
{
    uint64_t x = (uint64_t)ra * 0x9e3779b97f4a7c15ull;
    return &tab[((x >> 40) & mask) * 2];
}

static inline uwf_entry_t *uwf_set(uwf_tab_t t, uintptr_t ra)
{
    return uwf_set_of(t.e, t.mask, ra);
}

/* The check stored beside a rule: an entry read while another thread rewrites it (the key of
 * one write, the rule of another) fails it unless the two keys fold to the same 32 bits
 * (return addresses 4 GiB apart with matching differences in their high bits, in the same
 * set, during that race). Folding costs three instructions a frame where a multiplicative
 * hash cost six. */
static uint32_t uwf_check(uint64_t key)
{
    return (uint32_t)key ^ (uint32_t)(key >> 32);
}

/* The entry's rule if it holds key, else 0. */
static inline uint32_t uwf_probe(uwf_entry_t *e, uint64_t key)
{
    uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
    uint64_t r = atomic_load_explicit(&e->rule, memory_order_relaxed);
    if (k != key || (uint32_t)r != uwf_check(key)) return 0;
    return (uint32_t)(r >> 32);
}

static void uwf_store(uwf_entry_t *e, uint64_t key, uint32_t rule)
{
    atomic_store_explicit(&e->key, 0, memory_order_relaxed);
    atomic_store_explicit(&e->rule, (uint64_t)rule << 32 | uwf_check(key), memory_order_relaxed);
    atomic_store_explicit(&e->key, key, memory_order_release);
}

static __attribute__((noinline)) uint32_t uwf_miss(uwf_entry_t *set, uintptr_t ra)
{
    hl_uwf_rule_t r;
    unsigned long long subs = uwf_search(ra, &r);
    uint64_t misses = atomic_fetch_add_explicit(&uwf.misses, 1, memory_order_relaxed) + 1;
    uint32_t packed = rule_pack(&r);
    if (!subs) return packed; /* in no module (yet): not cached */
    if (__builtin_expect(misses >= UWF_GROW_MISSES, 0) &&
        !atomic_load_explicit(&uwf.grown, memory_order_relaxed))
        uwf_grow(); /* this rule goes into the small table: the next miss fills the new one */
    unsigned long long seen = atomic_load(&uwf.subs);
    if (seen != subs) {
        /* First search, or modules were unloaded since: rules cached before may describe
         * code that is gone. */
        if (seen) atomic_fetch_add(&uwf.gen, 1);
        atomic_store(&uwf.subs, subs);
    }
    uint64_t key = (uint64_t)ra | (atomic_load_explicit(&uwf.gen, memory_order_relaxed) << 48);
    /* Way 0 takes the newest; its previous content moves to way 1. */
    uint64_t okey = atomic_load_explicit(&set[0].key, memory_order_relaxed);
    uint32_t old = okey ? uwf_probe(&set[0], okey) : 0;
    if (old) uwf_store(&set[1], okey, old);
    uwf_store(&set[0], key, packed);
    return packed;
}

/* The rule of ra (a stored rule is never 0, so a matching key and check is a hit). */
static inline uint32_t uwf_lookup(uwf_tab_t t, uintptr_t ra, uint64_t gen)
{
    uint64_t key = (uint64_t)ra | gen;
    uint32_t check = uwf_check(key);
    uwf_entry_t *set = uwf_set(t, ra);
    for (int w = 0; w < 2; w++) {
        uint64_t k = atomic_load_explicit(&set[w].key, memory_order_relaxed);
        uint64_t r = atomic_load_explicit(&set[w].rule, memory_order_relaxed);
        if (k == key && (uint32_t)r == check) return (uint32_t)(r >> 32);
    }
    return uwf_miss(set, ra);
}

/* ---- safe stack reads ------------------------------------------------------------------- */

/* Pages of this thread's address space known to be mapped: [lo, hi). */
static __thread uintptr_t uwf_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t uwf_hi __attribute__((tls_model("initial-exec")));

#define UWF_PAGE       4096u
#define UWF_CHECK_MAX  (16u << 20) /* larger gaps are not checked: the walk defers */
#define UWF_CHECK_STEP 256u        /* pages per mincore call */
#define UWF_STEP_MAX   (1u << 20)  /* largest frame walked (bytes from one CFA to the next) */

static int pages_mapped(uintptr_t lo, uintptr_t hi)
{
    unsigned char vec[UWF_CHECK_STEP];
    atomic_fetch_add_explicit(&uwf.checks, 1, memory_order_relaxed);
    int saved = errno;
    int ok = 1;
    for (uintptr_t p = lo; p < hi && ok;) {
        size_t len =
            hi - p < (uintptr_t)UWF_CHECK_STEP * UWF_PAGE ? hi - p : UWF_CHECK_STEP * UWF_PAGE;
        if (mincore((void *)p, len, vec) != 0) ok = 0; /* ENOMEM: a page is not mapped */
        p += len;
    }
    errno = saved;
    return ok;
}

static __attribute__((noinline)) int uwf_extend(uintptr_t a, uintptr_t b)
{
    uintptr_t lo = a & ~(uintptr_t)(UWF_PAGE - 1);
    uintptr_t hi = (b + UWF_PAGE - 1) & ~(uintptr_t)(UWF_PAGE - 1);
    if (hi <= lo || hi - lo > UWF_CHECK_MAX) return 0;
    uintptr_t cl = uwf_lo, ch = uwf_hi;
    uintptr_t ul = lo < cl ? lo : cl, uh = hi > ch ? hi : ch;
    if (cl >= ch || uh - ul > UWF_CHECK_MAX) { /* nothing known near: start over here */
        if (!pages_mapped(lo, hi)) return 0;
        uwf_lo = lo;
        uwf_hi = hi;
        return 1;
    }
    /* The union, checking what lies outside the known pages (a gap below them, as the stack
     * deepened, or pages above, as walks reach outer frames). */
    if (ul < cl && !pages_mapped(ul, cl)) return 0;
    if (uh > ch && !pages_mapped(ch, uh)) return 0;
    uwf_lo = ul;
    uwf_hi = uh;
    return 1;
}

/* ---- the walk --------------------------------------------------------------------------- */

static __attribute__((noinline, cold)) int uwf_defer(void)
{
    atomic_fetch_add_explicit(&uwf.fallbacks, 1, memory_order_relaxed);
    return -1;
}

/* A deferral after d frames: -1, and d into *walked when asked. */
static inline int uwf_defer_at(int *walked, int d)
{
    if (walked) *walked = d;
    return uwf_defer();
}

/* Called by hl_uwf_backtrace with the caller's state at the call: ip = return address,
 * sp = the stack pointer after the return, rbp. Per frame on a rule-cache hit with a fast
 * rule: the set's address (4), the probe (9), the step (3), the top of the checked pages (2),
 * the two reads (4), the store and the loop (6); other rules take the checked step. */
static inline __attribute__((always_inline)) int
uwf_walk_core(void **buf, int n, uintptr_t ip, uintptr_t sp, uintptr_t rbp, int *walked)
{
    if (n <= 0) return 0;
    if (!uwf_ready()) return uwf_defer_at(walked, 0);
    uint64_t gen = atomic_load_explicit(&uwf.gen, memory_order_relaxed) << 48;
    uwf_tab_t tab = uwf_tab();
    uintptr_t lo = uwf_lo, hi = uwf_hi;
    int d = 0;
    buf[d++] = (void *)ip;
    if (__builtin_expect(sp < lo || sp >= hi, 0)) {
        /* Below every fast step lies the stack pointer: make it part of the checked pages. */
        if (sp < UWF_PAGE || !uwf_extend(sp, sp + 8)) return uwf_defer_at(walked, d);
        lo = uwf_lo;
        hi = uwf_hi;
    }
    while (d < n) {
        uint32_t r = uwf_lookup(tab, ip, gen);
        uintptr_t cfa;
        if (__builtin_expect(R_KIND(r) == P_FAST, 1)) {
            cfa = sp + R_CFA_OFF(r);
            if (__builtin_expect(cfa > hi, 0)) {
                if (!uwf_extend(sp, cfa)) return uwf_defer_at(walked, d);
                lo = uwf_lo;
                hi = uwf_hi;
            }
        } else {
            if (R_KIND(r) == P_LAST) break;
            if (R_KIND(r) != P_STD) return uwf_defer_at(walked, d);
            cfa = ((r & R_CFA_RBP) ? rbp : sp) + R_CFA_OFF(r);
            uintptr_t low = cfa - ((r & R_RBP_SAVED) && R_RBP_OFF(r) > 8 ? R_RBP_OFF(r) : 8);
            /* A frame address that does not grow, or jumps by more than UWF_STEP_MAX, comes
             * from a corrupted stack or a rule we got wrong: libunwind decides. */
            if (cfa <= sp || cfa - sp > UWF_STEP_MAX) return uwf_defer_at(walked, d);
            if (low < lo || cfa > hi) {
                if (cfa < UWF_PAGE || low > cfa || !uwf_extend(low, cfa))
                    return uwf_defer_at(walked, d);
                lo = uwf_lo;
                hi = uwf_hi;
            }
        }
        ip = *(const volatile uintptr_t *)(cfa - 8);
        if (r & R_RBP_SAVED) rbp = *(const volatile uintptr_t *)(cfa - R_RBP_OFF(r));
        sp = cfa;
        if (ip < 0x4000) break;
        buf[d++] = (void *)ip;
    }
    return d;
}

__attribute__((used, visibility("hidden"))) int hl_uwf_walk(void **buf, int n, uintptr_t ip,
                                                            uintptr_t sp, uintptr_t rbp)
{
    return uwf_walk_core(buf, n, ip, sp, rbp, NULL);
}

int hl_uwf_walk_interrupted(void **buf, int n, uintptr_t pc, uintptr_t sp, uintptr_t rbp,
                            int *walked)
{
    /* The interrupted instruction's own row is the one at pc: looked up as the return
     * address pc + 1 (whose row is at pc), then buf[0] set back to pc. */
    *walked = 0;
    if (n <= 0 || !pc) return 0;
    int d = uwf_walk_core(buf, n, pc + 1, sp, rbp, walked);
    if (d > 0 || *walked > 0) buf[0] = (void *)pc;
    return d;
}

#if defined(__x86_64__)
/* The entry: the caller's return address, stack pointer after the return and rbp, as they
 * are at the call; then a tail jump, so that hl_uwf_walk returns to the caller. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl hl_uwf_backtrace\n"
        ".hidden hl_uwf_backtrace\n"
        ".type hl_uwf_backtrace, @function\n"
        "hl_uwf_backtrace:\n"
        ".cfi_startproc\n"
        "movq (%rsp), %rdx\n"
        "leaq 8(%rsp), %rcx\n"
        "movq %rbp, %r8\n"
        "jmp hl_uwf_walk\n"
        ".cfi_endproc\n"
        ".size hl_uwf_backtrace, .-hl_uwf_backtrace\n");
#else
int hl_uwf_backtrace(void **buf, int n)
{
    (void)buf;
    (void)n;
    return -1;
}
#endif

void hl_uwf_stats(hl_uwf_stats_t *s)
{
    s->fallbacks = atomic_load_explicit(&uwf.fallbacks, memory_order_relaxed);
    s->rule_misses = atomic_load_explicit(&uwf.misses, memory_order_relaxed);
    s->page_checks = atomic_load_explicit(&uwf.checks, memory_order_relaxed);
    uintptr_t t = atomic_load_explicit(&uwf.tab, memory_order_relaxed);
    s->rule_sets = t ? (uint64_t)1 << (t & 63) : 0;
}
