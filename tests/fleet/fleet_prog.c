/* tests/fleet/fleet_prog.c — a program with known allocations for the fleet tests:
 *   fleet_prog leak N     N blocks of 100 bytes never freed, 10 freed
 *   fleet_prog doublefree one block freed twice (hardened mode reports it and aborts)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "leak")) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            char *volatile p = malloc(100);
            p[0] = (char)i;
        }
        for (int i = 0; i < 10; i++) {
            char *volatile p = malloc(200);
            free(p);
        }
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "doublefree")) {
        char *volatile p = malloc(64);
        free(p);
        free(p);
        return 0;
    }
    fprintf(stderr, "usage: fleet_prog leak N | doublefree\n");
    return 2;
}
