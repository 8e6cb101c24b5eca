/* tracer/fstree.c — removing a directory tree, finding a trace in one, linking one (see
 * fstree.h). */
#include "fstree.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
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
