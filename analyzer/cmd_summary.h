/* analyzer/cmd_summary.h — `heapledger report --summary DIR [--json | --html OUT.html]`: the
 * fleet view, one row per run database in DIR (cmd_summary.c, docs/collect.md). */
#ifndef HL_CMD_SUMMARY_H
#define HL_CMD_SUMMARY_H

/* Called by hl_cmd_report when its arguments hold --summary; parses them all again. Exit
 * status: 0, 1 (DIR unreadable or no database in it), 2 usage, 3 some databases unreadable
 * (listed, the others summarised). */
int hl_cmd_summary(int argc, char **argv);

#endif
