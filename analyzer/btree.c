/* analyzer/btree.c — see btree.h.
 *
 * File format (sqlite.org/fileformat2.html): page 1 starts with a 100-byte header (page size
 * at offset 16, reserved bytes per page at offset 20). A table b-tree page starts with a
 * header (at offset 100 on page 1): type (0x05 interior, 0x0d leaf), first freeblock (2),
 * cell count (2), cell content start (2), fragmented bytes (1) and, on interior pages, the
 * right-most child (4); then a big-endian u16 offset per cell. An interior cell is a u32
 * left child and a varint key; a leaf cell is a varint payload size, a varint rowid and the
 * payload — a record: a varint header size, one varint serial type per column, the values.
 * Every leaf is at the same depth, so the interior level just above the leaves lists the
 * leaves in rowid order; contiguous runs of them are read with one pread.
 */
#include "btree.h"
#include "hl_blockfmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum { PAGE_INTERIOR = 0x05, PAGE_LEAF = 0x0d };

typedef struct level_s {
    uint8_t *pg;
    uint32_t hdr; /* b-tree header offset: 100 on page 1, else 0 */
    uint32_t ncell;
    uint32_t next; /* next child to visit: 0..ncell (ncell = the right-most child) */
} level_t;

struct hl_btree_s {
    int fd;
    uint32_t psize, usable;
    uint64_t npages;
    level_t lv[HL_BTREE_MAX_DEPTH]; /* interior pages from the root down */
    int depth;                      /* interior levels; 0 when the root is a leaf */
    uint8_t *batch;                 /* HL_BTREE_BATCH leaf pages */
    uint32_t nbatch, leaf;          /* leaves in the batch, the current one */
    uint32_t batch_pgno;            /* page number of batch[0] */
    const uint8_t *lp;              /* current leaf */
    uint32_t lhdr, lncell, lcell;
};

static inline uint32_t get16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint at p, not reading at or past end: its length, 0 when it runs past end. */
static inline uint32_t varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    if (p < end && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    uint64_t x = 0;
    for (uint32_t i = 0; i < 8; i++) {
        if (p + i >= end) return 0;
        x = (x << 7) | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    if (p + 8 >= end) return 0;
    *v = (x << 8) | p[8];
    return 9;
}

static int fail(char *err, size_t errlen, const char *what, uint64_t pgno)
{
    snprintf(err, errlen, "database file, page %llu: %s", (unsigned long long)pgno, what);
    return -1;
}

static int read_pages(hl_btree_t *t, uint8_t *buf, uint64_t pgno, uint32_t n, char *err,
                      size_t errlen)
{
    if (pgno == 0 || pgno + n - 1 > t->npages)
        return fail(err, errlen, "page number beyond the end of the file", pgno);
    size_t want = (size_t)n * t->psize, got = 0;
    off_t at = (off_t)(pgno - 1) * t->psize;
    while (got < want) {
        ssize_t k = pread(t->fd, buf + got, want - got, at + (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return fail(err, errlen, k < 0 ? strerror(errno) : "short read", pgno);
        got += (size_t)k;
    }
    return 0;
}

/* Check a page's b-tree header; its cell count in *ncell. */
static int page_check(const hl_btree_t *t, const uint8_t *pg, uint64_t pgno, int type,
                      uint32_t *ncell, char *err, size_t errlen)
{
    uint32_t hdr = pgno == 1 ? 100 : 0;
    if (pg[hdr] != type)
        return fail(err, errlen,
                    type == PAGE_LEAF ? "expected a table leaf page"
                                      : "expected a table interior page",
                    pgno);
    uint32_t head = type == PAGE_LEAF ? 8 : 12;
    *ncell = get16(pg + hdr + 3);
    if (hdr + head + 2 * *ncell > t->usable) return fail(err, errlen, "cell count too large", pgno);
    return 0;
}

static inline uint32_t child(const hl_btree_t *t, const level_t *l, uint32_t i)
{
    if (i == l->ncell) return get32(l->pg + l->hdr + 8);
    uint32_t off = get16(l->pg + l->hdr + 12 + 2 * i);
    return off + 4 <= t->usable ? get32(l->pg + off) : 0;
}

static int load_level(hl_btree_t *t, int d, uint32_t pgno, char *err, size_t errlen)
{
    level_t *l = &t->lv[d];
    if (read_pages(t, l->pg, pgno, 1, err, errlen) ||
        page_check(t, l->pg, pgno, PAGE_INTERIOR, &l->ncell, err, errlen))
        return -1;
    l->hdr = pgno == 1 ? 100 : 0;
    l->next = 0;
    return 0;
}

static void set_leaf(hl_btree_t *t, uint32_t i)
{
    t->leaf = i;
    t->lp = t->batch + (size_t)i * t->psize;
    t->lhdr = t->batch_pgno + i == 1 ? 100 : 0;
    t->lcell = 0;
}

/* Read the next run of leaves under the deepest interior level. */
static int load_batch(hl_btree_t *t, char *err, size_t errlen)
{
    level_t *l = &t->lv[t->depth - 1];
    uint32_t first = child(t, l, l->next), n = 1;
    while (n < HL_BTREE_BATCH && l->next + n <= l->ncell && child(t, l, l->next + n) == first + n)
        n++;
    if (read_pages(t, t->batch, first, n, err, errlen)) return -1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t nc;
        if (page_check(t, t->batch + (size_t)i * t->psize, first + i, PAGE_LEAF, &nc, err, errlen))
            return -1;
    }
    l->next += n;
    t->batch_pgno = first;
    t->nbatch = n;
    set_leaf(t, 0);
    t->lncell = get16(t->lp + t->lhdr + 3);
    return 0;
}

/* Move to the next leaf: 1, 0 at the end, -1 on error. */
static int next_leaf(hl_btree_t *t, char *err, size_t errlen)
{
    if (t->leaf + 1 < t->nbatch) {
        set_leaf(t, t->leaf + 1);
        t->lncell = get16(t->lp + t->lhdr + 3);
        return 1;
    }
    if (t->depth == 0) return 0;
    level_t *deepest = &t->lv[t->depth - 1];
    if (deepest->next > deepest->ncell) {
        /* The deepest level is done: climb to a level with children left, come back down. */
        int d = t->depth - 2;
        while (d >= 0 && t->lv[d].next > t->lv[d].ncell)
            d--;
        if (d < 0) return 0;
        for (int k = d + 1; k < t->depth; k++) {
            level_t *up = &t->lv[k - 1];
            if (load_level(t, k, child(t, up, up->next++), err, errlen)) return -1;
        }
    }
    return load_batch(t, err, errlen) ? -1 : 1;
}

int hl_btree_geometry(int fd, uint32_t *page_size, uint32_t *usable, char *err, size_t errlen)
{
    uint8_t h[100];
    if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16)) {
        snprintf(err, errlen, "not a SQLite 3 database file");
        return -1;
    }
    uint32_t ps = get16(h + 16);
    if (ps == 1) ps = 65536;
    if (ps < 512 || ps > 65536 || (ps & (ps - 1)) || h[20] > ps - 480) {
        snprintf(err, errlen, "database file header: bad page size %u", ps);
        return -1;
    }
    *page_size = ps;
    *usable = ps - h[20];
    return 0;
}

