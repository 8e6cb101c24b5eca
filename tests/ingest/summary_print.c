/* tests/ingest/summary_print.c DB — prints the summary `heapledger record` prints after a
 * recording (tracer/record_summary.c) for any run database, so that the count test can
 * compare it on a trace recorded without `record`. */
#include "record_summary.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: summary_print RUN.db\n");
        return 2;
    }
    return hl_record_summary(stdout, argv[1], -1) == 0 ? 0 : 1;
}
