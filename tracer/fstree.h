/* tracer/fstree.h — directory trees that record, its reaper, the rotor and the ingest remove
 * or look into (trace directories, private daemon homes, salvage scratch). */
#ifndef HL_FSTREE_H
#define HL_FSTREE_H

/* Removes dir and everything below it, without following symbolic links. Goes on past an
 * entry it cannot remove, so as much as possible goes. 0 when everything went (or dir did
 * not exist), -1 when something is left. */
int hl_tree_remove(const char *dir);

/* 1 when a CTF trace is below dir (a file named "metadata"), 0 when none is or dir is not
 * there. */
int hl_tree_has_trace(const char *dir);

/* Makes dst a copy of the tree src in which every regular file is a hard link to src's
 * (directories are made, other entries skipped; same file system). The copy stays readable
 * when src is renamed or removed. 0, or -1 (errno set; dst may be partly made). */
int hl_tree_link(const char *src, const char *dst);

#endif