hl_btree_t *hl_btree_open(int fd, uint32_t root, char *err, size_t errlen)
{
    hl_btree_t *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->fd = fd;
    off_t end = lseek(fd, 0, SEEK_END);
    if (hl_btree_geometry(fd, &t->psize, &t->usable, err, errlen) || end < 0) goto fail;
    t->npages = (uint64_t)end / t->psize;
    /* The padding after the last page: the record decoder reads past a record's end. */
    if (!(t->batch = calloc(1, (size_t)HL_BTREE_BATCH * t->psize + HL_RECORD_PAD))) goto oom;
    /* Down the left edge: interior levels until a page's first child is a leaf. */
    uint8_t *probe = malloc(t->psize);
    if (!probe) goto oom;
    uint32_t pgno = root;
    for (;;) {
        if (read_pages(t, probe, pgno, 1, err, errlen)) break;
        uint32_t hdr = pgno == 1 ? 100 : 0;
        if (probe[hdr] == PAGE_LEAF) {
            if (t->depth == 0) { /* the root is a leaf */
                memcpy(t->batch, probe, t->psize);
                free(probe);
                uint32_t nc;
                if (page_check(t, t->batch, root, PAGE_LEAF, &nc, err, errlen)) goto fail;
                t->batch_pgno = root;
                t->nbatch = 1;
                set_leaf(t, 0);
                t->lncell = get16(t->lp + t->lhdr + 3);
                return t;
            }
            free(probe);
            t->lv[t->depth - 1].next = 0;
            if (load_batch(t, err, errlen)) goto fail;
            return t;
        }
        if (t->depth == HL_BTREE_MAX_DEPTH) {
            fail(err, errlen, "b-tree deeper than the reader supports", pgno);
            break;
        }
        level_t *l = &t->lv[t->depth];
        if (!(l->pg = malloc(t->psize))) {
            snprintf(err, errlen, "out of memory");
            break;
        }
        memcpy(l->pg, probe, t->psize);
        l->hdr = hdr;
        if (page_check(t, l->pg, pgno, PAGE_INTERIOR, &l->ncell, err, errlen)) break;
        l->next = 1; /* child 0 is being descended into */
        t->depth++;
        pgno = child(t, l, 0);
    }
    free(probe);
    goto fail;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    hl_btree_close(t);
    return NULL;
}

