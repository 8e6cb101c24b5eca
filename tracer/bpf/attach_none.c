/* tracer/bpf/attach_none.c — `heapledger attach` in a build without BPF support. */
#include "cmd.h"

#include <stdio.h>

int hl_cmd_attach(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "heapledger attach: this heapledger was built without BPF support (the "
                    "build machine had no kernel BTF, clang, bpftool or libbpf-dev)\n");
    return 1;
}
