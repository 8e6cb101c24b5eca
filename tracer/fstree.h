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

/* Trace chunk directories of a rotating session (record_rotate.h): the one being filled is
 * dir/BEGIN-INDEX, an archived one dir/archives/BEGIN-END-INDEX, and the links record makes to
 * the last one once the session stopped dir/HL_TRACE_FINAL "INDEX". */
#define HL_TRACE_FINAL ".final-"

/* The INDEX of a chunk directory's name (the number after its last '-'), or -1. */
long hl_trace_chunk_index(const char *name);

/* Removes the chunk directories of the given index, in place and archived (dir/NAME and
 * dir/archives/NAME; not the links, whose name starts with '.'). */
void hl_trace_remove_chunk(const char *dir, long index);

#endif
