/* tests/e2e/record_reaper_test.c — what the reaper (tracer/record_reaper.h) leaves of a trace
 * directory that record kept once a chunk was stored, when record dies (Criterion).
 *
 * The reaper is the real one (forked by hl_reaper_start); record's death is the end of its pipe.
 * No daemon and no program are noted, so it kills nothing; the trace directories are made here:
 * chunk directories with a CTF `metadata` file (a trace) or without one (a chunk the session
 * daemon had opened but not written yet).
 *   nothing_left  killed just after a rotation: every closed chunk stored (the last one noted
 *                 `stored` but not deleted yet), the new chunk holds no metadata: the directory
 *                 is removed and the reaper does not name it (before, it named a directory that
 *                 `collect --all` refuses)
 *   chunks_left   a closed chunk not stored yet: the stored one goes, the other stays, and the
 *                 directory is named
 *   keep_trace    --keep-trace (no `stored` notes): the user's directory is left as it was
 *   final_archived the last chunk stored from its links (.final-INDEX) before the destroy's
 *                 archive of the same files was deleted: the archive goes too, nothing is left
 *                 (before, collect --all of the kept directory stored that chunk twice)
 *   final_filling  the same before the destroy archived it: the chunk directory of that index
 *                 goes, a chunk of another index whose name ends in the same digits stays
 */
#include "record_reaper.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[256];

static void mkpath(const char *rel, int with_metadata)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "d='%s/%s/ust/uid/0/64-bit' && mkdir -p \"$d\" && touch \"$d/chan_0\"%s", root, rel,
             with_metadata ? " \"$d/metadata\"" : "");
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static int exists(const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return stat(p, &st) == 0;
}

/* Start a reaper with stderr into root/err, send the notes, end the pipe as a dying record
 * would, wait for the reaper; returns what it printed. */
static char *reap(const char *const *notes)
{
    static char out[8192];
    char p[512];
    snprintf(p, sizeof p, "%s.err", root);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(2);
    cr_assert(fd >= 0 && saved >= 0);
    dup2(fd, 2);
    hl_reaper_t r;
    int rc = hl_reaper_start(&r);
    dup2(saved, 2);
    close(saved);
    close(fd);
    cr_assert_eq(rc, 0);
    for (const char *const *n = notes; *n; n += 2) {
        char v[1024]; /* relative to root; "." is root */
        snprintf(v, sizeof v, "%s%s%s", root, strcmp(n[1], ".") ? "/" : "",
                 strcmp(n[1], ".") ? n[1] : "");
        hl_reaper_note(&r, n[0], v);
    }
    close(r.fd);
    int st;
    cr_assert_eq(waitpid(r.pid, &st, 0), r.pid);
    FILE *f = fopen(p, "r");
    cr_assert(f);
    size_t len = fread(out, 1, sizeof out - 1, f);
    out[len] = 0;
    fclose(f);
    unlink(p);
    return out;
}

static void setup(void)
{
    snprintf(root, sizeof root, "%s/heapledger-reaper-test-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    (void)!system(cmd);
}

TestSuite(reaper, .init = setup, .fini = teardown);

Test(reaper, nothing_left)
{
    mkpath("archives/20261201T000000+0000-20261201T000001+0000-0", 1);
    mkpath("20261201T000001+0000-1", 0);
    const char *notes[] = {
        "trace", ".", "kept", ".", "stored", "archives/20261201T000000+0000-20261201T000001+0000-0",
        NULL};
    char *err = reap(notes);
    cr_expect(!exists(""), "the trace directory was left: %s", err);
    cr_expect(strstr(err, "no other chunk had reached the disk"), "%s", err);
    cr_expect(!strstr(err, "the others are kept in"), "%s", err);
}

Test(reaper, chunks_left)
{
    mkpath("archives/20261201T000000+0000-20261201T000001+0000-0", 1);
    mkpath("archives/20261201T000001+0000-20261201T000002+0000-1", 1);
    mkpath("20261201T000002+0000-2", 0);
    const char *notes[] = {
        "trace", ".", "kept", ".", "stored", "archives/20261201T000000+0000-20261201T000001+0000-0",
        NULL};
    char *err = reap(notes);
    cr_expect(!exists("archives/20261201T000000+0000-20261201T000001+0000-0"),
              "the stored chunk was left");
    cr_expect(
        exists("archives/20261201T000001+0000-20261201T000002+0000-1/ust/uid/0/64-bit/metadata"));
    char want[512];
    snprintf(want, sizeof want, "the others are kept in %s (heapledger collect --all %s", root,
             root);
    cr_expect(strstr(err, want), "%s", err);
}

Test(reaper, keep_trace)
{
    mkpath("archives/20261201T000000+0000-20261201T000001+0000-0", 1);
    mkpath("20261201T000001+0000-1", 0);
    const char *notes[] = {"kept", ".", NULL};
    char *err = reap(notes);
    cr_expect(
        exists("archives/20261201T000000+0000-20261201T000001+0000-0/ust/uid/0/64-bit/metadata"));
    cr_expect(exists("20261201T000001+0000-1"));
    cr_expect(strstr(err, "the others are kept in"), "%s", err);
}

Test(reaper, final_archived)
{
    mkpath(".final-1", 1);
    mkpath("archives/20261201T000001+0000-20261201T000002+0000-1", 1);
    const char *notes[] = {"trace", ".", "kept", ".", "stored", ".final-1", NULL};
    char *err = reap(notes);
    cr_expect(!exists(""), "the trace directory was left: %s", err);
    cr_expect(strstr(err, "no other chunk had reached the disk"), "%s", err);
}

Test(reaper, final_filling)
{
    mkpath(".final-1", 1);
    mkpath("20261201T000001+0000-1", 1);
    mkpath("archives/20261201T000001+0000-20261201T000002+0000-11", 1);
    const char *notes[] = {"trace", ".", "kept", ".", "stored", ".final-1", NULL};
    char *err = reap(notes);
    cr_expect(!exists(".final-1"), "the links were left");
    cr_expect(!exists("20261201T000001+0000-1"), "the stored chunk was left: %s", err);
    cr_expect(
        exists("archives/20261201T000001+0000-20261201T000002+0000-11/ust/uid/0/64-bit/metadata"),
        "a chunk of another index went");
    cr_expect(strstr(err, "the others are kept in"), "%s", err);
}
