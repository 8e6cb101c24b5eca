/* analyzer/cmd_history.c — `heapledger history RUN.db ADDRESS [--pid N] [--from T] [--to T]
 * [--limit N]`: every block lifetime that contained ADDRESS (its header included), in time
 * order, with both ends' threads, paths and stacks; then errors and orphan frees at that
 * address. For post-mortem corruption debugging: who allocated the memory, who freed it, what
 * lived there before. A busy address can have millions of lifetimes: at most --limit of each
 * kind are printed (default HISTORY_LIMIT), with a count of the rest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cmd_common.h"
#include "hl_schema.h"
#include "rundb.h"
#include "safetext.h"
#include "symbols.h"

#define HISTORY_LIMIT 1000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger history RUN.db ADDRESS [--pid N] [--from T] [--to T] [--limit N]\n"
            "  Every block lifetime that contained ADDRESS (hex 0x… or decimal), with the\n"
            "  threads and stacks that allocated and freed it; --from/--to keep the lifetimes\n"
            "  that overlap a window (T since the start of the run: 1.5s, 200ms, 30us); at\n"
            "  most N lifetimes, errors and orphan frees each (default %d, 0: all). See\n"
            "  docs/analyze.md.\n",
            HISTORY_LIMIT);
}

/* The line that says how many of a kind --limit left out. */
static void left_out(int64_t n, int64_t limit, const char *what)
{
    if (limit && n > limit)
        printf("\n… %" PRId64 " more %s not shown (%" PRId64 " in all; --limit N shows N, "
               "--limit 0 all)\n",
               n - limit, what, n);
}

static void stack(sqlite3 *db, int64_t id)
{
    hl_frames_t fr;
    if (id < 0 || hl_frames_load(db, id, &fr) < 0 || !fr.n) {
        printf("        (no stack recorded)\n");
        if (id >= 0) hl_frames_free(&fr);
        return;
    }
    for (size_t i = 0; i < fr.n; i++)
        printf("        #%zu %s\n", i, hl_safe(fr.frame[i]));
    hl_frames_free(&fr);
}