int hl_btree_next(hl_btree_t *t, int64_t *rowid, const uint8_t **rec, uint32_t *len, char *err,
                  size_t errlen)
{
    while (t->lcell >= t->lncell) {
        int rc = next_leaf(t, err, errlen);
        if (rc <= 0) return rc;
    }
    uint64_t pgno = (uint64_t)t->batch_pgno + t->leaf;
    uint32_t off = get16(t->lp + t->lhdr + 8 + 2 * t->lcell++);
    const uint8_t *end = t->lp + t->usable, *p = t->lp + off;
    uint64_t size, key;
    uint32_t k;
    if (off >= t->usable || !(k = varint(p, end, &size)))
        return fail(err, errlen, "cell outside the page", pgno);
    p += k;
    if (!(k = varint(p, end, &key))) return fail(err, errlen, "cell outside the page", pgno);
    p += k;
    if (size > t->usable - 35)
        return fail(err, errlen, "row spills to overflow pages (not read directly)", pgno);
    if (p + size > end) return fail(err, errlen, "cell outside the page", pgno);
    *rowid = (int64_t)key;
    *rec = p;
    *len = (uint32_t)size;
    return 1;
}

void hl_btree_close(hl_btree_t *t)
{
    if (!t) return;
    for (int i = 0; i < HL_BTREE_MAX_DEPTH; i++)
        free(t->lv[i].pg);
    free(t->batch);
    free(t);
}

/* Bytes of a value of serial type t: -1 for the reserved types 10 and 11. */
static inline int64_t serial_width(uint64_t t)
{
    static const uint8_t width[10] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
    if (t < 10) return width[t];
    if (t < 12) return -1;
    return (int64_t)((t - 12) / 2);
}

/* Any record: every serial type, multi-byte ones included, one column at a time. */
int hl_record_ints_ref(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls)
{
    const uint8_t *end = rec + len;
    uint64_t hsize;
    uint32_t k = varint(rec, end, &hsize);
    if (!k || hsize > len || hsize < k) return HL_RECORD_MALFORMED;
    const uint8_t *h = rec + k, *hend = rec + hsize, *d = hend;
    uint64_t nl = 0;
    int other = 0; /* a column among the first n that is not an integer */
    /* Every serial type of the header, also those past the first n columns: SQLite calls a
     * record whose value widths do not add up to its payload malformed, and so does this. */
    for (int i = 0; h < hend || i < n; i++) {
        uint64_t type;
        if (h >= hend) { /* past the record's columns */
            nl |= 1ull << i;
            v[i] = 0;
            continue;
        }
        if (*h < 0x80) {
            type = *h++;
        } else {
            if (!(k = varint(h, hend, &type))) return HL_RECORD_MALFORMED;
            h += k;
        }
        int64_t w = serial_width(type);
        if (w < 0 || w > end - d) return HL_RECORD_MALFORMED;
        if (i >= n) {
            d += w;
            continue;
        }
        int64_t x = 0;
        switch (type) {
        case 0:
            nl |= 1ull << i;
            break;
        case 8:
            break;
        case 9:
            x = 1;
            break;
        case 1:
        case 2:
        case 3:
        case 4:
        case 5:
        case 6: {
            uint64_t u = (d[0] & 0x80) ? ~0ull : 0; /* sign-extend from the first byte */
            for (int64_t j = 0; j < w; j++)
                u = (u << 8) | d[j];
            x = (int64_t)u;
            break;
        }
        default: /* float, text, blob */
            other = 1;
        }
        d += w;
        v[i] = x;
    }
    if (d != end) return HL_RECORD_MALFORMED;
    if (other) return HL_RECORD_NOT_INT;
    *nulls = nl;
    return 0;
}

/* Serial type -> width (bits 0-3), NULL (bit 4), float (bit 5); 0x80: not an integer-like
 * one-byte serial type (text, blob, reserved, or the first byte of a longer varint). */
#define ST_NULL  0x10
#define ST_FLOAT 0x20
#define ST_OTHER 0x80
static const uint8_t st_info[256] = {
    [0] = ST_NULL,
    [1] = 1,
    [2] = 2,
    [3] = 3,
    [4] = 4,
    [5] = 6,
    [6] = 8,
    [7] = 8 | ST_FLOAT,
    [8] = 0,
    [9] = 0,
    [10 ... 255] = ST_OTHER,
};

/* The header of the common record, nh one-byte serial types at h: their widths in w[], the
 * widths' total, the NULL columns (bit i) and whether any type is not an integer or NULL
 * (nonzero). With SSE2 sixteen types at once, reading 16 bytes at h. */
