/* tracer/cmd.h — the subcommands of the heapledger CLI.
 *
 * Each subcommand is a function taking its own argv (argv[0] is the subcommand name) and
 * returning the process exit status. main.c holds the table; each part of the tree
 * implements its commands in its own files (tracer/: record, collect, collectd, attach;
 * analyzer/: report, diff, replay, history).
 */
#ifndef HL_CMD_H
#define HL_CMD_H

typedef struct hl_cmd_s {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} hl_cmd_t;

int hl_cmd_record(int argc, char **argv);
int hl_cmd_collect(int argc, char **argv);
int hl_cmd_collectd(int argc, char **argv);
int hl_cmd_attach(int argc, char **argv);
int hl_cmd_report(int argc, char **argv);
int hl_cmd_diff(int argc, char **argv);
int hl_cmd_replay(int argc, char **argv);
int hl_cmd_history(int argc, char **argv);

#endif
