/* tracer/record_rotate.c — trace chunks stored while the program runs (record_rotate.h). */
#include "record_rotate.h"

/* The ingest may be absent from a partial build: record then keeps the trace (record.c). */
#pragma weak hl_ingest_chunks_add
#pragma weak hl_ingest_chunks_backlog
#pragma weak hl_ingest_chunks_interrupted

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t hl_rotor_chunk_bytes(void)
{
    const char *v = getenv("HEAPLEDGER_CHUNK_BYTES");
    if (!v || !*v) return HL_ROTOR_CHUNK_BYTES;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    if (*end == 'M' || *end == 'm') shift = 20;
    if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (errno || end == v || *end || *v == '-' || (shift && n >> (63 - shift))) {
        fprintf(stderr,
                "heapledger record: HEAPLEDGER_CHUNK_BYTES=%s: expected a size in bytes (K, M "
                "or G suffix; 0 turns the ingest during the run off), e.g. 64M\n",
                v);
        return (uint64_t)-1;
    }
    n <<= shift;
    /* LTTng flushes every sub-buffer at a rotation: below 1 MiB a chunk is mostly padding. */
    if (n && n < (1ull << 20)) n = 1ull << 20;
    return n;
}

void hl_rotor_init(hl_rotor_t *r, const char *dir, hl_ingest_chunks_t *ing, int keep)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->ing = ing;
    r->keep = keep;
}

typedef struct chunk_s {
    long index;
    char name[256];
} chunk_t;

static int chunk_cmp(const void *a, const void *b)
{
    long x = ((const chunk_t *)a)->index, y = ((const chunk_t *)b)->index;
    return x < y ? -1 : x > y;
}

/* The index of an archive name BEGIN-END-INDEX, or -1. */
static long chunk_index(const char *name)
{
    const char *dash = strrchr(name, '-');
    if (!dash || !dash[1]) return -1;
    char *end;
    long i = strtol(dash + 1, &end, 10);
    return *end || i < 0 ? -1 : i;
}

static uint64_t du_total;

static int du_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (flag == FTW_F) du_total += (uint64_t)st->st_size;
    return 0;
}

static uint64_t du(const char *dir)
{
    du_total = 0;
    nftw(dir, du_entry, 16, FTW_PHYS);
    return du_total;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The closed chunks not stored yet, oldest first (at most max). */
static size_t scan(hl_rotor_t *r, chunk_t *v, size_t max)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/archives", r->dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long i = chunk_index(e->d_name);
        if (e->d_name[0] == '.' || i < r->next || strlen(e->d_name) >= sizeof v->name) continue;
        v[n].index = i;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, chunk_cmp);
    return n;
}

/* Store one chunk directory; delete it once stored (kept: --keep-trace, damaged). */
static void store(hl_rotor_t *r, const char *path)
{
    hl_ingest_result_t res;
    if (!r->started && r->before_first) r->before_first(r->arg);
    r->started = 1;
    int rc = hl_ingest_chunks_add(r->ing, path, &res);
    if (rc < 0) {
        r->failed = 1;
        snprintf(r->err, sizeof r->err, "%s", res.error);
        return;
    }
    if (rc > 0 && hl_ingest_chunks_interrupted(r->ing)) {
        r->stopped = 1;
        return;
    }
    if (rc > 0) {
        if (!r->damaged) snprintf(r->err, sizeof r->err, "%s", res.error);
        r->damaged = 1;
        return;
    }
    if (!r->keep && nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) r->deleted++;
}

enum { MAX_SCAN = 4096 };

unsigned hl_rotor_poll(hl_rotor_t *r)
{
    static chunk_t v[MAX_SCAN];
    char path[4600];
    size_t n = r->failed || r->stopped ? 0 : scan(r, v, MAX_SCAN);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/archives/%s", r->dir, v[i].name);
        bytes += du(path);
    }
    if (bytes > r->peak_waiting_bytes) r->peak_waiting_bytes = bytes;
    hl_ingest_chunks_backlog(r->ing, (unsigned)n, bytes);
    if (!n) return 0;
    snprintf(path, sizeof path, "%s/archives/%s", r->dir, v[0].name);
    r->next = v[0].index + 1;
    store(r, path);
    return r->failed || r->stopped ? 0 : (unsigned)(n - 1);
}

/* Chunk directories of dir (names NAME-INDEX, not hidden, not archives), oldest first. */
static size_t scan_open(const char *dir, chunk_t *v, size_t max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long i = chunk_index(e->d_name);
        if (e->d_name[0] == '.' || i < 0 || !strcmp(e->d_name, "archives") ||
            strlen(e->d_name) >= sizeof v->name)
            continue;
        v[n].index = i;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, chunk_cmp);
    return n;
}

void hl_rotor_finish(hl_rotor_t *r)
{
    while (hl_rotor_poll(r) > 0)
        ;
    if (r->failed || r->stopped) return;
    char path[4600];
    struct stat st;
    /* A session that never rotated left its trace at dir/ust; one whose daemon died mid-run
     * left the chunk it was filling at dir/BEGIN-INDEX (never archived). */
    snprintf(path, sizeof path, "%s/ust", r->dir);
    if (stat(path, &st) == 0) store(r, path);
    if (r->failed || r->stopped) return;
    static chunk_t v[MAX_SCAN];
    size_t n = scan_open(r->dir, v, MAX_SCAN);
    for (size_t i = 0; i < n && !r->failed && !r->stopped; i++) {
        snprintf(path, sizeof path, "%s/%s", r->dir, v[i].name);
        store(r, path);
    }
    snprintf(path, sizeof path, "%s/archives", r->dir);
    if (!r->keep && !r->failed && !r->damaged && !r->stopped) rmdir(path);
}
