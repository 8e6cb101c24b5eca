/* tests/ingest/symcheck.c DB — checks the function names the ingest stored against libdw's
 * own dwfl_module_addrinfo (which the ingest no longer calls: it reads each module's
 * symbols once and binary-searches them, tracer/ingest_symbols.c). Every frame with a
 * function is looked up again at its return address - 1 in its module, demangled like the
 * ingest does, and compared. Prints the frames checked; exit 1 on any difference. */
#include <elfutils/libdwfl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest_internal.h"

static char *debuginfo_path = NULL;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

int main(int argc, char **argv)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (argc != 2 || sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "usage: symcheck RUN.db\n");
        return 2;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT DISTINCT f.ip, f.function, m.baddr, m.path FROM frame f "
                           "JOIN stack s ON s.id = f.stack_id JOIN module m ON m.pid = s.pid "
                           "AND f.ip >= m.baddr AND f.ip < m.baddr + m.memsz "
                           "WHERE f.function IS NOT NULL",
                           -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "symcheck: %s\n", sqlite3_errmsg(db));
        return 2;
    }
    long checked = 0, bad = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t ip = (uint64_t)sqlite3_column_int64(st, 0);
        const char *stored = (const char *)sqlite3_column_text(st, 1);
        uint64_t baddr = (uint64_t)sqlite3_column_int64(st, 2);
        const char *path = (const char *)sqlite3_column_text(st, 3);
        Dwfl *d = dwfl_begin(&callbacks);
        dwfl_report_begin(d);
        Dwfl_Module *m = dwfl_report_elf(d, "m", path, -1, baddr, false);
        dwfl_report_end(d, NULL, NULL);
        const char *fn =
            m ? dwfl_module_addrinfo(m, ip - 1, &(GElf_Off){0}, &(GElf_Sym){0}, NULL, NULL, NULL)
              : NULL;
        char *dem = fn ? hl_demangle(fn) : NULL;
        const char *want = dem ? dem : fn;
        checked++;
        if (!want || strcmp(want, stored) != 0) {
            if (bad++ < 10)
                fprintf(stderr, "symcheck: %s+0x%llx: stored '%s', libdw '%s'\n", path,
                        (unsigned long long)(ip - baddr), stored, want ? want : "(none)");
        }
        free(dem);
        dwfl_end(d);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    printf("%ld frames checked, %ld differ\n", checked, bad);
    return bad ? 1 : 0;
}
