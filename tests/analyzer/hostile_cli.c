/* tests/analyzer/hostile_cli.c — the analyzer's commands (report, diff, history, replay) in one
 * program built under ASan+UBSan for the hostile-database corpus (hostile_test.sh): the same
 * entry points as `heapledger <command>`, without the recorder. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

int main(int argc, char **argv)
{
    static const hl_cmd_t cmds[] = {
        {"report", hl_cmd_report, ""},
        {"diff", hl_cmd_diff, ""},
        {"history", hl_cmd_history, ""},
        {"replay", hl_cmd_replay, ""},
    };
    for (size_t i = 0; argc > 1 && i < sizeof cmds / sizeof *cmds; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "usage: hostile_cli report|diff|history|replay ARGS\n");
    return 2;
}
