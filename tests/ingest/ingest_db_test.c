/* tests/ingest/ingest_db_test.c — tracer/db.c: creation, schema version check, messages. */
#include "db.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/hl-db-test.XXXXXX";
static char path[256];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.db", dir);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(db, .init = setup, .fini = teardown);

Test(db, create_then_open_read)
{
    char err[256] = "";
    sqlite3 *db = hl_db_create(path, 0, err, sizeof err);
    cr_assert_not_null(db, "%s", err);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM path", -1, &st, NULL), SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_gt(sqlite3_column_int(st, 0), 10, "path table filled");
    sqlite3_finalize(st);
    sqlite3_close(db);
    db = hl_db_open_read(path, err, sizeof err);
    cr_assert_not_null(db, "%s", err);
    sqlite3_close(db);
}

Test(db, existing_file_refused_without_force)
{
    char err[256] = "";
    sqlite3_close(hl_db_create(path, 0, err, sizeof err));
    cr_assert_null(hl_db_create(path, 0, err, sizeof err));
    cr_assert(strstr(err, "output file exists"), "%s", err);
    sqlite3 *db = hl_db_create(path, 1, err, sizeof err);
    cr_assert_not_null(db, "%s", err);
    sqlite3_close(db);
}

Test(db, other_schema_version)
{
    char err[256] = "";
    sqlite3 *db = hl_db_create(path, 0, err, sizeof err);
    cr_assert_not_null(db);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 5", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, "schema version 5") && strstr(err, "reads version 4"), "%s", err);
}

Test(db, older_schema_version)
{
    char err[512] = "";
    sqlite3 *db = hl_db_create(path, 0, err, sizeof err);
    cr_assert_not_null(db);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, "schema version 1, this heapledger reads version 4") &&
                  strstr(err, "heapledger collect TRACE -o NEW.db"),
              "%s", err);
    /* Version 2 (block_data in fifteen columns): the same message, not migrated. */
    db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 2", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, "schema version 2, this heapledger reads version 4") &&
                  strstr(err, "heapledger collect TRACE -o NEW.db"),
              "%s", err);
    /* Version 3 (block_data in ten columns): the same message, not migrated. */
    db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 3", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, "schema version 3, this heapledger reads version 4") &&
                  strstr(err, "heapledger collect TRACE -o NEW.db"),
              "%s", err);
}

Test(db, not_a_heapledger_database)
{
    char err[256] = "";
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL);
    sqlite3_close(db);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, "not a heapledger run database"), "%s", err);
}

Test(db, not_sqlite_at_all)
{
    char err[256] = "";
    FILE *f = fopen(path, "w");
    fputs("this is not a database, just text long enough to have a header.........\n", f);
    fclose(f);
    cr_assert_null(hl_db_open_read(path, err, sizeof err));
    cr_assert(strstr(err, path), "%s", err);
}

Test(db, missing_file)
{
    char err[256] = "";
    cr_assert_null(hl_db_open_read("/nonexistent/x.db", err, sizeof err));
    cr_assert(strstr(err, "No such file"), "%s", err);
}