static const char *thread_name(sqlite3 *db, int64_t pid, int64_t tid, char *buf, size_t n)
{
    sqlite3_stmt *st = NULL;
    buf[0] = 0;
    if (sqlite3_prepare_v2(db, "SELECT name FROM thread WHERE pid = ? AND tid = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, pid);
        sqlite3_bind_int64(st, 2, tid);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(buf, n, " (%s)", hl_safe((const char *)sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    return buf;
}

static void end_line(sqlite3 *db, const char *what, int64_t start, int64_t pid, int64_t seq,
                     int64_t ts, int64_t tid, int64_t path, int64_t cycles)
{
    char tn[96];
    printf("    %-10s at %.9f s  seq %" PRId64 "  tid %" PRId64 "%s  path %s", what,
           (double)(hl_ts(ts) - start) / 1e9, seq, tid,
           tid >= 0 ? thread_name(db, pid, tid, tn, sizeof tn) : "", hl_path_name((unsigned)path));
    if (cycles >= 0) printf("  %" PRId64 " cycles", cycles);
    printf("\n");
}

int hl_cmd_history(int argc, char **argv)
{
    const char *path = NULL, *addr_s = NULL, *from_arg = "";
    int64_t pid = 0, limit = HISTORY_LIMIT, from_ns = -1, to_ns = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--pid") && i + 1 < argc) {
            pid = strtoll(argv[++i], NULL, 10);
            if (pid <= 0) {
                fprintf(stderr, "heapledger history: bad --pid '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            char *e;
            limit = strtoll(argv[++i], &e, 10);
            if (*e || e == argv[i] || limit < 0) {
                fprintf(stderr, "heapledger history: bad --limit '%s' (a number; 0 for no limit)\n",
                        hl_safe(argv[i]));
                return 2;
            }
        } else if ((!strcmp(argv[i], "--from") || !strcmp(argv[i], "--to")) && i + 1 < argc) {
            const char *a = argv[i++];
            if (hl_cli_time("history", a, argv[i], a[2] == 'f' ? &from_ns : &to_ns)) return 2;
            if (a[2] == 'f') from_arg = argv[i];
        } else if (argv[i][0] == '-') {
            static const char *const known[] = {"--pid",   "--from", "--to",
                                                "--limit", "--help", NULL};
            hl_cli_bad_option("history", argv[i], known);
            return 2;
        } else if (!path) {
            path = argv[i];
        } else if (!addr_s) {
            addr_s = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!path || !addr_s) {
        usage(stderr);
        return 2;
    }
    char *end;
    uint64_t addr = strtoull(addr_s, &end, 0);
    if (*end || end == addr_s) {
        fprintf(stderr, "heapledger history: bad address '%s' (use 0x… or decimal)\n", addr_s);
        return 2;
    }
    char err[512];
    sqlite3 *db = hl_an_open(path, err, sizeof err);
    if (!db) {
        fprintf(stderr, "heapledger history: %s\n", hl_safe(err));
        return 1;
    }
    hl_run_t run;
    if (hl_run_load(db, path, pid, &run, err, sizeof err) < 0) {
        fprintf(stderr, "heapledger history: %s\n", hl_safe(err));
        sqlite3_close(db);
        return 1;
    }
    int bad_window = hl_cli_window("history", &run, from_ns, to_ns, from_arg);
    int64_t start = run.start_ts;
    hl_run_free(&run);
    if (bad_window) {
        sqlite3_close(db);
        return 2;
    }
    /* The window in the database's time; open ends take everything. */
    int64_t t0 = from_ns >= 0 ? start + from_ns : INT64_MIN;
    int64_t t1 = to_ns >= 0 ? start + to_ns : INT64_MAX;

    /* A block's bytes, header included: [ptr - 16, ptr + max(usable, size)). The range on
     * ptr lets SQLite use no index on (pid, ptr) without a pid; the table scan is fine for a
     * post-mortem question. */
    sqlite3_stmt *st = NULL;
    const char *q = "SELECT id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, "
                    "alloc_tid, alloc_path, alloc_cycles, alloc_stack, free_seq, free_ts, "
                    "free_tid, free_path, free_cycles, free_stack, prev_block, flags "
                    "FROM block WHERE (flags & 1) = 0 AND ptr <= ?1 + 16 AND "
                    "?1 < ptr + max(usable, size) AND (?2 = 0 OR pid = ?2) AND alloc_ts <= ?4 "
                    "AND (free_ts IS NULL OR free_ts >= ?3) ORDER BY alloc_seq";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "heapledger history: %s: %s\n", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return 1;
    }
    sqlite3_bind_int64(st, 1, (int64_t)addr);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, t0);
    sqlite3_bind_int64(st, 4, t1);
    int64_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), bpid = sqlite3_column_int64(st, 1);
        uint64_t ptr = (uint64_t)sqlite3_column_int64(st, 2);
        uint64_t size = (uint64_t)sqlite3_column_int64(st, 3);
        uint64_t usable = (uint64_t)sqlite3_column_int64(st, 4);
        int tier = sqlite3_column_int(st, 5), flags = sqlite3_column_int(st, 20);
        uint64_t hdr = tier == HL_TIER_TINY ? 1 : 16;
        if (addr + hdr < ptr) continue;     /* before a tiny block's 1-byte header */
        if (++n > limit && limit) continue; /* counted, not shown */
        printf("%sblock %" PRId64 "  pid %" PRId64 "  [0x%" PRIx64 ", 0x%" PRIx64 ")  size %" PRIu64
               "  usable %" PRIu64 "  %s",
               n > 1 ? "\n" : "", id, bpid, ptr, ptr + usable, size, usable,
               hl_tier_name((unsigned)tier));
        if (tier == HL_TIER_TINY) printf(" class %d", sqlite3_column_int(st, 6));
        if (addr < ptr)
            printf("\n    0x%" PRIx64 " is in the block's header (%" PRIu64 " bytes before the "
                   "user pointer)\n",
                   addr, ptr - addr);
        else if (addr >= ptr + size)
            printf("\n    0x%" PRIx64 " is at offset %" PRIu64 ", past the %" PRIu64
                   " requested bytes (slack)\n",
                   addr, addr - ptr, size);
        else
            printf("\n    0x%" PRIx64 " is at offset %" PRIu64 "\n", addr, addr - ptr);
        end_line(db, flags & 2 ? "realloc'd" : "allocated", start, bpid,
                 sqlite3_column_int64(st, 7), sqlite3_column_int64(st, 8), hl_col_i64(st, 9, -1),
                 hl_col_i64(st, 10, 0), hl_col_i64(st, 11, -1));
        if (flags & 2)
            printf("    (new side of a realloc of block %" PRId64 ")\n", hl_col_i64(st, 19, 0));
        stack(db, hl_col_i64(st, 12, -1));
        if (sqlite3_column_type(st, 13) == SQLITE_NULL) {
            printf("    live at the end of the recording\n");
        } else {
            end_line(db, flags & 4 ? "realloc'd" : "freed", start, bpid,
                     sqlite3_column_int64(st, 13), sqlite3_column_int64(st, 14),
                     hl_col_i64(st, 15, -1), hl_col_i64(st, 16, 0), hl_col_i64(st, 17, -1));
            if (flags & 4) printf("    (old side of a realloc: the data moved to a new block)\n");
            stack(db, hl_col_i64(st, 18, -1));
        }
    }
    sqlite3_finalize(st);
    left_out(n, limit, "block lifetimes");

    /* Errors and orphan frees at this exact address. */
    int64_t extra = 0, k = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT ts, pid, tid, kind, details, stack FROM error WHERE addr = ?1 "
                           "AND (?2 = 0 OR pid = ?2) AND ts BETWEEN ?3 AND ?4 ORDER BY ts",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (int64_t)addr);
        sqlite3_bind_int64(st, 2, pid);
        sqlite3_bind_int64(st, 3, t0);
        sqlite3_bind_int64(st, 4, t1);
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (++k > limit && limit) continue;
            const char *d = (const char *)sqlite3_column_text(st, 4);
            printf("\nerror %s at 0x%" PRIx64 "  at %.9f s  pid %" PRId64 "  tid %" PRId64 "%s%s\n",
                   hl_safe((const char *)sqlite3_column_text(st, 3)), addr,
                   (double)(hl_ts(sqlite3_column_int64(st, 0)) - start) / 1e9,
                   (int64_t)sqlite3_column_int64(st, 1), hl_col_i64(st, 2, -1), d && *d ? ": " : "",
                   d ? hl_safe(d) : "");
            stack(db, hl_col_i64(st, 5, -1));
        }
        sqlite3_finalize(st);
        left_out(k, limit, "errors");
    }
    extra += k;
    k = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT seq, ts, pid, tid, path, cycles, stack FROM orphan_free "
                           "WHERE ptr = ?1 AND (?2 = 0 OR pid = ?2) AND ts BETWEEN ?3 AND ?4 "
                           "ORDER BY seq",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, (int64_t)addr);
        sqlite3_bind_int64(st, 2, pid);
        sqlite3_bind_int64(st, 3, t0);
        sqlite3_bind_int64(st, 4, t1);
        while (sqlite3_step(st) == SQLITE_ROW) {
            if (++k > limit && limit) continue;
            printf("\nfree of 0x%" PRIx64 ", never seen allocated:\n", addr);
            end_line(db, "freed", start, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 0),
                     sqlite3_column_int64(st, 1), hl_col_i64(st, 3, -1), hl_col_i64(st, 4, 0),
                     hl_col_i64(st, 5, -1));
            stack(db, hl_col_i64(st, 6, -1));
        }
        sqlite3_finalize(st);
        left_out(k, limit, "frees of it never seen allocated");
    }
    extra += k;
    sqlite3_close(db);
    if (!n && !extra) {
        fprintf(stderr, "heapledger history: %s: no block recorded at 0x%" PRIx64 " (%s)\n",
                hl_safe(path), addr,
                from_ns >= 0 || to_ns >= 0 ? "no allocation covered it in the window"
                                           : "no allocation ever covered it");
        return 1;
    }
    return 0;
}
