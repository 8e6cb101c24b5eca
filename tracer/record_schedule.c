/* tracer/record_schedule.c — record closes trace chunks, small ones first
 * (record_schedule.h). */
#include "record_schedule.h"
#include "record_rotate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t hl_rsched_first_bytes(uint64_t max)
{
    const char *v = getenv("HEAPLEDGER_FIRST_CHUNK_BYTES");
    uint64_t n = HL_RSCHED_FIRST_BYTES;
    if (v && *v && (n = hl_rotor_parse_size(v)) == (uint64_t)-1) {
        fprintf(stderr,
                "heapledger record: HEAPLEDGER_FIRST_CHUNK_BYTES=%s: expected a size in bytes (K, "
                "M or G suffix), e.g. 16M: the size of the first trace chunk, which the store "
                "waits for\n",
                v);
        return (uint64_t)-1;
    }
    if (n < (1ull << 20)) n = 1ull << 20; /* as HEAPLEDGER_CHUNK_BYTES */
    return n < max ? n : max;
}

void hl_rsched_init(hl_rsched_t *r, hl_session_t *s, uint64_t first, uint64_t max)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->next = first;
    r->max = max;
}

/* Bytes of the chunk being filled: everything in the session's directory but the closed
 * chunks (archives/). Exact while no rotation is in progress (then the chunk that closes and
 * the new one would both count). */
static uint64_t filled(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    uint64_t total = 0;
    struct dirent *e;
    char path[4400];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "archives")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        total += hl_rotor_du(path);
    }
    closedir(d);
    return total;
}

int hl_rsched_tick(hl_rsched_t *r)
{
    if (r->fallback) return 0;
    int was = r->rotating;
    r->rotating = hl_session_rotating(r->s);
    int closed = was && !r->rotating;
    if (r->rotating || filled(r->s->dir) < r->next) return closed;
    int rc = hl_session_rotate(r->s);
    if (rc == 0) {
        r->asked++;
        r->rotating = 1;
        r->next = r->next < r->max / 2 ? 2 * r->next : r->max;
        return closed;
    }
    if (rc > 0) return closed; /* one in progress: the next look */
    r->fallback = 1;
    snprintf(r->err, sizeof r->err, "%s", r->s->err);
    hl_session_rotate_on_size(r->s, r->max);
    return closed;
}
