/* tracer/record_summary.h — the one-screen summary `heapledger record` prints from the run
 * database it just wrote: events and losses, processes, the operations (counted as the report
 * counts them), the leak scan's classes and lost sites when the program was scanned
 * (analyzer/leakclass.h), the busiest allocator paths with their cycle cost, the top live sites and
 * the C runtime's blocks apart (the report's built-in suppressions, analyzer/suppress.h). */
#ifndef HL_RECORD_SUMMARY_H
#define HL_RECORD_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

/* Print the summary of db_path to f. blocks: the block rows the ingest just wrote (its
 * result's count), or -1 when not known (then block_data is counted to see whether its
 * per-group totals cover every row). Returns 0, or -1 (message printed) when the database
 * cannot be read. */
int hl_record_summary(FILE *f, const char *db_path, int64_t blocks);

#endif
