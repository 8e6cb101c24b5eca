/* tracer/main.c — `heapledger`, git-style front: dispatches to one subcommand. */
#include "cmd.h"
#include "suggest.h"
#include "../analyzer/safetext.h"

#include <stdio.h>
#include <string.h>

/* One line per subcommand; a part of the tree adds its line when its command exists. */
static const hl_cmd_t commands[] = {
    {"attach", hl_cmd_attach, "trace a running process's malloc family (uprobes) into a database"},
    {"collect", hl_cmd_collect, "ingest an LTTng trace recorded by hand into a run database"},
    {"collectd", hl_cmd_collectd,
     "tracing daemon: stream lttng-relayd live sessions into databases"},
    {"record", hl_cmd_record, "run a program and record its allocations into a database"},
    {"report", hl_cmd_report, "analyse a run database: utilisation, fragmentation, cycles, leaks"},
    {"diff", hl_cmd_diff, "compare runs side by side: cycles per path, utilisation, leaks"},
    {"history", hl_cmd_history, "every block lifetime that contained an address, with stacks"},
    {"replay", hl_cmd_replay, "re-run a recorded run on a heap with other options (what-if)"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger <command> [options] [args]\n\ncommands:\n");
    for (const hl_cmd_t *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "  %-10s %s\n", "version", "print the version");
    fprintf(f, "\n'heapledger <command> --help' describes a command; man heapledger gives the\n"
               "workflow and docs/ the guide.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("heapledger %s\n", HL_VERSION);
        return 0;
    }
    for (const hl_cmd_t *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->run(argc - 1, argv + 1);
    const char *near = hl_suggest(argv[1], strlen(argv[1]), commands,
                                  sizeof commands / sizeof *commands, sizeof *commands);
    if (!near && hl_edit_distance(argv[1], strlen(argv[1]), "version", 7) <= 2) near = "version";
    if (near) {
        fprintf(stderr, "heapledger: unknown command '%s'; did you mean '%s'?\n", hl_safe(argv[1]),
                near);
        return 2;
    }
    fprintf(stderr, "heapledger: unknown command '%s'\n\n", hl_safe(argv[1]));
    usage(stderr);
    return 2;
}
