/* analyzer/btree.h — a rowid table read straight from a SQLite database file, in rowid order.
 *
 * Stepping SQLite's virtual machine and fetching 21 columns costs about 500 ns per block row
 * here (350 ns of it inside the VM); decoding the documented file format
 * (https://sqlite.org/fileformat2.html) directly costs a tenth of that. The walker reads
 * pages with pread, leaf pages in runs of up to HL_BTREE_BATCH contiguous pages, so its
 * memory is a few hundred KiB whatever the file size.
 *
 * It knows nothing of transactions: the caller must hold a read transaction under which the
 * database file itself holds the snapshot (blockreader.c says when). It refuses what it does
 * not expect — payloads that spill to overflow pages, unknown page types, offsets outside a
 * page, trees deeper than HL_BTREE_MAX_DEPTH — with a message, so the caller can go on
 * through SQLite from the last row it got.
 */
#ifndef HL_BTREE_H
#define HL_BTREE_H

#include <stddef.h>
#include <stdint.h>

#define HL_BTREE_BATCH     64
#define HL_BTREE_MAX_DEPTH 20

typedef struct hl_btree_s hl_btree_t;

/* The file's page size and usable bytes per page, from its 100-byte header: 0, or -1 with a
 * message when fd does not hold a SQLite 3 database. */
int hl_btree_geometry(int fd, uint32_t *page_size, uint32_t *usable, char *err, size_t errlen);

/* Walk the table b-tree whose root page is root (sqlite_schema.rootpage). fd stays the
 * caller's. NULL with a message. */
hl_btree_t *hl_btree_open(int fd, uint32_t root, char *err, size_t errlen);

/* Next row: 1 with *rowid and its record (*rec, *len: valid until the next call, followed
 * by HL_RECORD_PAD readable bytes), 0 at the end, -1 with a message when the walker cannot go on
 * (see above). */
int hl_btree_next(hl_btree_t *t, int64_t *rowid, const uint8_t **rec, uint32_t *len, char *err,
                  size_t errlen);

void hl_btree_close(hl_btree_t *t);

/* The first n columns of a record whose columns are all integers or NULL: v[i] the value,
 * bit i of *nulls set when column i is NULL or beyond the record's end (a column added to
 * the table after the row was written). 0, HL_RECORD_NOT_INT when one of the n columns holds
 * a float, text or blob, HL_RECORD_MALFORMED when the header runs past the record, uses a
 * reserved serial type or its value widths do not add up to the payload (every column is
 * checked, not only the first n: what SQLite calls "database disk image is malformed").
 * n <= 64. */
enum { HL_RECORD_NOT_INT = -1, HL_RECORD_MALFORMED = -2 };
int hl_record_ints(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls);
/* The same, faster, for a record followed by at least HL_RECORD_PAD readable bytes (its
 * values are read in whole 8-byte loads and its header 16 bytes at a time): every record
 * hl_btree_next() returns is. */
#define HL_RECORD_PAD 16
int hl_record_ints_padded(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls);
/* The plain decoder the two above fall back to (and are tested against): the same answers. */
int hl_record_ints_ref(const uint8_t *rec, uint32_t len, int n, int64_t *v, uint64_t *nulls);

#endif
