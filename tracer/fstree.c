/* tracer/fstree.c — removing a directory tree, finding a trace in one, linking one, the names
 * of trace chunks (see fstree.h). */
#include "fstree.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static __thread int remove_failed; /* record's threads and the reaper each remove their own */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) remove_failed = 1;
    return 0;
}

int hl_tree_remove(const char *dir)
{
    remove_failed = 0;
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT) return -1;
    return remove_failed ? -1 : 0;
}

static int is_metadata(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag;
    return strcmp(path + ftw->base, "metadata") == 0;
}

int hl_tree_has_trace(const char *dir)
{
    return nftw(dir, is_metadata, 16, FTW_PHYS) == 1;
}

static __thread const char *link_src, *link_dst; /* hl_tree_link's, for its nftw callback */

static int link_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    char to[8192];
    if (snprintf(to, sizeof to, "%s%s", link_dst, path + strlen(link_src)) >= (int)sizeof to) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (flag == FTW_D) return mkdir(to, 0700) == 0 || errno == EEXIST ? 0 : -1;
    if (flag == FTW_F && S_ISREG(st->st_mode)) return link(path, to) == 0 ? 0 : -1;
    return flag == FTW_SL ? 0 : -1;
}

int hl_tree_link(const char *src, const char *dst)
{
    link_src = src;
    link_dst = dst;
    return nftw(src, link_entry, 16, FTW_PHYS) == 0 ? 0 : -1;
}

long hl_trace_chunk_index(const char *name)
{
    const char *dash = strrchr(name, '-');
    if (!dash || !dash[1]) return -1;
    char *end;
    long i = strtol(dash + 1, &end, 10);
    return *end || i < 0 ? -1 : i;
}

static void remove_chunk_in(const char *dir, long index)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && hl_trace_chunk_index(e->d_name) == index &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            hl_tree_remove(path);
    closedir(d);
}

void hl_trace_remove_chunk(const char *dir, long index)
{
    char archives[4200];
    remove_chunk_in(dir, index);
    if ((size_t)snprintf(archives, sizeof archives, "%s/archives", dir) < sizeof archives)
        remove_chunk_in(archives, index);
}