static inline unsigned header_pass(const uint8_t *h, int nh, uint8_t *w, uint64_t *total,
                                   uint64_t *nl)
{
#ifdef __SSE2__
    if (nh <= 16) {
        const __m128i t = _mm_loadu_si128((const __m128i *)h);
        const __m128i idx = _mm_set_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        const __m128i in = _mm_cmplt_epi8(idx, _mm_set1_epi8((char)nh));
        /* widths: 1..4 -> 1..4, 5 -> 6, 6 and 7 -> 8, 0, 8 and 9 -> 0 */
        __m128i le4 = _mm_and_si128(_mm_cmpgt_epi8(t, _mm_setzero_si128()),
                                    _mm_cmplt_epi8(t, _mm_set1_epi8(5)));
        __m128i is5 = _mm_cmpeq_epi8(t, _mm_set1_epi8(5));
        __m128i is7 = _mm_cmpeq_epi8(t, _mm_set1_epi8(7));
        __m128i is67 = _mm_or_si128(_mm_cmpeq_epi8(t, _mm_set1_epi8(6)), is7);
        __m128i wv = _mm_or_si128(_mm_and_si128(le4, t),
                                  _mm_or_si128(_mm_and_si128(is5, _mm_set1_epi8(6)),
                                               _mm_and_si128(is67, _mm_set1_epi8(8))));
        wv = _mm_and_si128(wv, in);
        _mm_storeu_si128((__m128i *)w, wv);
        __m128i sad = _mm_sad_epu8(wv, _mm_setzero_si128());
        *total = (uint64_t)_mm_cvtsi128_si32(sad) + (uint64_t)_mm_extract_epi16(sad, 4);
        /* types above 9; bytes of 0x80 and above compare as negative */
        __m128i bad = _mm_or_si128(_mm_cmpgt_epi8(t, _mm_set1_epi8(9)),
                                   _mm_cmplt_epi8(t, _mm_setzero_si128()));
        bad = _mm_and_si128(_mm_or_si128(bad, is7), in);
        *nl =
            (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(t, _mm_setzero_si128()), in));
        return (unsigned)_mm_movemask_epi8(bad);
    }
#endif
    uint64_t sum = 0, nulls = 0;
    unsigned flags = 0;
    for (int i = 0; i < nh; i++) {
        unsigned info = st_info[h[i]];
        flags |= info & (ST_OTHER | ST_FLOAT);
        w[i] = info & 15;
        sum += info & 15;
        nulls |= (uint64_t)(info >> 4 & 1) << i;
    }
    *total = sum;
    *nl = nulls;
    return flags;
}

int hl_record_ints_padded(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls)
{
    if (!len || rec[0] >= 0x80 || rec[0] > len || rec[0] - 1u > 64u || n > 64)
        return hl_record_ints_ref(rec, len, n, v, nulls);
    const uint8_t *h = rec + 1, *end = rec + len, *d = rec + rec[0];
    int nh = rec[0] - 1;
    uint8_t w[64];
    uint64_t nl, total;
    if (header_pass(h, nh, w, &total, &nl) || total != (uint64_t)(end - d))
        return hl_record_ints_ref(rec, len, n, v, nulls);
    int m = nh < n ? nh : n;
    /* A value of w bytes is the top w bytes of the big-endian 8-byte load at d: the padding
     * makes the load safe at the record's end. */
#define VALUE(i)                                                                                   \
    do {                                                                                           \
        unsigned wi = w[i];                                                                        \
        uint64_t u;                                                                                \
        memcpy(&u, d, 8);                                                                          \
        v[i] = wi ? (int64_t)__builtin_bswap64(u) >> (64 - 8 * wi) : h[i] == 9;                    \
        d += wi;                                                                                   \
    } while (0)
    if (m == 1 + HL_BF_NCOLS) { /* block_data's columns (the id a NULL): unrolled */
#pragma GCC unroll 8
        for (int i = 0; i < 1 + HL_BF_NCOLS; i++)
            VALUE(i);
    } else {
        for (int i = 0; i < m; i++)
            VALUE(i);
    }
#undef VALUE
    if (n < 64) nl &= (1ull << n) - 1;
    for (int i = nh; i < n; i++) { /* past the record's columns */
        nl |= 1ull << i;
        v[i] = 0;
    }
    *nulls = nl;
    return 0;
}

int hl_record_ints(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls)
{
    /* A copy with the padding the fast decoder reads (block rows are a few dozen bytes). */
    uint8_t buf[512 + HL_RECORD_PAD];
    if (len > 512) return hl_record_ints_ref(rec, len, n, v, nulls);
    memcpy(buf, rec, len);
    memset(buf + len, 0, HL_RECORD_PAD);
    return hl_record_ints_padded(buf, len, n, v, nulls);
}
